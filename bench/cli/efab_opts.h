/* One declarative option table drives getopt_long, --help and config keys. */
#ifndef EFAB_OPTS_H
#define EFAB_OPTS_H

#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#include "efab.h"
#include "efab_mem.h"
#include "efab_select.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Option groups: every option belongs to one group and every benchmark row
 * (efab_bench_row_t) lists the groups it accepts. A group says what an
 * option is about, never which executable uses it. */
/* Hand-aligned, one group per line: */
/* clang-format off */
enum {
	EFAB_OG_COMMON = 1u << 0,       /* csv, timeout, verbose */
	EFAB_OG_SELECT = 1u << 1,       /* provider, fabric */
	EFAB_OG_DOMAIN = 1u << 2,       /* domain */
	EFAB_OG_SIZES = 1u << 3,        /* sizes */
	EFAB_OG_ITERS = 1u << 4,        /* iters */
	EFAB_OG_WARMUP = 1u << 5,       /* warmup */
	EFAB_OG_WINDOW = 1u << 6,       /* window, time */
	EFAB_OG_WINDOW_STATS = 1u << 7, /* no-window-stats */
	EFAB_OG_RMA_OP = 1u << 8,       /* op */
	EFAB_OG_MEM = 1u << 9,          /* mem, dmabuf */
	EFAB_OG_GPU = 1u << 10,         /* gpu */
	EFAB_OG_CHECK = 1u << 11,       /* check */
	EFAB_OG_PAIR_LAYOUT = 1u << 12, /* bidir, footprint */
	EFAB_OG_INJECT = 1u << 13,      /* no-inject */
	EFAB_OG_PER_PAIR = 1u << 14,    /* per-pair */
	EFAB_OG_ATOMIC = 1u << 15,      /* aop, dtype, contend */
	EFAB_OG_SRC = 1u << 16,         /* src-unregistered */
	EFAB_OG_MR_CACHE = 1u << 17,    /* mr-cache */
	EFAB_OG_REG = 1u << 18,         /* regime, access, components, domains */
	EFAB_OG_MAX_TOTAL = 1u << 19,   /* max-total */
	EFAB_OG_PROBE = 1u << 20,       /* live, json */
	EFAB_OG_SCAN = 1u << 21,        /* nics, concurrent, passes, lat-size, bw-size, thresholds */
	EFAB_OG_NODES = 1u << 22,       /* nodes-json */
	EFAB_OG_INITIATOR = 1u << 23,   /* initiator, gpu-threads */
	EFAB_OG_PEAK = 1u << 24,        /* post-list, pipeline, eps */
	EFAB_OG_TCLASS = 1u << 25,      /* tclass */
	EFAB_OG_HIGH_PPS = 1u << 26,    /* high-pps (writes) */
	EFAB_OG_SHMEM = 1u << 27,       /* NVSHMEM's RMA: op (put|get), initiator, src, register */
	EFAB_OG_CUDA_API = 1u << 28,    /* no-cuda-api (the endpoints' data path) */
	EFAB_OG_NV_TUNE = 1u << 29,     /* NVSHMEM's proxy/transport knobs (efab_nvtune.h) */
	EFAB_OG_SHMEM_NBI = 1u << 30,   /* nbi (efab_shmem_lat: the _nbi form + the quiet) */
	EFAB_OG_COLUMNS = 1u << 31,     /* columns (the engine's terminal table) */
};
/* clang-format on */

/* How a benchmark times its operation (bench/engine/pattern.c). */
enum efab_pattern_kind {
	EFAB_PATTERN_NONE = 0, /* the executable drives itself (registration, probe, scan, connect) */
	EFAB_PATTERN_PINGPONG, /* one operation at a time: latency */
	EFAB_PATTERN_STREAM,   /* windows of operations: bandwidth and message rate */
};

/* Ranks rule of a row (MPI benchmarks). */
enum { EFAB_RANKS_ANY = -1, EFAB_RANKS_PAIRS = 0 }; /* > 0: exactly that many */

