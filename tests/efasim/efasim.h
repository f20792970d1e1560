/* efasim: a functional model of an AWS EFA device under rdma-core's
 * libibverbs/libefa API, so that libfabric's unmodified efa provider runs
 * without EFA hardware. See tests/efasim/README.md for what is modelled and
 * where each device attribute comes from. Internal header. */
#ifndef EFASIM_H
#define EFASIM_H

#include <infiniband/efadv.h>
#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#define EFASIM_MAGIC 0xefa51a06u /* 02: direct-path rings, hw counters; 03: counters written in place;
				  * 04: CQ rings in external (GPU) memory; 05: completion counters;
				  * 06: the kernel's hw_stats cache (hwjiffies), background retransmissions (retrans_seq) */
#define EFASIM_MAX_NICS 32
#define EFASIM_MAX_DEVS 256   /* simulated NICs across all simulated hosts */
#define EFASIM_MAX_QPS 4096   /* live QPs across all processes */
#define EFASIM_MAX_MRS 65536  /* live MRs across all processes */
#define EFASIM_QP_TABLE 256   /* = max_qp: the provider indexes its QP table by qpn & 255 */
#define EFASIM_MAX_SGE 3
#define EFASIM_UNKNOWN_AH 0xFFFF
#define EFASIM_MAX_CNTRS 1024 /* completion counters across all processes (compcntr.c) */
#define EFASIM_CC_OPS 6       /* enum ibv_qp_attach_comp_cntr_op: SEND .. REMOTE_RDMA_WRITE, bit i */

/* Completion status: the device's own codes (rdma-core efa_io_defs.h), which
 * libefa reports as vendor_err and maps to ibv_wc_status. */
enum efasim_status {
	ES_OK = 0,
	ES_FLUSHED = 1,
	ES_LOCAL_QP_INTERNAL = 2,
	ES_LOCAL_UNSUPPORTED_OP = 3,
	ES_LOCAL_INVALID_AH = 4,
	ES_LOCAL_INVALID_LKEY = 5,
	ES_LOCAL_BAD_LENGTH = 6,
	ES_REMOTE_BAD_ADDRESS = 7,
	ES_REMOTE_ABORT = 8,
	ES_REMOTE_BAD_DEST_QPN = 9,
	ES_REMOTE_RNR = 10,
	ES_REMOTE_BAD_LENGTH = 11,
	ES_REMOTE_BAD_STATUS = 12,
	ES_LOCAL_UNRESP_REMOTE = 13,
	ES_REMOTE_UNKNOWN_PEER = 14,
	ES_LOCAL_UNREACH_REMOTE = 15,
};

/* One simulated NIC as every process sees it (shared registry). */
struct efasim_dev_ent {
	int used;
	int nic;                 /* index on its host */
	char host[64];           /* simulated host name */
	uint8_t gid[16];
	uint32_t next_qp_gen;
	uint32_t rate_MBps;      /* test knob: 0 = unlimited */
	uint32_t delay_us;       /* test knob: added per operation */
	uint32_t loss_every;     /* test knob: every Nth packet through this NIC lost once (0 = none) */
	uint64_t loss_seq;       /* packets through this NIC so far (with loss_every) */
	uint64_t retrans_seq;    /* packets this NIC sent so far (EFASIM_RETRANS, datapath.c) */
	uint64_t hw[24];         /* hw_counters (counters.c), HW_N used */
	char hwdir[232];         /* its sysfs hw_counters folder, "" if not efasim's tree */
	/* robust, process-shared: whoever counts writes the counter's file
	 * under it, so a file never goes back to an older value (counters.c) */
	pthread_mutex_t hwmx;
	uint64_t hwshown[24];    /* the value each counter's file holds */
	uint8_t hwlen[24];       /* its length in bytes ("%llu\n") */
	/* the kernel's hw_stats cache (counters.c): the simulated jiffies of the
	 * files' last refresh (stats->timestamp) and their lifespan in jiffies
	 * (stats->lifespan), under hwmx */
	uint64_t hwjiffies;
	uint32_t hwlife_j;
	int hwfresh;             /* 0 until the first refresh */
};

