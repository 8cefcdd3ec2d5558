# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# cacheperf-bpf build. `make` builds the binary; `make demo` and `make check`
# first install the Debian packages each needs (packaging/deps.sh), then build.
# Everything generated goes below $(BUILD); V=1 shows full commands.

BUILD		?= build
PREFIX		?= /usr/local
DESTDIR		?=
CC		?= cc
CLANG		?= clang
BPFTOOL		?= bpftool
PKG_CONFIG	?= pkg-config
ARCH		:= x86

PKGS		:= libbpf libelf libdw zlib libprotobuf-c
CFLAGS		?= -g -O2
# The project's own code builds without a warning; WERROR= for a newer compiler's new ones.
WERROR		?= -Werror
CP_CFLAGS	:= $(CFLAGS) -std=gnu11 -Wall -Wextra $(WERROR) -MMD -MP -D_GNU_SOURCE \
		   -Iinclude -Iuser -I$(BUILD) \
		   $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
LDLIBS		:= $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null) -lZydis -lpthread -lm
BPF_CFLAGS	:= -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Wno-unused-function $(WERROR) \
		   -MMD -MP -Iinclude -Ibpf -Ivmlinux/$(ARCH)

ifeq ($(V),1)
Q		:=
msg		=
else
Q		:= @
msg		= @printf '  %-8s %s\n' "$(1)" "$(2)";
MAKEFLAGS	+= --no-print-directory
endif

