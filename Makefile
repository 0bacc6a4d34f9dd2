# schedlab - the only entry point a user needs.
#   make                 build everything the tools need: build/kernel.elf with every app embedded, the firmware
#                        of deterministic boots, the machine model's plugin, the simulator (make sim) and the apps
#                        for the host (make host)
#   make qemu CPUS=n BOOTARGS="..."   boot once; exit status = verdict
#                        (DETERMINISTIC=1: virtual clock, the same console byte for byte on any host;
#                        MODEL=<profile>[,key=value...]: under the machine model, tools/model/README.md)
#   make run             install what is missing, build, run the default policy comparison
#   make test            the whole test suite: host unit tests, the simulator's, every QEMU test, make layers (lib/'s and
#                        kernel/'s layer checks); builds with -j(cores) and runs pytest on every core (pytest-xdist),
#                        then prints the 15 slowest tests
#   make check           the fast tier for the edit-test loop: the host unit
#                        tests, the layer checks, the simulator's tests and a few boots per policy (the tests
#                        tests/conftest.py's CHECK_TIER marks `check`; pytest -m check runs the same)
#   make deps            install the toolchain and Python packages
#   make docs            the documentation site (MkDocs) into build/docs/, references generated from the build
#   make host            build lib/ and apps/ for the host (pthreads) into build/host/
#   make bench           barrier (and thread) costs on QEMU at CPUS=2 and on the host: BENCH lines (schedlab bench)
#   make format          apply .clang-format to the C files of kernel/, firmware/, lib/ and apps/
#   make sim             the simulator of the policies at any number of harts (tools/sim/sim.mk)
#   make fuzz            the scenario parser under libFuzzer (clang) for FUZZ_SECONDS; not part of make test
#   make qemu-gdb        boot as make qemu, stopped at the first instruction, waiting for GDB on GDBPORT
#   V=1                  print the full commands instead of one short line per file ("CC kernel/proc.c")
#   KCHECKS=1            the checked kernel: lock order at every acquire, the policy contract at every hook
#                        (kernel/spinlock.h, kernel/sched/hooks.h); make test builds and tests it

