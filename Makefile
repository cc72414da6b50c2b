# dprobe — kprobe-based event tracing for user-space processes.
#
#   make            build build/dprobe (optimised, with debug info)
#   make run        build and trace the bundled example
#   make test       build and run every test (unit, golden, sanitizers,
#                   kernel differential where tracefs exists, bounded fuzz)
#   make fuzz       run the parser fuzzers for longer (FUZZ_SECONDS=600)
#   make BUILD=debug|asan   other build flavours, in build-debug/, build-asan/

BUILD  ?= release
CC     ?= cc
ifeq ($(BUILD),release)
  O      := build
  XFLAGS := -O2 -g
else ifeq ($(BUILD),debug)
  O      := build-debug
  XFLAGS := -O0 -g3
else ifeq ($(BUILD),asan)
  O      := build-asan
  XFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
            -fno-sanitize-recover=undefined
else
  $(error BUILD must be release, debug or asan)
endif

WERROR := $(if $(CI),-Werror,)
CFLAGS  ?=
CFLAGS  += -std=gnu17 -Wall -Wextra $(WERROR) -Wshadow -Wno-sign-compare \
           -Wno-missing-field-initializers -D_GNU_SOURCE \
           -Iinclude -Isrc $(FUSE_CFLAGS) $(XFLAGS)
LDFLAGS += $(filter -fsanitize=%,$(XFLAGS))
# libfuse3 for `dprobe mount` (src/fs/); its flags come from pkg-config
# once mk/deps.sh has installed it.
FUSE_CFLAGS = $(shell pkg-config --cflags fuse3 2>/dev/null)
FUSE_LIBS   = $(shell pkg-config --libs fuse3 2>/dev/null || echo -lfuse3)
LIBS    = -lelf -ldw -lZydis -lzstd $(FUSE_LIBS)

MODULES := lang event record output ring sym arch/x86_64 engine engine/ptrace \
           engine/inproc engine/kernel fs
