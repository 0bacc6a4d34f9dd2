# Host unit tests of the kernel's pure logic (and, with lib/host.mk, of lib/), under ASan/UBSan.
# Included from the top Makefile.
UNIT_SAN    := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
HOST_TCFLAGS := -std=gnu11 -O1 -g -Wall -Wextra -Werror -DSCHEDLAB_HOST -Ikernel -Ilib -Itests/host $(UNIT_SAN)
HOST_TESTS  := $(B)/host-tests/test_scenario $(B)/host-tests/test_fdt
HOST_TESTS  += $(B)/host-tests/test_slots $(B)/host-tests/test_allot

$(B)/host-tests/test_scenario: tests/host/test_scenario.c kernel/scenario.c kernel/scenario.h lib/abi.h tests/host/check.h
	@mkdir -p $(dir $@)
	$(HOSTCC) $(HOST_TCFLAGS) -o $@ tests/host/test_scenario.c kernel/scenario.c

$(B)/host-tests/test_fdt: tests/host/test_fdt.c kernel/fdt.c kernel/fdt.h lib/abi.h tests/host/check.h
	@mkdir -p $(dir $@)
	$(HOSTCC) $(HOST_TCFLAGS) -o $@ tests/host/test_fdt.c kernel/fdt.c

$(B)/host-tests/test_slots: tests/host/test_slots.c kernel/sched/slots.c kernel/sched/slots.h tests/host/check.h
	@mkdir -p $(dir $@)
	$(HOSTCC) $(HOST_TCFLAGS) -o $@ tests/host/test_slots.c kernel/sched/slots.c

$(B)/host-tests/test_allot: tests/host/test_allot.c kernel/sched/allot.c kernel/sched/allot.h tests/host/check.h
	@mkdir -p $(dir $@)
	$(HOSTCC) $(HOST_TCFLAGS) -o $@ tests/host/test_allot.c kernel/sched/allot.c

.PHONY: host-test
host-test: $(HOST_TESTS)
	@set -e; for t in $(HOST_TESTS); do echo "== $$t"; $$t; done
