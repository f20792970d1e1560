/* efasim: libibverbs.so.1 replacement presenting simulated EFA NICs.
 *
 * Model (what libfabric's efa provider relies on; see README.md):
 * - K NICs per simulated host (EFASIM_NICS, default 2), named rdmap<bus>s0
 *   after their PCI address, with a sysfs tree the provider reads.
 * - SRD: reliable delivery between processes. QPs, MRs and AHs of every
 *   process live in one shared registry ($EFASIM_DIR/registry); receive
 *   queues and CQs are shared-memory rings, so the initiator's process does
 *   everything a NIC does (key/bounds/access checks, moving bytes with
 *   process_vm_readv/writev, writing both completions) without the target's
 *   help, as an RDMA NIC needs no target CPU.
 * - UD (the provider's DGRAM endpoint): unreliable sends with a 40-byte GRH
 *   before the payload on the receive side; RNR retries of SRD sends run on a
 *   per-process retry thread, as a NIC needs no host CPU for them.
 * - Errors are the device's own completion codes (vendor_err) mapped to
 *   ibv_wc_status as rdma-core's libefa maps them.
 * - The direct (MMIO) data path: efadv_query_qp_wqs / efadv_query_cq hand
 *   out queues in the device's formats; a per-process engine thread plays the
 *   NIC at the SQ doorbells (direct.c). The verbs path stays for providers
 *   that do not ask (FI_EFA_USE_DATA_PATH_DIRECT=0, libfabric 2.1, p4d).
 * It is a functional model: timings measure the simulator, never EFA. */
/* Internal header of the simulator's libibverbs.so.1: the types every section
 * file shares (the process state `sim`, the verbs objects) and the functions
 * one section calls in another. Sections: config.c (profiles, registry,
 * sysfs, process init), rings.c, devices.c, mr.c (PDs, MRs, AHs), cq.c,
 * qp.c, datapath.c, rnr.c (RNR retries, fork, the legacy post_send),
 * direct.c (the direct data path: device-format queues and the device engine),
 * compcntr.c (completion counters). */
#ifndef EFASIM_SIM_H
#define EFASIM_SIM_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "efasim.h"

#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define container_of(p, t, m) ((t *)((char *)(p) - offsetof(t, m)))

struct profile {
	const char *name;
	uint32_t vendor_part_id;
	uint32_t caps;           /* EFADV_DEVICE_ATTR_CAPS_* */
	uint32_t max_msg_sz;     /* port MTU: largest send */
	uint32_t max_rdma_size;
	uint16_t inline_size;
	uint8_t speed, width;    /* ibv_port_attr active_speed/width: libfabric's ofi_vrb_speed */
	uint32_t max_sq_wr;      /* SQ depth (the provider's tx size) */
};

/* 128-byte WQEs (rdma-core >= 60 efa_io_tx_wqe_128): 80 bytes of inline data */
enum { NARROW_WQE_SIZE = 64, WIDE_WQE_SIZE = 128, WIDE_INLINE_MAX = 80 };
/* rdma-core efa_calc_sq_wqe_size: 128-byte WQEs for more inline data than a
 * 64-byte one holds, or for inline RDMA writes (QP creation and
 * efadv_get_max_sq_depth ask the same question) */
#define SIM_SQ_WQE_SIZE(max_inline, inline_write) \
	((max_inline) > sim.prof->inline_size || (inline_write) ? WIDE_WQE_SIZE : NARROW_WQE_SIZE)
/* the LLQ in bytes (max_llq_size): max_sq_wr 64-byte WQEs; a queue of 128-byte
 * WQEs holds half as many (rdma-core efa_calc_sq_max_depth) */
#define SIM_SQ_DEPTH(wqe_size) (sim.prof->max_sq_wr * 64u / (wqe_size))
enum { MAX_RQ_WR = 32768, MAX_SQ_SGE = 2, MAX_RQ_SGE = 3, MAX_CQE = 1 << 22,
       MAX_MR = 262144, MAX_AH = 1024, MAX_PD = 256 };

