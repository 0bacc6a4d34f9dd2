# Host unit tests of the kernel's pure logic (and, with lib/host.mk, of lib/), under ASan/UBSan.
# Included from the top Makefile.
UNIT_SAN    := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
HOST_TCFLAGS := -std=gnu11 -O1 -g -Wall -Wextra -Werror -DSCHEDLAB_HOST -Ikernel -Ilib -Iinclude -Itests/host $(UNIT_SAN)
HOST_TESTS  := $(B)/host-tests/test_scenario $(B)/host-tests/test_fdt
HOST_TESTS  += $(B)/host-tests/test_slots $(B)/host-tests/test_allot

# The scenario parser with the kernel's own formatter (kernel/printf.c as ksnprintf, kernel/kprintf.h):
# its messages are tested as the kernel prints them.
$(B)/host-tests/test_scenario: tests/host/test_scenario.c kernel/scenario.c kernel/scenario_words.c kernel/scenario.h kernel/scenario_words.h kernel/printf.c \
                               kernel/kprintf.h include/schedlab/abi.h tests/host/check.h
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$@)$(HOSTCC) $(HOST_TCFLAGS) -o $@ tests/host/test_scenario.c kernel/scenario.c kernel/scenario_words.c kernel/printf.c

# The kernel's formatter against glibc's snprintf.
HOST_TESTS  += $(B)/host-tests/test_printf
$(B)/host-tests/test_printf: tests/host/test_printf.c kernel/printf.c kernel/kprintf.h tests/host/check.h
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$@)$(HOSTCC) $(HOST_TCFLAGS) -o $@ tests/host/test_printf.c kernel/printf.c

# A batch's scenarios in the bootargs (kernel/batch.c's pure part).
HOST_TESTS  += $(B)/host-tests/test_batch
$(B)/host-tests/test_batch: tests/host/test_batch.c kernel/batch.c kernel/batch.h tests/host/check.h
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$@)$(HOSTCC) $(HOST_TCFLAGS) -o $@ tests/host/test_batch.c kernel/batch.c

$(B)/host-tests/test_fdt: tests/host/test_fdt.c kernel/fdt.c kernel/fdt.h include/schedlab/abi.h tests/host/check.h
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$@)$(HOSTCC) $(HOST_TCFLAGS) -o $@ tests/host/test_fdt.c kernel/fdt.c

HOST_TESTS  += $(B)/host-tests/test_ticks
$(B)/host-tests/test_ticks: tests/host/test_ticks.c kernel/ticks.h tests/host/check.h
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$@)$(HOSTCC) $(HOST_TCFLAGS) -o $@ tests/host/test_ticks.c

# policy=adaptive's rule (kernel/sched/adaptive/adrule.c), pure arithmetic
HOST_TESTS  += $(B)/host-tests/test_adrule
$(B)/host-tests/test_adrule: tests/host/test_adrule.c kernel/sched/adaptive/adrule.c kernel/sched/adaptive/adrule.h kernel/sched/allot.h tests/host/check.h
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$@)$(HOSTCC) $(HOST_TCFLAGS) -o $@ tests/host/test_adrule.c kernel/sched/adaptive/adrule.c

$(B)/host-tests/test_slots: tests/host/test_slots.c kernel/sched/slots.c kernel/sched/slots.h tests/host/check.h
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$@)$(HOSTCC) $(HOST_TCFLAGS) -o $@ tests/host/test_slots.c kernel/sched/slots.c

# lib/threads/deque.c under ASan/UBSan and again under TSan (data races in its memory orders).
HOST_TESTS  += $(B)/host-tests/test_deque $(B)/host-tests/test_deque_tsan
$(B)/host-tests/test_deque: tests/host/test_deque.c lib/threads/deque.c lib/threads/deque.h tests/host/check.h
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$@)$(HOSTCC) $(HOST_TCFLAGS) -pthread -o $@ tests/host/test_deque.c lib/threads/deque.c

