/* Operations and waits: CQ progress, completion and byte waits with their
 * timeouts, the progress-driving barrier, RMA and atomic posts. */
#include <string.h>
#include <unistd.h>

#include <rdma/fi_atomic.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_rma.h>
/* FI_EFA_WR_HIGH_PPS (libfabric >= 2.6's fi_ext_efa.h) */
#if defined(__has_include)
#if __has_include(<rdma/fi_ext_efa.h>)
#include <rdma/fi_ext_efa.h>
#endif
#endif

#include "efab.h"
#include "efab_abi.h"
#include "efab_clock.h"
#include "efab_endpoint.h"
#include "efab_ops.h"
#include "efab_select.h"
#include "endpoint_internal.h"

/* One endpoint's CQ; a further endpoint (--eps) counts into its parent too. */
static int progress_one(efab_fabric_t *fab)
{
	struct fi_cq_data_entry ent[EFAB_PROGRESS_BATCH];
	ssize_t n = fi_cq_read(fab->cq, ent, EFAB_ARRAY_SIZE(ent));
	if (n == -FI_EAGAIN)
		return 0;
	if (n == -FI_EAVAIL) {
		efab_cq_err_entry_t err; /* API >= 1.20 writes src_addr too */
		char pbuf[256];
		memset(&err, 0, sizeof(err));
		ssize_t r = fi_cq_readerr(fab->cq, (struct fi_cq_err_entry *)&err, 0);
		if (r == -FI_EAGAIN)
			return 0; /* another reader took it; nothing to report */
		if (r < 0) {
			efab_log_fi("fi_cq_readerr", (int)r);
			return -1;
		}
		const char *perr = fi_cq_strerror(fab->cq, err.prov_errno, err.err_data, pbuf,
						  sizeof(pbuf));
		efab_log_error("completion error: %s (%d); provider: %s (%d)", fi_strerror(err.err),
			       err.err, perr ? perr : "-", err.prov_errno);
		return -1;
	}
	if (n < 0) {
		efab_log_fi("fi_cq_read", (int)n);
		return -1;
	}
	for (ssize_t i = 0; i < n; i++) {
		/* A completion that names a posted receive slot consumed that receive
		 * where it is a receive's: FI_RECV (a message), or remote CQ data under
		 * FI_RX_CQ_DATA (efa-direct reports FI_REMOTE_CQ_DATA|FI_RMA|
		 * FI_REMOTE_WRITE without FI_RECV). Anything else that names one is
		 * not ours to free: the efa fabric's emulated writedata can complete
		 * with the context its reused provider entry last held, a receive's.
		 * (Slots exist where receives were posted, rx_free: FI_MSG or
		 * FI_RX_CQ_DATA; elsewhere the CQ read of a ping-pong's critical path
		 * skips the test.) */
		long slot = fab->rx_free ? efab_rx_slot_of(fab, ent[i].op_context) : -1;
		if (slot >= 0 && (!fab->rx_live[slot] || !((ent[i].flags & FI_RECV) ||
							   ((ent[i].flags & FI_REMOTE_CQ_DATA) &&
							    (fab->info->mode & FI_RX_CQ_DATA)))))
			slot = -1;
		if (slot >= 0) {
			fab->rx_live[slot] = 0;
			fab->rx_free[fab->rx_nfree++] = (size_t)slot;
			fab->rx_posted--;
		}
		if (ent[i].flags & FI_REMOTE_CQ_DATA) {
			fab->rx_data_count++;
			fab->rx_data_last = ent[i].data;
			if (fab->parent) {
				fab->parent->rx_data_count++;
				fab->parent->rx_data_last = ent[i].data;
			}
		} else if (slot >= 0) {
			/* a message (FI_RECV | FI_MSG): its bytes in the slot's own area */
			fab->rx_msg_count++;
			if (fab->rx_msg_hook)
				fab->rx_msg_hook(fab->rx_msg_arg,
						 efab_rx_slot_buf(fab, (size_t)slot), ent[i].len);
		} else if (!(ent[i].flags & FI_RECV)) {
			fab->tx_done++;
			if (fab->parent)
				fab->parent->tx_done++;
		}
	}
	if (fab->rx_free && fab->rx_nfree >= EFAB_RX_CQ_DATA_DEPTH / 2 &&
	    efab_rx_repost(fab))
		return -1;
	return (int)n;
}

