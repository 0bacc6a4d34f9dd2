# tools/sim/sim.mk - the simulator (tools/sim/sim.h). Included from the top Makefile.
#
#   make sim             build/sim/schedlab-sim: every kernel/sched/*.c but core.c, the kernel's harts (so a
#                        new policy file is in with no edit; life.c, the portable core, is in too),
#                        slots/allot/classes, kernel/scenario.c, kernel/trace.c and kernel/contract.c, built
#                        for the host with -DSCHEDLAB_SIM against tools/sim's harts. A policy that calls a
#                        kernel service the simulated core lacks fails here, at link time, naming it. It runs
#                        with the apps and the kernel ELF it stands for (their specs, the kernel's free memory:
#                        tools/sim/sim_elf.c), so it builds those too.
#   make sim-asan        the same under ASan/UBSan (build/sim-asan), which make test runs (tests/test_sim.py)
#   make layers-sim      tools/sim's layers (tools/sim/LAYERS) from its objects; part of make layers
#   make sim-calibrate   schedlab calibrate: the costs on QEMU at CPUS=2 (and 1): tools/sim/calib/$(SIM_CALIB_NAME).json
#   make sim-validate    schedlab validate: QEMU vs simulator slowdowns (a quiet machine only)
#   make sim-reproduce   schedlab reproduce --only 'sim16-*': the 16-processor results -> docs/results.md, docs/sim-16.md

SIM_OUT    ?= $(B)/sim
SIM_SAN    ?=
# What a host build of kernel code needs (the simulator's, the host tests'): -DSCHEDLAB_SIM, and the simulated
# hart's read_tp() and rdtime() (sim_arch.h) forced in ahead of every source, as kernel.h includes rvasm.h only
# for the kernel: the kernel never names a header of the simulator.
SIM_ARCH   := -DSCHEDLAB_SIM -include tools/sim/sim_arch.h
SIM_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wno-unused-parameter $(SIM_ARCH) -DSCHEDLAB_HOST \
              -D_GNU_SOURCE -Itools/sim -Ikernel -Iinclude
SIM_KSRC   := $(filter-out kernel/sched/core.c,$(wildcard kernel/sched/*.c kernel/sched/*/*.c)) $(EXTRA_POLICIES) \
              kernel/scenario.c kernel/scenario_words.c kernel/printf.c kernel/trace.c kernel/model.c \
              kernel/contract.c
# An app model from outside the tree (a test's, a tutorial's), as EXTRA_POLICIES adds a policy:
# make sim EXTRA_SIM_APPS=path/to/model.c (it includes "sim.h" and "sim_kit.h": tools/sim is on the path).
EXTRA_SIM_APPS ?=
SIM_SRC    := $(wildcard tools/sim/*.c tools/sim/apps/*.c) $(EXTRA_SIM_APPS) tools/model/cache.c lib/loops/loopsched.c \
              lib/threads/place.c
SIM_OBJ    := $(patsubst %.c,$(SIM_OUT)/obj/%.o,$(SIM_KSRC) $(SIM_SRC))
SIM_HDRS   := $(wildcard tools/sim/*.h kernel/*.h kernel/sched/*.h kernel/sched/*/*.h) include/schedlab/abi.h tools/model/cache.h \
              lib/loops/loopsched.h lib/threads/place.h
SIM_CALIB_NAME ?= $(shell hostname -s 2>/dev/null || echo local)

# The link follows the list of sources, not only their timestamps: a policy file removed or renamed leaves
# nothing newer behind, so the list itself is a prerequisite, kept in a stamp rewritten only when it changes.
SIM_LIST   := $(SIM_OUT)/sources.list
$(shell mkdir -p $(SIM_OUT) && { [ "$$(cat $(SIM_LIST) 2>/dev/null)" = "$(sort $(SIM_OBJ))" ] || \
          echo "$(sort $(SIM_OBJ))" > $(SIM_LIST); })

.PHONY: sim sim-asan sim-calibrate sim-validate sim-reproduce layers-sim
sim: $(SIM_OUT)/schedlab-sim apps $(B)/kernel.elf

$(SIM_OUT)/schedlab-sim: $(SIM_OBJ) tools/sim/sections.ld $(SIM_LIST)
	$(call quiet,HOSTLD,$@)$(HOSTCC) $(SIM_CFLAGS) $(SIM_SAN) -Wl,-T,tools/sim/sections.ld -Wl,--gc-sections -o $@ $(SIM_OBJ) -lm

$(SIM_OUT)/obj/%.o: %.c $(SIM_HDRS)
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$<)$(HOSTCC) $(SIM_CFLAGS) $(SIM_SAN) -Ikernel/sched -c -o $@ $<

# The models link the library's own pure code: the loop schedulers (sim_loops.c) and the thread placement
# decision (sim_threads.c: place.c's sl_place_decide; the file's other functions need the thread runtime, so
# it is built a section a function and the link drops what nothing calls, their references with them).
# lib's include root for them and for every app model.
$(SIM_OUT)/obj/tools/sim/sim_loops.o $(SIM_OUT)/obj/lib/loops/loopsched.o: SIM_CFLAGS += -Ilib
$(SIM_OUT)/obj/tools/sim/sim_threads.o: SIM_CFLAGS += -Ilib
$(SIM_OUT)/obj/lib/threads/place.o: SIM_CFLAGS += -Ilib -ffunction-sections
$(SIM_OUT)/obj/tools/sim/apps/%.o: SIM_CFLAGS += -Ilib

# The build make test runs (tests/test_sim.py prefers it): the same sources under ASan/UBSan.
sim-asan:
	$(MAKE) --no-print-directory $(B)/sim-asan/schedlab-sim SIM_OUT=$(B)/sim-asan \
	    SIM_SAN="-fsanitize=address,undefined -fno-sanitize-recover=all"

sim-calibrate: all
	$(SCHEDLAB) calibrate --name $(SIM_CALIB_NAME)

# The simulator against QEMU (a quiet machine only), and the 16-processor results (docs/sim-16.md).
sim-validate: all
	$(SCHEDLAB) validate

sim-reproduce: sim
	$(SCHEDLAB) reproduce --only 'sim16-*'

# The engine calls an app model only through its table and the models only call down (tools/sim/LAYERS):
# checked from the objects, beside kernel/'s and lib/'s layers.
layers: layers-sim
layers-sim: $(SIM_OBJ)
	$(call quiet,LAYERS,tools/sim/LAYERS)$(PYTHON) tools/layers.py tools/sim/LAYERS $(SIM_OUT)/obj/tools/sim --nm $(HOSTNM) --name sim
