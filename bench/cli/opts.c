#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "efab_opts.h"

static const char *const op_names[] = {"default", "write", "writedata", "read", "atomic", NULL};
static const char *const op_choices[] = {"write", "writedata", "read", NULL};
static const char *const mem_names[] = {"host", "host-huge", "cuda", "cuda-host", "cuda-vmm", NULL};
_Static_assert(sizeof(mem_names) / sizeof(mem_names[0]) == EFAB_MEM_N_KINDS + 1, "mem_names: one name per enum efab_mem_kind");
static const char *const aop_names[] = {"add", "fadd", "cswap", "swap", "min",
					"max", "bor", "band", "bxor", NULL};
static const char *const dtype_names[] = {"u64", "u32", "i32", "i64", "f32", "f64", NULL};
static const char *const regime_names[] = {"all", "fresh", "same", "accumulate", NULL};
static const char *const tristate_names[] = {"default", "on", "off", NULL};
static const char *const access_names[] = {"remote", "local", NULL};
static const char *const footprint_names[] = {"buffer", "window", NULL};
static const char *const initiator_names[] = {"cpu", "gpu", NULL};
static const char *const gpu_wqe_names[] = {"64", "128", NULL};
static const char *const shmem_op_names[] = {"put", "get", "put-signal", NULL};
static const char *const shmem_initiator_names[] = {"host", "stream", "thread", "warp", "block", NULL};
static const char *const shmem_src_names[] = {"cuda", "host", NULL};
static const char *const tclass_names[] = {"unspec",    "best-effort", "low-latency",
					   "dedicated-access", "bulk-data", "scavenger",
					   "network-ctrl", NULL};

#define OFF(f) offsetof(efab_opts_t, f)
#define SZ(f) sizeof(((efab_opts_t *)0)->f)

/* The one option table. The order here is the order of --help. Each option
 * belongs to one group (EFAB_OG_*); it applies to a benchmark row iff its
 * group is among the row's options. */