$(B)/host-tests/test_deque_tsan: tests/host/test_deque.c lib/threads/deque.c lib/threads/deque.h tests/host/check.h
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$@)$(HOSTCC) $(filter-out $(UNIT_SAN),$(HOST_TCFLAGS)) -fsanitize=thread -pthread -o $@ tests/host/test_deque.c lib/threads/deque.c

# The library for the host tests, layer by layer (lib/LAYERS): each list is a layer over the ones below
# it, and a test links only the layers it tests and those below, so a call up to a layer it does not link
# fails its build (make layers checks every call).
LIB_BASE_SRC := lib/platform/host_sys.c lib/platform/host_spin.c $(HOST_LIBASM) $(wildcard lib/base/*.c)
LIB_WAIT_SRC := $(LIB_BASE_SRC) $(wildcard lib/wait/*.c)

# Each library source is compiled once per sanitizer, into $(B)/host-tests/obj/{asan,tsan}/, and the tests link
# the objects of their layers (the same flags each test compiled them with before, once instead of a dozen
# times). tsan_obj/asan_obj(sources): the objects of those sources.
HT_ASAN_DIR := $(B)/host-tests/obj/asan
HT_TSAN_DIR := $(B)/host-tests/obj/tsan
HT_LIBFLAGS := -pthread -D_GNU_SOURCE -Wno-unused-parameter
HT_TSANFLAGS = $(filter-out $(UNIT_SAN),$(HOST_TCFLAGS)) -fsanitize=thread
asan_obj = $(patsubst %.S,$(HT_ASAN_DIR)/%.o,$(patsubst %.c,$(HT_ASAN_DIR)/%.o,$(1)))
tsan_obj = $(patsubst %.S,$(HT_TSAN_DIR)/%.o,$(patsubst %.c,$(HT_TSAN_DIR)/%.o,$(1)))
$(HT_ASAN_DIR)/%.o: %.c $(LIBHDRS) include/schedlab/abi.h
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$@)$(HOSTCC) $(HOST_TCFLAGS) $(HT_LIBFLAGS) -c -o $@ $<
$(HT_ASAN_DIR)/%.o: %.S
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$@)$(HOSTCC) $(HOST_TCFLAGS) $(HT_LIBFLAGS) -c -o $@ $<
$(HT_TSAN_DIR)/%.o: %.c $(LIBHDRS) include/schedlab/abi.h
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$@)$(HOSTCC) $(HT_TSANFLAGS) $(HT_LIBFLAGS) -c -o $@ $<
$(HT_TSAN_DIR)/%.o: %.S
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$@)$(HOSTCC) $(HT_TSANFLAGS) $(HT_LIBFLAGS) -c -o $@ $<
# The barrier and worker layers (and the tests of them) were built with -Wno-tsan (GCC cannot instrument
# their fences and says so); the layers below them build without it, as test_wait_tsan and test_uthread_tsan
# always did.
$(call tsan_obj,$(wildcard lib/barriers/*.c lib/workers/*.c)): HT_LIBFLAGS += -Wno-tsan

# The wait layer alone (no thread layer linked), under ASan/UBSan and again under TSan.
HOST_TESTS  += $(B)/host-tests/test_wait $(B)/host-tests/test_wait_tsan
$(B)/host-tests/test_wait: tests/host/test_wait.c tests/host/hostjob.h $(call asan_obj,$(LIB_WAIT_SRC)) $(LIBHDRS) tests/host/check.h
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$@)$(HOSTCC) $(HOST_TCFLAGS) -pthread -D_GNU_SOURCE -Wno-unused-parameter -o $@ tests/host/test_wait.c \
	    $(call asan_obj,$(LIB_WAIT_SRC))

$(B)/host-tests/test_wait_tsan: tests/host/test_wait.c tests/host/hostjob.h $(call tsan_obj,$(LIB_WAIT_SRC)) $(LIBHDRS) tests/host/check.h
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$@)$(HOSTCC) $(filter-out $(UNIT_SAN),$(HOST_TCFLAGS)) -fsanitize=thread -pthread -D_GNU_SOURCE \
	    -Wno-unused-parameter -o $@ tests/host/test_wait.c $(call tsan_obj,$(LIB_WAIT_SRC))

# User-level threads on the host backend (pthreads as processes); the test plays the kernel itself.
UTHREAD_SRC := $(LIB_WAIT_SRC) $(wildcard lib/threads/*.c)
HOST_TESTS  += $(B)/host-tests/test_uthread
$(B)/host-tests/test_uthread: tests/host/test_uthread.c tests/host/hostjob.h $(call asan_obj,$(UTHREAD_SRC)) $(LIBHDRS) tests/host/check.h
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$@)$(HOSTCC) $(HOST_TCFLAGS) -pthread -D_GNU_SOURCE -Wno-unused-parameter -o $@ tests/host/test_uthread.c $(call asan_obj,$(UTHREAD_SRC)) -lm

# The sync statistics a run of placed threads, every wait kind and every barrier shape publish
# (policy=adaptive's page, emulated).
HOST_TESTS  += $(B)/host-tests/test_syncstat
$(B)/host-tests/test_syncstat: tests/host/test_syncstat.c tests/host/hostjob.h $(call asan_obj,$(UTHREAD_SRC)) $(call asan_obj,$(wildcard lib/barriers/*.c)) $(LIBHDRS) tests/host/check.h
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$@)$(HOSTCC) $(HOST_TCFLAGS) -pthread -D_GNU_SOURCE -Wno-unused-parameter -o $@ tests/host/test_syncstat.c $(call asan_obj,$(UTHREAD_SRC)) \
	    $(call asan_obj,$(wildcard lib/barriers/*.c)) -lm

# The same under TSan (smaller runs; the library tells TSan about its stack switches).
HOST_TESTS  += $(B)/host-tests/test_uthread_tsan
$(B)/host-tests/test_uthread_tsan: tests/host/test_uthread.c tests/host/hostjob.h $(call tsan_obj,$(UTHREAD_SRC)) $(LIBHDRS) tests/host/check.h
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$@)$(HOSTCC) $(filter-out $(UNIT_SAN),$(HOST_TCFLAGS)) -fsanitize=thread -pthread -D_GNU_SOURCE \
	    -Wno-unused-parameter -o $@ tests/host/test_uthread.c $(call tsan_obj,$(UTHREAD_SRC)) -lm

# Inline runs (a joined thread on its joiner's stack), under ASan/UBSan and under TSan.
HOST_TESTS  += $(B)/host-tests/test_uthread_inline $(B)/host-tests/test_uthread_inline_tsan
$(B)/host-tests/test_uthread_inline: tests/host/test_uthread_inline.c tests/host/hostjob.h $(call asan_obj,$(UTHREAD_SRC)) $(LIBHDRS) tests/host/check.h
	@mkdir -p $(dir $@)
	$(HOSTCC) $(HOST_TCFLAGS) -pthread -D_GNU_SOURCE -Wno-unused-parameter -o $@ tests/host/test_uthread_inline.c $(call asan_obj,$(UTHREAD_SRC)) -lm

$(B)/host-tests/test_uthread_inline_tsan: tests/host/test_uthread_inline.c tests/host/hostjob.h $(call tsan_obj,$(UTHREAD_SRC)) $(LIBHDRS) tests/host/check.h
	@mkdir -p $(dir $@)
	$(HOSTCC) $(filter-out $(UNIT_SAN),$(HOST_TCFLAGS)) -fsanitize=thread -pthread -D_GNU_SOURCE \
	    -Wno-unused-parameter -o $@ tests/host/test_uthread_inline.c $(call tsan_obj,$(UTHREAD_SRC)) -lm

# Barriers (every shape x wait kind) on the host backend, and the loop schedulers; each under ASan/UBSan
# and again under TSan. test_barrier plays the kernel itself (host_job, host_start_proc).
BARRIER_SRC := $(UTHREAD_SRC) $(wildcard lib/barriers/*.c)
BARRIER_CFLAGS = -pthread -D_GNU_SOURCE -Wno-unused-parameter
HOST_TESTS  += $(B)/host-tests/test_barrier $(B)/host-tests/test_barrier_tsan
HOST_TESTS  += $(B)/host-tests/test_loopsched $(B)/host-tests/test_loopsched_tsan
$(B)/host-tests/test_barrier: tests/host/test_barrier.c $(call asan_obj,$(BARRIER_SRC)) $(LIBHDRS) tests/host/check.h
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$@)$(HOSTCC) $(HOST_TCFLAGS) $(BARRIER_CFLAGS) -o $@ tests/host/test_barrier.c $(call asan_obj,$(BARRIER_SRC))

$(B)/host-tests/test_barrier_tsan: tests/host/test_barrier.c $(call tsan_obj,$(BARRIER_SRC)) $(LIBHDRS) tests/host/check.h
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$@)$(HOSTCC) $(filter-out $(UNIT_SAN),$(HOST_TCFLAGS)) -fsanitize=thread -Wno-tsan $(BARRIER_CFLAGS) -o $@ \
	    tests/host/test_barrier.c $(call tsan_obj,$(BARRIER_SRC))

$(B)/host-tests/test_loopsched: tests/host/test_loopsched.c lib/loops/loopsched.c $(LIBHDRS) tests/host/check.h
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$@)$(HOSTCC) $(HOST_TCFLAGS) $(BARRIER_CFLAGS) -o $@ tests/host/test_loopsched.c lib/loops/loopsched.c -lm

$(B)/host-tests/test_loopsched_tsan: tests/host/test_loopsched.c lib/loops/loopsched.c $(LIBHDRS) tests/host/check.h
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$@)$(HOSTCC) $(filter-out $(UNIT_SAN),$(HOST_TCFLAGS)) -fsanitize=thread -Wno-tsan $(BARRIER_CFLAGS) -o $@ \
	    tests/host/test_loopsched.c lib/loops/loopsched.c -lm

# The event log's ring (lib/base/eventlog.h): header-only, with sl_plat_proc/ticks played by the test.
HOST_TESTS  += $(B)/host-tests/test_ulog
$(B)/host-tests/test_ulog: tests/host/test_ulog.c lib/base/eventlog.h lib/platform/platform.h include/schedlab/abi.h tests/host/check.h
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$@)$(HOSTCC) $(HOST_TCFLAGS) -o $@ tests/host/test_ulog.c

$(B)/host-tests/test_allot: tests/host/test_allot.c kernel/sched/allot.c kernel/sched/allot.h tests/host/check.h
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$@)$(HOSTCC) $(HOST_TCFLAGS) -o $@ tests/host/test_allot.c kernel/sched/allot.c


# Thread placement (lib/threads/place.c: the pure decision) and pinned threads (lib/threads/uthread.c) on
# the host backend, under ASan/UBSan and again under TSan.
PLACE_SRC := $(UTHREAD_SRC)
HOST_TESTS  += $(B)/host-tests/test_place $(B)/host-tests/test_place_tsan
$(B)/host-tests/test_place: tests/host/test_place.c tests/host/hostjob.h $(call asan_obj,$(PLACE_SRC)) $(LIBHDRS) tests/host/check.h
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$@)$(HOSTCC) $(HOST_TCFLAGS) -pthread -D_GNU_SOURCE -Wno-unused-parameter -o $@ tests/host/test_place.c $(call asan_obj,$(PLACE_SRC))

$(B)/host-tests/test_place_tsan: tests/host/test_place.c tests/host/hostjob.h $(call tsan_obj,$(PLACE_SRC)) $(LIBHDRS) tests/host/check.h
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$@)$(HOSTCC) $(filter-out $(UNIT_SAN),$(HOST_TCFLAGS)) -fsanitize=thread -pthread -D_GNU_SOURCE \
	    -Wno-unused-parameter -o $@ tests/host/test_place.c $(call tsan_obj,$(PLACE_SRC))

# Worker runs under a changing allotment (process control, re-homed workers), every shape x wait kind.
WORKERS_SRC := $(BARRIER_SRC) $(wildcard lib/workers/*.c)
HOST_TESTS  += $(B)/host-tests/test_workers $(B)/host-tests/test_workers_tsan
# test_workers widens the window before a futex wait (its __wrap_sl_sys_futex_wait)
WORKERS_WRAP = -Wl,--wrap=sl_sys_futex_wait
$(B)/host-tests/test_workers: tests/host/test_workers.c tests/host/hostjob.h $(call asan_obj,$(WORKERS_SRC)) $(LIBHDRS) tests/host/check.h
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$@)$(HOSTCC) $(HOST_TCFLAGS) $(BARRIER_CFLAGS) $(WORKERS_WRAP) -o $@ tests/host/test_workers.c $(call asan_obj,$(WORKERS_SRC))

$(B)/host-tests/test_workers_tsan: tests/host/test_workers.c tests/host/hostjob.h $(call tsan_obj,$(WORKERS_SRC)) $(LIBHDRS) tests/host/check.h
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$@)$(HOSTCC) $(filter-out $(UNIT_SAN),$(HOST_TCFLAGS)) -fsanitize=thread -Wno-tsan $(BARRIER_CFLAGS) \
	    $(WORKERS_WRAP) -o $@ tests/host/test_workers.c $(call tsan_obj,$(WORKERS_SRC))

# The host backend's crowding estimate (lib/platform/host_spin.c: runnable processes vs CPUs), pure logic, under
# ASan/UBSan and again under TSan (its counters are updated from many threads).
HOST_TESTS  += $(B)/host-tests/test_host_spin $(B)/host-tests/test_host_spin_tsan
$(B)/host-tests/test_host_spin: tests/host/test_host_spin.c lib/platform/host_spin.c lib/platform/host_spin.h tests/host/check.h
	@mkdir -p $(dir $@)
	$(HOSTCC) $(HOST_TCFLAGS) -pthread -o $@ tests/host/test_host_spin.c lib/platform/host_spin.c

$(B)/host-tests/test_host_spin_tsan: tests/host/test_host_spin.c lib/platform/host_spin.c lib/platform/host_spin.h tests/host/check.h
	@mkdir -p $(dir $@)
	$(HOSTCC) $(filter-out $(UNIT_SAN),$(HOST_TCFLAGS)) -fsanitize=thread -pthread -o $@ tests/host/test_host_spin.c lib/platform/host_spin.c

# The arithmetic of user-pointer checks (kernel/uaccess.h).
HOST_TESTS  += $(B)/host-tests/test_uaccess
$(B)/host-tests/test_uaccess: tests/host/test_uaccess.c kernel/uaccess.h include/schedlab/abi.h tests/host/check.h
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$@)$(HOSTCC) $(HOST_TCFLAGS) -o $@ tests/host/test_uaccess.c

# The machine model's caches (tools/model/cache.c, pure C) against a reference model, under ASan/UBSan and
# again under TSan (the plugin calls it from one host thread per hart; a test hammers it from several).
# A perturbed deterministic boot's draws (kernel/perturb.h): the generator and PCT's change points.
HOST_TESTS  += $(B)/host-tests/test_perturb
$(B)/host-tests/test_perturb: tests/host/test_perturb.c kernel/perturb.h tests/host/check.h
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$@)$(HOSTCC) $(HOST_TCFLAGS) -o $@ tests/host/test_perturb.c

# The paced hart's schedule (tools/model/pace.c), pure arithmetic with a fake clock.
HOST_TESTS  += $(B)/host-tests/test_pace
$(B)/host-tests/test_pace: tests/host/test_pace.c tools/model/pace.c tools/model/pace.h tests/host/check.h
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$@)$(HOSTCC) $(HOST_TCFLAGS) -Itools/model -o $@ tests/host/test_pace.c tools/model/pace.c

HOST_TESTS  += $(B)/host-tests/test_cache_model $(B)/host-tests/test_cache_model_tsan
$(B)/host-tests/test_cache_model: tests/host/test_cache_model.c tools/model/cache.c tools/model/cache.h tests/host/cache_ref.h tests/host/check.h
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$@)$(HOSTCC) $(HOST_TCFLAGS) -Itools/model -pthread -o $@ tests/host/test_cache_model.c tools/model/cache.c

# The model's measurement of its own lookups (tools/model/selfcost.c): every path has its figure.
HOST_TESTS  += $(B)/host-tests/test_selfcost
$(B)/host-tests/test_selfcost: tests/host/test_selfcost.c tools/model/selfcost.c tools/model/selfcost.h tools/model/cache.c tools/model/cache.h tests/host/check.h
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$@)$(HOSTCC) $(HOST_TCFLAGS) -Itools/model -o $@ tests/host/test_selfcost.c tools/model/selfcost.c tools/model/cache.c

$(B)/host-tests/test_cache_model_tsan: tests/host/test_cache_model.c tools/model/cache.c tools/model/cache.h tests/host/cache_ref.h tests/host/check.h
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$@)$(HOSTCC) $(filter-out $(UNIT_SAN),$(HOST_TCFLAGS)) -fsanitize=thread -Itools/model -pthread -o $@ \
	    tests/host/test_cache_model.c tools/model/cache.c

# The kernel's deadline queue (kernel/deadline.c), built as the simulator builds kernel code (-DSCHEDLAB_SIM).
HOST_TESTS  += $(B)/host-tests/test_deadline
$(B)/host-tests/test_deadline: tests/host/test_deadline.c kernel/deadline.c kernel/deadline.h kernel/kernel.h kernel/spinlock.h \
                               tools/sim/sim_arch.h tests/host/check.h
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$@)$(HOSTCC) $(HOST_TCFLAGS) $(SIM_ARCH) -o $@ tests/host/test_deadline.c kernel/deadline.c

# Which keys a job may add to its RESULT (kernel/resultkeys.h).
HOST_TESTS  += $(B)/host-tests/test_resultkeys
$(B)/host-tests/test_resultkeys: tests/host/test_resultkeys.c kernel/resultkeys.h tests/host/check.h
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$@)$(HOSTCC) $(HOST_TCFLAGS) -o $@ tests/host/test_resultkeys.c -lm

# The scenario parser under random and mutated bootargs (tests/host/fuzz_scenario.c), fixed seed, about
# 20 s (SCHEDLAB_FUZZ_SECONDS=N for longer). The app specs are read from the host build's app objects.
FUZZ_SPECS  := $(patsubst %,$(HOST_OUT)/obj/apps/%.o,$(APPS))
FUZZ_SRC    := tests/host/fuzz_scenario.c tests/host/fuzz_check.c kernel/scenario.c kernel/scenario_words.c kernel/printf.c
FUZZ_DEFS   := -DFUZZ_SPEC_DIR='"$(HOST_OUT)/obj/apps"'
HOST_TESTS  += $(B)/host-tests/fuzz_scenario
$(B)/host-tests/fuzz_scenario: $(FUZZ_SRC) tests/host/fuzz_scenario.h kernel/scenario.h kernel/kprintf.h include/schedlab/abi.h $(FUZZ_SPECS)
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$@)$(HOSTCC) $(HOST_TCFLAGS) $(FUZZ_DEFS) -o $@ $(FUZZ_SRC)

# `make fuzz` (not part of make test): libFuzzer for FUZZ_SECONDS (default 300) when clang is installed,
# seeded with the same corpus and dictionary; otherwise the standalone fuzzer for as long.
FUZZ_SECONDS ?= 300
CLANG       ?= clang
.PHONY: fuzz
fuzz: $(B)/host-tests/fuzz_scenario
	@mkdir -p $(B)/fuzz/seeds $(B)/fuzz/corpus
	@if command -v $(CLANG) >/dev/null 2>&1; then \
	    set -e; \
	    $(CLANG) -std=gnu11 -O1 -g -DSCHEDLAB_HOST -DFUZZ_LIBFUZZER $(FUZZ_DEFS) -Ikernel -Ilib -Iinclude \
	        -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -o $(B)/fuzz/fuzz_scenario_lf $(FUZZ_SRC); \
	    $(B)/host-tests/fuzz_scenario --write-seeds $(B)/fuzz/seeds --write-dict $(B)/fuzz/scenario.dict; \
	    $(B)/fuzz/fuzz_scenario_lf -max_total_time=$(FUZZ_SECONDS) -dict=$(B)/fuzz/scenario.dict \
	        -artifact_prefix=$(B)/fuzz/ -print_final_stats=1 $(B)/fuzz/corpus $(B)/fuzz/seeds; \
	else \
	    echo "fuzz: $(CLANG) not found (apt-get install clang for libFuzzer); running the standalone fuzzer"; \
	    SCHEDLAB_FUZZ_SECONDS=$(FUZZ_SECONDS) $(B)/host-tests/fuzz_scenario; \
	fi

# The portable core (kernel/sched/life.[ch]) and the console contract's formatter (kernel/contract.c) on a
# fake hart side with a FIFO policy: the third machine they build for, beside the kernel and tools/sim.
HOST_TESTS  += $(B)/host-tests/test_life
$(B)/host-tests/test_life: tests/host/test_life.c kernel/sched/life.c kernel/sched/life.h kernel/contract.c \
                           kernel/contract.h kernel/proc.h kernel/cpu.h tests/host/check.h
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$@)$(HOSTCC) $(HOST_TCFLAGS) $(SIM_ARCH) -D_GNU_SOURCE -Wno-unused-parameter -o $@ \
	    tests/host/test_life.c kernel/sched/life.c kernel/contract.c

# The lock order checked at acquire (kernel/spinlock.h with KCHECKS): the kernel's acquire/release and
# spin_rank_panic, a host hart for tp.
HOST_TESTS  += $(B)/host-tests/test_lockrank
$(B)/host-tests/test_lockrank: tests/host/test_lockrank.c kernel/spinlock.c kernel/spinlock.h kernel/vclock.h tests/host/check.h
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$@)$(HOSTCC) $(HOST_TCFLAGS) $(SIM_ARCH) -DKCHECKS -o $@ tests/host/test_lockrank.c kernel/spinlock.c

# Prerequisites expanded a second time, when make runs the rule: a HOST_TESTS += anywhere (after this rule
# too, or in another included file) is built and run, not only listed. The tests run NPROC at a time (the
# fuzzer's 20 s and the barrier tests' beside the rest), each into <test>.log, printed whole when it ends
# ("== <test>" and its output, as one write); make fails if any test fails, after the others have finished.
.PHONY: host-test
.SECONDEXPANSION:
host-test: $$(HOST_TESTS)
	@printf '%s\n' $(HOST_TESTS) | xargs -P $(NPROC) -I{} sh -c \
	    'if {} > {}.log 2>&1; then s=ok; else s=FAILED; fi; printf "== %s\n%s\n" "{}" "$$(cat {}.log)"; \
	     [ $$s = ok ] || { echo "== {} FAILED (its output: {}.log)"; exit 1; }'