int efab_progress(efab_fabric_t *fab)
{
	int n = progress_one(fab);
	for (size_t j = 0; n >= 0 && j < fab->nsub; j++) {
		int m = progress_one(&fab->sub[j]);
		n = m < 0 ? m : n + m;
	}
	/* whenever the count moved since the hook last ran, not only when this
	 * call read something: what a post's progress, the hook's own post or a
	 * further endpoint's progress (--eps: counted into this parent) read
	 * while the hook could not run is owed to the peer, which may be
	 * waiting for it with nothing more to send */
	uint64_t rx_now = fab->rx_data_count + fab->rx_msg_count;
	if (n >= 0 && fab->rx_hook && !fab->in_rx_hook && rx_now != fab->rx_hook_at) {
		fab->rx_hook_at = rx_now;
		fab->in_rx_hook = 1;
		int r = fab->rx_hook(fab, fab->rx_hook_arg);
		fab->in_rx_hook = 0;
		if (r)
			return -1;
	}
	return n;
}

void efab_timeout_report(const efab_fabric_t *fab, const efab_waitfor_t *w)
{
	efab_log_error("timeout after %.1f s waiting for %s (op %s, %llu bytes, peer rank %d, "
		       "iteration %llu); the peer may have died or the fabric stalled",
		       fab->timeout_s, w->what, w->op, (unsigned long long)w->size, w->peer,
		       (unsigned long long)w->iter);
}

static volatile int *stop_flag;

void efab_set_stop_flag(volatile int *flag)
{
	stop_flag = flag;
}

/* No clock read until a wait has lasted 256 polls: a wait of a ping-pong
 * or a window is usually shorter, and a clock_gettime (60 ns on a VM) is a
 * third of shm's 8 B half round trip. Then the deadline is armed and looked
 * at every 256 polls: the timeout stays precise to well under a
 * millisecond on any of these loops. */
/* In a loop with locals spins, armed and deadline: on every 256th turn, arm
 * the deadline the first time, later fail once it passed. */
#define DEADLINE_EVERY_256()                                                                 \
	do {                                                                                 \
		if (++spins % 256 == 0) {                                                    \
			if (!armed) {                                                        \
				deadline = efab_deadline_in(fab->timeout_s);                 \
				armed = 1;                                                   \
			} else if (efab_deadline_passed(deadline)) {                         \
				efab_timeout_report(fab, w);                                 \
				return EFAB_ERR;                                             \
			}                                                                    \
		}                                                                            \
	} while (0)

#define WAIT_LOOP(cond) WAIT_LOOP_FROM(!(cond), cond, 0)
/* first: whether to drive progress before the first test of cond; drain: go
 * on while the CQ returned a full batch, cond met or not */
#define WAIT_LOOP_FROM(first, cond, drain)                                                   \
	do {                                                                                 \
		efab_deadline_t deadline = {0};                                              \
		unsigned spins = 0;                                                          \
		int armed = 0, got;                                                          \
		uint64_t tp = (fab->cost & EFAB_COST_POLL) ? efab_ticks() : 0;               \
		for (int drive = (first); drive;                                             \
		     drive = !(cond) || ((drain) && got == EFAB_PROGRESS_BATCH)) {           \
			if ((got = efab_progress(fab)) < 0)                                  \
				return EFAB_ERR;                                             \
			if (tp) {                                                            \
				uint64_t tn = efab_ticks();                                  \
				if (got > 0) {                                               \
					fab->poll_ticks += tn - tp;                          \
					fab->poll_n += (uint64_t)got;                        \
				}                                                            \
				tp = tn;                                                     \
			}                                                                    \
			DEADLINE_EVERY_256();                                                \
			if (stop_flag && *stop_flag)                                         \
				return EFAB_ERR;                                             \
		}                                                                            \
		return EFAB_OK;                                                              \
	} while (0)

int efab_wait_tx(efab_fabric_t *fab, uint64_t target, const efab_waitfor_t *w)
{
	WAIT_LOOP(fab->tx_done >= target);
}

int efab_drive_wait_tx(efab_fabric_t *fab, uint64_t target, const efab_waitfor_t *w)
{
	WAIT_LOOP_FROM(1, fab->tx_done >= target, 1);
}

int efab_wait_count(efab_fabric_t *fab, const volatile uint64_t *count, uint64_t target,
		    const efab_waitfor_t *w)
{
	WAIT_LOOP(*count >= target);
}

int efab_wait_rxdata(efab_fabric_t *fab, uint64_t target, const efab_waitfor_t *w)
{
	return efab_wait_count(fab, &fab->rx_data_count, target, w);
}