struct sim_device {
	struct ibv_device ibdev;
	int nic;
	int gdev;                /* registry index */
	uint8_t gid[16];
	char pci[16];
};

struct sim_state {
	pthread_once_t once;
	int ok;
	char dir[PATH_MAX];
	char sysfs[PATH_MAX];
	char host[64];
	const struct profile *prof;
	uint32_t caps;           /* EFADV_DEVICE_ATTR_CAPS_* the device reports: the profile's, less what knobs remove (EFASIM_EXT_CQ=0) */
	int nnics;
	int reorder;
	int cq_contig;           /* EFASIM_CQ_CONTIG (default 1): ext-mem CQs must not cross a 2 MiB GPU page */
	uint16_t inline_ex;      /* inline_buf_size_ex: 80 where the device takes 128-byte WQEs (EFASIM_WIDE_WQE,
	                          * default on with RDMA write), else the profile's inline_size */
	int req_id_64;           /* EFASIM_REQ_ID_64 (default 1 against rdma-core >= 65's headers, else 0): SRD SQs
	                          * use 64-bit request ids (EFA_QUERY_DEVICE_CAPS_SQ_64_BIT_REQ_ID) */
	uint32_t max_cqe;        /* the device's max_cq_depth: MAX_CQE, or EFASIM_MAX_CQE */
	int hz;                  /* EFASIM_HZ: the simulated kernel's tick rate (counters.c); 0 = no hw_stats cache */
	unsigned hw_stale_ms;    /* test fault EFASIM_HW_STALE_MS: the cache served that much longer than the kernel's rule */
	char drop_host[64];
	struct sim_device devs[EFASIM_MAX_NICS];
	struct efasim_registry *reg;
	pid_t pid;               /* this process: reset in a forked child (atfork_child) */
	pthread_mutex_t lock;    /* process-local state below */
	uint32_t pd_counter, file_counter;
	struct sim_qp *qp_by_slot[EFASIM_MAX_QPS];
	struct sim_qp *qps;      /* this process's QPs (the RNR retry pass walks them) */
	pthread_mutex_t progress_lock; /* one RNR retry pass at a time */
	pthread_cond_t retry_cond;     /* with lock: a WR was parked (CLOCK_MONOTONIC) */
	pthread_cond_t idle_cond;      /* with lock: a retry pass let go of a QP */
	int retry_thread;        /* the retry thread runs in this process */
	int engine_thread;       /* the direct path's device engine runs in this process (direct.c) */
	int stats;               /* EFASIM_ENGINE_STATS=1: the cost figures printed at exit */
	int qp_stats;            /* EFASIM_QP_STATS=1: each QP's sl, hints, doorbells at destroy */
	int own_sysfs;           /* sim.sysfs is efasim's tree (hw counters are written there) */
	int p2p;                 /* EFASIM_P2P (1): CUDA memory registers (GPUDirect RDMA) */
	int fake_dmabuf;         /* EFASIM_TEST_FAKE_DMABUF=1: a memfd named "efasim-dmabuf" passes for a dma-buf (objrules) */
	int log;
};
extern struct sim_state sim;

/* ---------------------------------------------------------------- objects */


struct sim_ah_ent {
	uint8_t gid[16];
	uint16_t ahn;
	int refs;
	int reg_slot;            /* registry record that this process knows the peer */
};

struct sim_ctx {
	struct verbs_context vctx; /* ibv_context is its last member */
	struct sim_device *dev;
	pthread_mutex_t lock;
	struct sim_ah_ent *ahs;
	int nah, cap_ah;
	uint16_t next_ahn;
};

struct sim_pd {
	struct ibv_pd pd;
	uint64_t tag;
	atomic_int usecnt;       /* MRs, QPs, AHs on it: dealloc is EBUSY while > 0 (kernel pd->usecnt) */
};

/* Every object records the process that created it (owner): a forked child
 * inherits its parent's objects as memory only, and destroying them there
 * frees that memory without touching the parent's shared state. */
struct sim_ah {
	struct ibv_ah ah;
	uint8_t gid[16];
	uint16_t ahn;
	pid_t owner;
};