CROSS    ?= riscv64-unknown-elf-
CC        = $(CROSS)gcc
OBJCOPY   = $(CROSS)objcopy
HOSTCC   ?= cc
PYTHON   ?= python3
QEMU     ?= qemu-system-riscv64
# The host's cores: make test and make check build with a job per core and run pytest on as many workers, and
# make host-test runs that many tests at once.
NPROC    ?= $(shell nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
NPROC    := $(NPROC)
CPUS     ?= 2
MEM      ?= 256M
# QEMU's machine: virt with ACLINT, whose SSWI lets the kernel send IPIs without the SBI (MACHINE=virt: none)
MACHINE  ?= virt,aclint=on
BOOTARGS ?=
# make qemu's default watchdog, added as timeout= unless BOOTARGS has one (empty: none), so no run hangs.
WATCHDOG ?= 600s
WATCHDOG_ARG = $(if $(WATCHDOG),$(if $(findstring timeout=,$(BOOTARGS)),,timeout=$(WATCHDOG)))
# Extra QEMU options, e.g. QEMUEXTRA="-numa node,..." (see README).
QEMUEXTRA ?=
# Deterministic mode (kernel/vclock.h): DETERMINISTIC=1, or clock=virtual in BOOTARGS, runs every hart on one
# host thread with an instruction-counting clock (2^ICOUNT_SHIFT ns per instruction, harts summed) and adds
# clock=virtual. Same flags as tools/py/schedlab/qemu.py's DETERMINISTIC_FLAGS.
DETERMINISTIC ?=
ICOUNT_SHIFT  ?= 0
DET_QEMUFLAGS  = -icount shift=$(ICOUNT_SHIFT),sleep=off -accel tcg,thread=single
DET_ON         = $(or $(filter-out 0 no off,$(DETERMINISTIC)),$(findstring clock=virtual,$(BOOTARGS)))
DET_ARG        = $(if $(DET_ON),$(if $(findstring clock=virtual,$(BOOTARGS)),,clock=virtual))
# The machine model (tools/model/README.md): MODEL=<profile>[,key=value...] loads the plugin built from
# tools/model/*.c with the host compiler; unset or none: no model, the command line exactly as without it.
# tools/py/schedlab/model.py validates the spec (a bad one stops make here, with its message, before
# anything is built or booted) and gives the plugin's arguments, -numa and the bootargs it adds.
MODEL         ?=
MODEL_ON       = $(filter-out none,$(strip $(MODEL)))
MODEL_SRCS    := $(wildcard tools/model/*.c)
MODEL_SO       = $(if $(MODEL_SRCS),$(B)/model/model.so)
MODEL_CFLAGS  ?= -O2 -g -shared -fPIC -fvisibility=hidden -Wall -Wextra -Wno-unused-parameter
# The plugin API the plugin is built for: the installed QEMU's (tools/model/qemu_api.sh; MODEL_API=n overrides).
# The stamp holds the last value, so a QEMU upgrade rebuilds the plugin.
MODEL_API     ?= $(shell sh tools/model/qemu_api.sh $(QEMU))
MODEL_API_STAMP  = $(B)/model/api.stamp
MODEL_TOOL     = PYTHONPATH=tools/py $(PYTHON) -m schedlab.model
# Deterministic boots load QEMU's device tree for the machine less the nodes no one reads (devtree.py: OpenSBI's
# driver lookups walk it, and under -icount every instruction is host time); as the harness does.
DEVTREE_TOOL   = PYTHONPATH=tools/py $(PYTHON) -m schedlab.devtree
ifneq ($(MODEL_ON),)
MODEL_CHECK   := $(shell $(MODEL_TOOL) check '$(MODEL)' --harts $(CPUS) 2>&1; echo " status=$$?")
ifneq ($(lastword $(MODEL_CHECK)),status=0)
$(error $(filter-out status=%,$(MODEL_CHECK)))
endif
endif

B := build
# A link follows its list of inputs, not only their timestamps (a file removed or renamed leaves nothing newer):
# $(call list_stamp,file,list) keeps the list in file, rewritten only when it changes, and names the file.
# It is written while make reads this file (so make -q and -t see it), except by a make whose goals are all
# under SIM_OUT: the tests build simulators with EXTRA_POLICIES of their own beside boots of build/kernel.elf,
# and such a make rewrote the kernel's list - the next make of the kernel relinked it under those boots.
stamp_goals = $(if $(MAKECMDGOALS),$(if $(SIM_OUT),$(filter-out $(SIM_OUT)/%,$(MAKECMDGOALS)),x),x)
list_stamp = $(if $(stamp_goals),$(shell mkdir -p $(dir $(1)) && { [ "$$(cat $(1) 2>/dev/null)" = "$(strip $(2))" ] || \
               echo "$(strip $(2))" > $(1); }))$(1)

# Quiet build (as kbuild and xv6): each rule prints one line, "  CC      kernel/proc.c"; V=1 prints the
# whole command instead. Use in a recipe as $(call quiet,TAG,file)<command> (one shell line: the @ that
# silences the command applies to it, and the line's status is the command's). make -s prints nothing.
V ?= 0
ifeq ($(V),1)
quiet =
else ifneq ($(findstring s,$(firstword -$(MAKEFLAGS))),)
quiet = @
else
quiet = @printf '  %-7s %s\n' '$(1)' '$(2)';
endif

# ---- kernel: S-mode, no floating point of its own (FP state is the processes') ----
KCFLAGS := -march=rv64imac_zicsr_zifencei -mabi=lp64 -mcmodel=medany -O2 -g \
           -ffreestanding -fno-builtin -fno-tree-loop-distribute-patterns -nostdlib -fno-common -fno-omit-frame-pointer \
           -fno-stack-protector -fno-pie -no-pie -Wall -Wextra -Werror -Wno-unused-parameter \
           -Ikernel -Ilib -Iinclude
# KCHECKS=1 (make test's and make check's default): the contract checks compiled in; changing it rebuilds the kernel objects
# (the stamp holds the last value). Exported, so the builds the tests make (EXTRA_POLICIES=...) match.
KCHECKS ?= $(if $(filter test check,$(MAKECMDGOALS)),1,0)
export KCHECKS
ifeq ($(KCHECKS),1)
KCFLAGS += -DKCHECKS
endif
KCHECKS_STAMP := $(B)/kernel/kchecks.stamp
$(shell mkdir -p $(B)/kernel && { [ "$$(cat $(KCHECKS_STAMP) 2>/dev/null)" = "$(KCHECKS)" ] || echo $(KCHECKS) > $(KCHECKS_STAMP); })
# A policy is a file of kernel/sched or, when it has several, a folder of its own there (kernel/sched/adaptive/).
KSRCS := $(wildcard kernel/*.c) $(sort $(wildcard kernel/sched/*.c kernel/sched/*/*.c))
KASMS := $(wildcard kernel/*.S) $(sort $(wildcard kernel/sched/*.S kernel/sched/*/*.S))
KHDRS := $(wildcard kernel/*.h kernel/sched/*.h kernel/sched/*/*.h)
# Policy files from outside kernel/sched (a policy registers itself: nothing else to edit), e.g. the test
# tree's: make B=build-fifo EXTRA_POLICIES=tests/policies/fifo.c
EXTRA_POLICIES ?=
KOBJS := $(patsubst %.c,$(B)/%.o,$(KSRCS)) $(patsubst %.S,$(B)/%.o,$(KASMS)) $(B)/kernel/apps_blob.o \
         $(patsubst %.c,$(B)/extra/%.o,$(EXTRA_POLICIES))

