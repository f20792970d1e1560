/* The RMA family (rma.c): write, writedata and read. */
#ifndef EFAB_RMA_H
#define EFAB_RMA_H

#include "family.h"

/* --signal-send's state (rma_signal.c); counts are ever, across sizes. */
typedef struct efab_sig_state {
	uint8_t *buf; /* registered source of the messages this rank sends */
	efab_mr_t mr;
	uint64_t posted;   /* signals this rank sent */
	uint64_t received; /* signals it received, and the last one's value */
	uint64_t last_value;
	uint64_t awaited;      /* a ping-pong's signals waited for */
	uint64_t credit_seen;  /* the largest count of pairs the peer said it counted */
	uint64_t limit, chunk; /* pairs that may be uncounted; a CREDIT every chunk */
	uint64_t credit_sent_at, credit_returns;
	uint64_t ends, end_value, ends_done, ends_sent; /* END messages */
	uint64_t bad;                                   /* messages of no known kind or length */
	uint64_t size_start;                            /* pairs counted when the size began */
	int paused; /* EFAB_FAULT_RX_PAUSE_MS taken in this size */
	int expect; /* -c, a stream: each signal checked against expect_value */
	uint64_t expect_value;
	uint64_t wrong, wrong_seen; /* signals that carried another message; reported */
	uint64_t src_value;         /* the stream's signal source holds this message */
	int src_written;
} efab_sig_state_t;

/* The RMA family's own state, behind c->priv (rma_check_opts allocates it,
 * rma_teardown frees it). A family that measures with the RMA callbacks
 * (efab_scan) puts an efab_rma_state_t first in its own priv. */
typedef struct efab_rma_state {
	uint64_t rx_data_confirmed; /* remote CQ data counted up to the last confirmed end */
	int answered;            /* this size's peer end flag was acknowledged (rma.c bw_answer) */
	struct {                 /* the stream's per-size constants (bw_begin) */
		uint64_t wflags; /* a write's flags: FI_REMOTE_CQ_DATA, FI_EFA_WR_HIGH_PPS */
		int msg;         /* post through fi_writemsg/fi_readmsg (--post-list, --high-pps) */
		/* writedata's credits (rma.c): the remote CQ data this rank
		 * posted (ever), the most its peer said it read (ever), how many
		 * may be unread at once (0: no credits), and as a target the
		 * count it last returned and how many returns it made */
		uint64_t wd_posted, credit_seen, credit_limit, credit_chunk;
		uint64_t credit_sent_at, credit_returns;
		int paused;      /* EFAB_FAULT_RX_PAUSE_MS taken in this size */
		int credit_said; /* -v: the credit figures printed (once) */
	} bw;
	struct {                  /* the put ping-pong's per-size constants (put_begin) */
		uint64_t flags;   /* FI_REMOTE_CQ_DATA, FI_INJECT */
		int host;         /* the tag byte can be written by the CPU */
		efab_waitfor_t w; /* what an iteration waits for */
	} put;
	efab_sig_state_t sig;
} efab_rma_state_t;

/* The write ping-pong and the RMA stream, for efab_scan's own schedule. */
extern const efab_pingpong_ops_t efab_put_pingpong;
extern const efab_stream_ops_t efab_rma_stream;
/* Limits and header notes of the stream (and of the RMA ops in general). */
int efab_rma_stream_setup(efab_ctx_t *c);
int efab_rma_notes(efab_ctx_t *c);

#endif