/* A hand-aligned table, one option per entry: */
/* clang-format off */
const efab_optdef_t efab_optdefs[] = {
	{"provider", 'p', EFAB_OT_STR, OFF(provider), SZ(provider), "NAME",
	 "libfabric provider (efa, shm, tcp, sockets, ...); default: first that fits", EFAB_OG_SELECT,
	 0, 0, NULL},
	{"fabric", 'f', EFAB_OT_STR, OFF(fabric), SZ(fabric), "NAME",
	 "fabric name (efa-direct, efa, shm, 127.0.0.1/32, ...); default: first that fits",
	 EFAB_OG_SELECT, 0, 0, NULL},
	{"domain", 0, EFAB_OT_STR, OFF(domain), SZ(domain), "NAME|auto",
	 "domain (NIC) name; auto = the NIC nearest this rank's GPU", EFAB_OG_DOMAIN, 0, 0, NULL},
	{"sizes", 'm', EFAB_OT_SIZES, OFF(sizes), SZ(sizes), "MIN:MAX[:xF]",
	 "message sizes in bytes, K/M/G binary suffixes, factor F (default 2); one size allowed",
	 EFAB_OG_SIZES, 0, 0, NULL},
	{"iters", 'n', EFAB_OT_U64, OFF(iters), SZ(iters), "N",
	 "measured iterations per size (default 1000, scaled down above 64 KiB)",
	 EFAB_OG_ITERS, 1, 1e9, NULL},
	{"warmup", 'w', EFAB_OT_U64, OFF(warmup), SZ(warmup), "N",
	 "unmeasured warmup iterations per size (default 50)", EFAB_OG_WARMUP, 0, 1e9, NULL},
	{"window", 'W', EFAB_OT_U64, OFF(window), SZ(window), "N",
	 "operations in flight per window (default 64; efab_scan: 4)", EFAB_OG_WINDOW, 1, 65536, NULL},
	{"op", 'o', EFAB_OT_CHOICE, OFF(op), SZ(op), "write|writedata|read",
	 "RMA operation (put benchmarks: write or writedata; get: read)", EFAB_OG_RMA_OP, 0, 0, op_choices},
	{"mem", 0, EFAB_OT_MEM, OFF(mem_local), SZ(mem_local), "LOCAL[:REMOTE]",
	 "memory kinds host|host-huge|cuda|cuda-host|cuda-vmm for initiator[:target] (default host)",
	 EFAB_OG_MEM, 0, 0, NULL},
	{"gpu", 0, EFAB_OT_GPU, OFF(gpu), SZ(gpu), "auto|N",
	 "GPU for cuda memory kinds (auto = local rank modulo visible GPUs)",
	 EFAB_OG_GPU, 0, 1023, NULL},
	{"check", 'c', EFAB_OT_FLAG, OFF(check), SZ(check), NULL,
	 "validate every transfer's payload; mismatches count into 'errors' and exit 1",
	 EFAB_OG_CHECK, 0, 0, NULL},
	{"bidir", 0, EFAB_OT_FLAG, OFF(bidir), SZ(bidir), NULL,
	 "both sides of a pair issue at once; the row reports the sum", EFAB_OG_PAIR_LAYOUT,
	 0, 0, NULL},
	{"no-inject", 0, EFAB_OT_FLAG, OFF(no_inject), SZ(no_inject), NULL,
	 "never use fi_inject_write, even for sizes within the inject limit", EFAB_OG_INJECT, 0, 0,
	 NULL},
	{"per-pair", 0, EFAB_OT_FLAG, OFF(per_pair), SZ(per_pair), NULL,
	 "with more than one pair, add one row per pair after the aggregate row",
	 EFAB_OG_PER_PAIR, 0, 0, NULL},
	{"time", 0, EFAB_OT_DOUBLE, OFF(time_s), SZ(time_s), "SECONDS",
	 "measure each size for about this long instead of -n iterations", EFAB_OG_WINDOW, 0.001, 3600,
	 NULL},
	{"no-window-stats", 0, EFAB_OT_FLAG, OFF(no_window_stats), SZ(no_window_stats), NULL,
	 "do not time each window (two clock reads per window); window_us columns stay empty",
	 EFAB_OG_WINDOW_STATS, 0, 0, NULL},
	{"footprint", 0, EFAB_OT_CHOICE, OFF(footprint), SZ(footprint), "buffer|window",
	 "buffer (default): every op of a window uses one source and one destination buffer "
	 "(perftest); window: op k uses offset k x size on both sides (fabtests, OSU)",
	 EFAB_OG_PAIR_LAYOUT, 0, 0, footprint_names},
	{"initiator", 0, EFAB_OT_CHOICE, OFF(initiator), SZ(initiator), "cpu|gpu",
	 "who posts the operations: cpu (default: libfabric calls on the CPU) or gpu (a CUDA "
	 "kernel writes the EFA work requests, rings the doorbell and polls its CQ in GPU memory "
	 "itself: efa-direct, --mem cuda, libfabric >= 2.3's GDA ops; exit 77 where missing)",
	 EFAB_OG_INITIATOR, 0, 0, initiator_names},
	{"gpu-threads", 0, EFAB_OT_U64, OFF(gpu_threads), SZ(gpu_threads), "N",
	 "--initiator gpu, bandwidth: lanes of the warp that owns the queue pair writing one "
	 "doorbell batch's WQEs in parallel (1..32, default 1)", EFAB_OG_INITIATOR, 1, 32, NULL},
	{"gpu-wqe", 0, EFAB_OT_CHOICE, OFF(gpu_wqe), SZ(gpu_wqe), "64|128",
	 "--initiator gpu: bytes per send-queue entry the kernel writes: 64 (default) or 128 "
	 "(the GPU's endpoint asks libfabric for an inject size of 80 B, so its QP takes "
	 "efa_io_tx_wqe_128: libfabric >= 2.7 on a device with inline_buf_size_ex 80; exit 77 "
	 "elsewhere)", EFAB_OG_INITIATOR, 0, 0, gpu_wqe_names},
	{"post-list", 0, EFAB_OT_U64, OFF(post_list), SZ(post_list), "N",
	 "post N operations per doorbell: FI_MORE on all but every Nth post (fi_writemsg / "
	 "fi_readmsg; the last post before a wait never has it); default 1 (no FI_MORE). "
	 "Inject is off with N > 1 (fi_inject_write takes no flags)", EFAB_OG_PEAK, 1, 65536, NULL},
	{"pipeline", 0, EFAB_OT_FLAG, OFF(pipeline), SZ(pipeline), NULL,
	 "post while completions are polled, at most -W in flight, no barrier at window ends "
	 "(fi_efa_rma_bw's and perftest's loop); -n counts -W operations as with windows",
	 EFAB_OG_PEAK, 0, 0, NULL},
	{"eps", 0, EFAB_OT_U64, OFF(eps), SZ(eps), "N",
	 "N endpoints (queue pairs) per rank on one domain, each with its own CQ, paired with "
	 "the peer's endpoint of the same number; operations go to them in turn, in --post-list "
	 "batches (default 1)", EFAB_OG_PEAK, 1, 64, NULL},
	{"high-pps", 0, EFAB_OT_FLAG, OFF(high_pps), SZ(high_pps), NULL,
	 "FI_EFA_WR_HIGH_PPS on every write (fi_writemsg; the EFA burst-PPS processing hint; "
	 "libfabric < 2.7 applies it only with FI_EFA_ENABLE_HIGH_PPS=1); exit 77 where the "
	 "libfabric headers or the provider do not offer it", EFAB_OG_HIGH_PPS, 0, 0, NULL},
	{"tclass", 0, EFAB_OT_CHOICE, OFF(tclass), SZ(tclass),
	 "unspec|best-effort|low-latency|bulk-data|...",
	 "traffic class of the endpoint (tx_attr->tclass, FI_TC_*): low-latency = "
	 "FI_TC_LOW_LATENCY (EFA: service level 8); also dedicated-access, scavenger, "
	 "network-ctrl; default unspec", EFAB_OG_TCLASS, 0, 0, tclass_names},
	{"aop", 0, EFAB_OT_CHOICE, OFF(aop), SZ(aop), "OP",
	 "atomic op: add fadd cswap swap min max bor band bxor (default fadd)", EFAB_OG_ATOMIC, 0, 0,
	 aop_names},
	{"dtype", 0, EFAB_OT_CHOICE, OFF(dtype), SZ(dtype), "TYPE",
	 "atomic datatype: u64 u32 i32 i64 f32 f64 (default u64)", EFAB_OG_ATOMIC, 0, 0, dtype_names},
	{"contend", 0, EFAB_OT_FLAG, OFF(contend), SZ(contend), NULL,
	 "with more than 2 ranks, every rank but 0 targets one word on rank 0", EFAB_OG_ATOMIC, 0, 0,
	 NULL},
	{"src-unregistered", 0, EFAB_OT_FLAG, OFF(src_unregistered), SZ(src_unregistered), NULL,
	 "pass desc = NULL for the local source buffer (exit 77 where FI_MR_LOCAL forbids it)",
	 EFAB_OG_SRC, 0, 0, NULL},
	{"signal-send", 0, EFAB_OT_FLAG, OFF(signal_send), SZ(signal_send), NULL,
	 "with -o writedata: after every writedata a 32-byte fi_send (the signal) that the target "
	 "counts with the remote CQ data (NVSHMEM's put-with-signal on EFA; op writedata+send)",
	 EFAB_OG_SRC, 0, 0, NULL},
	/* efab_shmem_lat/bw's -o and --initiator: the same names as the RMA rows'
	 * options (never both in one row: tests/unit/test_opts.c), NVSHMEM's words */
	{"op", 'o', EFAB_OT_CHOICE, OFF(shmem_op), SZ(shmem_op), "put|get|put-signal",
	 "NVSHMEM operation: put (PE 0's local buffer into PE 1's symmetric heap; default), get "
	 "(the heap into the local buffer) or put-signal (the put with a signal: putmem_signal, "
	 "NVSHMEM_SIGNAL_ADD of 1 to a symmetric word at PE 1; stream and kernel initiators only; "
	 "-c: PE 1 waits for the signal, then checks the payload and the count)",
	 EFAB_OG_SHMEM, 0, 0, shmem_op_names},
	{"initiator", 0, EFAB_OT_CHOICE, OFF(shmem_initiator), SZ(shmem_initiator),
	 "host|stream|thread|warp|block",
	 "who issues NVSHMEM's operations: host (default: nvshmem_putmem/getmem from the CPU; "
	 "bandwidth: the _nbi calls, then nvshmem_quiet) or stream (nvshmemx_*_on_stream and "
	 "nvshmemx_quiet_on_stream on a CUDA stream, timed with cudaEvents) "
	 "or, inside a CUDA kernel (one CTA; NVSHMEM's device library, nvcc -rdc=true: exit 77 where "
	 "not built), thread (nvshmem_putmem/getmem by one thread), warp (nvshmemx_*mem_warp, 32 "
	 "threads) or block (nvshmemx_*mem_block, --gpu-threads threads); bandwidth: their _nbi "
	 "forms, then nvshmem_quiet by thread 0", EFAB_OG_SHMEM, 0, 0, shmem_initiator_names},
	{"gpu-threads", 0, EFAB_OT_U64, OFF(gpu_threads), SZ(gpu_threads), "N",
	 "--initiator block: threads of the CTA that issues nvshmemx_*mem_block (1..1024, default "
	 "128)", EFAB_OG_SHMEM, 1, 1024, NULL},
	{"src", 0, EFAB_OT_CHOICE, OFF(shmem_src), SZ(shmem_src), "cuda|host",
	 "PE 0's local buffer (the source of puts, the destination of gets): cuda (cuMemAlloc; "
	 "default) or host (malloc)", EFAB_OG_SHMEM, 0, 0, shmem_src_names},
	{"register", 0, EFAB_OT_FLAG, OFF(shmem_register), SZ(shmem_register), NULL,
	 "nvshmemx_buffer_register the local buffer before measuring (untimed; without it NVSHMEM "
	 "gets an unregistered buffer: efa-direct refuses it, see docs/nvshmem.md)", EFAB_OG_SHMEM,
	 0, 0, NULL},
	{"nbi", 0, EFAB_OT_FLAG, OFF(shmem_nbi), SZ(shmem_nbi), NULL,
	 "time the _nbi form and its quiet instead of the blocking call: host nvshmem_putmem_nbi / "
	 "getmem_nbi + nvshmem_quiet; stream nvshmemx_putmem_nbi_on_stream / getmem_nbi_on_stream "
	 "+ nvshmemx_quiet_on_stream (the call of the report efabench began with); thread|warp|block "
	 "the _nbi forms + nvshmem_quiet by thread 0. Column form (blocking|nbi)",
	 EFAB_OG_SHMEM_NBI, 0, 0, NULL},
	/* NVSHMEM's knobs (efab_nvtune.h): each one environment variable, set
	 * before NVSHMEM starts; exit 77 where no NVSHMEM library of the run
	 * reads it */
	{"nv-batch-rma", 0, EFAB_OT_CHOICE, OFF(nv_batch_rma), SZ(nv_batch_rma), "on|off|default",
	 "NVSHMEM's libfabric transport batching its proxy's RMA with FI_MORE (NVSHMEM >= 3.7): "
	 "off sets NVSHMEM_LIBFABRIC_DISABLE_BATCH_RMA=1, on =0; default leaves it to NVSHMEM "
	 "(batched). Column nv_disable_batch_rma", EFAB_OG_NV_TUNE, 0, 0, tristate_names},
	{"nv-batch-ops", 0, EFAB_OT_U64, OFF(nv_batch_ops), SZ(nv_batch_ops), "N",
	 "NVSHMEM_TRANSPORT_BATCH_MAX_OPS=N: consecutive proxy requests marked with a transport "
	 "batching hint before a batch ends (NVSHMEM >= 3.7, default 16; 1: no hint). Column "
	 "nv_batch_max_ops", EFAB_OG_NV_TUNE, 1, 65536, NULL},
	{"nv-proxy-batch", 0, EFAB_OT_U64, OFF(nv_proxy_batch), SZ(nv_proxy_batch), "N",
	 "NVSHMEM_PROXY_REQUEST_BATCH_MAX=N: requests NVSHMEM's proxy thread takes per turn of its "
	 "progress loop (default 32). Column nv_proxy_batch_max", EFAB_OG_NV_TUNE, 1, 65536, NULL},
	{"nv-lf-proxy-batch", 0, EFAB_OT_U64, OFF(nv_lf_proxy_batch), SZ(nv_lf_proxy_batch), "N",
	 "NVSHMEM_LIBFABRIC_PROXY_REQUEST_BATCH_MAX=N: requests the libfabric transport processes "
	 "per queue per turn (NVSHMEM >= 3.7, default 32). Column nv_lf_proxy_batch_max",
	 EFAB_OG_NV_TUNE, 1, 65536, NULL},
	{"regime", 0, EFAB_OT_CHOICE, OFF(regime), SZ(regime), "all|fresh|same|accumulate",
	 "registration regimes: a new buffer each time, the same buffer again, or keeping "
	 "registrations alive (default all)", EFAB_OG_REG, 0, 0, regime_names},
	{"mr-cache", 0, EFAB_OT_CHOICE, OFF(mr_cache), SZ(mr_cache), "on|off|default",
	 "set FI_MR_CACHE_MAX_COUNT / FI_EFA_MR_CACHE_ENABLE for the run (default: leave as is); "
	 "on efa it governs the provider's registrations of unregistered buffers (put with "
	 "--src-unregistered), not fi_mr_regattr",
	 EFAB_OG_MR_CACHE, 0, 0, tristate_names},
	{"dmabuf", 0, EFAB_OT_FLAG, OFF(dmabuf), SZ(dmabuf), NULL,
	 "register cuda memory through a dmabuf fd (FI_MR_DMABUF, libfabric >= 1.20)",
	 EFAB_OG_MEM, 0, 0, NULL},
	{"no-cuda-api", 0, EFAB_OT_FLAG, OFF(no_cuda_api), SZ(no_cuda_api), NULL,
	 "fi_setopt(FI_OPT_CUDA_API_PERMITTED, false) on every endpoint, as aws-ofi-nccl does: the "
	 "efa fabric then makes no CUDA call for CUDA memory (it needs GPU peer-to-peer) and closes "
	 "its shm path; exit 77 where the provider refuses it",
	 EFAB_OG_CUDA_API, 0, 0, NULL},
	{"access", 0, EFAB_OT_CHOICE, OFF(access), SZ(access), "remote|local",
	 "MR access: remote read/write too (default) or local only", EFAB_OG_REG, 0, 0,
	 access_names},
	{"max-total", 0, EFAB_OT_SIZE, OFF(max_total), SZ(max_total), "BYTES",
	 "most memory registered at once per rank (accumulate regime; default 2G)", EFAB_OG_MAX_TOTAL, 0, 0,
	 NULL},
	{"components", 0, EFAB_OT_FLAG, OFF(components), SZ(components), NULL,
	 "also time what registration is made of on a GPU host: cuMemHostRegister of host "
	 "memory, or the dmabuf export of cuda memory (needs a GPU)", EFAB_OG_REG, 0, 0, NULL},
	{"domains", 0, EFAB_OT_STR, OFF(domains), SZ(domains), "local|gpu-pair|all|N",
	 "register every buffer on k domains (NICs) of the fabric, k = 1, 2, 4, ... up to the "
	 "NICs on the GPU's PCIe switch (local), the NICs exclusive to the GPU (gpu-pair), every "
	 "NIC, or N; rows per k (column domains)", EFAB_OG_REG, 0, 0, NULL},
	{"live", 0, EFAB_OT_FLAG, OFF(live), SZ(live), NULL,
	 "under mpirun -np 2: try each operation per fabric and record OK or the error, then "
	 "the put matrix, each case in child processes (a crash or hang is its verdict)",
	 EFAB_OG_PROBE, 0, 0, NULL},
	{"json", 0, EFAB_OT_FLAG, OFF(json), SZ(json), NULL, "print JSON instead of the table",
	 EFAB_OG_PROBE, 0, 0, NULL},
	{"nics", 0, EFAB_OT_U64, OFF(nics), SZ(nics), "K",
	 "NICs per node to scan, one rank each (default: every NIC the fabric lists; run that "
	 "many ranks per node)", EFAB_OG_SCAN, 1, 1024, NULL},
	{"concurrent", 0, EFAB_OT_U64, OFF(concurrent), SZ(concurrent), "P",
	 "measure at most P node pairs at once (default: every pair of a round; 1 for nodes "
	 "that share cores, e.g. test nodes on one machine)", EFAB_OG_SCAN, 1, 1e6, NULL},
	{"passes", 0, EFAB_OT_U64, OFF(passes), SZ(passes), "R",
	 "scan every pair R times (R round-robins); each figure is the median over the passes "
	 "(default 1)", EFAB_OG_SCAN, 1, 1000, NULL},
	{"lat-size", 0, EFAB_OT_SIZE, OFF(lat_size), SZ(lat_size), "BYTES",
	 "message size of the latency ping-pong (default 8)", EFAB_OG_SCAN, 0, 0, NULL},
	{"bw-size", 0, EFAB_OT_SIZE, OFF(bw_size), SZ(bw_size), "BYTES",
	 "message size of the bandwidth windows (default 1M)", EFAB_OG_SCAN, 0, 0, NULL},
	{"threshold", 0, EFAB_OT_DOUBLE, OFF(threshold), SZ(threshold), "F",
	 "flag a NIC or node whose bandwidth is below F x the cluster median, or whose latency "
	 "is above the median / F (default 0.8)", EFAB_OG_SCAN, 0.01, 1, NULL},
	{"min-bw", 0, EFAB_OT_DOUBLE, OFF(min_bw), SZ(min_bw), "MBps",
	 "also flag bandwidth below this (10^6 B/s per NIC and direction)", EFAB_OG_SCAN, 0, 1e9,
	 NULL},
	{"max-lat", 0, EFAB_OT_DOUBLE, OFF(max_lat), SZ(max_lat), "US",
	 "also flag latency above this (microseconds, p50 of half round trips)", EFAB_OG_SCAN, 0,
	 1e9, NULL},
	{"max-retrans", 0, EFAB_OT_DOUBLE, OFF(max_retrans), SZ(max_retrans), "F",
	 "count a NIC's retransmissions in a round as trouble above F x its tx_pkts there, its "
	 "rx_drops above F x its rx_pkts (default 0.01; 0: any; errors and timeouts always)",
	 EFAB_OG_SCAN, 0, 1, NULL},
	{"verdict-json", 0, EFAB_OT_STR, OFF(verdict_json), SZ(verdict_json), "FILE",
	 "write the verdict to FILE as JSON: one record per finding (subject node, NIC or pair; "
	 "kind; figures; evidence pairs), the same findings as the text verdict", EFAB_OG_SCAN, 0,
	 0, NULL},
	{"nodes-json", 0, EFAB_OT_STR, OFF(nodes_json), SZ(nodes_json), "FILE",
	 "write every node's hostname, libfabric (version, path), EFA installer, kernel and "
	 "topology to FILE as JSON, with the differences between nodes", EFAB_OG_NODES,
	 0, 0, NULL},
	{"strict-versions", 0, EFAB_OT_FLAG, OFF(strict_versions), SZ(strict_versions), NULL,
	 "exit 2 when the ranks differ in libfabric (version or library), EFA installer, "
	 "rdma-core, EFA driver or provider version (default: a warning and a header line)",
	 EFAB_OG_NODES, 0, 0, NULL},
	{"csv", 0, EFAB_OT_STR, OFF(csv), SZ(csv), "FILE",
	 "append result rows to FILE (header written once)", EFAB_OG_COMMON, 0, 0, NULL},
	{"timeout", 't', EFAB_OT_DOUBLE, OFF(timeout_s), SZ(timeout_s), "SECONDS",
	 "give up any completion wait after this long (default 30)", EFAB_OG_COMMON, 0.01, 86400, NULL},
	{"columns", 0, EFAB_OT_STR, OFF(columns), SZ(columns), "all|a,b,c",
	 "the table's columns: all, or a comma list of names (default: the benchmark's first "
	 "few; -v shows all; the CSV has every column whatever is shown)",
	 EFAB_OG_COLUMNS, 0, 0, NULL},
	{"verbose", 'v', EFAB_OT_COUNT, OFF(verbose), SZ(verbose), NULL,
	 "print the chosen fi_info and progress details (repeat for more)", EFAB_OG_COMMON, 0, 0, NULL},
};
/* clang-format on */
const size_t efab_n_optdefs = EFAB_ARRAY_SIZE(efab_optdefs);

