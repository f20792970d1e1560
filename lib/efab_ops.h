/* Operations on an open endpoint (ops.c): progress, completion waits bounded
 * by the timeout, RMA and atomic posts, and what a timeout or a signal does. */
#ifndef EFAB_OPS_H
#define EFAB_OPS_H

#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include "efab_endpoint.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a wait is for, so a timeout can say it. */
typedef struct efab_waitfor {
	const char *what; /* "write completion", "pong", ... */
	const char *op;
	uint64_t size;
	int peer;
	uint64_t iter;
} efab_waitfor_t;

/* Read the CQ once (drives manual progress): the completions it returned,
 * <0 on a CQ error (logged). */
int efab_progress(efab_fabric_t *fab);

/* Software cost accounting (fab->cost; the patterns turn it on while they
 * measure, never in a batch). EFAB_COST_POST: each post call (efab_post_*) is
 * timed with the cycle counter, -FI_EAGAIN retries and the progress they
 * drive included, into fab->post_ticks / post_ops. EFAB_COST_POLL: in every
 * completion wait (efab_wait_*), the fi_cq_read calls that returned at least
 * one completion, into fab->poll_ticks / poll_n (completions); one counter
 * read per call (a call's start is the previous call's end; the wait's own
 * loop test between two calls is a few ns of it). */
#define EFAB_COST_POST 1u
#define EFAB_COST_POLL 2u
static inline void efab_cost_reset(efab_fabric_t *fab)
{
	fab->post_ticks = fab->post_ops = fab->poll_ticks = fab->poll_n = 0;
}
/* Wait until tx_done >= target. */
int efab_wait_tx(efab_fabric_t *fab, uint64_t target, const efab_waitfor_t *w);
/* Completions one efab_progress call reads at most. */
#define EFAB_PROGRESS_BATCH 16
/* efab_wait_tx after progress calls even when nothing is outstanding, until
 * the CQ returns less than a full batch: a stream's window ends with it, so
 * a rank that only injects (no completion to wait for) still applies its
 * peer's traffic every window, as fabtests' bandwidth loop does
 * (ft_spin_for_comp's do-while, benchmark_shared.c), and takes the remote
 * CQ data that arrived (--bidir writedata). Without it, on shm with
 * --bidir, one rank injected without ever progressing while its peer's
 * posts were refused (-FI_EAGAIN) into its full command queue: the two
 * directions ran one after the other. */
int efab_drive_wait_tx(efab_fabric_t *fab, uint64_t target, const efab_waitfor_t *w);
/* Wait until rx_data_count >= target. */
int efab_wait_rxdata(efab_fabric_t *fab, uint64_t target, const efab_waitfor_t *w);
/* Wait until *count >= target: a counter that a hook of efab_progress moves
 * (rx_msg_hook, rx_hook), driving progress meanwhile. */
int efab_wait_count(efab_fabric_t *fab, const volatile uint64_t *count, uint64_t target,
		    const efab_waitfor_t *w);
/* Poll *p until it equals v, driving progress meanwhile. */
int efab_wait_byte(efab_fabric_t *fab, volatile uint8_t *p, uint8_t v, const efab_waitfor_t *w);
/* Poll until *p or *q equals v, driving progress meanwhile. */
int efab_wait_byte2(efab_fabric_t *fab, volatile uint8_t *p, volatile uint8_t *q, uint8_t v,
		    const efab_waitfor_t *w);

/* Poll n 8-byte words that a peer writes with growing values, in any order
 * (unordered writes: a late one may carry an older value), until the largest
 * seen reaches need; *seen keeps the largest across calls. */
int efab_wait_credit(efab_fabric_t *fab, volatile const uint64_t *slots, unsigned n, uint64_t *seen,
		     uint64_t need, const efab_waitfor_t *w);

/* Wait for this rank's own operations, then a barrier that keeps driving
 * progress while it waits (the target side of one-sided traffic needs it on
 * manual-progress providers); bounded by the timeout. Every benchmark ends a
 * size with this before any blocking collective. */
int efab_barrier_progress(efab_fabric_t *fab, const efab_waitfor_t *w);

