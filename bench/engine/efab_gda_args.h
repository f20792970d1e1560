/* The contract between the host side of the GPU initiator (bench/engine/gda.c)
 * and its CUDA kernels (bench/ops/gda_kernels.cu): one plain struct, passed by
 * value to every kernel. Every pointer is a device address (GPU memory, or
 * host/NIC memory mapped into the GPU with cuMemHostRegister +
 * cuMemHostGetDevicePointer). */
#ifndef EFAB_GDA_ARGS_H
#define EFAB_GDA_ARGS_H

#include <stdint.h>

#include "efab_gda_wqe.h"

/* Kernel modes */
enum { EFAB_GDA_PINGPONG = 1, /* put: a kernel on each side, last byte or RX CQE */
       EFAB_GDA_READ_LAT,     /* get: the initiator alone, read to its completion */
       EFAB_GDA_STREAM,       /* put_bw: windows of writes */
       EFAB_GDA_RX_DRAIN,     /* put_bw -o writedata, target: count the RX CQEs */
       EFAB_GDA_CLOCK };      /* only the clock probe every launch makes */

/* out[] slots */
enum { EFAB_GDA_OUT_STATUS = 0, /* 0 ok, else EFAB_GDA_E* */
       EFAB_GDA_OUT_DETAIL,     /* the CQE status, the iteration, ... */
       EFAB_GDA_OUT_ERRORS,     /* payload mismatches (-c) */
       EFAB_GDA_OUT_LATE,       /* messages whose bytes landed after their last byte */
       EFAB_GDA_OUT_FIRST_NS,   /* iteration / window 0 alone */
       EFAB_GDA_OUT_ELAPSED_NS, /* stream: first post to last completion, measured windows */
       EFAB_GDA_OUT_CLOCK_RES,  /* %globaltimer's smallest step seen (ns) */
       EFAB_GDA_OUT_CLOCK64_HZ, /* clock64 ticks per globaltimer second, a cross-check (x1000) */
       EFAB_GDA_OUT_POSTED,
       EFAB_GDA_OUT_COMPLETED,
       EFAB_GDA_OUT_WHERE,      /* which wait timed out (EFAB_GDA_W*) */
       EFAB_GDA_OUT_N = 16 };

enum { EFAB_GDA_EOK = 0, EFAB_GDA_ETIMEDOUT = 1, EFAB_GDA_ECQE = 2, EFAB_GDA_EIMM = 3,
       EFAB_GDA_EARGS = 4, EFAB_GDA_EREQID = 5 /* a send completion's request id was never posted */ };
enum { EFAB_GDA_WTXCQ = 1, EFAB_GDA_WRXCQ = 2, EFAB_GDA_WBYTE = 3 };

typedef struct efab_gda_args {
	int mode;
	int initiator;    /* pingpong: 1 sends first */
	int op;           /* EFAB_IO_RDMA_WRITE or EFAB_IO_RDMA_READ */
	int has_imm;      /* writedata */
	int check;        /* -c: fill and verify on the GPU */
	uint32_t threads; /* stream: lanes of the warp that post (1..32) */
	/* the send queue (the SQ ring and its doorbell, mapped into the GPU) */
	uint8_t *sq;
	uint32_t *sq_db;
	uint32_t sq_n, sq_log2, max_batch;
	uint32_t sq_entry; /* 64 or 128 bytes per WQE (efab_gda_wqe.h) */
	int req64;         /* the SQ and its completions carry 64-bit request ids */
	/* the send CQ and the receive CQ rings, in GPU memory */
	uint8_t *tx_cq, *rx_cq;
	uint32_t tx_cq_n, tx_cq_log2, rx_cq_n, rx_cq_log2;
	efab_gda_dest_t dest;
	/* buffers: local device pointer and the peer's address of the same layout */
	uint8_t *local;
	uint64_t remote;
	uint64_t max_size; /* pingpong region per rank: [rx0 | rx1 | tx0 | tx1] of max_size */
	uint64_t size;
	uint64_t seq0;     /* message sequence of iteration 0 */
	uint64_t warm, n;  /* pingpong/read: warmup and measured iterations; stream: windows */
	uint64_t window;   /* stream: operations per window */
	uint64_t slot_step; /* stream: bytes between the slots of a window (0: one buffer) */
	uint64_t tx_off;   /* stream: offset of the source slots in local (the rx slots come first) */
	uint64_t corrupt_every; /* EFAB_FAULT_CORRUPT=N: count every Nth checked message as damaged */
	uint64_t expect;   /* rx drain: RX CQEs to count */
	uint64_t rx_slow_ns; /* rx drain: EFAB_FAULT_GDA_RX_SLOW_NS, a slow consumer (ns per CQE) */
	uint64_t timeout_ns;
	/* results, device memory */
	uint64_t *samples;  /* pingpong/read: n round trips (ns); stream: n window times */
	uint64_t *post_ns;  /* per sample: SM clock cycles (clock64) lane 0 spent writing WQEs +
			     * ringing, per operation (the host converts to ns) */
	uint64_t *out;      /* EFAB_GDA_OUT_N slots */
	/* queue state carried from one launch to the next (device memory, 4 words:
	 * SQ producer, SQ completed, TX CQ consumer, RX CQ consumer) */
	uint32_t *state;
} efab_gda_args_t;

#endif