/* Default counts of a row: -n defaults to iters up to pivot bytes, scaled
 * down linearly above it, never below floor; -w is capped at warmup_cap
 * (0: no cap). */
typedef struct efab_counts {
	uint64_t iters, pivot, floor;
	uint64_t warmup_cap;
} efab_counts_t;

/* One benchmark (executable): the only list of them. lib/ defines the type;
 * the rows live in bench/engine/rows.c and are handed to lib (option
 * parsing, sweep configs) by the caller. */
typedef struct efab_bench_row {
	const char *name;       /* the executable's name */
	const char *csv_name;   /* value of the CSV 'bench' column */
	const char *summary;    /* first lines of --help */
	unsigned options;       /* EFAB_OG_* groups it accepts */
	int mpi;                /* 1: a sweep launches it through mpirun/srun */
	int no_sweep;           /* 1: not a sweep job (writes no result rows of its own CSV schema) */
	/* the engine's fields (benchmarks on bench/engine/harness.c) */
	int pattern;            /* enum efab_pattern_kind */
	int family;             /* which operation callbacks (bench/engine/families.c) */
	const char *definition; /* the metric, printed in the header block */
	const char *brief;      /* the metric in one short line: the header at default verbosity */
	const char *table_cols; /* the table's default columns (--columns names) */
	int default_op;         /* EFAB_OP_* */
	unsigned ops;           /* allowed ops, bit (1 << EFAB_OP_*) */
	int ranks;              /* EFAB_RANKS_* or an exact count */
	uint64_t caps;          /* fi_info caps asked for */
	uint64_t access;        /* MR access of the benchmark buffer */
	int max_size_is_msg;    /* sizes bounded by ep_attr->max_msg_size, not the RMA limit */
	int show_lat, show_bw;  /* table columns */
	const char *const *extra_cols; /* CSV columns after the common ones */
	size_t n_extra;
	/* CSV columns after every other (the proof of path's, the initiator's) */
	const char *const *tail_cols;
	size_t n_tail;
	efab_counts_t counts;
} efab_bench_row_t;

/* The row named name, in full or without its "efab_" prefix; NULL if none. */
const efab_bench_row_t *efab_bench_row_find(const efab_bench_row_t *rows, size_t n,
					    const char *name);

enum efab_op { EFAB_OP_DEFAULT = 0, EFAB_OP_WRITE, EFAB_OP_WRITEDATA, EFAB_OP_READ, EFAB_OP_ATOMIC };
/* cuda-vmm: CUDA VMM device memory (cuMemCreate + cuMemMap), what PyTorch's
 * expandable segments, NCCL and NVSHMEM's heap allocate; last, so the others
 * keep their numbers. */
enum efab_aop { EFAB_AOP_ADD = 0, EFAB_AOP_FADD, EFAB_AOP_CSWAP, EFAB_AOP_SWAP, EFAB_AOP_MIN,
		EFAB_AOP_MAX, EFAB_AOP_BOR, EFAB_AOP_BAND, EFAB_AOP_BXOR };
enum efab_dtype { EFAB_DT_U64 = 0, EFAB_DT_U32, EFAB_DT_I32, EFAB_DT_I64, EFAB_DT_F32, EFAB_DT_F64 };
enum efab_regime { EFAB_REGIME_ALL = 0, EFAB_REGIME_FRESH, EFAB_REGIME_SAME, EFAB_REGIME_ACCUMULATE };
enum efab_footprint { EFAB_FOOTPRINT_BUFFER = 0, EFAB_FOOTPRINT_WINDOW };
enum efab_initiator { EFAB_INITIATOR_CPU = 0, EFAB_INITIATOR_GPU };
/* efab_shmem_lat / efab_shmem_bw (bench/ops/shmem_put.cc): NVSHMEM's operation, who
 * initiates it, and PE 0's local buffer */
enum efab_shmem_op { EFAB_SHMEM_PUT = 0, EFAB_SHMEM_GET, EFAB_SHMEM_PUT_SIGNAL };
enum efab_shmem_initiator { EFAB_SHMEM_HOST = 0, EFAB_SHMEM_STREAM, EFAB_SHMEM_THREAD,
			    EFAB_SHMEM_WARP, EFAB_SHMEM_BLOCK };