int efab_wait_byte(efab_fabric_t *fab, volatile uint8_t *p, uint8_t v, const efab_waitfor_t *w)
{
	WAIT_LOOP(*p == v);
}

/* The largest of n words (monotonic values written by a peer in any order),
 * kept in *seen; true once it reaches need. */
static int credit_reached(volatile const uint64_t *slots, unsigned n, uint64_t *seen, uint64_t need)
{
	for (unsigned i = 0; i < n; i++) {
		uint64_t v = slots[i];
		if (v > *seen)
			*seen = v;
	}
	return *seen >= need;
}

int efab_wait_credit(efab_fabric_t *fab, volatile const uint64_t *slots, unsigned n, uint64_t *seen,
		     uint64_t need, const efab_waitfor_t *w)
{
	WAIT_LOOP(credit_reached(slots, n, seen, need));
}

int efab_wait_byte2(efab_fabric_t *fab, volatile uint8_t *p, volatile uint8_t *q, uint8_t v,
		    const efab_waitfor_t *w)
{
	WAIT_LOOP(*p == v || *q == v);
}

int efab_barrier_progress(efab_fabric_t *fab, const efab_waitfor_t *w)
{
	void *req;
	int done = 0;
	/* Own operations first: their completion may need the peer's progress,
	 * which it drives while it waits here too. */
	if (efab_wait_tx(fab, fab->tx_posted, w))
		return EFAB_ERR;
	if (fab->rt->ibarrier(fab->rt, &req)) {
		efab_log_error("barrier failed");
		return EFAB_ERR;
	}
	efab_deadline_t deadline = efab_deadline_in(fab->timeout_s);
	for (unsigned spins = 1;; spins++) {
		/* the fabric first: a target that serves a window of one-sided
		 * traffic waits here, and an MPI_Test per CQ read took a sixth of
		 * shm's 8 B message rate; the barrier is looked at every 16th turn */
		if (efab_progress(fab) < 0)
			return EFAB_ERR;
		if (spins % 16)
			continue;
		if (fab->rt->ibarrier_test(fab->rt, req, &done)) {
			efab_log_error("barrier failed");
			return EFAB_ERR;
		}
		if (done)
			return EFAB_OK;
		if (spins % 256 == 0 && efab_deadline_passed(deadline)) {
			efab_timeout_report(fab, w);
			return EFAB_ERR;
		}
	}
}

static void *next_ctx(efab_fabric_t *fab)
{
	/* The top EFAB_RX_CQ_DATA_DEPTH slots belong to receives. */
	size_t ring = fab->nctx - EFAB_RX_CQ_DATA_DEPTH;
	return &fab->ctx[fab->tx_posted % ring];
}

/* One more operation posted on fab (--eps: counted in its parent too). */
static inline void count_posted(efab_fabric_t *fab)
{
	fab->tx_posted++;
	if (fab->parent)
		fab->parent->tx_posted++;
}

/* Keep in-flight ops below the context ring. */
static int reserve_slot(efab_fabric_t *fab, const efab_waitfor_t *w)
{
	size_t ring = fab->nctx - EFAB_RX_CQ_DATA_DEPTH;
	/* again after each wait: an rx_hook post during it moves tx_posted */
	while (fab->tx_posted - fab->tx_done >= ring)
		if (efab_wait_tx(fab, fab->tx_posted - ring + 1, w))
			return EFAB_ERR;
	return EFAB_OK;
}

const char *efab_post_einval_hint;