/* rdma-core's struct verbs_mr (libibverbs/driver.h): ibv_mr, then the MR type
 * and the access flags ibv_cmd_reg_mr fills in (cmd.c) and callers read back */
enum { SIM_MR_TYPE_MR = 0, SIM_MR_TYPE_DMABUF_MR = 3 };
struct sim_mr {
	struct ibv_mr mr;
	int mr_type;             /* enum ibv_mr_type */
	int access;
	int slot;
	pid_t owner;
	uint64_t pinned_pages; /* charged to this process's pinned count (mr.c) */
};

struct sim_chan {
	struct ibv_comp_channel ch;
	pid_t owner;
};

struct sim_cq {
	struct ibv_cq_ex cqx;    /* first: ibv_cq_ex_to_cq() is a cast */
	struct efadv_cq dv;
	struct sim_ctx *ctx;
	char file[64];
	struct efasim_ring_hdr *ring;
	size_t map_size;
	struct efasim_cqe cur;
	uint32_t events_acked;
	int direct;              /* efadv_query_cq handed its buffer to the provider (an ext-mem CQ: from birth) */
	int ext;                 /* its entries are external (GPU) memory: ring->ext */
	atomic_int ext_poll_logged; /* the verbs API polled it (logged once) */
	pid_t owner;
	atomic_int usecnt;       /* QPs bound (send and recv each): destroy is EBUSY while > 0 */
};

enum { OP_SEND, OP_SEND_IMM, OP_WRITE, OP_WRITE_IMM, OP_READ };

struct sim_wr {
	int op;
	uint64_t wr_id;
	unsigned flags;
	uint32_t rkey;
	uint64_t raddr;
	uint32_t imm;
	uint8_t dst_gid[16];
	uint32_t dst_qpn, qkey;
	int have_ah;
	uint32_t nsge;
	struct ibv_sge sge[EFASIM_MAX_SGE];
	uint8_t *inl;
	size_t inl_len;
	int tries_left;          /* RNR: -1 = retry forever */
	uint64_t next_try_ns;
	uint64_t backoff_ns;     /* RNR: the wait before the next retry */
	struct sim_wr *next;
};

struct sim_qp {
	struct ibv_qp_ex qpx;    /* ibv_qp is its first member */
	struct efadv_qp dv;
	struct sim_ctx *ctx;
	struct sim_pd *pd;
	struct sim_cq *scq, *rcq;
	int slot;
	pid_t owner;
	int ud;                  /* IBV_QPT_UD: unreliable datagrams, sends only */
	char rq_file[64];
	struct efasim_ring_hdr *rq;
	size_t rq_map;
	uint32_t sq_max, max_inline;
	atomic_uint sq_out;      /* posted, completion not yet polled (the retry thread completes WRs too) */
	int sig_all, unsolicited;
	uint8_t rnr_retry;
	uint64_t send_ops;
	/* the batch between wr_start and wr_complete */
	int in_batch, batch_err;
	struct sim_wr *wrs;
	size_t nwr, cap;
	/* RNR retries, oldest first. pending, busy, dead and next_qp are under
	 * sim.lock; a retry pass holds busy while it executes the QP's WRs, and
	 * ibv_destroy_qp waits for it. */
	struct sim_wr *pending;
	int busy, dead;
	struct sim_qp *next_qp;
	/* The direct data path (direct.c): the SQ the provider writes WQEs into,
	 * its doorbell, and how far the device engine has consumed it. Both are
	 * anonymous mappings of their own (sq_map bytes, and one page whose first
	 * word is the doorbell), so an application can cuMemHostRegister them for
	 * a GPU (GDA) without sharing a page with anything else. */
	uint8_t *sq_buf;
	size_t sq_map;
	volatile uint32_t *sq_dbp;
	uint32_t sq_cnt;
	uint16_t sq_cc;
	int req64;               /* the SQ's WQEs and send CQEs carry 64-bit request ids (req_id + req_id_ex) */
	uint32_t wqe_size;       /* 64, or 128 for max_inline_data > 32 or EFADV_QP_FLAGS_INLINE_WRITE */
	int inline_write;        /* EFADV_QP_FLAGS_INLINE_WRITE: RDMA writes may carry inline data */
	/* What the device records of the work-request knobs (EFASIM_QP_STATS=1
	 * prints them when the QP is destroyed; qp.c qp_stats): the service
	 * level the QP was created with (efadv_qp_init_attr.sl: libfabric's
	 * FI_TC_LOW_LATENCY = 8), whether wr_flags asked for processing hints;
	 * direct path: each advance of the SQ doorbell the engine saw, by the
	 * WQEs it made visible (log2 buckets 1, 2-3, 4-7, ..., 64+; one advance
	 * can cover several doorbell writes, never less than one: WQEs written
	 * under FI_MORE stay invisible until a doorbell covers them), the WQEs
	 * with the burst-PPS hint (ctrl3); verbs path: ibv_wr_complete calls
	 * (its doorbell), their WRs, and WRs given the hint. Written by the
	 * engine thread (direct) or the posting thread (verbs) only. */
	uint8_t sl;
	int hints_flag;
	uint64_t db_adv, db_wqes, db_hist[7], hinted;
	uint64_t v_db, v_wrs, v_hinted;
	uint64_t rnr_parked; /* work requests that met RNR and were parked for a retry (qp_stats) */
};
/* EFASIM_QP_STATS=1: the QP's knobs and doorbell counts on stderr at destroy */
void qp_stats(const struct sim_qp *q);