enum efab_shmem_src { EFAB_SHMEM_SRC_CUDA = 0, EFAB_SHMEM_SRC_HOST };
/* --tclass: libfabric's FI_TC_* (efab_tclass_value maps the index) */

#define EFAB_SIZE_LIMIT (1ull << 40) /* 1 TiB: anything above is a typo */

typedef struct efab_sizes {
	uint64_t min, max, factor;
} efab_sizes_t;

typedef struct efab_opts {
	char provider[64];
	char fabric[128];
	char domain[128]; /* "" = first match, "auto" = nearest to the GPU */
	efab_sizes_t sizes;
	int sizes_given;
	uint64_t iters; /* 0 = scaled default */
	uint64_t warmup;
	uint64_t window;
	int window_given; /* -W was given (efab_scan has its own default) */
	int op;
	int mem_local, mem_remote;
	int gpu; /* -1 = auto */
	int check;
	char csv[PATH_MAX];
	char columns[1024]; /* --columns: "" (the benchmark's set), all, or a,b,c */
	double timeout_s;
	int verbose;
	/* bandwidth */
	int bidir;
	int no_inject;
	int per_pair;
	double time_s;
	int no_window_stats;
	int footprint; /* enum efab_footprint */
	int initiator;       /* enum efab_initiator */
	uint64_t gpu_threads; /* GPU initiator, stream: lanes posting a doorbell batch (0: 1) */
	int gpu_wqe;          /* GPU initiator: 0 = 64-byte send-queue entries, 1 = ask for 128 */
	/* peak-rate techniques (fi_efa_rma_bw's): FI_MORE on all but every Nth
	 * post (1: none), the pipelined loop, FI_EFA_WR_HIGH_PPS on writes, the
	 * endpoint's traffic class (enum efab_tclass) */
	uint64_t post_list;
	int pipeline;
	uint64_t eps; /* endpoints per rank, operations round-robin (1: one) */
	int high_pps;
	int tclass;
	/* atomics */
	int aop;
	int dtype;
	int contend;
	/* registration / unregistered source */
	int src_unregistered;
	int signal_send; /* --signal-send: writedata + a 32-byte fi_send per operation */
	int regime;   /* enum efab_regime */
	int mr_cache; /* enum efab_tristate */
	int dmabuf;
	int no_cuda_api; /* --no-cuda-api: FI_OPT_CUDA_API_PERMITTED = false on every endpoint */
	int access;   /* 0 remote (default), 1 local only */
	uint64_t max_total;
	int components;
	char domains[16]; /* mr_reg --domains: "" (one), "local", "all" or a count */
	/* NVSHMEM's RMA (EFAB_OG_SHMEM): enum efab_shmem_op, efab_shmem_initiator,
	 * efab_shmem_src; the local buffer nvshmemx_buffer_register'ed */
	int shmem_op;
	int shmem_initiator;
	int shmem_src;
	int shmem_register;
	/* NVSHMEM's knobs (EFAB_OG_NV_TUNE, efab_nvtune.h): --nv-batch-rma
	 * (tristate: 0 leave NVSHMEM's default, 1 on, 2 off); the counts 0 when
	 * not given */
	int nv_batch_rma;
	int shmem_nbi; /* efab_shmem_lat --nbi: the _nbi form + the quiet, not the blocking call */
	uint64_t nv_batch_ops, nv_proxy_batch, nv_lf_proxy_batch;
	/* probe */
	int live;
	int json;
	/* scan */
	uint64_t nics;     /* NICs per node (0 = every NIC the fabric lists) */
	uint64_t concurrent; /* node pairs measured at once (0 = every pair of a round) */
	uint64_t passes;   /* whole scans; each figure is the median over them */
	uint64_t lat_size, bw_size;
	double threshold;  /* flag below threshold x the cluster median */
	double min_bw;     /* 10^6 B/s, 0 = off */
	double max_lat;    /* microseconds, 0 = off */
	double max_retrans; /* a NIC's retrans_pkts / tx_pkts in a round above this is trouble */
	char verdict_json[PATH_MAX]; /* the verdict as JSON ("" none) */
	/* every node's facts as JSON (the sweep: jobs/NNN.nodes.json) */
	char nodes_json[PATH_MAX];
	int strict_versions; /* a difference between the ranks' stacks is exit 2 */
} efab_opts_t;