void efab_opts_init(efab_opts_t *o)
{
	memset(o, 0, sizeof(*o));
	o->sizes.min = 1;
	o->sizes.max = 4ull << 20;
	o->sizes.factor = 2;
	o->warmup = 50;
	o->window = 64;
	o->gpu = -1;
	o->timeout_s = 30.0;
	o->aop = EFAB_AOP_FADD;
	o->dtype = EFAB_DT_U64;
	o->max_total = 2ull << 30;
	o->lat_size = 8;
	o->bw_size = 1ull << 20;
	o->threshold = 0.8;
	o->max_retrans = 0.01;
	o->passes = 1;
	o->post_list = 1;
	o->eps = 1;
}

static int choice_index(const char *const *choices, const char *v)
{
	for (int i = 0; choices[i]; i++)
		if (strcmp(choices[i], v) == 0)
			return i;
	return -1;
}

static void choices_str(const char *const *choices, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = '\0';
	for (int i = 0; choices[i] && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "", choices[i]);
}

/* Digits only: no sign, no whitespace, no hex; overflow is an error. */
static int parse_u64(const char *s, uint64_t *out)
{
	if (!s || !isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -2;
	if (*end)
		return -1;
	*out = v;
	return 0;
}

int efab_size_parse(const char *s, uint64_t *out, char *err, size_t errlen)
{
	char num[64];
	size_t n = strlen(s);
	if (n == 0 || n >= sizeof(num)) {
		snprintf(err, errlen, "invalid size '%s'", s);
		return EFAB_EUSAGE;
	}
	memcpy(num, s, n + 1);
	unsigned shift = 0;
	/* "Ki", "Mi", ...: the binary prefixes spelled out */
	if (n >= 2 && (num[n - 1] == 'i' || num[n - 1] == 'I') && strchr("KMGTkmgt", num[n - 2]))
		num[--n] = '\0';
	switch (toupper((unsigned char)num[n - 1])) {
	case 'K': shift = 10; break;
	case 'M': shift = 20; break;
	case 'G': shift = 30; break;
	case 'T': shift = 40; break;
	default: break;
	}
	if (shift)
		num[--n] = '\0';
	uint64_t v;
	int rc = parse_u64(num, &v);
	if (rc == -1) {
		snprintf(err, errlen, "invalid size '%s': expected a number with optional K/M/G suffix", s);
		return EFAB_EUSAGE;
	}
	if (rc == -2 || (shift && v > (EFAB_SIZE_LIMIT >> shift)) || v > EFAB_SIZE_LIMIT) {
		snprintf(err, errlen, "size '%s' out of range (largest allowed is 1T)", s);
		return EFAB_EUSAGE;
	}
	v <<= shift;
	if (v == 0) {
		snprintf(err, errlen, "size '%s' must be at least 1 byte", s);
		return EFAB_EUSAGE;
	}
	*out = v;
	return EFAB_OK;
}

int efab_sizes_parse(const char *s, efab_sizes_t *out, char *err, size_t errlen)
{
	char buf[128];
	if (strlen(s) >= sizeof(buf) || !*s) {
		snprintf(err, errlen, "invalid size range '%s'", s);
		return EFAB_EUSAGE;
	}
	strcpy(buf, s);
	char *parts[4] = {0};
	int np = 0;
	char *save = NULL;
	/* strtok would merge "1::4" into two parts: split by hand. */
	char *p = buf;
	while (np < 4) {
		parts[np++] = p;
		char *c = strchr(p, ':');
		if (!c)
			break;
		*c = '\0';
		p = c + 1;
	}
	(void)save;
	if (np > 3 || (np == 4)) {
		snprintf(err, errlen, "invalid size range '%s': expected MIN:MAX[:xFACTOR]", s);
		return EFAB_EUSAGE;
	}
	efab_sizes_t r = {0, 0, 2};
	if (efab_size_parse(parts[0], &r.min, err, errlen))
		return EFAB_EUSAGE;
	r.max = r.min;
	if (np >= 2 && efab_size_parse(parts[1], &r.max, err, errlen))
		return EFAB_EUSAGE;
	if (np == 3) {
		const char *f = parts[2];
		if (*f == 'x' || *f == 'X')
			f++;
		uint64_t fac;
		if (parse_u64(f, &fac) || fac < 2 || fac > 1024) {
			snprintf(err, errlen, "invalid factor '%s' in '%s': expected x2 .. x1024", parts[2], s);
			return EFAB_EUSAGE;
		}
		r.factor = fac;
	}
	if (r.min > r.max) {
		snprintf(err, errlen, "size range '%s': MIN is larger than MAX", s);
		return EFAB_EUSAGE;
	}
	*out = r;
	return EFAB_OK;
}

size_t efab_sizes_count(const efab_sizes_t *s)
{
	size_t n = 0;
	for (uint64_t v = s->min; v <= s->max; v *= s->factor) {
		n++;
		if (v > s->max / s->factor)
			break;
	}
	return n;
}

uint64_t efab_sizes_at(const efab_sizes_t *s, size_t i)
{
	uint64_t v = s->min;
	while (i--)
		v *= s->factor;
	return v;
}

uint64_t efab_scaled_count(uint64_t base, uint64_t pivot, uint64_t size, uint64_t floor)
{
	if (size <= pivot)
		return base;
	uint64_t n = base * pivot / size;
	return n < floor ? floor : n;
}

int efab_opts_main(efab_opts_t *o, unsigned options, const char *prog, const char *summary,
		   int argc, char **argv)
{
	char err[512];
	efab_log_set_prefix(prog);
	efab_opts_init(o);
	int rc = efab_opts_parse(o, options, argc, argv, err, sizeof(err));
	if (rc == EFAB_PARSE_HELP) {
		efab_opts_help(stdout, prog, summary, options);
		return 0;
	}
	if (rc == EFAB_PARSE_VERSION) {
		printf("%s (efabench) %s\n", prog, EFAB_VERSION);
		return 0;
	}
	if (rc) {
		efab_log_error("%s", err);
		return EFAB_EUSAGE;
	}
	efab_log_set_verbose(o->verbose);
	return -1;
}

void efab_size_str(uint64_t v, char *buf, size_t len)
{
	static const char suf[] = "KMGT";
	int k = -1;
	while (v >= 1024 && v % 1024 == 0 && k < 3) {
		v /= 1024;
		k++;
	}
	if (k < 0)
		snprintf(buf, len, "%llu", (unsigned long long)v);
	else
		snprintf(buf, len, "%llu%c", (unsigned long long)v, suf[k]);
}

static int parse_mem_kind(const char *s, int *out)
{
	int i = choice_index(mem_names, s);
	if (i < 0)
		return -1;
	*out = i;
	return 0;
}

static int parse_bool(const char *v, int *out)
{
	if (!v || !strcmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "yes") ||
	    !strcasecmp(v, "on")) {
		*out = 1;
		return 0;
	}
	if (!strcmp(v, "0") || !strcasecmp(v, "false") || !strcasecmp(v, "no") ||
	    !strcasecmp(v, "off")) {
		*out = 0;
		return 0;
	}
	return -1;
}

