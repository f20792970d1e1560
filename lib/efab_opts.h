/* One declarative option table drives getopt_long, --help and config keys. */
#ifndef EFAB_OPTS_H
#define EFAB_OPTS_H

#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#include "efab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which executables an option applies to (a bit per benchmark). */
enum {
	EFAB_B_PUT_LAT = 1u << 0,
	EFAB_B_GET_LAT = 1u << 1,
	EFAB_B_PUT_BW = 1u << 2,
	EFAB_B_GET_BW = 1u << 3,
	EFAB_B_ATOMIC_LAT = 1u << 4,
	EFAB_B_ATOMIC_BW = 1u << 5,
	EFAB_B_MR_REG = 1u << 6,
	EFAB_B_SHMEM_REG = 1u << 7,
	EFAB_B_PROBE = 1u << 8,
	EFAB_B_SCAN = 1u << 9,
};
#define EFAB_B_LAT (EFAB_B_PUT_LAT | EFAB_B_GET_LAT | EFAB_B_ATOMIC_LAT)
#define EFAB_B_BW (EFAB_B_PUT_BW | EFAB_B_GET_BW | EFAB_B_ATOMIC_BW)
#define EFAB_B_PUT (EFAB_B_PUT_LAT | EFAB_B_PUT_BW)
#define EFAB_B_ATOMIC (EFAB_B_ATOMIC_LAT | EFAB_B_ATOMIC_BW)
#define EFAB_B_TRAFFIC (EFAB_B_LAT | EFAB_B_BW)
#define EFAB_B_REG (EFAB_B_MR_REG | EFAB_B_SHMEM_REG)
#define EFAB_B_FABRIC (EFAB_B_TRAFFIC | EFAB_B_MR_REG | EFAB_B_PROBE)
#define EFAB_B_ALL 0x3ffu

enum efab_op { EFAB_OP_DEFAULT = 0, EFAB_OP_WRITE, EFAB_OP_WRITEDATA, EFAB_OP_READ, EFAB_OP_ATOMIC };
enum efab_mem_kind { EFAB_MEM_HOST = 0, EFAB_MEM_HOST_HUGE, EFAB_MEM_CUDA, EFAB_MEM_CUDA_HOST };
enum efab_aop { EFAB_AOP_ADD = 0, EFAB_AOP_FADD, EFAB_AOP_CSWAP, EFAB_AOP_SWAP, EFAB_AOP_MIN,
		EFAB_AOP_MAX, EFAB_AOP_BOR, EFAB_AOP_BAND, EFAB_AOP_BXOR };
enum efab_dtype { EFAB_DT_U64 = 0, EFAB_DT_U32, EFAB_DT_I32, EFAB_DT_I64, EFAB_DT_F32, EFAB_DT_F64 };
enum efab_tristate { EFAB_DEFAULT = 0, EFAB_ON, EFAB_OFF };
enum efab_regime { EFAB_REGIME_ALL = 0, EFAB_REGIME_FRESH, EFAB_REGIME_SAME, EFAB_REGIME_ACCUMULATE };
enum efab_footprint { EFAB_FOOTPRINT_BUFFER = 0, EFAB_FOOTPRINT_WINDOW };

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
	int op;
	int mem_local, mem_remote;
	int gpu; /* -1 = auto */
	int check;
	char csv[PATH_MAX];
	double timeout_s;
	int verbose;
	/* bandwidth */
	int bidir;
	int no_inject;
	int per_pair;
	double time_s;
	int no_window_stats;
	int footprint; /* enum efab_footprint */
	/* atomics */
	int aop;
	int dtype;
	int contend;
	/* registration / unregistered source */
	int src_unregistered;
	int regime;   /* enum efab_regime */
	int mr_cache; /* enum efab_tristate */
	int dmabuf;
	int access;   /* 0 remote (default), 1 local only */
	uint64_t max_total;
	int components;
	char domains[16]; /* mr_reg --domains: "" (one), "local", "all" or a count */
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
	/* every node's facts as JSON (efab_sweep: jobs/NNN.nodes.json) */
	char nodes_json[PATH_MAX];
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
	unsigned benches;  /* EFAB_B_* mask */
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
int efab_opts_set(efab_opts_t *o, unsigned bench, const char *name, const char *value, char *err,
		  size_t errlen);

/* Look up an option that applies to bench; NULL when unknown. */
const efab_optdef_t *efab_opts_find(unsigned bench, const char *name);

enum { EFAB_PARSE_OK = 0, EFAB_PARSE_HELP = -1, EFAB_PARSE_VERSION = -2 };
/* Parse argv. Returns EFAB_PARSE_OK, _HELP, _VERSION, or EFAB_EUSAGE with err
 * filled. Positional arguments are refused. */
int efab_opts_parse(efab_opts_t *o, unsigned bench, int argc, char **argv, char *err,
		    size_t errlen);

void efab_opts_help(FILE *f, const char *prog, const char *summary, unsigned bench);

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
int efab_opts_main(efab_opts_t *o, unsigned bench, const char *prog, const char *summary,
		   int argc, char **argv);

const char *efab_op_name(int op);
const char *efab_mem_name(int kind);
const char *efab_aop_name(int aop);
const char *efab_regime_name(int regime);
const char *efab_footprint_name(int footprint);
const char *efab_dtype_name(int dt);
size_t efab_dtype_size(int dt);

#ifdef __cplusplus
}
#endif

#endif
