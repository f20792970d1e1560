/* efasim: RNR retries (a per-process retry thread, as a NIC retries without host
 * CPU), wr_complete, fork of a process, the legacy post_send. */
#include "sim.h"

/* ---------------------------------------------------------------- RNR retries
 *
 * A send that finds no receive posted is parked on its QP (in this process)
 * and retried with a doubling wait (20 us .. 500 us) until it gets a receive
 * or runs out of rnr_retry. As on a NIC, retries need nothing from the
 * application: a per-process retry thread, started the first time a WR is
 * parked, runs them (an application blocked on a completion channel waits
 * exactly for the event a parked WR produces). It sleeps on retry_cond when
 * nothing is parked, else until the earliest retry is due. A CQ poll also
 * runs a pass (one relaxed load when nothing is parked). Passes are
 * serialized by progress_lock; the application's posts execute their new WRs
 * at the same time (execute() touches only the WR and shared rings, sq_out is
 * atomic), and ibv_destroy_qp waits for a pass that holds the QP (busy). */

static void *retry_main(void *arg);

/* With sim.lock held. */
static void retry_thread_start_locked(void)
{
	/* else the retries wait for CQ polls; the next park tries again */
	if (!sim.retry_thread && sim_thread_start(retry_main, "the RNR retry thread") == 0)
		sim.retry_thread = 1;
}

void park(struct sim_qp *q, struct sim_wr *p)
{
	p->next = NULL;
	pthread_mutex_lock(&sim.lock);
	struct sim_wr **tail = &q->pending;
	while (*tail)
		tail = &(*tail)->next;
	*tail = p;
	q->rnr_parked++;
	atomic_fetch_add(&npending, 1);
	retry_thread_start_locked();
	pthread_cond_signal(&sim.retry_cond);
	pthread_mutex_unlock(&sim.lock);
}

int wr_complete(struct ibv_qp_ex *x)
{
	struct sim_qp *q = container_of(x, struct sim_qp, qpx);
	int err = q->batch_err;
	q->in_batch = 0;
	if (err) {
		wr_abort(x);
		return err;
	}
	q->v_db++; /* the verbs path's doorbell: one per ibv_wr_complete (qp_stats) */
	q->v_wrs += q->nwr;
	/* rnr_retry 7 = retry for ever (IB semantics) */
	int tries = q->rnr_retry >= 7 ? -1 : q->rnr_retry;
	for (size_t i = 0; i < q->nwr; i++) {
		struct sim_wr *w = &q->wrs[i];
		atomic_fetch_add(&q->sq_out, 1);
		w->tries_left = tries;
		if (execute(q, w) == RETRY) {
			struct sim_wr *p = malloc(sizeof(*p));
			if (!p) {
				w->tries_left = 0;
				execute(q, w);
				continue;
			}
			*p = *w;
			park(q, p);
		}
	}
	q->nwr = 0;
	return 0;
}

/* One pass: every parked WR that is due is executed again; those that get RNR
 * again stay parked in their order, ahead of WRs parked meanwhile. */
static int progress_pass(void)
{
	if (pthread_mutex_trylock(&sim.progress_lock))
		return 0; /* another thread is passing */
	uint64_t t = now_ns();
	pthread_mutex_lock(&sim.lock);
	for (struct sim_qp *q = sim.qps; q; q = q->next_qp) {
		if (q->dead || !q->pending)
			continue;
		int due = 0;
		for (struct sim_wr *w = q->pending; w && !due; w = w->next)
			due = w->next_try_ns <= t;
		if (!due)
			continue;
		struct sim_wr *list = q->pending, *keep = NULL, **kt = &keep;
		q->pending = NULL;
		q->busy++;
		pthread_mutex_unlock(&sim.lock);
		int done = 0;
		for (struct sim_wr *w = list, *n; w; w = n) {
			n = w->next;
			w->next = NULL;
			if (w->next_try_ns > t || execute(q, w) == RETRY) {
				*kt = w;
				kt = &w->next;
			} else {
				free(w);
				done++;
			}
		}
		atomic_fetch_sub(&npending, done);
		pthread_mutex_lock(&sim.lock);
		*kt = q->pending;
		q->pending = keep;
		/* parked again: the retry thread may have looked while the list was
		 * detached here, seen nothing and gone idle */
		if (keep)
			pthread_cond_signal(&sim.retry_cond);
		if (--q->busy == 0 && q->dead)
			pthread_cond_broadcast(&sim.idle_cond);
	}
	pthread_mutex_unlock(&sim.lock);
	pthread_mutex_unlock(&sim.progress_lock);
	return 1;
}

