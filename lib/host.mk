# lib/host.mk - build lib/ and apps/ for Linux (pthreads backend, lib/host_*.c).
# Included from the top Makefile.
#
#   make host                          build/host/<app> for every apps/*.c
#   make host HOST_SAN="-fsanitize=address,undefined" HOST_OUT=build/host-asan
#   make host HOST_SAN=-fsanitize=thread HOST_OUT=build/host-tsan
#
# Run: build/host/<app> [procs=N] [seed=N] [key=value ...]; exit status 0 iff check=ok.
# Kernel-only sources (lib/rv_*) are left out. Each app's main() is renamed
# sl_app_main: on the host, main() is the backend's (lib/host_main.c), which
# plays the kernel and runs the app's main as process 0.

HOST_OUT    ?= $(B)/host
HOST_SAN    ?=
HOST_CFLAGS ?= -std=gnu11 -O2 -g -pthread -Wall -Wextra -Werror -Wno-unused-parameter \
               -D_GNU_SOURCE -Ilib
HOST_LIBSRC := $(filter-out lib/rv_%,$(wildcard lib/*.c))
HOST_LIBOBJ := $(patsubst lib/%.c,$(HOST_OUT)/obj/lib/%.o,$(HOST_LIBSRC))
HOST_APPS   := $(patsubst %,$(HOST_OUT)/%,$(APPS))

host: $(HOST_APPS)

$(HOST_OUT)/%: $(HOST_OUT)/obj/apps/%.o $(HOST_LIBOBJ)
	$(HOSTCC) $(HOST_CFLAGS) $(HOST_SAN) -o $@ $^

$(HOST_OUT)/obj/apps/%.o: apps/%.c $(wildcard lib/*.h)
	@mkdir -p $(dir $@)
	$(HOSTCC) $(HOST_CFLAGS) $(HOST_SAN) -Dmain=sl_app_main -c -o $@ $<

$(HOST_OUT)/obj/lib/%.o: lib/%.c $(wildcard lib/*.h)
	@mkdir -p $(dir $@)
	$(HOSTCC) $(HOST_CFLAGS) $(HOST_SAN) -c -o $@ $<

# Keep the objects: they are intermediate files to make, but rebuilding all of
# lib/ for every app is slow.
.SECONDARY: $(HOST_LIBOBJ) $(patsubst %,$(HOST_OUT)/obj/apps/%.o,$(APPS))