static inline struct sim_ctx *to_ctx(struct ibv_context *c)
{
	return container_of(container_of(c, struct verbs_context, context), struct sim_ctx, vctx);
}

/* execute(): DONE, or RETRY on RNR with retries left */
enum { DONE, RETRY };
enum { RNR_RETRY_MIN_NS = 20000, RNR_RETRY_MAX_NS = 500000 }; /* the wait between RNR retries doubles */

/* memkind.c, memkind_cuda.c, memkind_copy.c (memkind.h): memory kinds and
 * the one copy function of the data path. */
enum { MK_HOST = 0, MK_CUDA = 1 };
struct mk_ref {                  /* one end of a copy */
	int kind;                /* MK_HOST, MK_CUDA */
	pid_t pid;               /* the process whose address it is */
	uint64_t addr;           /* host address, or CUDA device address, in that process */
	int mr;                  /* registry slot of its MR (needed for another process's CUDA memory), or -1 */
	/* Another process's CUDA memory that no MR names (an ext-mem CQ ring):
	 * its allocation and IPC handle, instead of mr's registry slot; or NULL. */
	const struct efasim_mem_info *mi;
};
/* A scatter/gather element of the data path: an address in the process that
 * owns it, with its kind and MR. */
struct sim_seg {
	uint64_t addr;
	size_t len;
	int kind;
	int mr;
};
int mk_p2p_enabled(void);
/* A range the host pin refused: 0 if it is CUDA device memory (out filled),
 * else the errno of the registration. */
int mk_reg_device(const void *addr, size_t len, struct efasim_mem_info *out);
/* A range the host pin accepted that the kernel's pin would refuse (CUDA
 * managed memory): its errno, else 0. */
int mk_host_refused(const void *addr);
int mk_reg_dmabuf(int fd, uint64_t offset, size_t len, uint64_t iova, struct efasim_mem_info *out);
/* An MR of this process is deregistered: what its registration exported for
 * other processes (a VMM allocation's POSIX fd) is given back. */
void mk_unreg(const struct efasim_mem_info *mi);
/* A dma-buf registration that succeeded ([offset, offset + len) at iova, MR
 * registry slot and key): the process remembers where the dma-buf starts
 * (iova - offset), since a dma-buf fd does not say which device address it
 * covers. One registry: ext-mem CQs (mk_dmabuf_resolve) and completion
 * counters (mk_dmabuf_mr) are resolved through it. */