LIB_SRCS := $(foreach m,$(MODULES),$(wildcard src/$(m)/*.c))
CLI_SRCS := $(wildcard src/cli/*.c)
LIB_OBJS := $(LIB_SRCS:%.c=$(O)/%.o)
CLI_OBJS := $(CLI_SRCS:%.c=$(O)/%.o)
UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_BIN  := $(O)/tests/unit-tests

DEPS_OK := $(O)/.deps-ok

.PHONY: all run test unit golden kernel-diff e2e safety fuzz fuzz-short clean
all: $(O)/dprobe $(O)/libdprobe.so

$(DEPS_OK): mk/deps.sh
	@sh mk/deps.sh --test
	@mkdir -p $(O) && touch $@

$(O)/%.o: %.c $(DEPS_OK)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(O)/libdprobe-core.a: $(LIB_OBJS)
	ar rcs $@ $^

$(O)/dprobe: $(CLI_OBJS) $(O)/libdprobe-core.a
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJS) $(O)/libdprobe-core.a $(LIBS)

$(UNIT_BIN): $(UNIT_SRCS:%.c=$(O)/%.o) $(O)/libdprobe-core.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS) -lcriterion

-include $(LIB_OBJS:.o=.d) $(CLI_OBJS:.o=.d) $(UNIT_SRCS:%.c=$(O)/%.d)

# ---- test data (sym) ----
# Programs the sym/ unit tests resolve probes against.  Fixed flags, no
# sanitizers: their code must not change with BUILD.
SYM_DATA_DIR := $(O)/tests/data
SYM_DATA := $(addprefix $(SYM_DATA_DIR)/,sym_nopie sym_pie sym_dyn \
	      sym_stripped sym_nosyms sym_dup)

$(SYM_DATA_DIR)/sym_nopie: tests/data/sym_target.c
	@mkdir -p $(dir $@)
	$(CC) -O0 -g -fno-pie -no-pie -fcf-protection=none -o $@ $<
$(SYM_DATA_DIR)/sym_pie: tests/data/sym_target.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -fPIE -pie -fcf-protection=full -o $@ $<
$(SYM_DATA_DIR)/sym_dyn: tests/data/sym_target.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -fPIE -pie -rdynamic -o $@ $<
$(SYM_DATA_DIR)/sym_stripped: $(SYM_DATA_DIR)/sym_dyn
	strip -o $@ $<
$(SYM_DATA_DIR)/sym_nosyms: $(SYM_DATA_DIR)/sym_pie
	strip -o $@ $<
$(SYM_DATA_DIR)/sym_dup: tests/data/sym_dup_a.c tests/data/sym_dup_b.c
	@mkdir -p $(dir $@)
	$(CC) -O0 -g -fno-pie -no-pie -o $@ $^

unit: $(SYM_DATA)
# ---- end test data ----

# ---- test data (proc) ----
# Processes the sym/proc unit tests start and look at: a program that
# dlopen()s libraries on a signal (non-PIE and PIE), and a library whose
# file name differs from its soname, twice (two files, one soname).
PROC_DATA_DIR := $(O)/tests/data
PROC_DATA := $(addprefix $(PROC_DATA_DIR)/,proc_nopie proc_pie \
	       libproc_lib.so.1.0 dup/libproc_lib.so.1.0)

$(PROC_DATA_DIR)/proc_nopie: tests/data/proc_target.c
	@mkdir -p $(dir $@)
	$(CC) -O0 -g -fno-pie -no-pie -o $@ $< -ldl
$(PROC_DATA_DIR)/proc_pie: tests/data/proc_target.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -fPIE -pie -o $@ $< -ldl
$(PROC_DATA_DIR)/libproc_lib.so.1.0: tests/data/proc_lib.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -fPIC -shared -Wl,-soname,libproc_lib.so.1 -o $@ $<
$(PROC_DATA_DIR)/dup/libproc_lib.so.1.0: $(PROC_DATA_DIR)/libproc_lib.so.1.0
	@mkdir -p $(dir $@)
	cp $< $@

unit: $(PROC_DATA)
# ---- end test data (proc) ----

# ---- test data (sdt) ----
# SDT probes (<sys/sdt.h>, systemtap-sdt-dev) the sym/sdt unit tests read:
# one program at -O0 (non-PIE: stack slots) and -O2 (PIE: registers,
# base+displacement, RIP-relative globals), its semaphore-gated probes in
# a second file.  Fixed flags, no sanitizers, as the sym data above.
SDT_DATA_DIR := $(O)/tests/data
SDT_DATA := $(addprefix $(SDT_DATA_DIR)/,sdt_O0 sdt_O2)
SDT_SRCS := tests/data/sdt_prog.c tests/data/sdt_sem.c

$(SDT_DATA_DIR)/sdt_O0: $(SDT_SRCS) | $(DEPS_OK)
	@mkdir -p $(dir $@)
	$(CC) -O0 -g -fno-pie -no-pie -o $@ $(SDT_SRCS)
$(SDT_DATA_DIR)/sdt_O2: $(SDT_SRCS) | $(DEPS_OK)
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -fPIE -pie -o $@ $(SDT_SRCS)

unit: $(SDT_DATA)
# ---- end test data (sdt) ----

# ---- test data (inject) ----
# What the engine/ptrace injection tests load libraries into: a process
# with threads in read(), nanosleep() and a spin loop (and a static build
# of it), and the library they load (again with a slow constructor).
INJECT_DATA_DIR := $(O)/tests/data
INJECT_DATA := $(addprefix $(INJECT_DATA_DIR)/,inject_target inject_static \
		 libinject_lib.so libinject_slow.so)

$(INJECT_DATA_DIR)/inject_target: tests/data/inject_target.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -pthread -o $@ $<
$(INJECT_DATA_DIR)/inject_static: tests/data/inject_target.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -static -pthread -o $@ $<
$(INJECT_DATA_DIR)/libinject_lib.so: tests/data/inject_lib.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -fPIC -shared -o $@ $<
$(INJECT_DATA_DIR)/libinject_slow.so: tests/data/inject_lib.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -fPIC -shared -DINJECT_SLOW -o $@ $<

unit: $(INJECT_DATA)
# ---- end test data (inject) ----

# ---- agent (libdprobe.so) ----
# The in-process engine and its C kprobes API (include/dprobe/kprobes.h).
# libdprobe.so runs inside the traced program, so it is never sanitized
# (that would need a sanitized program) and is built:
#   -mgeneral-regs-only   its code never touches the program's SIMD or x87
#                         registers (uftrace builds libmcount the same way)
#   -minline-all-stringops -fno-tree-loop-distribute-patterns
#                         no memcpy/memset calls slipped in by the compiler:
#                         the hit path calls no library function
#   -fno-stack-protector  no __stack_chk_fail, wherever it is the default
#   -fvisibility=hidden   only the API and the interposed signal functions
#                         are exported; internal calls never go through PLT
#   -z nodelete           once loaded its code stays (return trampolines)
#   -z now                no lazy binding from inside a signal handler
# The test programs and examples are built with the sanitizers of BUILD.
AGENT_SO    := $(O)/libdprobe.so
AGENT_SRCS  := $(wildcard src/engine/agent/*.c) src/arch/x86_64/insn.c \
	       src/arch/x86_64/decode.c src/arch/x86_64/optprobe.c \
	       src/arch/x86_64/entrysite.c \
	       src/arch/x86_64/regs.c src/arch/x86_64/emit.c src/sym/elf.c \
	       src/ring/ring.c \
	       $(wildcard src/lang/*.c)
AGENT_ASMS  := $(wildcard src/engine/agent/*.S)
AGENT_OBJS  := $(AGENT_SRCS:%.c=$(O)/agent/%.o) $(AGENT_ASMS:%.S=$(O)/agent/%.o)
AGENT_CFLAGS := $(filter-out -fsanitize=% -fno-sanitize-recover=%,$(CFLAGS)) \
	-fPIC -fvisibility=hidden -mgeneral-regs-only -minline-all-stringops \
	-fno-tree-loop-distribute-patterns -fno-omit-frame-pointer \
	-fno-stack-protector -DDP_IN_AGENT
AGENT_SAN   := $(filter -fsanitize=% -fno-sanitize-recover=%,$(XFLAGS))
AGENT_USER  := -std=gnu17 -Wall -Wextra $(WERROR) -Wno-missing-field-initializers \
	-D_GNU_SOURCE -Iinclude -O2 -g $(AGENT_SAN)
AGENT_LINK  := -L$(O) -ldprobe -Wl,-rpath,$(abspath $(O))

# t_*: linked with libdprobe.so; dl_*: dlopen() it themselves
AGENT_TESTS := $(patsubst tests/agent/%.c,$(O)/tests/agent/%,$(wildcard tests/agent/t_*.c)) \
	       $(patsubst tests/agent/%.cc,$(O)/tests/agent/%,$(wildcard tests/agent/t_*.cc)) \
	       $(patsubst tests/agent/%.c,$(O)/tests/agent/%,$(wildcard tests/agent/dl_*.c))
AGENT_EXAMPLES := $(O)/examples/kprobe_example $(O)/examples/kretprobe_example \
		  $(O)/examples/tracepoint_example

$(O)/agent/%.o: %.c $(DEPS_OK)
	@mkdir -p $(dir $@)
	$(CC) $(AGENT_CFLAGS) -MMD -MP -c $< -o $@

$(O)/agent/%.o: %.S
	@mkdir -p $(dir $@)
	$(CC) -MMD -MP -c $< -o $@

$(AGENT_SO): $(AGENT_OBJS)
	$(CC) -shared -Wl,-z,nodelete -Wl,-z,now -Wl,--no-undefined -o $@ \
	  $(AGENT_OBJS) -lelf -lZydis -lpthread -ldl

$(O)/examples/%: examples/%.c $(wildcard examples/*.h) include/dprobe/kprobes.h \
		 include/dprobe/tracepoint.h $(AGENT_SO)
	@mkdir -p $(dir $@)
	$(CC) $(AGENT_USER) -o $@ $< $(AGENT_LINK)

$(O)/tests/agent/dl_%: tests/agent/dl_%.c tests/agent/agent_test.h \
		       include/dprobe/kprobes.h $(AGENT_SO)
	@mkdir -p $(dir $@)
	$(CC) $(AGENT_USER) -o $@ $< -ldl -lpthread

$(O)/tests/agent/%: tests/agent/%.c tests/agent/agent_test.h \
		    include/dprobe/kprobes.h $(AGENT_SO)
	@mkdir -p $(dir $@)
	$(CC) $(AGENT_USER) -o $@ $< $(AGENT_LINK) -lpthread -lZydis

$(O)/tests/agent/%: tests/agent/%.cc tests/agent/agent_test.h \
		    include/dprobe/kprobes.h $(AGENT_SO)
	@mkdir -p $(dir $@)
	$(CXX) $(filter-out -std=gnu17,$(AGENT_USER)) -std=gnu++17 -o $@ $< \
	  $(AGENT_LINK)

$(O)/bench/agent_bench: bench/agent_bench.c include/dprobe/kprobes.h $(AGENT_SO)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu17 -Wall -Wextra -D_GNU_SOURCE -Iinclude -O2 -g -o $@ $< \
	  $(AGENT_LINK)

.PHONY: agent agent-test agent-bench
agent: $(AGENT_SO) $(AGENT_EXAMPLES)

agent-test: $(AGENT_SO) $(AGENT_EXAMPLES) $(AGENT_TESTS)
	@sh tests/agent/run.sh $(O)

agent-bench: $(O)/bench/agent_bench
	@sh bench/agent_bench.sh $(O)

# Application tracepoints (include/dprobe/tracepoint.h).  t_tracepoint
# (and t_tracepoint_nojl, the load-and-branch fallback) dlopen()
# libtp_lib.so; tests/agent/tp_callgrind.sh counts the instructions of
# tp_cost(_nojl), built with fixed flags and no sanitizer whatever BUILD
# is, as are the benchmarks.
TP_FIXED_CFLAGS := -std=gnu17 -Wall -Wextra $(WERROR) -D_GNU_SOURCE -Iinclude -O2 -g
$(O)/tests/agent/t_tracepoint $(O)/tests/agent/t_tracepoint_nojl: \
		include/dprobe/tracepoint.h tests/agent/tp_test_events.h \
		tests/agent/t_tracepoint.c $(O)/tests/agent/libtp_lib.so

$(O)/tests/agent/libtp_lib.so: tests/agent/tp_lib.c include/dprobe/tracepoint.h \
			       $(AGENT_SO)
	@mkdir -p $(dir $@)
	$(CC) $(AGENT_USER) -fPIC -shared -o $@ $< $(AGENT_LINK)

$(O)/tests/agent/tp_cost: tests/agent/tp_cost.c include/dprobe/tracepoint.h $(AGENT_SO)
	@mkdir -p $(dir $@)
	$(CC) $(TP_FIXED_CFLAGS) -o $@ $< $(AGENT_LINK)

$(O)/tests/agent/tp_cost_nojl: tests/agent/tp_cost.c include/dprobe/tracepoint.h \
			       $(AGENT_SO)
	@mkdir -p $(dir $@)
	$(CC) $(TP_FIXED_CFLAGS) -DDP_TP_NO_JUMP_LABEL -o $@ $< $(AGENT_LINK)

agent-test: $(O)/tests/agent/tp_cost $(O)/tests/agent/tp_cost_nojl

$(O)/bench/tp_bench: bench/tp_bench.c bench/floor.h include/dprobe/tracepoint.h \
		     $(AGENT_SO)
	@mkdir -p $(dir $@)
	$(CC) $(TP_FIXED_CFLAGS) -o $@ $< $(AGENT_LINK)

$(O)/bench/tp_bench_nojl: bench/tp_bench.c bench/floor.h include/dprobe/tracepoint.h \
			  $(AGENT_SO)
	@mkdir -p $(dir $@)
	$(CC) $(TP_FIXED_CFLAGS) -DDP_TP_NO_JUMP_LABEL -o $@ $< $(AGENT_LINK)

.PHONY: tp-bench
tp-bench: $(O)/bench/tp_bench $(O)/bench/tp_bench_nojl
	@sh bench/tp_bench.sh $(O)

-include $(AGENT_OBJS:.o=.d)
# ---- end agent ----

# The bundled example, built the same way whatever BUILD is.
EXAMPLE := $(O)/examples/work
$(EXAMPLE): examples/work.c
	@mkdir -p $(dir $@)
	$(CC) -O0 -g -fno-pie -no-pie -fcf-protection=none -o $@ $<

# ---- dprobe mount (src/fs/) ----
# examples/fileserver mirrors the kernel functions of the seed documents
# (do_sys_open, do_filp_open, vfs_read) so that their tracefs sessions
# replay against `dprobe mount`; built as the bundled example is.
FILESERVER := $(O)/examples/fileserver
$(FILESERVER): examples/fileserver.c
	@mkdir -p $(dir $@)
	$(CC) -O0 -g -fno-pie -no-pie -fcf-protection=none -o $@ $<

all: $(FILESERVER)

# Replays the seeds' sessions on a mount (skips without root or /dev/fuse).
.PHONY: fs-test
fs-test: $(O)/dprobe $(FILESERVER)
	@sh tests/fs/run.sh $(O)/dprobe
# ---- end dprobe mount ----


include mk/install.mk
# a copy of dprobe out of its tree still finds the installed agent
$(O)/src/engine/inproc/agent_path.o: CFLAGS += -DDPROBE_AGENTDIR='"$(AGENTDIR)"'

# ---- running ---------------------------------------------------------------
run: $(O)/dprobe $(EXAMPLE) $(AGENT_SO) $(O)/examples/tracepoint_example
	@sh examples/run.sh $(O)/dprobe

# Criterion's own summary is kept, and its counts go to $(DPROBE_RESULTS).
unit: $(UNIT_BIN) $(O)/dprobe $(O)/examples/tracepoint_example
	@cd tests && DPROBE_BUILD=$(abspath $(O)) $(abspath $(UNIT_BIN)) -j2 \
	  --short-filename > $(abspath $(O))/unit.log 2>&1; rc=$$?; \
	  grep -v '^\[----\]  *$$' $(abspath $(O))/unit.log | tail -40; \
	  sed -n 's/.*Tested: \([0-9]*\) | Passing: \([0-9]*\) | Failing: \([0-9]*\).*/unit-$(BUILD) \2 \3 0/p' \
	    $(abspath $(O))/unit.log >> $(DPROBE_RESULTS); exit $$rc

golden: $(O)/dprobe $(EXAMPLE) $(O)/examples/tracepoint_example
	@sh tests/golden/run.sh $(O)/dprobe

kernel-diff: $(O)/dprobe
	@sh tests/kernel/run.sh $(O)/dprobe

# The kernel's own ftrace selftests (kprobe/ and dynevent/ of Debian's
# linux-source-6.12) against `dprobe mount` (tests/ftrace/run.sh), a
# stage of `make test`; skipped, saying so, without the source package.
.PHONY: ftracetest
ftracetest: $(O)/dprobe $(AGENT_SO)
	@sh tests/ftrace/run.sh $(O)/dprobe

# Tracing real processes: end-to-end cases (with the kernel's uprobe_events
# as a reference where tracefs exists) and the safety sweeps.
# The cases run twice: on the default engine (in-process wherever it can)
# and on the ptrace engine.
e2e: $(O)/dprobe $(AGENT_SO)
	@sh tests/e2e/run.sh $(O)/dprobe
	@DPROBE_ENGINE=ptrace sh tests/e2e/run.sh $(O)/dprobe
	@sh tests/e2e/kernel-ref.sh $(O)/dprobe

safety: $(O)/dprobe
	@sh tests/safety/sweep.sh $(O)/dprobe

# The kernel engine on this machine's tracefs (--engine kernel, --kernel,
# dprobe cleanup): the same events as the default engine, and nothing
# left in tracefs after any case.  Skips itself without root, tracefs or
# uprobe_events.
.PHONY: kernel-engine
kernel-engine: $(O)/dprobe $(AGENT_SO) $(EXAMPLE)
	@sh tests/e2e/kernel-engine.sh $(O)/dprobe

# Kernel functions through a real kprobe_events: Debian 12's kernel booted
# under qemu (tests/qemu/, docs/qemu.md).  Skips, with the reason, when the
# kernel cannot be downloaded on the first run.
.PHONY: qemu-test
qemu-test: $(O)/dprobe
	@sh tests/qemu/kprobe-ref.sh $(O)/dprobe; a=$$?; \
	  sh tests/qemu/kernel-engine.sh $(O)/dprobe; b=$$?; \
	  [ $$a = 0 ] && [ $$b = 0 ]

FUZZ_SECONDS ?= 600
FUZZERS := lang filter sdt kraw debugdef trigger tracedat
FUZZ_BINS := $(FUZZERS:%=build-fuzz/fuzz-%)
# The library is compiled once for all fuzzers (in parallel under -j),
# with coverage instrumentation; each harness links it.
FUZZ_CFLAGS := -std=gnu17 -g -O1 -D_GNU_SOURCE -Iinclude -Isrc $(FUSE_CFLAGS) \
	-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
FUZZ_OBJS := $(LIB_SRCS:%.c=build-fuzz/obj/%.o)
build-fuzz/obj/%.o: %.c $(DEPS_OK)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@
build-fuzz/fuzz-%: tests/fuzz/fuzz_%.c $(FUZZ_OBJS)
	@mkdir -p build-fuzz
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJS) $(LIBS)
.SECONDARY: $(FUZZ_OBJS)
-include $(FUZZ_OBJS:.o=.d)

fuzz: $(FUZZ_BINS)
	@sh tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZERS)