const efab_optdef_t *efab_opts_find(unsigned options, const char *name)
{
	for (size_t i = 0; i < efab_n_optdefs; i++)
		if ((efab_optdefs[i].group & options) && strcmp(efab_optdefs[i].name, name) == 0)
			return &efab_optdefs[i];
	return NULL;
}

const efab_bench_row_t *efab_bench_row_find(const efab_bench_row_t *rows, size_t n,
					    const char *name)
{
	static const char prefix[] = "efab_";
	for (size_t i = 0; name && i < n; i++) {
		const char *full = rows[i].name;
		const char *bare = strncmp(full, prefix, sizeof(prefix) - 1) ? full
									     : full + sizeof(prefix) - 1;
		if (!strcmp(name, full) || !strcmp(name, bare))
			return &rows[i];
	}
	return NULL;
}

/* One setter per option type: the value v (never NULL unless the type is a
 * flag or a count) into the option's field, or EFAB_EUSAGE with the reason. */

static int set_str(const efab_optdef_t *d, char *field, const char *v, char *err, size_t errlen)
{
	if (strlen(v) >= d->size) {
		snprintf(err, errlen, "value for --%s is too long (%zu characters at most)", d->name,
			 d->size - 1);
		return EFAB_EUSAGE;
	}
	strcpy(field, v);
	return EFAB_OK;
}