enum efab_opt_type { EFAB_OT_STR, EFAB_OT_U64, EFAB_OT_DOUBLE, EFAB_OT_FLAG, EFAB_OT_CHOICE,
		     EFAB_OT_SIZES, EFAB_OT_MEM, EFAB_OT_GPU, EFAB_OT_COUNT, EFAB_OT_SIZE };

typedef struct efab_optdef {
	const char *name;  /* long option and config key */
	int short_name;    /* 0 = none */
	enum efab_opt_type type;
	size_t offset;     /* into efab_opts_t */
	size_t size;       /* buffer size for strings */
	const char *metavar;
	const char *help;
	unsigned group;    /* EFAB_OG_*: the one group it belongs to */
	double min, max;   /* numeric range */
	const char *const *choices; /* NULL-terminated, value = index */
} efab_optdef_t;

extern const efab_optdef_t efab_optdefs[];
extern const size_t efab_n_optdefs;

/* Defaults shared by every executable. */
void efab_opts_init(efab_opts_t *o);

/* Set one option by long name (config files and getopt share this). Returns
 * EFAB_OK or EFAB_EUSAGE with a one-line reason in err. value is NULL for
 * flags given on the command line. */
int efab_opts_set(efab_opts_t *o, unsigned options, const char *name, const char *value, char *err,
		  size_t errlen);

/* Look up an option that applies to bench; NULL when unknown. */
const efab_optdef_t *efab_opts_find(unsigned options, const char *name);

enum { EFAB_PARSE_OK = 0, EFAB_PARSE_HELP = -1, EFAB_PARSE_VERSION = -2 };
/* Parse argv. Returns EFAB_PARSE_OK, _HELP, _VERSION, or EFAB_EUSAGE with err
 * filled. Positional arguments are refused. */
int efab_opts_parse(efab_opts_t *o, unsigned options, int argc, char **argv, char *err,
		    size_t errlen);

void efab_opts_help(FILE *f, const char *prog, const char *summary, unsigned options);

/* "MIN:MAX[:xFACTOR]" or "N", K/M/G/T binary suffixes. */
int efab_sizes_parse(const char *s, efab_sizes_t *out, char *err, size_t errlen);
int efab_size_parse(const char *s, uint64_t *out, char *err, size_t errlen);
/* Number of sizes in the sweep and the i-th one. */
size_t efab_sizes_count(const efab_sizes_t *s);
uint64_t efab_sizes_at(const efab_sizes_t *s, size_t i);
/* "4K", "1M", "1536" */
void efab_size_str(uint64_t v, char *buf, size_t len);
/* Default counts: base up to size pivot, scaled down linearly above it, never
 * below floor. */
uint64_t efab_scaled_count(uint64_t base, uint64_t pivot, uint64_t size, uint64_t floor);

/* Option handling for executables that parse before anything else (probe,
 * mr_reg, shmem_reg): -1 to go on, else the exit status (help and version
 * printed, a usage error said in one line). */
int efab_opts_main(efab_opts_t *o, unsigned options, const char *prog, const char *summary,
		   int argc, char **argv);

const char *efab_op_name(int op);
const char *efab_mem_name(int kind);
const char *efab_aop_name(int aop);
const char *efab_regime_name(int regime);
const char *efab_footprint_name(int footprint);
const char *efab_tclass_name(int tclass);
const char *efab_dtype_name(int dt);
const char *efab_shmem_op_name(int op);
const char *efab_shmem_initiator_name(int initiator);
const char *efab_shmem_src_name(int src);
size_t efab_dtype_size(int dt);

#ifdef __cplusplus
}
#endif

#endif