#define POST_LOOP(call, name)                                                                \
	do {                                                                                 \
		efab_deadline_t deadline = {0};                                              \
		unsigned spins = 0; /* the clock: armed after 256 refusals, then looked at */ \
		int armed = 0;      /* every 256th (as WAIT_LOOP) */                         \
		efab_fabric_t *acct = fab->parent ? fab->parent : fab; /* --eps: one sum */  \
		uint64_t c0 = (acct->cost & EFAB_COST_POST) ? efab_ticks() : 0;              \
		for (;;) {                                                                   \
			ssize_t ret = (call);                                                \
			if (ret == 0) {                                                      \
				if (c0) {                                                    \
					acct->post_ticks += efab_ticks() - c0;               \
					acct->post_ops++;                                    \
				}                                                            \
				break;                                                       \
			}                                                                    \
			if (ret != -FI_EAGAIN) {                                             \
				efab_log_error("%s (%llu bytes to rank %d) failed: %s (%zd)%s%s", \
					       name, (unsigned long long)len, peer,          \
					       fi_strerror((int)-ret), ret,                  \
					       ret == -FI_EINVAL && efab_post_einval_hint ? "; " : "", \
					       ret == -FI_EINVAL && efab_post_einval_hint ? efab_post_einval_hint : ""); \
				return EFAB_ERR;                                             \
			}                                                                    \
			/* the context of this post is taken (next_ctx): no post from \
			 * the rx_hook in this progress, which would take it too */  \
			int held_ = acct->in_rx_hook, got_;                          \
			acct->in_rx_hook = 1;                                        \
			got_ = efab_progress(fab);                                   \
			acct->in_rx_hook = held_;                                    \
			if (got_ < 0)                                                \
				return EFAB_ERR;                                     \
			DEADLINE_EVERY_256();                                                \
		}                                                                            \
	} while (0)

int efab_post_write(efab_fabric_t *fab, int peer, const void *buf, size_t len, void *desc,
		    uint64_t raddr, uint64_t rkey, uint64_t data, uint64_t flags,
		    const efab_waitfor_t *w)
{
	fi_addr_t dest = fab->peers[peer];
	if (flags & FI_INJECT) {
		if (flags & FI_REMOTE_CQ_DATA)
			POST_LOOP(fi_inject_writedata(fab->ep, buf, len, data, dest, raddr, rkey),
				  "fi_inject_writedata");
		else
			POST_LOOP(fi_inject_write(fab->ep, buf, len, dest, raddr, rkey),
				  "fi_inject_write");
		return EFAB_OK;
	}
	if (reserve_slot(fab, w))
		return EFAB_ERR;
	void *ctx = next_ctx(fab);
	if (flags & FI_REMOTE_CQ_DATA)
		POST_LOOP(fi_writedata(fab->ep, buf, len, desc, data, dest, raddr, rkey, ctx),
			  "fi_writedata");
	else
		POST_LOOP(fi_write(fab->ep, buf, len, desc, dest, raddr, rkey, ctx), "fi_write");
	count_posted(fab);
	return EFAB_OK;
}

int efab_post_send(efab_fabric_t *fab, int peer, const void *buf, size_t len, void *desc,
		   const efab_waitfor_t *w)
{
	fi_addr_t dest = fab->peers[peer];
	if (reserve_slot(fab, w))
		return EFAB_ERR;
	void *ctx = next_ctx(fab);
	POST_LOOP(fi_send(fab->ep, buf, len, desc, dest, ctx), "fi_send");
	count_posted(fab);
	return EFAB_OK;
}

uint64_t efab_high_pps_flag(void)
{
#ifdef FI_EFA_WR_HIGH_PPS
	return FI_EFA_WR_HIGH_PPS;
#else
	return 0;
#endif
}

int efab_post_rma_msg(efab_fabric_t *fab, int peer, int read, void *buf, size_t len, void *desc,
		      uint64_t raddr, uint64_t rkey, uint64_t data, uint64_t flags,
		      const efab_waitfor_t *w)
{
	if (reserve_slot(fab, w))
		return EFAB_ERR;
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	struct fi_rma_iov rma = {.addr = raddr, .len = len, .key = rkey};
	struct fi_msg_rma msg = {
		.msg_iov = &iov,
		.desc = &desc,
		.iov_count = 1,
		.addr = fab->peers[peer],
		.rma_iov = &rma,
		.rma_iov_count = 1,
		.context = next_ctx(fab),
		.data = data,
	};
	/* the flags replace the endpoint's op_flags: ask for the completion the
	 * accounting counts on (tx_done) */
	flags |= FI_COMPLETION;
	if (read)
		POST_LOOP(fi_readmsg(fab->ep, &msg, flags), "fi_readmsg");
	else
		POST_LOOP(fi_writemsg(fab->ep, &msg, flags), "fi_writemsg");
	count_posted(fab);
	return EFAB_OK;
}

int efab_post_read(efab_fabric_t *fab, int peer, void *buf, size_t len, void *desc,
		   uint64_t raddr, uint64_t rkey, const efab_waitfor_t *w)
{
	fi_addr_t dest = fab->peers[peer];
	if (reserve_slot(fab, w))
		return EFAB_ERR;
	void *ctx = next_ctx(fab);
	POST_LOOP(fi_read(fab->ep, buf, len, desc, dest, raddr, rkey, ctx), "fi_read");
	count_posted(fab);
	return EFAB_OK;
}