static int set_u64(const efab_optdef_t *d, char *field, const char *v, char *err, size_t errlen)
{
	uint64_t x;
	int rc = parse_u64(v, &x);
	if (rc == -1) {
		snprintf(err, errlen, "invalid value '%s' for --%s: expected a non-negative integer", v,
			 d->name);
		return EFAB_EUSAGE;
	}
	if (rc == -2 || (double)x < d->min || (double)x > d->max) {
		snprintf(err, errlen, "value '%s' for --%s out of range [%.0f, %.0f]", v, d->name,
			 d->min, d->max);
		return EFAB_EUSAGE;
	}
	*(uint64_t *)field = x;
	return EFAB_OK;
}

static int set_double(const efab_optdef_t *d, char *field, const char *v, char *err, size_t errlen)
{
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	if (*end || end == v || errno == ERANGE || !isfinite(x) || isspace((unsigned char)*v)) {
		snprintf(err, errlen, "invalid value '%s' for --%s: expected a number", v, d->name);
		return EFAB_EUSAGE;
	}
	if (x < d->min || x > d->max) {
		snprintf(err, errlen, "value '%s' for --%s out of range [%g, %g]", v, d->name, d->min,
			 d->max);
		return EFAB_EUSAGE;
	}
	*(double *)field = x;
	return EFAB_OK;
}