# ---- apps: U-mode, rv64gc with doubles, each its own ELF linked at SL_TEXT_VA ----
UCFLAGS := -march=rv64gc -mabi=lp64d -mcmodel=medany -O2 -g -ffreestanding -fno-builtin -fno-tree-loop-distribute-patterns \
           -nostdlib -fno-common -fno-stack-protector -fno-pie -no-pie \
           -Wall -Wextra -Werror -Wno-unused-parameter -Ilib -Iinclude -DSL_TARGET_KERNEL
# An app is apps/<name>.c, or a directory apps/<name>/ whose *.c (and private *.h) make one app <name>:
# its objects are combined (ld -r) into one <name>.o, so every later step treats both kinds alike.
APPDIRS := $(patsubst apps/%/,%,$(sort $(dir $(wildcard apps/*/*.c))))
APPS    := $(sort $(basename $(notdir $(wildcard apps/*.c))) $(APPDIRS))
# App files from outside apps/ (an app is one file with its SL_APP spec: nothing else to edit), built into this
# kernel as job=<file name>, e.g. the app tutorial's: make B=build/mine EXTRA_APPS=sumsq.c
EXTRA_APPS ?=
EXTRA_APP_NAMES := $(basename $(notdir $(EXTRA_APPS)))
$(if $(filter $(APPS),$(EXTRA_APP_NAMES)),$(error EXTRA_APPS: $(filter $(APPS),$(EXTRA_APP_NAMES)) is already an app in apps/: rename the file))
# The apps embedded in the kernel: apps/'s and those (the host build and the simulator take apps/'s only)
KERNEL_APPS := $(sort $(APPS) $(EXTRA_APP_NAMES))
# app_parts(objdir, name): the objects of directory app <name>, under objdir
app_parts = $(patsubst apps/%.c,$(1)/apps/%.o,$(wildcard apps/$(2)/*.c))
# The library, one folder per layer (lib/LAYERS, lowest first); host_* files are the Linux backend's
# (lib/host.mk), not the kernel target's.
LIBHDRS := $(wildcard lib/*.h lib/*/*.h)
# lib_not(prefix, files): the files whose name does not start with prefix
lib_not  = $(foreach f,$(2),$(if $(filter $(1)%,$(notdir $(f))),,$(f)))
ULIBSRC := $(call lib_not,host_,$(wildcard lib/*/*.c))
ULIBASM := $(call lib_not,host_,$(wildcard lib/*/*.S))
ULIBOBJ := $(patsubst %.c,$(B)/u/%.o,$(ULIBSRC)) $(patsubst %.S,$(B)/u/%.o,$(ULIBASM))
APPELFS := $(patsubst %,$(B)/apps/%.elf,$(KERNEL_APPS))

# The harness, from this checkout whether or not `pip install -e .` (make deps) installed its command.
SCHEDLAB = $(PYTHON) tools/schedlab

.PHONY: all qemu qemu-gdb run test deps host host-test clean apps format
.SECONDARY:          # keep object files between builds
# Everything the tools need (schedlab reproduce and run --sim build what is missing themselves, too); the
# simulator and the host build are added below, after their makefiles.
all: $(B)/kernel.elf $(FIRMWARE) $(MODEL_SO)

$(B)/kernel.elf: $(KOBJS) linker/kernel.ld $(call list_stamp,$(B)/kernel/objects.list,$(KOBJS))
	$(call quiet,LD,$@)$(CC) $(KCFLAGS) -T linker/kernel.ld -o $@ $(KOBJS)

$(B)/kernel/%.o: kernel/%.c $(KHDRS) include/schedlab/abi.h $(KCHECKS_STAMP)
	@mkdir -p $(dir $@)
	$(call quiet,$(if $(filter %.S,$<),AS,CC),$<)$(CC) $(KCFLAGS) -c -o $@ $<

$(B)/extra/%.o: %.c $(KHDRS) include/schedlab/abi.h $(KCHECKS_STAMP)
	@mkdir -p $(dir $@)
	$(call quiet,CC,$<)$(CC) $(KCFLAGS) -Ikernel/sched -c -o $@ $<

$(B)/kernel/%.o: kernel/%.S kernel/param.h
	@mkdir -p $(dir $@)
	$(call quiet,$(if $(filter %.S,$<),AS,CC),$<)$(CC) $(KCFLAGS) -c -o $@ $<

# ---- the firmware of deterministic boots (firmware/fw.c): M-mode, in place of OpenSBI; it parses the device
# tree with the kernel's own fdt.c (and its string and printf), each function in a section of its own so the
# link keeps only what the firmware calls ----
FIRMWARE  := $(B)/firmware/fw.elf
FW_SRCS   := firmware/fw.c firmware/entry.S kernel/fdt.c kernel/string.c kernel/printf.c
FW_OBJS   := $(patsubst %,$(B)/firmware/%.o,$(notdir $(basename $(FW_SRCS))))
FWCFLAGS  := $(filter-out -DKCHECKS,$(KCFLAGS)) -Ifirmware -ffunction-sections -fdata-sections

$(FIRMWARE): $(FW_OBJS) firmware/fw.ld
	$(call quiet,LD,$@)$(CC) $(FWCFLAGS) -T firmware/fw.ld -Wl,--gc-sections -Wl,--no-warn-rwx-segments -o $@ $(FW_OBJS)

$(B)/firmware/%.o: firmware/%.c firmware/fw.h kernel/fdt.h $(KHDRS) include/schedlab/abi.h
	@mkdir -p $(@D)
	$(call quiet,CC,$<)$(CC) $(FWCFLAGS) -c -o $@ $<

$(B)/firmware/%.o: firmware/%.S firmware/fw.h
	@mkdir -p $(@D)
	$(call quiet,AS,$<)$(CC) $(FWCFLAGS) -c -o $@ $<

$(B)/firmware/%.o: kernel/%.c $(KHDRS) include/schedlab/abi.h
	@mkdir -p $(@D)
	$(call quiet,CC,$<)$(CC) $(FWCFLAGS) -c -o $@ $<

# The embedded apps: one .incbin per app ELF and a table the kernel looks names up in. The copies embedded
# have no debug sections (the kernel's loader reads only the program headers; tools read build/apps/), so
# every boot loads a kernel a sixth the size.
APPBLOBS := $(patsubst %,$(B)/kernel/apps/%.elf,$(KERNEL_APPS))
$(B)/kernel/apps/%.elf: $(B)/apps/%.elf
	@mkdir -p $(dir $@)
	$(call quiet,STRIP,$@)$(OBJCOPY) --strip-debug $< $@

$(B)/kernel/apps_blob.S: $(APPBLOBS) Makefile $(call list_stamp,$(B)/kernel/apps.list,$(KERNEL_APPS))
	@mkdir -p $(dir $@)
	$(call quiet,GEN,$@){ echo '/* generated by the Makefile: the app ELFs embedded in the kernel */'; \
	   echo '.section .rodata.apps, "a"'; \
	   for a in $(KERNEL_APPS); do echo ".balign 16"; echo "app_$$a: .incbin \"$(B)/kernel/apps/$$a.elf\""; echo "app_$${a}_end:"; done; \
	   for a in $(KERNEL_APPS); do echo "name_$$a: .asciz \"$$a\""; done; \
	   echo '.balign 8'; echo '.globl embedded_apps'; echo 'embedded_apps:'; \
	   for a in $(KERNEL_APPS); do echo "  .quad name_$$a, app_$$a, app_$${a}_end"; done; \
	   echo '  .quad 0, 0, 0'; } > $@

$(B)/kernel/apps_blob.o: $(B)/kernel/apps_blob.S $(APPBLOBS)
	$(call quiet,$(if $(filter %.S,$<),AS,CC),$<)$(CC) $(KCFLAGS) -c -o $@ $<

apps: $(APPELFS)

$(B)/apps/%.elf: $(B)/u/apps/%.o $(ULIBOBJ) linker/app.ld
	@mkdir -p $(dir $@)
	$(call quiet,LD,$@)$(CC) $(UCFLAGS) -T linker/app.ld -o $@ $< $(ULIBOBJ) -lgcc

$(B)/u/%.o: %.c $(LIBHDRS) include/schedlab/abi.h
	@mkdir -p $(dir $@)
	$(call quiet,$(if $(filter %.S,$<),AS,CC),$<)$(CC) $(UCFLAGS) -c -o $@ $<

$(foreach f,$(EXTRA_APPS),$(eval $(B)/u/apps/$(basename $(notdir $(f))).o: $(f) $(LIBHDRS) include/schedlab/abi.h))
$(addprefix $(B)/u/apps/,$(addsuffix .o,$(EXTRA_APP_NAMES))):
	@mkdir -p $(dir $@)
	$(call quiet,CC,$<)$(CC) $(UCFLAGS) -c -o $@ $<

$(B)/u/%.o: %.S
	@mkdir -p $(dir $@)
	$(call quiet,$(if $(filter %.S,$<),AS,CC),$<)$(CC) $(UCFLAGS) -c -o $@ $<

# Directory apps: <objdir>/apps/<name>.o from its parts; the parts also depend on the app's own headers.
# (1) objdir, (2) name, (3) the linker for ld -r
define DIR_APP
$(1)/apps/$(2).o: $(call app_parts,$(1),$(2))
	$$(call quiet,LD,$$@)$(3) -r -o $$@ $$^
$(call app_parts,$(1),$(2)): $(wildcard apps/$(2)/*.h)
endef
$(foreach a,$(APPDIRS),$(eval $(call DIR_APP,$(B)/u,$(a),$(CROSS)ld)))

# The scenario language's own keys (its global settings and every job's keys) as KEY lines, from the parser's
# tables by a host build (tools/docs/keytable.c): the harness reads it instead of a copy (schedlab.keytable).
KEYTABLE_SRCS := tools/docs/keytable.c kernel/scenario.c kernel/scenario_words.c kernel/printf.c
$(B)/scenario-keys.txt: $(KEYTABLE_SRCS) $(wildcard kernel/scenario*.h) kernel/resultkeys.h kernel/kprintf.h \
                        include/schedlab/abi.h
	@mkdir -p $(dir $@)
	$(call quiet,GEN,$@)$(HOSTCC) -std=gnu11 -O1 -Wall -Wextra -Werror -DSCHEDLAB_HOST -Ikernel -Iinclude \
	  -o $(B)/keytable $(KEYTABLE_SRCS) && $(B)/keytable > $@.tmp && mv $@.tmp $@
all: $(B)/scenario-keys.txt

# ---- running ----
# CPUS must be a whole number of harts from 1: QEMU boots one hart for -smp 0 and answers -1 or abc with an
# error of its own. (More than the kernel's 64 boots, and the kernel says so.)
cpus_no59 = $(subst 5,,$(subst 6,,$(subst 7,,$(subst 8,,$(subst 9,,$(1))))))
cpus_digits = $(if $(strip $(subst 0,,$(subst 1,,$(subst 2,,$(subst 3,,$(subst 4,,$(call cpus_no59,$(1)))))))),,yes)
CPUS_OK = $(and $(filter 1,$(words $(CPUS))),$(call cpus_digits,$(CPUS)),$(strip $(subst 0,,$(CPUS))))
CHECK_CPUS = $(if $(CPUS_OK),,$(error CPUS=$(CPUS) is not a number of harts: give a whole number from 1, e.g. make qemu CPUS=2))
# Timed boots run QEMU's OpenSBI; deterministic ones the firmware above (the harness's qemu.FIRMWARE).
QEMUFLAGS = -machine $(MACHINE) -nographic -bios $(if $(DET_ON),$(FIRMWARE),default) -no-reboot -m $(MEM) \
            -smp $(CPUS) -kernel $(B)/kernel.elf $(QEMUEXTRA)
qemu: $(B)/kernel.elf $(if $(MODEL_ON),$(MODEL_SO)) $(if $(DET_ON),$(FIRMWARE))
	$(CHECK_CPUS)
	$(if $(and $(DET_ON),$(findstring clock=real,$(BOOTARGS))),$(error clock=real in BOOTARGS conflicts with deterministic mode (DETERMINISTIC=1 or clock=virtual): drop one))
	$(if $(MODEL_ON),$(QEMU_MODEL),$(QEMU) $(QEMUFLAGS) $(if $(DET_ON),$(DET_QEMUFLAGS) $(DET_DTB)) -append "$(strip $(BOOTARGS) $(WATCHDOG_ARG) $(DET_ARG))")
DET_DTB = $$(tree=$$($(DEVTREE_TOOL) $(QEMU) $(QEMUFLAGS)) && [ -n "$$tree" ] && echo -dtb $$tree)

# make qemu under a model: model.py prints "<QEMU arguments>|<bootargs to add>" (or its error, and make stops);
# the command is echoed as run.
QEMU_MODEL = @plan=$$($(MODEL_TOOL) qemu '$(MODEL)' --harts $(CPUS) --mem $(MEM) --kernel $(B)/kernel.elf \
	  --plugin $(B)/model/model.so --nm $(CROSS)nm $(if $(DET_ON),--deterministic) --extra '$(QEMUEXTRA)' \
	  --bootargs '$(BOOTARGS)') || exit $$?; \
	set -- $(QEMU) $(QEMUFLAGS) $(if $(DET_ON),$(DET_QEMUFLAGS)) $${plan%%|*}; \
	$(if $(DET_ON),tree=$$($(DEVTREE_TOOL) "$$@") && [ -n "$$tree" ] && set -- "$$@" -dtb "$$tree";) \
	args="$(strip $(BOOTARGS) $(WATCHDOG_ARG) $(DET_ARG)) $${plan\#*|}"; \
	$(if $(findstring s,$(firstword -$(MAKEFLAGS))),,echo "$$* -append \"$$args\"";) exec "$$@" -append "$$args"

# The machine model's plugin: every tools/model/*.c, one shared object for QEMU (host compiler), for the
# installed QEMU's plugin API.
$(shell mkdir -p $(B)/model && { [ "$$(cat $(MODEL_API_STAMP) 2>/dev/null)" = "$(MODEL_API)" ] || echo $(MODEL_API) > $(MODEL_API_STAMP); })
$(B)/model/model.so: $(MODEL_SRCS) $(wildcard tools/model/*.h) include/schedlab/model.h $(MODEL_API_STAMP)
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$@)$(HOSTCC) $(MODEL_CFLAGS) -DMODEL_QEMU_API=$(MODEL_API) -Iinclude -o $@ $(MODEL_SRCS)

deps:
	sh tools/deps.sh

run: deps
	$(MAKE) all
	$(SCHEDLAB) compare $(if $(MODEL_ON),--model '$(MODEL)')

# ---- host build of lib/ and apps/ (pthreads backend) and host unit tests ----
include lib/host.mk
include tests/host/host.mk
include tools/sim/sim.mk
# The simulator, and the apps and tools for Linux (schedlab reproduce's loop schedulers) where lib/ has this
# host's user-level context switch (lib/host_uctx_<arch>.S; elsewhere make host says what is missing).
all: sim $(if $(HOST_LIBASM),host)

# make test and make check build what the tests need with a job per core (NPROC; a -j given to make is kept)
# and run pytest on NPROC workers (pytest-xdist: make deps installs it; without it, on one, with a note).
# --dist worksteal: the workers take tests from each other's queues, so a few long tests do not leave a core
# idle at the end. Builds the tests make themselves are locked (tests/helpers.py: build_lock). PYTEST_ARGS adds
# arguments (e.g. PYTEST_ARGS="-x -k gang").
PYTEST_ARGS ?=
# all: the kernel, the simulator and the apps for Linux (tests/test_fine.py)
TEST_BUILD  := all host-test sim-asan layers
PAR_MAKE     = $(MAKE) --no-print-directory $(if $(filter -j%,$(MAKEFLAGS)),,-j$(NPROC))
# $(call pytest,args): pytest -q on NPROC workers if it can
pytest = @if [ $(NPROC) -gt 1 ] && $(PYTHON) -c 'import xdist.scheduler.worksteal' 2>/dev/null; then \
	    set -- -n $(NPROC) --dist worksteal; \
	  else \
	    [ $(NPROC) -le 1 ] || echo "note: pytest-xdist is missing (make deps installs it): the tests run on one core"; \
	    set --; \
	  fi; \
	  echo "$(PYTHON) -m pytest -q $$* $(strip $(1) $(PYTEST_ARGS))"; $(PYTHON) -m pytest -q "$$@" $(1) $(PYTEST_ARGS)

.PHONY: check
test:
	@$(PAR_MAKE) $(TEST_BUILD)
	$(call pytest,--durations=15 tests)

check:
	@$(PAR_MAKE) $(TEST_BUILD)
	$(call pytest,-m check tests)

# The layers of the library (lib/LAYERS) and of the kernel (kernel/LAYERS, kernel/LAYERS.md), lowest first:
# every call and data reference between their files goes down or stays in a layer (the library's on both
# targets), read from the objects with nm (tools/layers.py; --graph prints the call graph).
HOSTNM ?= nm
.PHONY: layers
layers: $(ULIBOBJ) $(HOST_LIBOBJ) $(KOBJS)
	$(call quiet,LAYERS,lib/LAYERS)$(PYTHON) tools/layers.py lib/LAYERS $(B)/u/lib --nm $(CROSS)nm --name kernel
	$(call quiet,LAYERS,lib/LAYERS)$(PYTHON) tools/layers.py lib/LAYERS $(HOST_OUT)/obj/lib --nm $(HOSTNM) --name host
	$(call quiet,LAYERS,kernel/LAYERS)$(PYTHON) tools/layers.py kernel/LAYERS $(B)/kernel --nm $(CROSS)nm --name kernel

# kernel/'s file-level call graph and its cycles (within a layer: trap.c/vectors.S, main.c/entry.S).
.PHONY: layers-kernel
layers-kernel: $(KOBJS)
	$(PYTHON) tools/layers.py kernel/LAYERS $(B)/kernel --nm $(CROSS)nm --name kernel --graph --report

# The documentation site (mkdocs.yml, whose docs_dir and site_dir are these): docs/ copied to build/docs-src/,
# the references generated from the build added there (tools/docs/reference.py), then MkDocs --strict into
# build/docs/ (a broken link or a page missing from the navigation fails it; not -q, which hides the warnings
# --strict counts, so nothing fails). make deps installs MkDocs.
.PHONY: docs
docs: $(B)/kernel.elf
	$(call quiet,GEN,build/docs-src)rm -rf build/docs-src && mkdir -p build && cp -r docs build/docs-src
	$(call quiet,GEN,build/docs-src/reference)$(PYTHON) tools/docs/reference.py --out build/docs-src/reference
	$(call quiet,MKDOCS,build/docs)$(PYTHON) -m mkdocs build --strict -f mkdocs.yml

# Not part of `make test`: timings, one BENCH line per figure (schedlab bench).
.PHONY: bench
bench: all host
	$(SCHEDLAB) bench

# One brace and signature style for the C files of kernel/, firmware/, lib/ and apps/ (.clang-format). Headers keep
# their hand-aligned tables of macros and comments (abi.h's syscalls, the structs' field notes).
format:
	clang-format -i $$(git ls-files 'kernel/*.c' 'firmware/*.c' 'lib/*.c' 'apps/*.c')

# ---- debugging: QEMU stopped at reset, its gdbstub on GDBPORT; .gdbinit (from tools/gdbinit.tmpl) loads
# the kernel's symbols and connects. Every hart is a GDB thread (info threads). The port depends on the user,
# as in xv6, so two people on one machine do not collide.
GDBPORT ?= $(shell expr `id -u` % 5000 + 25000)
.PHONY: .gdbinit                 # always rewritten: GDBPORT and B may differ from the last time
.gdbinit: tools/gdbinit.tmpl Makefile
	$(call quiet,GEN,$@)sed -e 's|@PORT@|$(GDBPORT)|; s|@KERNEL@|$(B)/kernel.elf|' $< > $@

qemu-gdb: $(B)/kernel.elf .gdbinit $(if $(DET_ON),$(FIRMWARE))
	$(CHECK_CPUS)
	@echo "qemu-gdb: waiting for GDB on port $(GDBPORT); in another terminal: gdb-multiarch -x .gdbinit"
	$(QEMU) $(QEMUFLAGS) -S -gdb tcp::$(GDBPORT) -append "$(strip $(BOOTARGS) $(WATCHDOG_ARG))"

clean:
	rm -rf $(B) .gdbinit