struct efasim_qp_ent {
	int used;
	pid_t pid;
	int dev;                 /* index in devs[] */
	uint32_t qpn;
	uint32_t qkey;
	uint64_t pd_tag;
	int unsolicited_write_recv;
	char rq_file[64];        /* receive queue ring */
	char cq_file[64];        /* its receive CQ ring */
	uint8_t rnr_retry;
	uint8_t ud;              /* IBV_QPT_UD (the DGRAM endpoint); else SRD (fits the old padding) */
	/* completion counter attached per op (bit i of ibv_qp_attach_comp_cntr_op):
	 * its key (efasim_cntr_ent), 0 = none. The initiator of an operation
	 * finds the responder's RECV / REMOTE_* counter here (compcntr.c). */
	uint32_t cntr[EFASIM_CC_OPS];
};

/* The kind of memory an MR covers (tests/efasim/memkind.c): host, or CUDA
 * device memory with what another process needs to reach it. */
struct efasim_mem_info {
	uint8_t kind;            /* MK_HOST 0, MK_CUDA 1 */
	uint8_t vmm;             /* MK_CUDA: a CUDA VMM allocation (cuMemCreate), reached by POSIX fd */
	uint8_t pad[2];
	int cu_dev;              /* CUDA device ordinal in the registering process */
	uint64_t alloc_base;     /* the CUDA allocation holding the range (cuMemGetAddressRange) */
	uint64_t alloc_size;
	uint8_t ipc[64];         /* CUipcMemHandle of alloc_base (legacy CUDA IPC); VMM: struct
				  * mk_vmm_ref (memkind.c: the exporter's fd, the buffer id) */
};

struct efasim_mr_ent {
	int used;
	pid_t pid;
	int dev;
	uint64_t pd_tag;
	uint64_t iova;
	uint64_t va;
	uint64_t len;
	uint32_t key;
	int access;
	struct efasim_mem_info mk;
};

/* Where the device writes one 64-bit value of a completion counter. */
struct efasim_cntr_loc {
	uint8_t kind;            /* MK_HOST: a host address; MK_CUDA: a CUDA device address */
	uint8_t pad[3];
	int mr;                  /* MK_CUDA: registry slot of the dma-buf MR that resolves it (another process opens its IPC handle) */
	uint64_t addr;           /* in the owner's process */
};

/* A completion counter (rdma-core main's ibv_comp_cntr): two 64-bit values,
 * completions and errors, which the device writes to their memory. */
struct efasim_cntr_ent {
	int used;
	pid_t pid;               /* owner */
	int dev;                 /* registry index of its NIC */
	uint32_t key;            /* (generation << 16) | slot, never 0: ibv_comp_cntr.handle and efasim_qp_ent.cntr */
	pthread_mutex_t mx;      /* robust, process-shared: one writer at a time, so the memory never goes back */
	uint64_t val[2];         /* the device's values: completions, errors */
	struct efasim_cntr_loc loc[2];
};

struct efasim_registry {
	uint32_t magic;
	uint32_t size;
	pthread_mutex_t lock;    /* robust, process-shared */
	uint32_t mr_gen;
	struct efasim_dev_ent devs[EFASIM_MAX_DEVS];
	struct efasim_qp_ent qps[EFASIM_MAX_QPS];
	struct efasim_mr_ent mrs[EFASIM_MAX_MRS];
	uint32_t cntr_gen;
	struct efasim_cntr_ent cntrs[EFASIM_MAX_CNTRS];
};

/* A completion as the device writes it into a CQ ring. */
struct efasim_cqe {
	uint64_t wr_id;
	uint32_t qp_num;
	uint32_t src_qp;
	uint32_t byte_len;
	uint32_t imm;            /* host order */
	uint16_t status;         /* enum efasim_status */
	uint8_t recv_side;       /* 1: receive queue completion */
	uint8_t rdma_write;      /* op type RDMA write (send side) / write-with-imm (recv side) */
	uint8_t has_imm;
	uint8_t unsolicited;
	uint8_t src_gid[16];
	uint8_t rdma_read;       /* send side: op type RDMA read (the direct path's CQE op_type) */
	uint8_t req64;           /* send side: the CQE carries wr_id's bits 63:16 in req_id_ex */
	int qp_slot;             /* registry slot of the QP it belongs to */
	int src_dev;             /* registry index of the sender's NIC */
};