void progress_pending(void)
{
	if (atomic_load_explicit(&npending, memory_order_relaxed))
		progress_pass();
}

static void *retry_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&sim.lock);
	while (!sim_stopping()) {
		uint64_t next = UINT64_MAX;
		for (struct sim_qp *q = sim.qps; q; q = q->next_qp)
			for (struct sim_wr *w = q->dead ? NULL : q->pending; w; w = w->next)
				if (w->next_try_ns < next)
					next = w->next_try_ns;
		if (next == UINT64_MAX) /* idle: nothing parked (a pass that holds WRs signals when it
					 * parks them again); 100 ms at most: sim_stopping */
			next = now_ns() + 100000000ull;
		uint64_t t = now_ns();
		if (next > t) {
			struct timespec ts = {.tv_sec = (time_t)(next / 1000000000ull),
					      .tv_nsec = (long)(next % 1000000000ull)};
			pthread_cond_timedwait(&sim.retry_cond, &sim.lock, &ts);
			continue;
		}
		pthread_mutex_unlock(&sim.lock);
		int ran = progress_pass();
		pthread_mutex_lock(&sim.lock);
		if (!ran) { /* another thread's pass: let it finish */
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			ts.tv_nsec += 10000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&sim.retry_cond, &sim.lock, &ts);
		}
	}
	pthread_mutex_unlock(&sim.lock);
	return NULL;
}

/* A forked child is a new process: its own pid for everything it creates
 * (registry entries, ring and FIFO names, process_vm_* targets), no retry
 * thread (threads do not survive fork), and no claim on its parent's objects:
 * they stay the parent's (their owner pid), this process neither retries the
 * parent's parked WRs nor completes its QPs' WRs, and destroying them here
 * only frees memory. Locks are made anew: another thread may have held them
 * at the fork. */
void atfork_child(void)
{
	sim.pid = getpid();
	locks_init();
	sim.retry_thread = 0;
	sim.engine_thread = 0;
	sim.qps = NULL;
	memset(sim.qp_by_slot, 0, sizeof(sim.qp_by_slot));
	atomic_store(&npending, 0);
	if (sim.ok)
		prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
}

/* The legacy post_send (not used by the provider): mapped onto the same path. */
int sim_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(qp);
	for (; wr; wr = wr->next) {
		x->wr_id = wr->wr_id;
		x->wr_flags = wr->send_flags;
		wr_start(x);
		switch (wr->opcode) {
		case IBV_WR_SEND: wr_send(x); break;
		case IBV_WR_SEND_WITH_IMM: wr_send_imm(x, wr->imm_data); break;
		case IBV_WR_RDMA_WRITE: wr_rdma_write(x, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr); break;
		case IBV_WR_RDMA_WRITE_WITH_IMM:
			wr_rdma_write_imm(x, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr, wr->imm_data);
			break;
		case IBV_WR_RDMA_READ: wr_rdma_read(x, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr); break;
		default: *bad = wr; wr_abort(x); return EINVAL;
		}
		if (wr->opcode == IBV_WR_SEND || wr->opcode == IBV_WR_SEND_WITH_IMM)
			wr_set_ud_addr(x, wr->wr.ud.ah, wr->wr.ud.remote_qpn, wr->wr.ud.remote_qkey);
		wr_set_sge_list(x, (size_t)wr->num_sge, wr->sg_list);
		int rc = wr_complete(x);
		if (rc) {
			*bad = wr;
			return rc;
		}
	}
	return 0;
}

