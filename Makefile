# efabench build. `make` builds build/lib/libefab.a and build/bin/efab_*.
# Overrides: LIBFABRIC_HOME (e.g. /opt/amazon/efa), MPI_HOME (e.g. /opt/amazon/openmpi)
# or MPICC, HWLOC_HOME, CUDA_HOME (optional; empty disables CUDA), NVSHMEM_HOME.
# V=1 prints commands, SAN=1 builds with ASan + UBSan.

ifeq ($(SAN),1)
  BUILD ?= build-san
else
  BUILD ?= build
endif
CC      ?= cc
V       ?= 0
SAN     ?= 0
PYTHON  ?= python3

Q    := $(if $(filter 1,$(V)),,@)
say   = $(if $(filter 1,$(V)),,@printf '  %-7s %s\n' $(1) $(2);)

# ---- dependencies ----
# No LIBFABRIC_HOME: the EFA installer's libfabric ($(EFA_PREFIX), default
# /opt/amazon/efa: an EFA host's, newer than a distribution's and the one its
# kernel driver was installed with), said once; else the system's; else the
# newest libfabric an efasim build made here (build-efasim/lf-V/prefix).
EFA_PREFIX ?= /opt/amazon/efa
ifndef LIBFABRIC_HOME
  ifneq ($(wildcard $(EFA_PREFIX)/include/rdma/fabric.h),)
    LIBFABRIC_HOME := $(EFA_PREFIX)
    $(info make: using LIBFABRIC_HOME=$(LIBFABRIC_HOME) (the EFA installer's libfabric; set LIBFABRIC_HOME to choose))
  endif
endif
ifndef LIBFABRIC_HOME
  ifeq ($(shell pkg-config --exists libfabric 2>/dev/null && echo y)$(wildcard /usr/include/rdma/fabric.h),)
    LIBFABRIC_HOME := $(lastword $(sort $(wildcard $(CURDIR)/build-efasim/lf-*/prefix)))
    ifneq ($(LIBFABRIC_HOME),)
      $(info make: no system libfabric: using LIBFABRIC_HOME=$(LIBFABRIC_HOME) (efasim's build; set LIBFABRIC_HOME to choose))
    else
      LIBFABRIC_HOME :=
      ifeq ($(filter deps demo check clean efasim efasim-all format format-check,$(MAKECMDGOALS)),)
        $(info make: no libfabric found (no pkg-config libfabric, no /usr/include/rdma/fabric.h): set LIBFABRIC_HOME, run make deps, or make efasim V=2.6.0 first)
      endif
    endif
  endif
endif
ifneq ($(LIBFABRIC_HOME),)
  FABRIC_CFLAGS := -I$(LIBFABRIC_HOME)/include
  FABRIC_LIBS   := $(foreach d,lib lib64,-L$(LIBFABRIC_HOME)/$(d) -Wl,-rpath,$(LIBFABRIC_HOME)/$(d)) -lfabric
else
  FABRIC_CFLAGS := $(shell pkg-config --cflags libfabric 2>/dev/null)
  FABRIC_LIBS   := $(or $(shell pkg-config --libs libfabric 2>/dev/null),-lfabric)
endif

ifndef MPICC
  MPICC := $(if $(MPI_HOME),$(MPI_HOME)/bin/mpicc,mpicc)
endif

ifdef HWLOC_HOME
  HWLOC_CFLAGS := -I$(HWLOC_HOME)/include
  HWLOC_LIBS   := $(foreach d,lib lib64,-L$(HWLOC_HOME)/$(d) -Wl,-rpath,$(HWLOC_HOME)/$(d)) -lhwloc
else
  HWLOC_CFLAGS := $(shell pkg-config --cflags hwloc 2>/dev/null)
  HWLOC_LIBS   := $(or $(shell pkg-config --libs hwloc 2>/dev/null),-lhwloc)
endif

# CUDA is optional: only its header is needed (the driver is dlopen'ed at run time).
CUDA_HOME ?= $(firstword $(wildcard /usr/local/cuda))
ifneq ($(wildcard $(CUDA_HOME)/include/cuda.h),)
  CUDA_CFLAGS := -DEFAB_HAVE_CUDA -I$(CUDA_HOME)/include
endif
# its major version (cuda.h's CUDA_VERSION 12080 -> 12), read only for the
# NVSHMEM hint: the pip wheel is nvidia-nvshmem-cu<major>
CUDA_MAJOR = $(shell sed -n 's/^\#define CUDA_VERSION \([0-9]*\)[0-9][0-9][0-9]$$/\1/p' $(CUDA_HOME)/include/cuda.h 2>/dev/null)
SHMEM_HINT = $(if $(CUDA_CFLAGS),NVSHMEM not found: set NVSHMEM_HOME$(if $(CUDA_MAJOR),$(comma) or pip install \
  nvidia-nvshmem-cu$(CUDA_MAJOR) (the wheel for CUDA $(CUDA_MAJOR)$(comma) the toolkit in $(CUDA_HOME))),built without CUDA \
  (no $(CUDA_HOME)/include/cuda.h): set CUDA_HOME)

# -Wformat-truncation is off: it flags every bounded snprintf of a path or message,
# and bounded truncation is what those calls are for.
# NVSHMEM (optional): NVSHMEM_HOME, or the pip package nvidia-nvshmem-cu12/13.
NVSHMEM_HOME ?= $(shell $(PYTHON) -c "import importlib.util as u; s = u.find_spec('nvidia.nvshmem'); print(list(s.submodule_search_locations)[0] if s else '')" 2>/dev/null)
ifndef MPICXX
  MPICXX := $(if $(MPI_HOME),$(MPI_HOME)/bin/mpicxx,mpicxx)
endif

CFLAGS_BASE := -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wno-format-truncation -MMD -MP -Ilib
ifeq ($(SAN),1)
  CFLAGS_BASE += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
  LDFLAGS_SAN := -fsanitize=address,undefined
endif
LIB_CFLAGS := $(CFLAGS_BASE) $(FABRIC_CFLAGS) $(HWLOC_CFLAGS) $(CUDA_CFLAGS) $(CFLAGS)
# MPI_HOME's lib and lib64 as run paths: the EFA installer's Open MPI
# (/opt/amazon/openmpi/lib64, lib on Ubuntu) is not on the loader's path
MPI_RPATH  := $(if $(MPI_HOME),$(foreach d,lib lib64,-Wl,-rpath,$(MPI_HOME)/$(d)))
LIBS       := $(FABRIC_LIBS) $(HWLOC_LIBS) $(MPI_RPATH) -ldl -lm $(LDFLAGS_SAN) $(LDFLAGS)

comma := ,
# ---- sources ----
# lib/ (libefab.a, no MPI, nothing of bench/): provider and fabric selection,
# endpoints and AV, registration, memory kinds, the data-path helpers, the
# clock, the topology, the NIC counters. bench/cli/ (libefab_cli.a): the option
# table, configs, result rows, the table and CSV, the child runner and the
# relay. bench/engine/: the MPI lifecycle, the timing patterns and the
# benchmark rows; bench/ops/: one family per operation; bench/tools/: sweep and
# probe; bench/efab_*.c: one main per executable, which names its family.
# Engine and families are archived (libefab_bench.a), so each executable links
# what its main reaches: efab_put_lat carries no scan, atomic or connect code.
LIB_SRC    := $(wildcard lib/*.c)
LIB_OBJ    := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ    := $(patsubst %.c,$(BUILD)/%.o,$(wildcard bench/cli/*.c))
MAINS      := $(wildcard bench/efab_*.c)
ENGINE_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(wildcard bench/engine/*.c))
OPS_OBJ    := $(patsubst %.c,$(BUILD)/%.o,$(wildcard bench/ops/*.c))
BINS       := $(MAINS:bench/%.c=$(BUILD)/bin/%)
BENCH_INC  := -Ibench/cli -Ibench/engine -Ibench/ops
# the archives in link order (a group: the engine calls back into cli, cli into lib)
ARCHIVES   := $(BUILD)/lib/libefab_bench.a $(BUILD)/lib/libefab_cli.a $(BUILD)/lib/libefab.a
LINK_ARCH   = -Wl,--start-group $(ARCHIVES) -Wl,--end-group
ifneq ($(and $(wildcard $(NVSHMEM_HOME)/include/nvshmem.h),$(CUDA_CFLAGS)),)
  SHMEM_BIN := $(BUILD)/bin/efab_shmem_reg $(BUILD)/bin/efab_shmem_seed \
    $(BUILD)/bin/efab_shmem_lat $(BUILD)/bin/efab_shmem_bw
endif
# The GPU initiator's CUDA kernels (bench/ops/gda_kernels.cu, --initiator gpu):
# nvcc makes an sm_90 cubin + compute_90 PTX image, embedded as data (CUDA's
# bin2c) and loaded with the driver API at run time (no libcudart). Without
# nvcc the image is empty and --initiator gpu exits 77 saying so.
NVCC     ?= $(if $(CUDA_CFLAGS),$(wildcard $(CUDA_HOME)/bin/nvcc))
GDA_ARCH ?= -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90
GDA_OBJ  := $(BUILD)/gen/gda_fatbin.o
ENGINE_OBJ += $(GDA_OBJ)
# NVSHMEM's kernel initiators (bench/ops/shmem_kernels.cu: efab_shmem_lat/bw
# --initiator thread|warp|block): nvcc -rdc=true, then a device link
# (nvcc -dlink) with NVSHMEM's libnvshmem_device.a, whose host part
# (nvshmemi_init_thread, nvshmemi_finalize) is linked in too; sm_90 SASS
# (H100/H200: a device link needs the target's code). Built only where nvcc
# and $(NVSHMEM_HOME)/lib/libnvshmem_device.a are found (EFAB_SHMEM_KERNELS
# for shmem_put.cc); else those initiators exit 77 saying so.
SHK_ARCH ?= -gencode arch=compute_90,code=sm_90
ifneq ($(and $(NVCC),$(wildcard $(NVSHMEM_HOME)/lib/libnvshmem_device.a)),)
  SHK_OBJ  := $(BUILD)/bench/ops/shmem_kernels.o $(BUILD)/bench/ops/shmem_kernels_dlink.o
  SHK_LIBS := $(NVSHMEM_HOME)/lib/libnvshmem_device.a
  # the device link pulls in CUDA's device runtime (cuda_device_runtime.cu's
  # image, __fatbinwrap_*_cuda_device_runtime_cu_*): its host part is in
  # libcudadevrt.a, which nvcc adds when it links and mpicxx does not
  SHK_DEVRT := -L$(CUDA_HOME)/lib64 -lcudadevrt
  SHK_DEF  := -DEFAB_SHMEM_KERNELS
endif
# make demo and make check build with this many jobs (one per core: 15 s
# instead of 26 s for `all` on 2 cores)
BUILD_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
UNIT_SRC  := $(wildcard tests/unit/test_*.c)
UNITS     := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

.SECONDARY:
.PHONY: all example deps check check-run check-rebuild-units demo install clean format format-check format-base tests fuzz valgrind
all: $(ARCHIVES) $(BINS) $(SHMEM_BIN) $(BUILD)/lib/libefab_fitrace.so $(BUILD)/lib/libefab_fipost.so $(BUILD)/tests/fitrace_check
ifeq ($(SHMEM_BIN),)
	@echo "  efab_shmem_reg skipped (and efab_shmem_seed, efab_shmem_lat, efab_shmem_bw): $(SHMEM_HINT)"
endif
ifneq ($(and $(SHMEM_BIN),$(if $(SHK_OBJ),,no)),)
	@echo "  efab_shmem_lat/bw --initiator thread|warp|block not built (exit 77): no nvcc or no $(NVSHMEM_HOME)/lib/libnvshmem_device.a"
endif

$(BUILD)/bench/ops/shmem_%.o: bench/ops/shmem_%.cc
	@mkdir -p $(@D)
	$(call say,MPICXX,$<)
	$(Q)$(MPICXX) -std=c++17 -O2 -g -Wall -Wextra -Werror -Wno-format-truncation -MMD -MP -DOMPI_SKIP_MPICXX -DMPICH_SKIP_MPICXX -Ilib $(BENCH_INC) $(FABRIC_CFLAGS) \
	  -isystem $(NVSHMEM_HOME)/include -isystem $(CUDA_HOME)/include -isystem $(CUDA_HOME)/include/cccl \
	  $(CUDA_CFLAGS) $(SHMEM_DEFS) $(if $(filter 1,$(SAN)),-fsanitize=address$(comma)undefined) -c $< -o $@
$(BUILD)/bench/ops/shmem_put.o: SHMEM_DEFS := $(SHK_DEF)

$(BUILD)/bench/ops/shmem_kernels.o: bench/ops/shmem_kernels.cu bench/ops/shmem_kernels.h
	@mkdir -p $(@D)
	$(call say,NVCC,$<)
	$(Q)$(NVCC) -std=c++17 -O2 -rdc=true $(SHK_ARCH) -Ibench/ops -isystem $(NVSHMEM_HOME)/include -c $< -o $@

$(BUILD)/bench/ops/shmem_kernels_dlink.o: $(BUILD)/bench/ops/shmem_kernels.o $(SHK_LIBS)
	$(call say,DLINK,$@)
	$(Q)$(NVCC) -dlink $(SHK_ARCH) $< $(SHK_LIBS) -o $@

$(BUILD)/bin/efab_shmem_reg: $(BUILD)/bench/ops/shmem_reg.o $(ARCHIVES)
	@mkdir -p $(@D)
	$(call say,LINK,$@)
	$(Q)$(MPICXX) -o $@ $< $(LINK_ARCH) $(lastword $(sort $(wildcard $(NVSHMEM_HOME)/lib/libnvshmem_host.so*))) \
	  -Wl,-rpath,$(NVSHMEM_HOME)/lib $(LIBS)

# the seed's put on a stream needs the CUDA runtime (a stream)
$(BUILD)/bin/efab_shmem_seed: $(BUILD)/bench/ops/shmem_seed.o $(ARCHIVES)
	@mkdir -p $(@D)
	$(call say,LINK,$@)
	$(Q)$(MPICXX) -o $@ $< $(LINK_ARCH) $(lastword $(sort $(wildcard $(NVSHMEM_HOME)/lib/libnvshmem_host.so*))) \
	  -Wl,-rpath,$(NVSHMEM_HOME)/lib -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudart $(LIBS)

# NVSHMEM's own RMA (bench/ops/shmem_put.cc and shmem_put_time.cc, a one-line
# main each): the host library, and the CUDA runtime for the stream
# initiator's stream and events; the kernel initiators' objects and
# libnvshmem_device.a where built (SHK_OBJ above).
SHMEM_PUT_OBJ = $(BUILD)/bench/ops/shmem_put.o $(BUILD)/bench/ops/shmem_put_time.o
SHMEM_RT_LIBS = $(SHK_LIBS) $(SHK_DEVRT) $(lastword $(sort $(wildcard $(NVSHMEM_HOME)/lib/libnvshmem_host.so*))) \
  -Wl,-rpath,$(NVSHMEM_HOME)/lib -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudart $(LIBS)
$(BUILD)/bin/efab_shmem_lat: $(BUILD)/bench/ops/shmem_lat.o $(SHMEM_PUT_OBJ) $(SHK_OBJ) $(ARCHIVES)
	@mkdir -p $(@D)
	$(call say,LINK,$@)
	$(Q)$(MPICXX) -o $@ $(filter %.o,$^) $(LINK_ARCH) $(SHMEM_RT_LIBS)

$(BUILD)/bin/efab_shmem_bw: $(BUILD)/bench/ops/shmem_bw.o $(SHMEM_PUT_OBJ) $(SHK_OBJ) $(ARCHIVES)
	@mkdir -p $(@D)
	$(call say,LINK,$@)
	$(Q)$(MPICXX) -o $@ $(filter %.o,$^) $(LINK_ARCH) $(SHMEM_RT_LIBS)

$(BUILD)/gen/gda_kernels.fatbin: bench/ops/gda_kernels.cu bench/engine/efab_gda_wqe.h bench/engine/efab_gda_args.h
	@mkdir -p $(@D)
	$(call say,NVCC,$<)
	$(Q)$(NVCC) -fatbin $(GDA_ARCH) -Ilib -Ibench/engine -o $@ $<

ifneq ($(NVCC),)
$(BUILD)/gen/gda_fatbin.c: $(BUILD)/gen/gda_kernels.fatbin
	$(call say,BIN2C,$@)
	$(Q)$(dir $(NVCC))bin2c -c -n efab_gda_fatbin $< | \
	  sed 's/^const unsigned char efab_gda_fatbin\[\] =/const unsigned char efab_gda_fatbin[] __attribute__((aligned(16))) =/' > $@.tmp && \
	  grep -q 'aligned(16)' $@.tmp && \
	  echo 'const unsigned long efab_gda_fatbin_len = sizeof(efab_gda_fatbin);' >> $@.tmp && mv $@.tmp $@
else
$(BUILD)/gen/gda_fatbin.c:
	@mkdir -p $(@D)
	$(Q)printf '%s\n' '/* built without nvcc: no GPU kernels (--initiator gpu exits 77) */' \
	  'const unsigned char efab_gda_fatbin[1] = {0};' 'const unsigned long efab_gda_fatbin_len = 0;' > $@
endif

$(GDA_OBJ): $(BUILD)/gen/gda_fatbin.c
	$(call say,CC,$<)
	$(Q)$(CC) -c -o $@ $<

$(BUILD)/lib/%.o: lib/%.c
	@mkdir -p $(@D)
	$(call say,CC,$<)
	$(Q)$(CC) $(LIB_CFLAGS) -c $< -o $@

# hwloc >= 2.0 (lib/topo.c uses the 2.x API; Amazon Linux 2's hwloc-devel is
# 1.11): checked before topo.c is compiled, one line when it is not
.PHONY: hwloc-check
$(BUILD)/lib/topo.o: | hwloc-check
HWLOC_OLD := make: hwloc >= 2.0 is required (lib/topo.c uses its 2.x API): the hwloc.h of \
  $(or $(HWLOC_HOME),the system) is older (Amazon Linux 2 ships 1.11) or missing; set HWLOC_HOME to an hwloc 2.x prefix
hwloc-check:
	$(Q)printf '#include <hwloc.h>\n#if HWLOC_API_VERSION < 0x00020000\n#error\n#endif\n' | \
	  $(CC) $(HWLOC_CFLAGS) $(CFLAGS) -E -x c - >/dev/null 2>&1 || { echo "$(HWLOC_OLD)" >&2; exit 1; }

# The registration-counting interposer (LD_PRELOAD; bench/tools/fitrace.c,
# lib/efab_fitrace.h) and its check programs (tests/fitrace/).
FITRACE_GI := $(foreach m,2 3 7 8 9 10 11,$(BUILD)/tests/fitrace_gi_1_$(m))
$(BUILD)/lib/libefab_fitrace.so: bench/tools/fitrace.c bench/tools/fitrace.map lib/efab_fitrace.h
	@mkdir -p $(@D)
	$(call say,CCLD,$@)
	$(Q)$(CC) $(CFLAGS_BASE) $(FABRIC_CFLAGS) $(CFLAGS) -fPIC -fvisibility=hidden -shared \
	  -Wl,--version-script=bench/tools/fitrace.map -o $@ $< -ldl $(LDFLAGS_SAN) $(LDFLAGS)

# The post and CQ-read counting interposer (LD_PRELOAD; bench/tools/fipost.c):
# doorbells per batch and CQ reads per operation of any libfabric program.
$(BUILD)/lib/libefab_fipost.so: bench/tools/fipost.c bench/tools/fipost.map
	@mkdir -p $(@D)
	$(call say,CCLD,$@)
	$(Q)$(CC) $(CFLAGS_BASE) $(FABRIC_CFLAGS) $(CFLAGS) -fPIC -fvisibility=hidden -shared \
	  -Wl,--version-script=bench/tools/fipost.map -o $@ $< -ldl $(LDFLAGS_SAN) $(LDFLAGS)

$(BUILD)/tests/fitrace_check: tests/fitrace/fitrace_check.c $(BUILD)/tests/libfitrace_user.so | $(FITRACE_GI)
	@mkdir -p $(@D)
	$(call say,CCLD,$@)
	$(Q)$(CC) $(CFLAGS_BASE) $(CFLAGS) -o $@ $< -ldl $(LDFLAGS_SAN) $(LDFLAGS)

$(BUILD)/tests/libfitrace_user.so: tests/fitrace/fitrace_user.c lib/efab_fitrace.h
	@mkdir -p $(@D)
	$(call say,CCLD,$@)
	$(Q)$(CC) $(CFLAGS_BASE) $(FABRIC_CFLAGS) $(CFLAGS) -fPIC -shared -o $@ $< $(FABRIC_LIBS) -ldl $(LDFLAGS_SAN) $(LDFLAGS)

# One program per fi_getinfo version (fitrace_gi_1_M: linked to
# fi_getinfo@FABRIC_1.M) against a stand-in libfabric.so.1 exporting each
# (tests/fitrace/stubfab.c; DT_RPATH to it, ahead of LD_LIBRARY_PATH);
# FITRACE_GI, above, built with fitrace_check.
$(BUILD)/tests/stubfab/libfabric.so.1: tests/fitrace/stubfab.c tests/fitrace/stubfab.map
	@mkdir -p $(@D)
	$(call say,CCLD,$@)
	$(Q)$(CC) $(CFLAGS_BASE) $(FABRIC_CFLAGS) $(CFLAGS) -fPIC -shared -Wl,-soname,libfabric.so.1 \
	  -Wl,--version-script=tests/fitrace/stubfab.map -o $@ $< $(LDFLAGS_SAN) $(LDFLAGS)

$(BUILD)/tests/fitrace_gi_1_%: tests/fitrace/fitrace_gi.c lib/efab_fitrace.h $(BUILD)/tests/stubfab/libfabric.so.1
	$(call say,CCLD,$@)
	$(Q)$(CC) $(CFLAGS_BASE) $(FABRIC_CFLAGS) $(CFLAGS) -DGI_MINOR=$* -o $@ $< -L$(BUILD)/tests/stubfab \
	  -l:libfabric.so.1 -Wl,--disable-new-dtags,-rpath,'$$ORIGIN/stubfab' -ldl $(LDFLAGS_SAN) $(LDFLAGS)

$(BUILD)/lib/libefab.a: $(LIB_OBJ)
	@mkdir -p $(@D)
	$(call say,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/lib/libefab_cli.a: $(CLI_OBJ)
	@mkdir -p $(@D)
	$(call say,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/lib/libefab_bench.a: $(ENGINE_OBJ) $(OPS_OBJ)
	@mkdir -p $(@D)
	$(call say,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/bench/%.o: bench/%.c
	@mkdir -p $(@D)
	$(call say,MPICC,$<)
	$(Q)$(MPICC) $(LIB_CFLAGS) $(BENCH_INC) -c $< -o $@

# The sweep and topo need no MPI: compiled with cc; the sweep reads the
# benchmark rows (bench/engine/rows.c, pure data), which it links with cc too.
# bench/tools/sweep.c and its parts (sweep_int.h names them)
SWEEP_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(wildcard bench/tools/sweep*.c))
$(CLI_OBJ) $(SWEEP_OBJ) $(BUILD)/bench/tools/hostfacts.o $(BUILD)/bench/efab_sweep.o $(BUILD)/bench/efab_topo.o: $(BUILD)/bench/%.o: bench/%.c
	@mkdir -p $(@D)
	$(call say,CC,$<)
	$(Q)$(CC) $(LIB_CFLAGS) -Ibench/cli -Ibench/engine -c $< -o $@

$(BUILD)/bin/efab_sweep: $(BUILD)/bench/efab_sweep.o $(SWEEP_OBJ) $(BUILD)/bench/tools/hostfacts.o $(BUILD)/bench/engine/rows.o $(BUILD)/lib/libefab_cli.a $(BUILD)/lib/libefab.a
	@mkdir -p $(@D)
	$(call say,LINK,$@)
	$(Q)$(CC) -o $@ $^ $(LIBS)

$(BUILD)/bin/efab_topo: $(BUILD)/bench/efab_topo.o $(BUILD)/lib/libefab.a
	@mkdir -p $(@D)
	$(call say,LINK,$@)
	$(Q)$(CC) -o $@ $^ $(LIBS)

# efab_probe: bench/tools/probe.c and its parts (probe_int.h names them)
PROBE_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(wildcard bench/tools/probe*.c) bench/tools/hostfacts.c)
$(BUILD)/bin/efab_probe: $(BUILD)/bench/efab_probe.o $(PROBE_OBJ) $(ARCHIVES)
	@mkdir -p $(@D)
	$(call say,LINK,$@)
	$(Q)$(MPICC) -o $@ $(filter %.o,$^) $(LINK_ARCH) $(LIBS)

$(BUILD)/bin/%: $(BUILD)/bench/%.o $(ARCHIVES)
	@mkdir -p $(@D)
	$(call say,LINK,$@)
	$(Q)$(MPICC) -o $@ $< $(LINK_ARCH) $(LIBS)

$(BUILD)/tests/%.o: tests/unit/%.c
	@mkdir -p $(@D)
	$(call say,CC,$<)
	$(Q)$(CC) $(LIB_CFLAGS) $(BENCH_INC) -Wno-unused-parameter -DEFAB_TEST_DATA='"$(CURDIR)/tests/data"' -c $< -o $@

# the GPU initiator's formats, against libfabric's own efa_io_defs.h where the
# efasim build unpacked it: 2.7.0a1's (a pre-release snapshot: 64-bit request
# ids, 128-byte WQEs) first, else 2.6.0's (else that case is skipped, said by cmocka)
EFA_IO_DEFS ?= $(firstword $(wildcard $(CURDIR)/build-efasim/lf-2.7.0a1/libfabric-2.7.0a1/prov/efa/src/efa_io_defs.h) \
  $(wildcard $(CURDIR)/build-efasim/lf-2.6.0/libfabric-2.6.0/prov/efa/src/efa_io_defs.h))
$(BUILD)/tests/test_gda_wqe.o: tests/unit/test_gda_wqe.c bench/engine/efab_gda_wqe.h $(EFA_IO_DEFS)
	@mkdir -p $(@D)
	$(call say,CC,$<)
	$(Q)$(CC) $(LIB_CFLAGS) -Ibench/engine -Itests/unit/gda_ref $(if $(EFA_IO_DEFS),-DEFAB_EFA_IO_DEFS='"$(EFA_IO_DEFS)"') -c $< -o $@

# the benchmark rows: option sets and sweep configs are tested on the real ones
$(BUILD)/tests/test_%: $(BUILD)/tests/test_%.o $(BUILD)/bench/engine/rows.o $(ARCHIVES)
	$(call say,LINK,$@)
	$(Q)$(CC) -o $@ $(filter %.o,$^) $(LINK_ARCH) -lcmocka $(LIBS)

# the patterns on a constructed context: the engine's rungs below the lifecycle
# (context, evidence, patterns; tests/layers.conf), and no MPI
$(BUILD)/tests/test_pattern: $(BUILD)/tests/test_pattern.o $(BUILD)/bench/engine/pattern.o \
  $(BUILD)/bench/engine/pattern_shot.o $(BUILD)/bench/engine/evidence.o \
  $(BUILD)/bench/engine/context.o $(BUILD)/lib/libefab_cli.a $(BUILD)/lib/libefab.a
	$(call say,LINK,$@)
	$(Q)$(CC) -o $@ $^ -lcmocka $(LIBS)

# libefab on its own (docs/example/lib_write.c): compiled with lib/ as its
# only include path and linked with libefab.a alone, so it proves the library
# needs nothing of bench/; make check runs it (t_layers.sh).
EXAMPLE := $(BUILD)/example/lib_write
$(EXAMPLE): docs/example/lib_write.c $(BUILD)/lib/libefab.a
	@mkdir -p $(@D)
	$(call say,CC,$<)
	$(Q)$(CC) $(LIB_CFLAGS) $< $(BUILD)/lib/libefab.a -o $@ $(LIBS)
example: $(EXAMPLE)
# every lib/ header on its own, as another C program would include it (C and C++)
.PHONY: headers-check
headers-check:
	$(Q)rc=0; for h in lib/efab*.h; do \
	  printf '#include "%s"\nint main(void) { return 0; }\n' $$(basename $$h) | \
	    $(CC) $(filter-out -MMD -MP,$(LIB_CFLAGS)) -Wno-unused-function -x c -fsyntax-only - || { echo "headers-check: $$h does not compile alone (C)"; rc=1; }; \
	  ! command -v $(CXX) >/dev/null || printf '#include "%s"\nint main() { return 0; }\n' $$(basename $$h) | \
	    $(CXX) -Ilib $(FABRIC_CFLAGS) $(HWLOC_CFLAGS) $(CUDA_CFLAGS) -Wall -Werror -Wno-unused-function -x c++ -fsyntax-only - || { echo "headers-check: $$h does not compile alone (C++)"; rc=1; }; \
	done; [ $$rc = 0 ] && echo "headers-check: every lib/ header compiles alone (C$$(command -v $(CXX) >/dev/null && echo ' and C++'))"; exit $$rc

# Without cmocka (e.g. the GPU device machine) the unit tests are not built;
# tests/run then reports them as one SKIP with the reason.
CMOCKA_OK := $(or $(wildcard /usr/include/cmocka.h),$(shell pkg-config --exists cmocka 2>/dev/null && echo yes))
ifeq ($(CMOCKA_OK),)
  UNITS :=
endif
tests: all $(UNITS) $(EXAMPLE)
	$(if $(CMOCKA_OK),,@echo "tests: no cmocka (cmocka.h): unit tests not built; install libcmocka-dev" >&2)

# GPU checks (tests/gpu/*.c): run where a GPU and a CUDA-enabled libfabric are,
# e.g. the H200 device: make gpu-check LIBFABRIC_HOME=... (exit 77 elsewhere).
GPU_TESTS := $(patsubst tests/gpu/%.c,$(BUILD)/tests/gpu_%,$(wildcard tests/gpu/*.c))
$(BUILD)/tests/gpu_%: tests/gpu/%.c $(BUILD)/lib/libefab.a
	@mkdir -p $(@D)
	$(call say,LINK,$@)
	$(Q)$(CC) $(LIB_CFLAGS) $< $(BUILD)/lib/libefab.a -o $@ $(LIBS)
# Then, for each EFASIM_VERSIONS built by `make efasim V=...` (with CUDA), the
# simulated device's GPU registration (tests/efasim/gpu_selftest, GPUDirect on and
# EFASIM_P2P=0) and every GPU path of efabench on efa-direct and efa
# (tests/gpu/efasim_matrix.sh; logs under $(BUILD)/gpu-check).
EFASIM_BUILD ?= $(CURDIR)/build-efasim
export EFASIM_BUILD
.PHONY: gpu-check
gpu-check: $(GPU_TESTS)
	$(Q)rc=0; for t in $(GPU_TESTS); do echo "== $$t"; $$t; r=$$?; [ $$r = 0 ] || [ $$r = 77 ] || rc=1; done; \
	for v in $(EFASIM_VERSIONS); do \
		if [ ! -x "$(EFASIM_BUILD)/lf-$$v/efab/bin/efab_put_lat" ]; then \
			echo "== efasim $$v: SKIP (not built: make efasim V=$$v)"; continue; fi; \
		s=sim; [ "$$v" = 2.7.0a1 ] && s=sim-main; \
		for p in 1 0; do echo "== efasim $$v: gpu_selftest EFASIM_P2P=$$p"; \
			EFASIM_P2P=$$p EFASIM_DIR=$(BUILD)/gpu-check/sim-$$v-$$p tests/efasim/run $$v \
				timeout 120 "$(EFASIM_BUILD)/$$s/bin/gpu_selftest"; \
			r=$$?; [ $$r = 0 ] || [ $$r = 77 ] || rc=1; done; \
		echo "== efasim $$v: GPU paths of efabench (tests/gpu/efasim_matrix.sh)"; \
		tests/gpu/efasim_matrix.sh $$v $(BUILD)/gpu-check/matrix-$$v; \
		r=$$?; [ $$r = 0 ] || [ $$r = 77 ] || rc=1; \
	done; exit $$rc

# The two README commands. Both first make sure the dependencies are here
# (installing them on a fresh Debian/Ubuntu machine, doing nothing otherwise).
deps:
	$(Q).ci/setup-deps

check: deps
	$(Q)$(MAKE) --no-print-directory -j$(BUILD_JOBS) tests
ifeq ($(EFASIM_BESIDE),1)
	$(Q)# EFASIM_BESIDE=1: efasim's builds (minutes) run beside the tests that do not need them, at
	$(Q)# nice 19; tests/run defers the tests that need efasim until the build has ended
	$(Q)bg=$(abspath $(BUILD))/efasim-bg; rm -f $$bg.rc $$bg.log; \
	( nice -n 19 $(MAKE) --no-print-directory efasim-all >$$bg.log 2>&1; echo $$? >$$bg.rc ) & \
	EFAB_EFASIM_BG=$$bg EFAB_AFTER_EFASIM='$(MAKE) -s --no-print-directory check-rebuild-units' \
	  $(MAKE) --no-print-directory check-run; rc=$$?; wait; exit $$rc
else
	$(Q)$(MAKE) --no-print-directory efasim-all
	$(Q)$(MAKE) -s --no-print-directory check-rebuild-units >/dev/null
	$(Q)$(MAKE) --no-print-directory check-run
endif

# test_gda_wqe again, now against the efa_io_defs.h that efasim-all unpacked
# (2.7.0a1's, else 2.6.0's); prints the binary for tests/run to run again
check-rebuild-units:
	$(Q)if [ -n "$(CMOCKA_OK)" ] && ls build-efasim/lf-2.*/libfabric-2.*/prov/efa/src/efa_io_defs.h >/dev/null 2>&1; then \
	  rm -f $(BUILD)/tests/test_gda_wqe.o $(BUILD)/tests/test_gda_wqe && \
	  $(MAKE) --no-print-directory $(BUILD)/tests/test_gda_wqe >&2 && echo $(BUILD)/tests/test_gda_wqe; fi

check-run:
	$(Q)BUILD=$(BUILD) EFAB_SAN=$(SAN) tests/run

# libfabric's efa provider on a simulated EFA device (tests/efasim/README.md):
# `make efasim V=2.6.0` builds, once and cached in build-efasim/, rdma-core 64,
# libfabric V (efa, shm, tcp, rxm) with its fabtests, the simulator, and
# efabench against that libfabric; tests/efasim/run V CMD... runs with them.
# Sources: release tarballs in EFAB_DEPS. make check builds EFASIM_VERSIONS
# when the tarballs are there (a SAN build skips them) and runs their tests.
EFAB_DEPS ?= $(abspath $(CURDIR)/../shared/deps)
# 2.7.0a1: a pre-release snapshot (libfabric main at af8ddbe), built against
# rdma-core main (snapshot at 691953d, not 65.0) and run on efasim's sim-main
EFASIM_VERSIONS ?= 2.1.0 2.4.0 2.6.0 2.7.0a1
# libfabric's own efa unit tests (prov/efa/test) are built by make check for
# these (t_efa260_unit_tests, t_efa270_unit_tests run them on the simulated device)
EFA_UNIT_TEST_VERSIONS ?= 2.6.0 2.7.0a1
export EFAB_DEPS EFASIM_VERSIONS
.PHONY: efasim efasim-all efa-unit-test
# libfabric V's own efa unit tests against the simulated device
# (tests/efasim/unit-test; make check builds them for EFA_UNIT_TEST_VERSIONS).
efa-unit-test:
	$(Q)case "$(V)" in [0-9]*.[0-9]*.[0-9]*) ;; *) echo "usage: make efa-unit-test V=<libfabric version, e.g. 2.6.0>" >&2; exit 2 ;; esac
	$(Q)tests/efasim/build $(V) sim && tests/efasim/build $(V) libfabric && tests/efasim/unit-test $(V) build && tests/efasim/unit-test $(V) run
efasim:
	$(Q)case "$(V)" in [0-9]*.[0-9]*.[0-9]*) ;; *) echo "usage: make efasim V=<libfabric version, e.g. 2.6.0>" >&2; exit 2 ;; esac
	$(Q)tests/efasim/build $(V) all

efasim-all:
	$(Q)if [ "$(SAN)" = 1 ]; then echo "  efasim  skipped in SAN=1 builds (the plain make check runs its tests)"; \
	elif [ ! -f "$(EFAB_DEPS)/rdma-core-64.0.tar.gz" ]; then \
	  echo "  efasim  skipped: no release tarballs in EFAB_DEPS=$(EFAB_DEPS) (the efa tests will report SKIP)"; \
	else for v in $(EFASIM_VERSIONS); do \
	  if [ "$$v" = 2.7.0a1 ] && [ ! -f "$(EFAB_DEPS)/rdma-core-main-20260820.tar.gz" ]; then \
	    echo "  efasim  rdma-core-main-20260820.tar.gz not in $(EFAB_DEPS): libfabric $$v's tests will report SKIP"; \
	  elif [ -f "$(EFAB_DEPS)/libfabric-$$v.tar.gz" ]; then tests/efasim/build $$v all || exit 1; \
	  else echo "  efasim  libfabric-$$v.tar.gz not in $(EFAB_DEPS): its tests will report SKIP"; fi; done; \
	for v in $(EFA_UNIT_TEST_VERSIONS); do \
	  if [ -f "$(EFASIM_BUILD)/lf-$$v/.done" ] && [ -n "$(CMOCKA_OK)" ]; then \
	    echo "  efasim  libfabric $$v's efa unit tests (tests/efasim/unit-test $$v build)"; \
	    tests/efasim/unit-test $$v build || exit 1; fi; done; fi

# The main job: build, run configs/local.conf (every benchmark on shm and tcp
# loopback) into results/, then plot it.
demo: deps
	$(Q)$(MAKE) --no-print-directory -j$(BUILD_JOBS) all
	$(Q)$(BUILD)/bin/efab_sweep configs/local.conf -o results --label demo; rc=$$?; \
	dir=$$(ls -td results/*-demo 2>/dev/null | head -1); \
	if [ -n "$$dir" ] && [ -x plot/efab_plot ]; then $(PYTHON) plot/efab_plot "$$dir" -o "$$dir/plots" || rc=1; fi; \
	echo "demo: results in $$dir"; exit $$rc

# libFuzzer targets (clang): the size-list parser, the option table, the config
# parser. Each runs FUZZ_SECONDS (seed FUZZ_SEED) from tests/fuzz/corpus/; new inputs
# and any crash go to a temporary directory, which is kept and named on failure.
FUZZ_SECONDS ?= 60
# A fixed seed makes a CI failure reproducible from the seed and the corpus;
# FUZZ_SEED=0 lets libFuzzer pick one (exploration: run it for longer).
FUZZ_SEED ?= 1
FUZZERS := sizes opts config
FUZZ_CC ?= clang
FUZZ_SRC := bench/cli/opts.c bench/cli/config.c lib/log.c bench/engine/rows.c
$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_SRC) $(wildcard lib/*.h bench/cli/*.h) bench/engine/rows.h
	@mkdir -p $(@D)
	$(call say,FUZZCC,$<)
	$(Q)$(FUZZ_CC) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -Ilib -Ibench/cli -Ibench/engine $(FABRIC_CFLAGS) $< $(FUZZ_SRC) -o $@

fuzz: $(FUZZERS:%=$(BUILD)/fuzz/fuzz_%)
	$(Q)for t in $(FUZZERS); do \
	  d=$$(mktemp -d); \
	  if $(BUILD)/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -seed=$(FUZZ_SEED) -print_final_stats=1 \
	       -artifact_prefix=$$d/ $$d tests/fuzz/corpus/$$t > $$d/log 2>&1; then \
	    echo "fuzz_$$t: $$(grep -o 'stat::number_of_executed_units: *[0-9]*' $$d/log | grep -o '[0-9]*$$') runs, no crash"; \
	    rm -rf $$d; \
	  else echo "fuzz_$$t: FAILED, see $$d (log and crash input)"; tail -30 $$d/log; exit 1; fi; \
	done

valgrind: all
	$(Q)BUILD=$(BUILD) tests/valgrind.sh

PREFIX ?= /usr/local
install: all
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(BINS) $(DESTDIR)$(PREFIX)/bin

# .clang-format's style, applied to the lines changed since FORMAT_BASE (the
# last commit that moved code between files: git clang-format reads a moved
# line as a new one, and the moves of the thin-library re-cut kept their hand
# formatting; before it, the commit .clang-format came after, f04805a) in
# every tracked .c/.h/.cc/.cu file, through
# git clang-format (Debian package clang-format). Not to whole files: the tree
# was formatted by hand before and no option set reproduces it (.clang-format
# says what it would change), so untouched code stays as it is; new and edited
# code, committed or not, follows the style. make format rewrites those lines
# in place; make format-check prints what it would change as a diff and fails
# (CI: .ci/run). A clone without FORMAT_BASE (shallow) cannot be checked.
FORMAT_BASE ?= cc1e3254ac9e2a01c39fd64efe6208d5ba767b39
# (git-clang-format 14 exits 0 whether or not it found a difference: the diff
# itself is the verdict)
FORMAT_GIT = git clang-format --binary clang-format --extensions c,h,cc,cu
format format-check: format-base
format:
	$(Q)$(FORMAT_GIT) -f $(FORMAT_BASE) -- lib bench tests || [ $$? = 1 ]
format-check:
	$(Q)rc=0; out=$$($(FORMAT_GIT) --diff $(FORMAT_BASE) -- lib bench tests 2>&1) || rc=$$?; \
	  case $$rc:$$out in \
	  [01]:diff*) printf '%s\n' "$$out"; echo "format-check: the lines above differ from .clang-format's style (make format rewrites them)"; exit 1;; \
	  0:*) echo "format-check: lines changed since $(FORMAT_BASE) follow .clang-format";; \
	  *) printf '%s\n' "$$out"; echo "format-check: git clang-format failed (exit $$rc)"; exit 2;; esac
format-base:
	$(Q)git cat-file -e $(FORMAT_BASE)^{commit} 2>/dev/null || \
	  { echo "format: FORMAT_BASE $(FORMAT_BASE) is not in this clone (shallow? git fetch --unshallow)"; exit 2; }

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# make libfabric-home: the libfabric this build uses (tests/integration/t_libfabric.sh)
.PHONY: libfabric-home
libfabric-home:
	@echo "LIBFABRIC_HOME=$(LIBFABRIC_HOME)"