void mk_dmabuf_note(int fd, uint64_t offset, uint64_t len, uint64_t iova, int mr_slot, uint32_t key);
/* A live MR of this process, of CUDA memory, on the same dma-buf as fd whose
 * registered range covers [offset, offset + len): its registry slot and the
 * device address of offset; else EBADF (no fd), EINVAL (not a dma-buf, or the
 * range runs past it: ib_umem_dmabuf_get), EOPNOTSUPP (no such MR: efasim's
 * limitation, not logged here). */
int mk_dmabuf_mr(int fd, uint64_t offset, uint64_t len, int *slot, uint64_t *addr);
/* The kernel's import of [offset, offset + len) of dma-buf fd
 * (ib_umem_dmabuf_get): 0, EBADF (no fd), EINVAL (not a dma-buf, or the
 * range runs past it). */
int mk_dmabuf_check(int fd, uint64_t offset, uint64_t len);
/* The device address and allocation of [offset, offset + len) of dma-buf fd,
 * found through an MR of the same dma-buf this process registered (and still
 * has); else EOPNOTSUPP (logged). */
int mk_dmabuf_devaddr(int fd, uint64_t offset, uint64_t *dev);
int mk_dmabuf_resolve(int fd, uint64_t offset, uint64_t len, uint64_t *dev, struct efasim_mem_info *out);
/* The kind of an address of this process that has no MR (inline data). */
int mk_kind_local(const void *addr);
/* Copy n bytes; 0 on success. Every byte the device moves goes through here. */
int mk_copy(struct mk_ref dst, struct mk_ref src, size_t n);

extern atomic_int npending; /* WRs of this process waiting for an RNR retry */

/* counters.c: the port's hw_counters (names as the EFA driver's efa_verbs.c) */
enum { HW_TX_BYTES, HW_TX_PKTS, HW_RX_BYTES, HW_RX_PKTS, HW_RX_DROPS, HW_SEND_BYTES, HW_SEND_WRS, HW_RECV_BYTES,
       HW_RECV_WRS, HW_RDMA_READ_WRS, HW_RDMA_READ_BYTES, HW_RDMA_READ_WR_ERR, HW_RDMA_READ_RESP_BYTES,
       HW_RDMA_WRITE_WRS, HW_RDMA_WRITE_BYTES, HW_RDMA_WRITE_WR_ERR, HW_RDMA_WRITE_RECV_BYTES, HW_RETRANS_BYTES,
       HW_RETRANS_PKTS, HW_RETRANS_TIMEOUT_EVENTS, HW_UNRESPONSIVE_REMOTE_EVENTS, HW_IMPAIRED_REMOTE_CONN_EVENTS,
       HW_N };
void hw_add(int dev, int which, uint64_t n);
uint64_t hw_pkts(uint64_t bytes);
void hw_counters_init(void);
int hw_hz_parse(const char *v); /* EFASIM_HZ's value: 100, 250, 300, 1000 or 0; -1 otherwise */
/* compcntr.c: completion counters (rdma-core main: ibv_*comp_cntr*,
 * efadv_create_comp_cntr; the API only where efasim is built against its
 * headers, EFASIM_COMP_CNTR). The device's part, in both builds: one call
 * per completion, after its CQE. cc_sq: the initiator's own completion
 * (wr_op OP_*, or -1 for a WQE of no known op: nothing counted) on SEND,
 * RDMA_READ or RDMA_WRITE, errors included; cc_resp: the responder's QP
 * (its registry entry), RECV with errors, REMOTE_RDMA_READ/WRITE only on
 * success (the driver has no error event for them). */
enum { CC_SEND, CC_RECV, CC_RDMA_READ, CC_REMOTE_RDMA_READ, CC_RDMA_WRITE, CC_REMOTE_RDMA_WRITE };
void cc_sq(const struct sim_qp *q, int wr_op, int status);
void cc_resp(const struct efasim_qp_ent *tq, int cc_op, int status);
/* the device caps efadv_query_device reports: EFASIM_COMP_CNTR=0 takes the
 * completion counter cap away */