static int set_flag(const efab_optdef_t *d, char *field, const char *v, char *err, size_t errlen)
{
	int b;
	if (parse_bool(v, &b)) {
		snprintf(err, errlen, "invalid value '%s' for --%s: expected true or false", v, d->name);
		return EFAB_EUSAGE;
	}
	*(int *)field = b;
	return EFAB_OK;
}

/* Without a value (-v -v) a count goes up by one; with one it is set. */
static int set_count(const efab_optdef_t *d, char *field, const char *v, char *err, size_t errlen)
{
	uint64_t x;
	if (!v) {
		(*(int *)field)++;
		return EFAB_OK;
	}
	if (parse_u64(v, &x) || x > 9) {
		snprintf(err, errlen, "invalid value '%s' for --%s: expected 0..9", v, d->name);
		return EFAB_EUSAGE;
	}
	*(int *)field = (int)x;
	return EFAB_OK;
}

static int set_choice(const efab_optdef_t *d, char *field, const char *v, char *err, size_t errlen)
{
	int i = choice_index(d->choices, v);
	if (i < 0) {
		char names[256];
		choices_str(d->choices, names, sizeof(names));
		snprintf(err, errlen, "invalid value '%s' for --%s: expected one of %s", v, d->name,
			 names);
		return EFAB_EUSAGE;
	}
	/* --op names skip the internal "default" entry. */
	*(int *)field = d->choices == op_choices ? i + 1 : i;
	return EFAB_OK;
}

