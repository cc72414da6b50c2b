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
           -Iinclude -Isrc $(XFLAGS)
LDFLAGS += $(filter -fsanitize=%,$(XFLAGS))
LIBS    := -lelf -lZydis

MODULES := lang event output sym arch/x86_64 util
LIB_SRCS := $(foreach m,$(MODULES),$(wildcard src/$(m)/*.c))
CLI_SRCS := $(wildcard src/cli/*.c)
LIB_OBJS := $(LIB_SRCS:%.c=$(O)/%.o)
CLI_OBJS := $(CLI_SRCS:%.c=$(O)/%.o)
UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_BIN  := $(O)/tests/unit-tests

DEPS_OK := $(O)/.deps-ok

.PHONY: all run test unit golden kernel-diff fuzz fuzz-short clean deps asan-test
all: $(O)/dprobe

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

# ---- running ---------------------------------------------------------------
run: $(O)/dprobe
	@sh examples/run.sh $(O)/dprobe

unit: $(UNIT_BIN) $(O)/dprobe
	cd tests && DPROBE_BUILD=$(abspath $(O)) $(abspath $(UNIT_BIN)) -j2 --short-filename

golden: $(O)/dprobe
	@sh tests/golden/run.sh $(O)/dprobe

kernel-diff: $(O)/dprobe
	@sh tests/kernel/run.sh $(O)/dprobe

FUZZ_SECONDS ?= 600
FUZZERS := lang filter
FUZZ_BINS := $(FUZZERS:%=build-fuzz/fuzz-%)
build-fuzz/fuzz-%: tests/fuzz/fuzz_%.c $(LIB_SRCS) $(DEPS_OK)
	@mkdir -p build-fuzz
	clang -std=gnu17 -g -O1 -D_GNU_SOURCE -Iinclude -Isrc \
	  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	  -o $@ $< $(LIB_SRCS) $(LIBS)

fuzz: $(FUZZ_BINS)
	@sh tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZERS)

fuzz-short: $(FUZZ_BINS)
	@sh tests/fuzz/run.sh $${FUZZ_SHORT_SECONDS:-30} $(FUZZERS)

# The whole suite: the release build, then again under ASan/UBSan, then the
# kernel differential (skips itself without root/tracefs) and a short fuzz.
test: $(DEPS_OK)
	@$(MAKE) --no-print-directory unit golden
	@$(MAKE) --no-print-directory BUILD=asan unit golden
	@$(MAKE) --no-print-directory kernel-diff
	@$(MAKE) --no-print-directory fuzz-short
	@sh tests/summary.sh

clean:
	rm -rf build build-debug build-asan build-fuzz