uint32_t cc_device_caps(uint32_t caps);
#ifdef EFASIM_COMP_CNTR
#define SIM_CAPS_COMP_CNTR EFADV_DEVICE_ATTR_CAPS_COMP_CNTR
#else
#define SIM_CAPS_COMP_CNTR 0
#endif
/* config.c */
int mkdir_p(const char *path);
/* A destroy refused with EBUSY, as the kernel refuses it (object in use):
 * logged (EFASIM_LOG), and appended to the file EFASIM_EBUSY_LOG names
 * (tests collect them there: "pid what: n users"). */
void ebusy_note(const char *what, const char *users, int n);
void slog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
uint64_t now_ns(void);
void robust_lock(pthread_mutex_t *m);
void robust_init(pthread_mutex_t *m);
/* A thread running fn (joined when the library unloads or the process
 * exits: config.c sim_threads_stop), every signal blocked in it (the
 * application's signals go to its own threads); 0, or -1 (logged: what). */
int sim_thread_start(void *(*fn)(void *), const char *what);
int sim_stopping(void); /* the library is being unloaded or the process exits: threads return */
int pid_alive(pid_t pid);
void *map_file(const char *path, size_t size, int create);
void registry_gc_locked(void);
int find_dev_by_gid(const uint8_t gid[16]);
void locks_init(void);
int sim_init(void);
/* rings.c */
struct efasim_ring_hdr *ring_create(const char *name, uint32_t want, uint32_t esize, size_t *map_size);
/* A ring file with the header only (an ext-mem CQ: entries elsewhere). */
struct efasim_ring_hdr *ring_create_hdr(const char *name, uint32_t entries, uint32_t esize, size_t *map_size);
void *ring_slot(struct efasim_ring_hdr *h, uint64_t i);
struct efasim_ring_hdr *ring_get(const char *name);
void cq_push(struct efasim_ring_hdr *h, const struct efasim_cqe *e);
/* mr.c */
int range_pinnable(const void *addr, size_t len, int write);
int ah_known_by(pid_t pid, int dev, const uint8_t gid[16]);
uint16_t ah_num_by(pid_t pid, int dev, const uint8_t gid[16]);
/* cq.c */
struct ibv_cq_ex *sim_create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr);
int sim_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);
int sim_req_notify(struct ibv_cq *cq, int solicited);
/* qp.c */
struct ibv_qp *sim_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr);
int sim_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
/* datapath.c */
void wr_start(struct ibv_qp_ex *qpx);
void wr_send(struct ibv_qp_ex *x);
void wr_send_imm(struct ibv_qp_ex *x, __be32 imm);
void wr_rdma_read(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr);
void wr_rdma_write(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr);
void wr_rdma_write_imm(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr, __be32 imm);
void wr_set_ud_addr(struct ibv_qp_ex *x, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey);
void wr_set_sge_list(struct ibv_qp_ex *x, size_t n, const struct ibv_sge *l);
void wr_set_sge(struct ibv_qp_ex *x, uint32_t lkey, uint64_t addr, uint32_t len);
void wr_set_inline_data_list(struct ibv_qp_ex *x, size_t n, const struct ibv_data_buf *l);
void wr_set_inline_data(struct ibv_qp_ex *x, void *addr, size_t len);
void wr_set_processing_hints(struct efadv_qp *dv, uint32_t hints);
void wr_abort(struct ibv_qp_ex *x);
int execute(struct sim_qp *q, struct sim_wr *w);
/* rnr.c */
int wr_complete(struct ibv_qp_ex *x);
void progress_pending(void);
void park(struct sim_qp *q, struct sim_wr *p);
/* direct.c */
enum { DIRECT_CQE_SIZE = 32 }; /* efa_io_rx_cdesc_ex: the CQE of every direct and ext-mem CQ */
int rq_pop_direct(struct efasim_ring_hdr *h, struct efasim_rqe *out);
void cq_write_direct(struct efasim_ring_hdr *h, const struct efasim_cqe *e);
int cq_direct_event_due(struct efasim_ring_hdr *h);
void engine_stats(void);
extern atomic_ullong exec_n, exec_ns;
void atfork_child(void);
int sim_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);

#endif