int efab_atomic_query(struct fid_domain *domain, int kind, enum fi_datatype dt, enum fi_op op,
		      size_t *max_count)
{
	struct fi_atomic_attr attr;
	uint64_t flags = kind == EFAB_ATOMIC_FETCH ? FI_FETCH_ATOMIC
			 : kind == EFAB_ATOMIC_COMPARE ? FI_COMPARE_ATOMIC : 0;
	memset(&attr, 0, sizeof(attr));
	int ret = fi_query_atomic(domain, dt, op, &attr, flags);
	if (ret)
		return ret < 0 ? ret : -ret;
	if (attr.count == 0)
		return -FI_EOPNOTSUPP;
	*max_count = attr.count;
	return 0;
}

const char *efab_fi_op_name(enum fi_op op)
{
	switch (op) {
	case FI_MIN: return "FI_MIN";
	case FI_MAX: return "FI_MAX";
	case FI_SUM: return "FI_SUM";
	case FI_BOR: return "FI_BOR";
	case FI_BAND: return "FI_BAND";
	case FI_BXOR: return "FI_BXOR";
	case FI_ATOMIC_WRITE: return "FI_ATOMIC_WRITE";
	case FI_CSWAP: return "FI_CSWAP";
	default: return "FI_OP?";
	}
}

const char *efab_fi_datatype_name(enum fi_datatype dt)
{
	switch (dt) {
	case FI_INT32: return "FI_INT32";
	case FI_UINT32: return "FI_UINT32";
	case FI_INT64: return "FI_INT64";
	case FI_UINT64: return "FI_UINT64";
	case FI_FLOAT: return "FI_FLOAT";
	case FI_DOUBLE: return "FI_DOUBLE";
	default: return "FI_DATATYPE?";
	}
}

int efab_post_atomic(efab_fabric_t *fab, int peer, int kind, const void *buf, size_t count,
		     void *desc, const void *compare, void *compare_desc, void *result,
		     void *result_desc, uint64_t raddr, uint64_t rkey, enum fi_datatype dt,
		     enum fi_op op, const efab_waitfor_t *w)
{
	fi_addr_t dest = fab->peers[peer];
	size_t len = count;
	if (reserve_slot(fab, w))
		return EFAB_ERR;
	void *ctx = next_ctx(fab);
	switch (kind) {
	case EFAB_ATOMIC_PLAIN:
		POST_LOOP(fi_atomic(fab->ep, buf, count, desc, dest, raddr, rkey, dt, op, ctx),
			  "fi_atomic");
		break;
	case EFAB_ATOMIC_FETCH:
		POST_LOOP(fi_fetch_atomic(fab->ep, buf, count, desc, result, result_desc, dest, raddr,
					  rkey, dt, op, ctx),
			  "fi_fetch_atomic");
		break;
	default:
		POST_LOOP(fi_compare_atomic(fab->ep, buf, count, desc, compare, compare_desc, result,
					    result_desc, dest, raddr, rkey, dt, op, ctx),
			  "fi_compare_atomic");
		break;
	}
	count_posted(fab);
	return EFAB_OK;
}

int efab_barrier_settle(efab_fabric_t *fab, const efab_waitfor_t *w, int *failed)
{
	void *req;
	int done = 0;
	if (!*failed && efab_wait_tx(fab, fab->tx_posted, w))
		*failed = 1;
	if (fab->rt->ibarrier(fab->rt, &req)) {
		efab_log_error("barrier failed");
		return -1;
	}
	efab_deadline_t deadline = efab_deadline_in(4 * fab->timeout_s + 60);
	for (unsigned spins = 1;; spins++) {
		if (!*failed && efab_progress(fab) < 0)
			*failed = 1;
		if (spins % 16)
			continue;
		if (fab->rt->ibarrier_test(fab->rt, req, &done)) {
			efab_log_error("barrier failed");
			return -1;
		}
		if (done)
			return 0;
		if (stop_flag && *stop_flag)
			return -1;
		if (spins % 256 == 0 && efab_deadline_passed(deadline)) {
			efab_log_error("%.0f s waiting for the other ranks at the barrier after %s: a rank "
				       "never arrived", 4 * fab->timeout_s + 60, w->what);
			return -1;
		}
		if (*failed && spins % 4096 == 0)
			usleep(100); /* nothing of ours to drive: do not spin a shared core */
	}
}