/* The same closing barrier for a measurement allowed to fail (efab_scan): every
 * rank calls it once whatever happened before, so the ranks' collective calls
 * stay in step. Unless *failed, this rank's own operations are waited for
 * (bounded by the timeout) and progress is driven while the barrier is
 * pending; a fabric failure (timeout, completion error) sets *failed and ends
 * this rank's fabric work, never the wait for the barrier, which ends when
 * every rank has arrived: each arrives, since every wait before it is
 * bounded. 0, or -1 when the barrier itself failed or did not complete
 * within 4 x the timeout + 60 s (a rank that never arrives: a bug). */
int efab_barrier_settle(efab_fabric_t *fab, const efab_waitfor_t *w, int *failed);

/* A cause a post's -FI_EINVAL is known to have in this run, said after the
 * libfabric error on the same line (NULL: none; set by the harness). */
extern const char *efab_post_einval_hint;

/* Post one RMA op; retries -FI_EAGAIN while driving progress, bounded by the
 * timeout. flags: FI_INJECT (no completion is generated), FI_REMOTE_CQ_DATA. */
int efab_post_write(efab_fabric_t *fab, int peer, const void *buf, size_t len, void *desc,
		    uint64_t raddr, uint64_t rkey, uint64_t data, uint64_t flags,
		    const efab_waitfor_t *w);
int efab_post_read(efab_fabric_t *fab, int peer, void *buf, size_t len, void *desc,
		   uint64_t raddr, uint64_t rkey, const efab_waitfor_t *w);
/* One message (fi_send) of len bytes from a registered buffer (desc) to the
 * peer's posted receives (the fabric opened with FI_MSG: efab_fabric_req_t
 * msg), completing into tx_done; at most EFAB_RX_BUF_SIZE (64) bytes land
 * whole. The peer must have a receive posted for it: bound what is in
 * flight (a device without one answers with RNR). */
int efab_post_send(efab_fabric_t *fab, int peer, const void *buf, size_t len, void *desc,
		   const efab_waitfor_t *w);

/* One RMA op through fi_writemsg / fi_readmsg with flags (FI_MORE,
 * FI_REMOTE_CQ_DATA, FI_EFA_WR_HIGH_PPS; FI_COMPLETION is added: every op
 * completes into tx_done), retrying -FI_EAGAIN as the posts above. With
 * FI_MORE the provider may hold the operation (no doorbell) until a later
 * post without it: the caller's last post before a wait must not carry it. */
int efab_post_rma_msg(efab_fabric_t *fab, int peer, int read, void *buf, size_t len, void *desc,
		      uint64_t raddr, uint64_t rkey, uint64_t data, uint64_t flags,
		      const efab_waitfor_t *w);
/* FI_EFA_WR_HIGH_PPS where the libfabric headers efabench was built against
 * define it (fi_ext_efa.h, libfabric >= 2.6), else 0. */
uint64_t efab_high_pps_flag(void);

enum efab_atomic_kind { EFAB_ATOMIC_PLAIN = 0, EFAB_ATOMIC_FETCH, EFAB_ATOMIC_COMPARE };

/* fi_query_atomic / fi_fetch_atomicvalid / fi_compare_atomicvalid in one:
 * 0 and the provider's max element count, or the negative libfabric error. */
int efab_atomic_query(struct fid_domain *domain, int kind, enum fi_datatype dt, enum fi_op op,
		      size_t *max_count);
const char *efab_fi_op_name(enum fi_op op);
const char *efab_fi_datatype_name(enum fi_datatype dt);

/* Post one atomic (retrying -FI_EAGAIN like the RMA posts). compare is used
 * by EFAB_ATOMIC_COMPARE only, result by FETCH and COMPARE. */
int efab_post_atomic(efab_fabric_t *fab, int peer, int kind, const void *buf, size_t count,
		     void *desc, const void *compare, void *compare_desc, void *result,
		     void *result_desc, uint64_t raddr, uint64_t rkey, enum fi_datatype dt,
		     enum fi_op op, const efab_waitfor_t *w);

/* A flag (set by a signal handler) that ends every wait early with
 * EFAB_ERR, so a signalled rank stops within a few microseconds instead of
 * finishing the size it was measuring. NULL disables. */
void efab_set_stop_flag(volatile int *flag);

/* Logs a wait's timeout, naming what it waited for (w); the wait then
 * returns EFAB_ERR. */
void efab_timeout_report(const efab_fabric_t *fab, const efab_waitfor_t *w);

#ifdef __cplusplus
}
#endif

#endif