/* A size or a size range; a range given by the user replaces the row's own
 * default sizes (sizes_given). */
static int set_sizes(efab_opts_t *o, const efab_optdef_t *d, char *field, const char *v, char *err,
		     size_t errlen)
{
	char e2[200];
	int rc = d->type == EFAB_OT_SIZE ? efab_size_parse(v, (uint64_t *)field, e2, sizeof(e2))
					 : efab_sizes_parse(v, (efab_sizes_t *)field, e2, sizeof(e2));
	if (rc) {
		snprintf(err, errlen, "--%s: %s", d->name, e2);
		return EFAB_EUSAGE;
	}
	if (d->type == EFAB_OT_SIZES)
		o->sizes_given = 1;
	return EFAB_OK;
}

/* LOCAL[:REMOTE]; REMOTE defaults to LOCAL. */
static int parse_mem_pair(const char *v, int *local, int *remote)
{
	char tmp[256];
	if (strlen(v) >= sizeof(tmp))
		return -1;
	strcpy(tmp, v);
	char *colon = strchr(tmp, ':');
	if (colon)
		*colon = '\0';
	if (parse_mem_kind(tmp, local))
		return -1;
	*remote = *local;
	return colon ? parse_mem_kind(colon + 1, remote) : 0;
}

static int set_mem(efab_opts_t *o, const char *v, char *err, size_t errlen)
{
	int l, r;
	if (parse_mem_pair(v, &l, &r)) {
		snprintf(err, errlen,
			 "invalid value '%s' for --mem: expected LOCAL[:REMOTE] with kinds host, "
			 "host-huge, cuda, cuda-host, cuda-vmm", v);
		return EFAB_EUSAGE;
	}
	o->mem_local = l;
	o->mem_remote = r;
	return EFAB_OK;
}

static int set_gpu(const efab_optdef_t *d, char *field, const char *v, char *err, size_t errlen)
{
	uint64_t x;
	if (!strcmp(v, "auto")) {
		*(int *)field = -1;
		return EFAB_OK;
	}
	if (parse_u64(v, &x) || x > (uint64_t)d->max) {
		snprintf(err, errlen, "invalid value '%s' for --gpu: expected auto or 0..%.0f", v,
			 d->max);
		return EFAB_EUSAGE;
	}
	*(int *)field = (int)x;
	return EFAB_OK;
}

static int set_def(efab_opts_t *o, const efab_optdef_t *d, const char *v, char *err, size_t errlen)
{
	char *field = (char *)o + d->offset;

	if (d->type != EFAB_OT_FLAG && d->type != EFAB_OT_COUNT && (!v || !*v)) {
		snprintf(err, errlen, "option --%s needs a value (%s)", d->name, d->metavar);
		return EFAB_EUSAGE;
	}
	switch (d->type) {
	case EFAB_OT_STR: return set_str(d, field, v, err, errlen);
	case EFAB_OT_U64:
		if (field == (char *)&o->window)
			o->window_given = 1; /* efab_scan's own default applies otherwise */
		return set_u64(d, field, v, err, errlen);
	case EFAB_OT_DOUBLE: return set_double(d, field, v, err, errlen);
	case EFAB_OT_FLAG: return set_flag(d, field, v, err, errlen);
	case EFAB_OT_COUNT: return set_count(d, field, v, err, errlen);
	case EFAB_OT_CHOICE: return set_choice(d, field, v, err, errlen);
	case EFAB_OT_SIZE:
	case EFAB_OT_SIZES: return set_sizes(o, d, field, v, err, errlen);
	case EFAB_OT_MEM: return set_mem(o, v, err, errlen);
	case EFAB_OT_GPU: return set_gpu(d, field, v, err, errlen);
	}
	snprintf(err, errlen, "internal error: option type %d", d->type);
	return EFAB_EUSAGE;
}

int efab_opts_set(efab_opts_t *o, unsigned options, const char *name, const char *value, char *err,
		  size_t errlen)
{
	const efab_optdef_t *d = efab_opts_find(options, name);
	if (!d) {
		snprintf(err, errlen, "unknown option '%s'", name);
		return EFAB_EUSAGE;
	}
	return set_def(o, d, value, err, errlen);
}