BIN		:= $(BUILD)/cacheperf-bpf
# shared.bpf.c (the shared maps, knobs and functions) links first: bpftool 7.1's linker
# cannot relocate an object's extern maps once that object's own maps came first.
BPF_SRCS	:= bpf/shared.bpf.c $(filter-out bpf/shared.bpf.c,$(sort $(wildcard bpf/*.bpf.c)))
BPF_OBJS	:= $(patsubst bpf/%.bpf.c,$(BUILD)/bpf/%.bpf.o,$(BPF_SRCS))
BPF_LINKED	:= $(BUILD)/cacheperf.bpf.o
SKEL		:= $(BUILD)/cacheperf.skel.h
USER_SRCS	:= $(sort $(wildcard user/*/*.c))
USER_OBJS	:= $(patsubst user/%.c,$(BUILD)/user/%.o,$(USER_SRCS))
# pprof's profile.proto (proto/), compiled by protoc-c into build/proto/:
# user/export/ includes "proto/profile.pb-c.h" (docs/pprof.md)
PROTOS		:= $(sort $(wildcard proto/*.proto))
PROTO_HDRS	:= $(patsubst %.proto,$(BUILD)/%.pb-c.h,$(PROTOS))
PROTO_OBJS	:= $(patsubst %.proto,$(BUILD)/%.pb-c.o,$(PROTOS))
PROTOC_C	?= protoc-c
LIB		:= $(BUILD)/libcacheperf.a
UNIT_SRCS	:= $(sort $(wildcard tests/unit/test_*.c))
BPFT_SRCS	:= $(sort $(wildcard tests/bpf/test_*.c))
TEST_BINS	:= $(patsubst tests/%.c,$(BUILD)/tests/%,$(UNIT_SRCS) $(BPFT_SRCS))
WL_SRCS		:= $(sort $(wildcard tests/workloads/*.c))
WL_BINS		:= $(patsubst tests/%.c,$(BUILD)/tests/%,$(WL_SRCS))
BENCH_SRCS	:= $(sort $(wildcard tests/bench/*.c))
BENCH_BINS	:= $(patsubst tests/%.c,$(BUILD)/tests/%,$(BENCH_SRCS))
# Workloads are the programs we profile: debug info, frame pointers, -O1 so the
# access patterns in their sources survive into the machine code.
WL_CFLAGS	:= -g -O1 -fno-omit-frame-pointer -pthread -Wall -Wextra -Itests/workloads

.PHONY: all check test demo deps deps-demo clean install vmlinux tests bench fuzz deb layers format-check doc-names
.DELETE_ON_ERROR:

all: $(BIN)

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c | $(BUILD)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# The breakpoint program claims history slots with fetch-and-add and changes
# state with compare-and-swap: BPF atomics with a result need -mcpu=v3 (kernel
# 5.12). It loads only when breakpoints are used, so only it is built so.
$(BUILD)/bpf/breakpoint.bpf.o: BPF_CFLAGS += -mcpu=v3

$(BPF_LINKED): $(BPF_OBJS)
	$(call msg,LINK-BPF,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

$(SKEL): $(BPF_LINKED)
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name cacheperf > $@

$(BUILD)/user/%.o: user/%.c | $(SKEL) $(PROTO_HDRS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CP_CFLAGS) -c $< -o $@

# Both files come from one run of protoc-c (a pattern rule's targets are one group);
# kept after the build, so that the next make does not generate and compile them again.
.SECONDARY: $(PROTO_HDRS) $(PROTO_HDRS:.h=.c)
$(BUILD)/proto/%.pb-c.c $(BUILD)/proto/%.pb-c.h: proto/%.proto
	$(call msg,PROTOC-C,$@)
	$(Q)mkdir -p $(BUILD)/proto
	$(Q)$(PROTOC_C) --c_out=$(BUILD) $<

$(BUILD)/proto/%.pb-c.o: $(BUILD)/proto/%.pb-c.c
	$(call msg,CC,$@)
	$(Q)$(CC) $(CP_CFLAGS) -c $< -o $@

$(LIB): $(filter-out $(BUILD)/user/cli/main.o,$(USER_OBJS)) $(PROTO_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BIN): $(BUILD)/user/cli/main.o $(LIB)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CP_CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(BUILD)/tests/unit/% $(BUILD)/tests/bpf/%: CP_CFLAGS += -Itests
$(BUILD)/tests/unit/%: tests/unit/%.c $(LIB) | $(BUILD)/tests/unit
	$(call msg,TEST,$@)
	$(Q)$(CC) $(CP_CFLAGS) $< $(LIB) $(LDLIBS) -lcmocka -o $@

$(BUILD)/tests/bpf/%: tests/bpf/%.c $(LIB) | $(BUILD)/tests/bpf
	$(call msg,TEST,$@)
	$(Q)$(CC) $(CP_CFLAGS) $< $(LIB) $(LDLIBS) -lcmocka -o $@

$(BUILD)/tests/workloads/%: tests/workloads/%.c | $(BUILD)/tests/workloads
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) $(WL_CFLAGS) -MMD -MP $< -o $@

# The symbolizer tests' shared library (in lib/ so the rule above does not
# take it for a program), a copy without debug info and a stripped copy.
WL_LIB		:= $(BUILD)/tests/workloads/libcp_symlib
WL_BINS		+= $(WL_LIB).so $(WL_LIB)-nodebug.so $(WL_LIB)-stripped.so
$(WL_LIB).so: tests/workloads/lib/cp_symlib.c | $(BUILD)/tests/workloads
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) $(WL_CFLAGS) -fPIC -shared -MMD -MP $< -o $@
$(WL_LIB)-nodebug.so: $(WL_LIB).so
	$(Q)strip --strip-debug -o $@ $<
$(WL_LIB)-stripped.so: $(WL_LIB).so
	$(Q)strip --strip-all -o $@ $<

# The hostile-tenant tests' library: a symbol name with terminal escapes in it.
WL_EVIL		:= $(BUILD)/tests/workloads/libcp_evil.so
WL_BINS		+= $(WL_EVIL)
$(WL_EVIL): tests/workloads/lib/cp_evil.c | $(BUILD)/tests/workloads
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) $(WL_CFLAGS) -g0 -fPIC -shared -MMD -MP $< -o $@

# The library a hostile tenant names (tests/e2e/test_tenant_files.sh).
WL_BINS		+= $(BUILD)/tests/workloads/libcp_tenant.so
$(BUILD)/tests/workloads/libcp_tenant.so: tests/workloads/lib/cp_tenantlib.c | $(BUILD)/tests/workloads
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) $(WL_CFLAGS) -fPIC -shared -MMD -MP $< -o $@

# A process with no libc, hence no malloc to probe (tests/e2e/test_logs.sh).
WL_BINS		+= $(BUILD)/tests/workloads/no_malloc
$(BUILD)/tests/workloads/no_malloc: tests/workloads/nolibc/no_malloc.c | $(BUILD)/tests/workloads
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) -O1 -static -nostdlib -fno-stack-protector -Wall -Wextra $< -o $@

# alloc_sites again, statically linked: the allocator is then in the executable.
WL_BINS		+= $(BUILD)/tests/workloads/alloc_sites_static
$(BUILD)/tests/workloads/alloc_sites_static: tests/workloads/alloc_sites.c | $(BUILD)/tests/workloads
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) $(WL_CFLAGS) -static $< -o $@

# sigcont again, statically linked: no dynamic loader to stop it under -- CMD.
WL_BINS		+= $(BUILD)/tests/workloads/sigcont_static
$(BUILD)/tests/workloads/sigcont_static: tests/workloads/sigcont.c | $(BUILD)/tests/workloads
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) $(WL_CFLAGS) -static $< -o $@

# cxx_sites (C++ operator new and delete), once per allocator that implements
# them itself: cxx_sites_tcmalloc, cxx_sites_jemalloc, cxx_sites_mimalloc.
CXX		?= g++
CXX_ALLOCS	:= tcmalloc:tcmalloc_minimal jemalloc:jemalloc mimalloc:mimalloc
WL_BINS		+= $(foreach a,$(CXX_ALLOCS),$(BUILD)/tests/workloads/cxx_sites_$(firstword $(subst :, ,$(a))))
$(foreach a,$(CXX_ALLOCS),$(eval $(BUILD)/tests/workloads/cxx_sites_$(firstword $(subst :, ,$(a))): \
	CXX_ALLOC_LIB := $(lastword $(subst :, ,$(a)))))
$(BUILD)/tests/workloads/cxx_sites_%: tests/workloads/cxx_sites.cpp tests/workloads/call_site.h tests/workloads/sites_run.h | $(BUILD)/tests/workloads
	$(call msg,WORKLOAD,$@)
	$(Q)$(CXX) $(WL_CFLAGS) $< -o $@ -l$(CXX_ALLOC_LIB)

# cxx_bad_alloc (a caught std::bad_alloc), once per allocator that implements
# operator new: cxx_bad_alloc_libc (libstdc++'s on glibc), cxx_bad_alloc_tcmalloc,
# cxx_bad_alloc_jemalloc (mimalloc aborts instead of throwing).
BAD_ALLOC_LIBS	:= libc: tcmalloc:-ltcmalloc_minimal jemalloc:-ljemalloc
WL_BINS		+= $(foreach a,$(BAD_ALLOC_LIBS),$(BUILD)/tests/workloads/cxx_bad_alloc_$(firstword $(subst :, ,$(a))))
$(foreach a,$(BAD_ALLOC_LIBS),$(eval $(BUILD)/tests/workloads/cxx_bad_alloc_$(firstword $(subst :, ,$(a))): \
	BAD_ALLOC_LIB := $(word 2,$(subst :, ,$(a)))))
$(BUILD)/tests/workloads/cxx_bad_alloc_%: tests/workloads/cxx_bad_alloc.cpp tests/workloads/sites_run.h | $(BUILD)/tests/workloads
	$(call msg,WORKLOAD,$@)
	$(Q)$(CXX) $(WL_CFLAGS) $< -o $@ $(BAD_ALLOC_LIB)

# callers again with inner() keeping no frame pointer (rbp used for data):
# only CFI unwinding of a sample's stack copy reaches past it.
WL_BINS		+= $(BUILD)/tests/workloads/callers_nofp
$(BUILD)/tests/workloads/callers_nofp: tests/workloads/callers.c | $(BUILD)/tests/workloads
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) $(WL_CFLAGS) -DCP_INNER_NO_FRAME $< -o $@

# false_sharing again, unoptimised (-O0, as many users build while they
# look): every pointer is loaded from a stack slot just before the access
# that overwrites it (`mov -8(%rbp),%rax; mov (%rax),%rax`), which soft
# mode's skid correction follows through the slot, and the loop's counter,
# a stack slot too, is incremented right after the store (user/decode/skid.h).
WL_BINS		+= $(BUILD)/tests/workloads/false_sharing_O0
$(BUILD)/tests/workloads/false_sharing_O0: tests/workloads/false_sharing.c | $(BUILD)/tests/workloads
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) $(WL_CFLAGS) -O0 -DCP_WL_COUNT $< -o $@

# A tenant's binary with bad CFI and 300,000 nested lexical blocks in its
# debug info (tenant_parse.S, assembled without debug info of gas's own).
$(BUILD)/tests/workloads/tenant_parse: tests/workloads/tenant_parse.c tests/workloads/tenant_parse.S tests/workloads/dwarf_unit.h | $(BUILD)/tests/workloads
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) $(WL_CFLAGS) -MMD -MP -c $< -o $@.o
	$(Q)$(CC) -c tests/workloads/tenant_parse.S -o $@-asm.o
	$(Q)$(CC) $(WL_CFLAGS) $@.o $@-asm.o -o $@
	$(Q)rm -f $@.o $@-asm.o

# Tenants' binaries whose debug info is small on disk and costly to read
# (tenant_dwarf.S: one kind each), assembled without gas's own debug info.
WL_BINS		:= $(filter-out $(BUILD)/tests/workloads/tenant_dwarf,$(WL_BINS))
WL_BINS		+= $(BUILD)/tests/workloads/tenant_dwarf_funcs $(BUILD)/tests/workloads/tenant_dwarf_inl \
		   $(BUILD)/tests/workloads/tenant_dwarf_lines
$(BUILD)/tests/workloads/tenant_dwarf_%: tests/workloads/tenant_dwarf.c tests/workloads/tenant_dwarf.S tests/workloads/dwarf_unit.h | $(BUILD)/tests/workloads
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) $(WL_CFLAGS) -c $< -o $@.o
	$(Q)$(CC) -DCP_DWARF_$(shell echo $* | tr a-z A-Z) -c tests/workloads/tenant_dwarf.S -o $@-asm.o
	$(Q)$(CC) $(WL_CFLAGS) $@.o $@-asm.o -o $@
	$(Q)rm -f $@.o $@-asm.o

# A std::vector with the system's libstdc++ and glibc, built as distributions build
# (no frame pointers): only CFI unwinding reaches its frames from malloc.
WL_BINS		+= $(BUILD)/tests/workloads/cxx_vector
$(BUILD)/tests/workloads/cxx_vector: tests/workloads/cxx_vector.cpp | $(BUILD)/tests/workloads
	$(call msg,WORKLOAD,$@)
	$(Q)$(CXX) $(WL_CFLAGS) -O2 -fomit-frame-pointer $< -o $@

$(BUILD)/tests/bench/%: tests/bench/%.c $(LIB) | $(BUILD)/tests/bench
	$(call msg,BENCH,$@)
	$(Q)$(CC) $(CP_CFLAGS) -Itests $< $(LIB) $(LDLIBS) -o $@

# libFuzzer targets (tests/fuzz/fuzz_NAME.c), over the library compiled again
# with clang, instrumented (AddressSanitizer, UndefinedBehaviorSanitizer):
# recording (the recording reader, the replay and the report), elf (the
# project's own readers of a tenant's ELF file) and tenant_bytes (its code,
# heap and /proc text as the project reads them). Built by `make tests` when
# clang can link libFuzzer (libclang-rt); tests/e2e/test_fuzz.sh runs each
# from its seeds for CP_FUZZ_SECONDS (30). `make fuzz FUZZ_SECONDS=600` runs
# them longer.
FUZZ_NAMES	:= recording elf tenant_bytes
FUZZ_BINS	:= $(patsubst %,$(BUILD)/tests/fuzz/fuzz_%,$(FUZZ_NAMES))
# The replay links without the live run: no skeleton, session, drain or perf
# events (user/live/) and no command line (user/cli/) in the fuzzer.
FUZZ_OBJS	:= $(patsubst user/%.c,$(BUILD)/fuzz/%.o,$(filter-out user/live/% user/cli/%,$(USER_SRCS))) \
		   $(patsubst %.proto,$(BUILD)/fuzz/%.pb-c.o,$(PROTOS))
FUZZ_FLAGS	:= -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined
FUZZ_SECONDS	?= 300
HAVE_LIBFUZZER	:= $(shell printf 'int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }' | \
		   $(CLANG) -fsanitize=fuzzer -x c - -o /dev/null 2>/dev/null && echo y)
$(BUILD)/fuzz/%.o: user/%.c | $(SKEL) $(PROTO_HDRS)
	$(call msg,CC-FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(CP_CFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -c $< -o $@
$(BUILD)/fuzz/proto/%.pb-c.o: $(BUILD)/proto/%.pb-c.c
	$(call msg,CC-FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(CP_CFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -c $< -o $@
$(FUZZ_BINS): $(BUILD)/tests/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OBJS) | $(BUILD)/tests/fuzz
	$(call msg,FUZZER,$@)
	$(Q)$(CLANG) $(CP_CFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer $(filter %.c %.o,$^) $(LDLIBS) -o $@

$(BUILD)/bpf $(BUILD)/tests/unit $(BUILD)/tests/bpf $(BUILD)/tests/workloads \
$(BUILD)/tests/bench $(BUILD)/tests/fuzz:
	$(Q)mkdir -p $@

tests: $(BIN) $(TEST_BINS) $(WL_BINS) $(BENCH_BINS) $(if $(HAVE_LIBFUZZER),$(FUZZ_BINS))

# The ground-truth oracle (tests/oracle): the simulator, linked with
# the library, and its corpus: workloads compiled with clang's -fsanitize=thread
# instrumentation but linked (non-PIE) with the oracle's own tracing runtime
# instead of TSan's, with the allocator and memcpy/memset wrapped.
ORACLE		:= $(BUILD)/tests/oracle/oracle
ORACLE_SRCS	:= $(filter-out tests/oracle/trace_rt.c,$(sort $(wildcard tests/oracle/*.c)))
ORACLE_RT	:= $(BUILD)/tests/oracle/trace_rt.o
ORACLE_WLS	:= $(patsubst tests/oracle/workloads/%.c,$(BUILD)/tests/oracle/workloads/%,\
		   $(sort $(wildcard tests/oracle/workloads/*.c)))
ORACLE_WRAP	:= -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free \
		   -Wl,--wrap=posix_memalign,--wrap=memcpy,--wrap=memset
$(ORACLE): $(ORACLE_SRCS) $(LIB) | $(BUILD)/tests/oracle
	$(call msg,ORACLE,$@)
	$(Q)$(CC) $(CP_CFLAGS) -Itests/oracle $(ORACLE_SRCS) $(LIB) $(LDLIBS) -o $@
$(ORACLE_RT): tests/oracle/trace_rt.c | $(BUILD)/tests/oracle
	$(Q)$(CC) -g -O2 -Wall -Wextra -MMD -MP -c $< -o $@
$(BUILD)/tests/oracle/workloads/%: tests/oracle/workloads/%.c $(ORACLE_RT) Makefile | $(BUILD)/tests/oracle/workloads
	$(call msg,TRACED,$@)
	$(Q)$(CLANG) -g -gdwarf-aranges -O1 -fno-omit-frame-pointer -fsanitize=thread \
		-mllvm -tsan-instrument-read-before-write=1 -Wall -Wextra -MMD -MP \
		-c $< -o $@.o
	$(Q)$(CC) -no-pie -pthread $@.o $(ORACLE_RT) $(ORACLE_WRAP) -o $@
$(BUILD)/tests/oracle $(BUILD)/tests/oracle/workloads:
	$(Q)mkdir -p $@
tests: $(ORACLE) $(ORACLE_WLS)

fuzz: $(FUZZ_BINS)
	$(Q)CP_BUILD=$(BUILD) CP_ROOT=$(CURDIR) CP_FUZZ_SECONDS=$(FUZZ_SECONDS) bash tests/e2e/test_fuzz.sh

# The README's two commands: install what is missing, build, then run.
check: deps
	$(Q)$(MAKE) layers format-check doc-names
	$(Q)$(MAKE) test

# user/'s folders are layers: includes point down (tests/layers.sh says the order).
layers:
	$(Q)tests/layers.sh

# docs/architecture.md names only what exists, and every user/ file (tests/doc_names.sh).
doc-names:
	$(Q)tests/doc_names.sh

# clang-format's layout for every C file (tests/format_check.sh).
format-check:
	$(Q)tests/format_check.sh

test: tests
	$(Q)tests/run.sh $(BUILD)

# the workloads tests/demo.sh runs: the C ones, no C++ allocator
DEMO_WLS	:= $(BUILD)/tests/workloads/false_sharing $(BUILD)/tests/workloads/soft_loop

demo: deps-demo
	$(Q)$(MAKE) all $(DEMO_WLS)
	$(Q)tests/demo.sh $(BUILD)

bench: tests
	$(Q)tests/bench/run.sh $(BUILD)

deps:
	$(Q)packaging/deps.sh check

deps-demo:
	$(Q)packaging/deps.sh demo

vmlinux:
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux/$(ARCH)/vmlinux.h

install: $(BIN)
	$(Q)install -d $(DESTDIR)$(PREFIX)/sbin
	$(Q)install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/sbin/cacheperf-bpf

# The Debian package (packaging/debian): BUILD/deb/cacheperf-bpf_VERSION_amd64.deb, lintian-checked.
deb:
	$(Q)packaging/deb.sh $(BUILD)/deb

clean:
	$(Q)rm -rf $(BUILD)

-include $(wildcard $(BUILD)/*/*.d $(BUILD)/*/*/*.d $(BUILD)/tests/*/*.d $(BUILD)/tests/oracle/*/*.d)