fuzz-short: $(FUZZ_BINS)
	@sh tests/fuzz/run.sh $${FUZZ_SHORT_SECONDS:-8} $(FUZZERS)

# The whole suite (tests/run-all.sh): `test-build` builds everything the
# stages run, release and ASan, then the stages run two (or nproc) at a
# time, each into build/test-logs/STAGE.log: unit and golden in both
# builds, the kernel differential (skips itself without root/tracefs),
# traced programs on each engine, the agent, the mount, install, a short
# fuzz, the kernel's ftrace selftests against the mount, and the fs, e2e
# and golden suites again in a time namespace whose clocks read a few
# seconds.  Every stage runs; the closing line counts them all.
export DPROBE_RESULTS ?= $(abspath build)/test-results
test: $(DEPS_OK)
	@sh tests/run-all.sh

clean:
	rm -rf build build-debug build-asan build-fuzz

# Everything a test stage runs, built before the stages start so that no
# two stages build the same file at once (tests/run-all.sh).
TEST_BUILD := $(O)/dprobe $(AGENT_SO) $(EXAMPLE) $(FILESERVER) $(UNIT_BIN) \
	      $(SYM_DATA) $(PROC_DATA) $(SDT_DATA) $(INJECT_DATA) \
	      $(O)/examples/tracepoint_example
ifeq ($(BUILD),release)
TEST_BUILD += $(AGENT_EXAMPLES) $(AGENT_TESTS) $(O)/tests/agent/tp_cost \
	      $(O)/tests/agent/tp_cost_nojl $(FUZZ_BINS) e2e-progs
endif
.PHONY: test-build
test-build: $(TEST_BUILD)

# Both builds of the suite (release, and ASan for unit-asan and
# golden-asan) at once, under this make's job slots (-jN): neither waits
# for the other's last links.  The packages are checked before either
# starts, so that two apt-get never run at once.
.PHONY: test-builds test-build-release test-build-asan
test-builds: test-build-release test-build-asan
test-build-release test-build-asan: test-build-%: $(DEPS_OK)
	+@$(MAKE) --no-print-directory BUILD=$* test-build

# The programs of the e2e cases, built once for every stage that runs
# them (tests/e2e/progs.sh), and copies of them for the two stages that
# put the kernel's uprobes on them (run-all.sh's kernel-engine and
# e2e-kernel-ref).
.PHONY: e2e-progs
e2e-progs: $(AGENT_SO)
	@sh tests/e2e/progs.sh $(O)/dprobe $(O)/tests/e2e-kengine $(O)/tests/e2e-kref
