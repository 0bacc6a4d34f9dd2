# lib/host.mk - build lib/ and apps/ for Linux (pthreads backend, lib/*/host_*.c).
# Included from the top Makefile.
#
#   make host                          build/host/<app> for every app (apps/<app>.c or apps/<app>/)
#   make host HOST_SAN="-fsanitize=address,undefined" HOST_OUT=build/host-asan
#   make host HOST_SAN=-fsanitize=thread HOST_OUT=build/host-tsan
#
# Run: build/host/<app> [procs=N] [seed=N] [key=value ...]; exit status 0 iff check=ok. The keys go through
# the kernel's scenario parser (kernel/scenario.c, compiled here with -DSCHEDLAB_HOST; lib/start/host_scenario.c).
# Kernel-only sources (lib/*/rv_*) are left out. Each app's main() is renamed
# sl_app_main: on the host, main() is the backend's (lib/start/host_main.c), which
# plays the kernel and runs the app's main as process 0.

HOST_OUT    ?= $(B)/host
HOST_SAN    ?=
HOST_CFLAGS ?= -std=gnu11 -O2 -g -pthread -Wall -Wextra -Werror -Wno-unused-parameter \
               -D_GNU_SOURCE -Ilib -Iinclude
HOST_LIBSRC := $(call lib_not,rv_,$(wildcard lib/*/*.c))
HOST_LIBOBJ := $(patsubst lib/%.c,$(HOST_OUT)/obj/lib/%.o,$(HOST_LIBSRC))
# The user-level context switch (uthread.c) is assembly, one file per host
# architecture: lib/platform/host_uctx_<arch>.S. Without one (e.g. aarch64) uthread.c
# stops the build with an #error that says so.
HOST_ARCH   := $(shell $(HOSTCC) -dumpmachine | cut -d- -f1)
HOST_LIBASM := $(wildcard lib/platform/host_uctx_$(HOST_ARCH).S)
HOST_LIBOBJ += $(patsubst lib/%.S,$(HOST_OUT)/obj/lib/%.o,$(HOST_LIBASM))
HOST_APPS   := $(patsubst %,$(HOST_OUT)/%,$(APPS))
# The kernel's scenario parser and its formatter, which host_scenario.c runs on an app's command line.
HOST_KSRC   := kernel/scenario.c kernel/scenario_words.c kernel/printf.c
HOST_LIBOBJ += $(patsubst kernel/%.c,$(HOST_OUT)/obj/kernel/%.o,$(HOST_KSRC))

host: $(HOST_APPS)

$(HOST_OUT)/%: $(HOST_OUT)/obj/apps/%.o $(HOST_LIBOBJ)
	$(call quiet,HOSTLD,$@)$(HOSTCC) $(HOST_CFLAGS) $(HOST_SAN) -o $@ $^

$(HOST_OUT)/obj/apps/%.o: apps/%.c $(LIBHDRS) include/schedlab/abi.h
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$<)$(HOSTCC) $(HOST_CFLAGS) $(HOST_SAN) -Dmain=sl_app_main -c -o $@ $<

# Directory apps (apps/<name>/*.c, see the top Makefile) are combined into obj/apps/<name>.o.
$(foreach a,$(APPDIRS),$(eval $(call DIR_APP,$(HOST_OUT)/obj,$(a),$(HOSTCC) -nostdlib)))

$(HOST_OUT)/obj/lib/%.o: lib/%.c $(LIBHDRS) include/schedlab/abi.h
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$<)$(HOSTCC) $(HOST_CFLAGS) $(HOST_SAN) -c -o $@ $<

$(HOST_OUT)/obj/kernel/%.o: kernel/%.c kernel/scenario.h kernel/kprintf.h include/schedlab/abi.h
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$<)$(HOSTCC) $(HOST_CFLAGS) $(HOST_SAN) -DSCHEDLAB_HOST -Ikernel -c -o $@ $<

$(HOST_OUT)/obj/lib/%.o: lib/%.S
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$<)$(HOSTCC) $(HOST_CFLAGS) $(HOST_SAN) -c -o $@ $<

# Host tools built with lib/ pieces: the loop-scheduler simulation (tools/host/loopsched.c, part of
# `make host`) and the pthread/OpenMP barrier benchmark for `make bench` (needs gcc -fopenmp).
host: $(HOST_OUT)/loopsched
$(HOST_OUT)/loopsched: tools/host/loopsched.c lib/loops/loopsched.c $(LIBHDRS)
	@mkdir -p $(dir $@)
	$(call quiet,HOSTLD,$@)$(HOSTCC) $(HOST_CFLAGS) $(HOST_SAN) -o $@ tools/host/loopsched.c lib/loops/loopsched.c

$(HOST_OUT)/barbench: tools/host/barbench.c
	@mkdir -p $(dir $@)
	$(call quiet,HOSTLD,$@)$(HOSTCC) $(HOST_CFLAGS) -fopenmp -o $@ tools/host/barbench.c

# The objects are intermediate files to make, but rebuilding all of lib/ for every app is slow: the top
# Makefile's bare .SECONDARY: keeps every one. (A .SECONDARY with a list here replaced it, and make deleted
# build/u/*.o after every build.)