struct efasim_ring_hdr {
	uint32_t magic;
	pid_t owner;
	pthread_mutex_t lock;    /* robust, process-shared */
	uint32_t size;           /* entries, power of two */
	uint32_t entry_size;
	uint64_t head;           /* consumer */
	uint64_t tail;           /* producers */
	uint64_t overruns;
	int armed;               /* CQ: notification requested */
	char chan_fifo[256];      /* CQ: completion channel FIFO, "" if none */
	uint64_t owner_handle;   /* CQ: the owner's struct ibv_cq pointer */
	/* The direct (MMIO) data path (direct.c): once the provider has asked
	 * efadv_query_qp_wqs / efadv_query_cq for this ring, its entries are the
	 * device's own formats (RQ: efa_io_rx_desc, CQ: efa_io_rx_cdesc_ex) and
	 * db is the doorbell the provider writes with plain stores (RQ: producer
	 * counter; CQ: consumer index, cmd_sn, arm). */
	uint32_t direct;
	volatile uint32_t db;
	int dev;                 /* CQ: registry index of its NIC (the AH lookup of the direct CQE) */
	/* A CQ in external memory (efadv_create_cq with EFADV_CQ_INIT_FLAGS_EXT_MEM_DMABUF,
	 * cq.c; libfabric's GDA cq_open_ext): the file holds this header only; the
	 * size entries of 32 bytes are CUDA memory of the owner, which the device
	 * (whoever completes, in any process) writes with mk_copy (direct.c). The
	 * CQ is direct from birth and has no doorbell (it cannot be armed). */
	uint32_t ext;
	uint64_t ext_dev;        /* device address of entry 0 in the owner's process */
	uint64_t ext_cpu;        /* ext_mem_dmabuf.buffer as the owner gave it (efadv_query_cq's buffer), may be 0 */
	uint64_t ext_lost;       /* CQEs the device could not write (the copy failed; logged on stderr) */
	struct efasim_mem_info ext_mk; /* the allocation holding the ring: another process opens its IPC handle */
};

struct efasim_rqe {
	uint64_t wr_id;
	uint32_t nsge;
	struct ibv_sge sge[EFASIM_MAX_SGE];
};

#pragma GCC visibility push(default)
/* Internal API shared by libibverbs.so.1 (the section files, sim.h) and libefa.so.1 (efadv.c). */
int efasim_efadv_query_device(struct ibv_context *ctx, struct efadv_device_attr *attr, uint32_t inlen);
int efasim_efadv_query_ah(struct ibv_ah *ah, struct efadv_ah_attr *attr, uint32_t inlen);
struct ibv_qp *efasim_efadv_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr,
					 struct efadv_qp_init_attr *efa_attr, uint32_t inlen);
struct ibv_cq_ex *efasim_efadv_create_cq(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr,
					 struct efadv_cq_init_attr *efa_attr, uint32_t inlen);
struct efadv_cq *efasim_efadv_cq_from_ibv_cq_ex(struct ibv_cq_ex *cq);
struct efadv_qp *efasim_efadv_qp_from_ibv_qp_ex(struct ibv_qp_ex *qp);
int efasim_efadv_query_mr(struct ibv_mr *mr, struct efadv_mr_attr *attr, uint32_t inlen);
int efasim_is_sim_context(struct ibv_context *ctx);
int efasim_efadv_query_qp_wqs(struct ibv_qp *qp, struct efadv_wq_attr *sq, struct efadv_wq_attr *rq, uint32_t inlen);
int efasim_efadv_query_cq(struct ibv_cq *cq, struct efadv_cq_attr *attr, uint32_t inlen);
int efasim_efadv_get_max_sq_depth(struct ibv_context *ctx, struct efadv_sq_depth_attr *attr, uint32_t inlen);
#ifdef EFASIM_COMP_CNTR /* built against rdma-core main (compcntr.c) */
struct ibv_comp_cntr *efasim_efadv_create_comp_cntr(struct ibv_context *ctx, struct ibv_comp_cntr_init_attr *attr,
						    struct efadv_comp_cntr_init_attr *efa_attr, uint32_t inlen);
#endif
#pragma GCC visibility pop

#endif