int efab_opts_parse(efab_opts_t *o, unsigned options, int argc, char **argv, char *err,
		    size_t errlen)
{
	struct option longopts[64];
	const efab_optdef_t *defs[64];
	char shortopts[128] = ":hV";
	size_t ns = strlen(shortopts), nl = 0;

	for (size_t i = 0; i < efab_n_optdefs && nl < 60; i++) {
		const efab_optdef_t *d = &efab_optdefs[i];
		if (!(d->group & options))
			continue;
		int has_arg = (d->type == EFAB_OT_FLAG || d->type == EFAB_OT_COUNT) ? no_argument
										      : required_argument;
		longopts[nl] = (struct option){d->name, has_arg, NULL, (int)(1000 + nl)};
		defs[nl] = d;
		if (d->short_name) {
			shortopts[ns++] = (char)d->short_name;
			if (has_arg == required_argument)
				shortopts[ns++] = ':';
		}
		nl++;
	}
	shortopts[ns] = '\0';
	longopts[nl++] = (struct option){"help", no_argument, NULL, 'h'};
	longopts[nl++] = (struct option){"version", no_argument, NULL, 'V'};
	longopts[nl] = (struct option){0};

	/* 0, not 1: glibc then also forgets its position inside the previous argv
	 * (found by fuzz_opts: a second parse read the first one's freed words) */
	optind = 0;
	opterr = 0;
	int c, li;
	while ((c = getopt_long(argc, argv, shortopts, longopts, &li)) != -1) {
		const efab_optdef_t *d = NULL;
		if (c == 'h')
			return EFAB_PARSE_HELP;
		if (c == 'V')
			return EFAB_PARSE_VERSION;
		if (c == '?') {
			if (optopt)
				snprintf(err, errlen, "unknown option '-%c' (see --help)", optopt);
			else
				snprintf(err, errlen, "unknown option '%s' (see --help)", argv[optind - 1]);
			return EFAB_EUSAGE;
		}
		if (c == ':') {
			snprintf(err, errlen, "option '%s' needs a value (see --help)", argv[optind - 1]);
			return EFAB_EUSAGE;
		}
		if (c >= 1000)
			d = defs[c - 1000];
		else
			for (size_t i = 0; i < nl - 2; i++)
				if (defs[i]->short_name == c)
					d = defs[i];
		if (!d) {
			snprintf(err, errlen, "unknown option '-%c' (see --help)", c);
			return EFAB_EUSAGE;
		}
		if (set_def(o, d, optarg, err, errlen))
			return EFAB_EUSAGE;
	}
	if (optind < argc) {
		snprintf(err, errlen, "unexpected argument '%s' (see --help)", argv[optind]);
		return EFAB_EUSAGE;
	}
	return EFAB_PARSE_OK;
}

/* Help text wrapped at spaces to EFAB_HELP_WIDTH columns: text from column
 * indent on, the first line starting at column first (where the caller
 * left the cursor), the next ones indented. */
#define EFAB_HELP_WIDTH 100
static void help_wrap(FILE *f, const char *text, int first, int indent)
{
	int col = first;
	const char *p = text;
	while (*p) {
		size_t n = strcspn(p, " \n");
		if (col > indent && col + 1 + (int)n > EFAB_HELP_WIDTH) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', f);
			col++;
		}
		fprintf(f, "%.*s", (int)n, p);
		col += (int)n;
		p += n;
		if (*p == '\n') { /* the text's own line break */
			fprintf(f, "\n%*s", indent, "");
			col = indent;
			p++;
		}
		while (*p == ' ')
			p++;
	}
	fputc('\n', f);
}

void efab_opts_help(FILE *f, const char *prog, const char *summary, unsigned options)
{
	fprintf(f, "Usage: %s [OPTIONS]\n", prog);
	help_wrap(f, summary ? summary : "", 0, 0);
	fprintf(f, "\nOptions:\n");
	for (size_t i = 0; i < efab_n_optdefs; i++) {
		const efab_optdef_t *d = &efab_optdefs[i];
		char lhs[80];
		if (!(d->group & options))
			continue;
		if (d->short_name)
			snprintf(lhs, sizeof(lhs), "-%c, --%s%s%s", d->short_name, d->name,
				 d->metavar ? " " : "", d->metavar ? d->metavar : "");
		else
			snprintf(lhs, sizeof(lhs), "    --%s%s%s", d->name, d->metavar ? " " : "",
				 d->metavar ? d->metavar : "");
		if (strlen(lhs) > 28)
			fprintf(f, "  %s\n%32s", lhs, "");
		else
			fprintf(f, "  %-28s  ", lhs);
		help_wrap(f, d->help, 32, 32);
	}
	fprintf(f, "  %-28s  %s\n  %-28s  %s\n", "-h, --help", "print this help and exit",
		"-V, --version", "print the version and exit");
	fprintf(f, "\nExit status: 0 success, 1 runtime failure (fabric error, validation mismatch, "
		   "timeout),\n2 usage error, 77 not supported here (skipped).\n");
}

const char *efab_op_name(int op)
{
	return (op >= 0 && op <= EFAB_OP_ATOMIC) ? op_names[op] : "?";
}

const char *efab_mem_name(int kind)
{
	return (kind >= 0 && kind < EFAB_MEM_N_KINDS) ? mem_names[kind] : "?";
}

const char *efab_aop_name(int aop)
{
	return (aop >= 0 && aop <= EFAB_AOP_BXOR) ? aop_names[aop] : "?";
}

const char *efab_regime_name(int r)
{
	return (r >= 0 && r <= EFAB_REGIME_ACCUMULATE) ? regime_names[r] : "?";
}

const char *efab_footprint_name(int f)
{
	return (f >= 0 && f <= EFAB_FOOTPRINT_WINDOW) ? footprint_names[f] : "?";
}

const char *efab_tclass_name(int t)
{
	return (t >= 0 && t <= EFAB_TC_NETWORK_CTRL) ? tclass_names[t] : "?";
}

const char *efab_dtype_name(int dt)
{
	return (dt >= 0 && dt <= EFAB_DT_F64) ? dtype_names[dt] : "?";
}

const char *efab_shmem_op_name(int op)
{
	return (op >= 0 && op <= EFAB_SHMEM_PUT_SIGNAL) ? shmem_op_names[op] : "?";
}

const char *efab_shmem_initiator_name(int initiator)
{
	return (initiator >= 0 && initiator <= EFAB_SHMEM_BLOCK) ? shmem_initiator_names[initiator] : "?";
}

const char *efab_shmem_src_name(int src)
{
	return (src >= 0 && src <= EFAB_SHMEM_SRC_HOST) ? shmem_src_names[src] : "?";
}

size_t efab_dtype_size(int dt)
{
	switch (dt) {
	case EFAB_DT_U32:
	case EFAB_DT_I32:
	case EFAB_DT_F32:
		return 4;
	default:
		return 8;
	}
}
