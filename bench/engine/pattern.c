/* The ping-pong and windowed-stream patterns (pattern.h): warmup, the first
 * iteration, samples, the batch, --time calibration, the barriers that drive
 * progress, and combining every rank's figures into the size's rows. */
#include <inttypes.h>
#include <rdma/fabric.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "efab_clock.h"
#include "efab_ops.h"
#include "efab_select.h"
#include "evidence.h"
#include "pattern.h"

int efab_pattern_samples(efab_ctx_t *c, uint64_t n)
{
	if (n <= c->max_samples)
		return EFAB_OK;
	double *s = realloc(c->samples, n * sizeof(double));
	double *p = s ? realloc(c->cost_post, n * sizeof(double)) : NULL;
	double *q = p ? realloc(c->cost_poll, n * sizeof(double)) : NULL;
	if (s)
		c->samples = s;
	if (p)
		c->cost_post = p;
	if (!q) {
		efab_log_error("out of memory for %llu samples", (unsigned long long)n);
		return EFAB_ERR;
	}
	c->cost_poll = q;
	c->max_samples = n;
	return EFAB_OK;
}

/* The fabric's cost accumulators at the start of an iteration or window. */
typedef struct cost_mark {
	uint64_t post_ticks, post_ops, poll_ticks, poll_n;
} cost_mark_t;

static inline void cost_mark(const efab_ctx_t *c, cost_mark_t *m)
{
	m->post_ticks = c->fab.post_ticks;
	m->post_ops = c->fab.post_ops;
	m->poll_ticks = c->fab.poll_ticks;
	m->poll_n = c->fab.poll_n;
}

/* One sample of each cost since m, per operation (per completion). */
static void cost_sample(efab_ctx_t *c, const cost_mark_t *m)
{
	uint64_t ops = c->fab.post_ops - m->post_ops, comps = c->fab.poll_n - m->poll_n;
	if (ops && c->ncost_post < c->max_samples)
		c->cost_post[c->ncost_post++] = efab_ticks_ns(c->fab.post_ticks - m->post_ticks) / (double)ops;
	if (comps && c->ncost_poll < c->max_samples)
		c->cost_poll[c->ncost_poll++] =
			efab_ticks_ns(c->fab.poll_ticks - m->poll_ticks) / (double)comps;
}

static uint64_t default_count(const efab_ctx_t *c, uint64_t size)
{
	const efab_counts_t *k = &c->row->counts;
	return c->o.iters ? c->o.iters : efab_scaled_count(k->iters, k->pivot, size, k->floor);
}

void efab_pattern_notes(efab_ctx_t *c)
{
	efab_clock_init();
	if (c->row->pattern == EFAB_PATTERN_PINGPONG)
		efab_note(c, "first_us = the first iteration of each size alone (for the first size "
			     "the first operation to this peer), never among the samples; "
			     "lat_us_batch = one timed batch of -n further iterations / n (no clock "
			     "read per iteration; their untimed per-iteration work included), in the "
			     "same definition");
	else if (c->row->pattern == EFAB_PATTERN_STREAM)
		efab_note(c, "first_us = the first window of each size alone (for the first size it "
			     "holds the first operations to this peer), never among the windows "
			     "measured; slowest initiating rank");
}

/* ---- ping-pong ---- */

uint64_t efab_pingpong_iters(const efab_ctx_t *c, uint64_t size)
{
	return default_count(c, size);
}

/* -w as given, scaled down linearly above 64 KiB (at least 2) unless -n was
 * given; at least 1, since iteration 0 is the first. */
uint64_t efab_pingpong_warmup_of(const efab_opts_t *o, uint64_t size)
{
	uint64_t w = o->warmup;
	if (!o->iters && size > 65536) {
		w = o->warmup * 65536 / size;
		if (w < 2 && o->warmup >= 2)
			w = 2;
	}
	return w ? w : 1;
}

uint64_t efab_pingpong_warmup(const efab_ctx_t *c, uint64_t size)
{
	return efab_pingpong_warmup_of(&c->o, size);
}

typedef struct lat_share {
	efab_stats_t st;
	double first_us, batch_us;
	int initiator, failed;
} lat_share_t;

/* Every rank gets the first initiating rank's figures (rank 0 prints; with
 * --contend it is the target; in a scan the initiator may be either rank),
 * and with --contend the contending initiators' aggregate rate. */
static int pingpong_report(efab_ctx_t *c, uint64_t size, const lat_share_t *mine, efab_row_t *row)
{
	lat_share_t *all = calloc((size_t)c->rt->size, sizeof(*all));
	if (!all || c->rt->allgather(c->rt, mine, all, sizeof(*mine))) {
		free(all);
		efab_log_error("gathering latency results failed");
		return EFAB_ERR;
	}
	int first = 0;
	while (first + 1 < c->rt->size && !all[first].initiator)
		first++;
	row->lat = all[first].st;
	row->has_lat = 1;
	for (int r = 0; r < c->rt->size; r++)
		row->failed |= all[r].failed;
	efab_row_set(c, row, "first_us", "%.3f", all[first].first_us);
	if (all[first].batch_us > 0)
		efab_row_set(c, row, "lat_us_batch", "%.3f", all[first].batch_us);
	if (row->lat.n) {
		efab_row_set(c, row, "lat_us_p25", "%.3f", row->lat.p25);
		efab_row_set(c, row, "lat_us_p75", "%.3f", row->lat.p75);
	}
	if (c->o.contend) {
		double rate = 0;
		for (int r = 1; r < c->rt->size; r++)
			rate += all[r].initiator && all[r].st.mean > 0 ? 1.0 / all[r].st.mean : 0;
		row->has_bw = 1;
		row->msg_rate_Mops = rate;
		row->bw_MBps = rate * (double)size;
	}
	free(all);
	return EFAB_OK;
}

/* A failure inside a pattern's loop: the end of the run, or with
 * c->tolerate (efab_scan) the end of this rank's operations for the size. */
static int loop_failed(efab_ctx_t *c)
{
	if (!c->tolerate)
		return EFAB_ERR;
	c->failed = 1;
	return EFAB_OK;
}

/* The closing barrier. Under c->tolerate the tolerant one
 * (efab_barrier_settle), then every rank learns whether any rank failed
 * (*any), so that the `end` callbacks, which may be collective, are skipped
 * alike everywhere; c->failed stays this rank's own. */
static int closing_barrier(efab_ctx_t *c, efab_waitfor_t *w, int *any)
{
	*any = 0;
	if (!c->tolerate)
		return efab_barrier_progress(&c->fab, w);
	double mine, most = 0;
	if (efab_barrier_settle(&c->fab, w, &c->failed))
		return EFAB_ERR;
	mine = c->failed;
	if (c->rt->allreduce(c->rt, &mine, &most, 1, EFAB_RT_MAX))
		return EFAB_ERR;
	*any = most > 0;
	return EFAB_OK;
}

int efab_pingpong(efab_ctx_t *c, const efab_pingpong_ops_t *ops, uint64_t size, efab_row_t *row)
{
	uint64_t n = efab_pingpong_iters(c, size), warm = efab_pingpong_warmup(c, size), nb = n;
	uint64_t end = warm + n + nb, tb0 = 0, tb1 = 0;
	/* this rank takes part in iterations (not when its pair failed already) */
	int works = (c->initiator || ops->respond) && !c->failed;
	efab_waitfor_t w = {ops->closing, efab_op_name(c->op), size, c->peer, 0};
	double first_us = 0;
	size_t ns = 0;

	efab_clock_init();
	if (efab_pattern_samples(c, n) || (ops->begin && ops->begin(c, size)))
		return EFAB_ERR;
	efab_cost_reset(&c->fab);
	c->ncost_post = c->ncost_poll = 0;
	for (uint64_t i = 0; works && i < end; i++) {
		if (i == warm) {
			/* the timed phase begins: NIC counters, and the initiator's software
			 * cost in the sampled iterations (never in the batch) */
			if (efab_evidence_begin(c, &w))
				return EFAB_ERR;
			if (c->initiator)
				c->fab.cost = EFAB_COST_POST | EFAB_COST_POLL;
		}
		if (c->initiator && i == warm + n) {
			c->fab.cost = 0;
			tb0 = efab_ticks();
		}
		if (ops->prepare && ops->prepare(c, size, i)) {
			if (loop_failed(c))
				return EFAB_ERR;
			break;
		}
		if (c->initiator) {
			int single = i < warm + n; /* the batch reads no clock inside */
			cost_mark_t cm;
			if (single)
				cost_mark(c, &cm);
			uint64_t t0 = single ? efab_ticks() : 0;
			if (ops->ping(c, size, i)) {
				if (loop_failed(c))
					return EFAB_ERR;
				break;
			}
			if (single) {
				uint64_t t1 = efab_ticks();
				if (i >= warm) {
					c->samples[ns++] = efab_ticks_us(t1 - t0) / ops->per_sample;
					cost_sample(c, &cm);
				}
				else if (i == 0)
					first_us = efab_ticks_us(t1 - t0) / ops->per_sample;
			} else if (i + 1 == end) {
				tb1 = efab_ticks();
			}
		} else if (ops->respond(c, size, i)) {
			if (loop_failed(c))
				return EFAB_ERR;
			break;
		}
		if (ops->after)
			row->errors += ops->after(c, size, i);
	}
	c->fab.cost = 0;
	/* a rank that takes no part in the iterations joins the snapshot here */
	if (!works && efab_evidence_begin(c, &w))
		return EFAB_ERR;
	w.iter = n;
	int any_failed;
	if (closing_barrier(c, &w, &any_failed) || efab_evidence_end(c, &w))
		return EFAB_ERR;
	if (ops->end && !any_failed) {
		uint64_t e = ops->end(c, size, end);
		if (e == UINT64_MAX)
			return EFAB_ERR;
		row->errors += e;
	}
	double batch_us = nb && tb1 > tb0 ? efab_ticks_us(tb1 - tb0) / ops->per_sample / (double)nb : 0;
	/* the payload of the timed phase (samples and batch), every leg */
	double payload = works && c->initiator ? (double)(n + nb) * (double)size * (ops->legs ? ops->legs : 1) : 0;
	return efab_pingpong_rows(c, size, ns, first_us, batch_us, n, payload, row);
}

static int has_column(const efab_ctx_t *c, const char *name)
{
	for (size_t i = 0; i < c->ri.n_extra; i++)
		if (!strcmp(c->ri.extra_cols[i], name))
			return 1;
	return 0;
}

size_t efab_link_mtu(const efab_ctx_t *c)
{
	const struct fi_info *i = c->fab.info;
	return i && i->nic && i->nic->link_attr ? i->nic->link_attr->mtu : 0;
}

/* A write whose arrival is its last byte (-o write, put_lat) times a lower
 * bound where the size is above one packet: the provider's MTU (fi_info
 * nic->link_attr->mtu; EFA: the port's max_msg_sz, prov/efa/src/
 * efa_prov_info.c), as SRD places the packets of one write in any order.
 * No MTU reported: "unknown". late_msgs / late_bytes: the messages of this
 * row (every rank) whose bytes were still landing when the last byte was
 * seen, and those bytes (-c only: unchecked, n/a; --initiator gpu counts
 * messages, not bytes). Collective on every rank (the columns are the
 * row's, alike everywhere). */
static int late_report(efab_ctx_t *c, uint64_t size, efab_row_t *row)
{
	if (!has_column(c, "late_msgs"))
		return EFAB_OK;
	size_t mtu = efab_link_mtu(c);
	efab_row_set(c, row, "lat_lower_bound", "%s",
		     c->op != EFAB_OP_WRITE ? "no" : !mtu ? "unknown" : size > mtu ? "yes" : "no");
	double mine[2] = {(double)(c->late - c->late_row), (double)(c->late_bytes - c->late_bytes_row)},
	       all[2] = {0, 0};
	c->late_row = c->late;
	c->late_bytes_row = c->late_bytes;
	if (c->rt->allreduce(c->rt, mine, all, 2, EFAB_RT_SUM))
		return EFAB_ERR;
	if (!c->o.check) {
		efab_row_set(c, row, "late_msgs", "n/a");
		efab_row_set(c, row, "late_bytes", "n/a");
		return EFAB_OK;
	}
	efab_row_set(c, row, "late_msgs", "%.0f", all[0]);
	if (c->o.initiator == EFAB_INITIATOR_GPU)
		efab_row_set(c, row, "late_bytes", "n/a");
	else
		efab_row_set(c, row, "late_bytes", "%.0f", all[1]);
	return EFAB_OK;
}

int efab_pingpong_rows(efab_ctx_t *c, uint64_t size, size_t ns, double first_us, double batch_us,
		       uint64_t n, double payload, efab_row_t *row)
{
	lat_share_t mine;
	memset(&mine, 0, sizeof(mine));
	mine.initiator = c->initiator;
	mine.first_us = first_us;
	mine.batch_us = batch_us;
	efab_stats_compute(c->samples, ns, &mine.st);
	mine.failed = c->failed;
	row->iters = n;
	efab_row_set(c, row, "inject", "%s", c->use_inject ? "yes" : "no");
	if (pingpong_report(c, size, &mine, row) || efab_evidence_report(c, payload, row) ||
	    late_report(c, size, row))
		return EFAB_ERR;
	return EFAB_OK;
}

/* ---- windowed stream ---- */

const char *efab_stream_confirm_name(const efab_ctx_t *c, const efab_stream_ops_t *ops)
{
	const char *name = ops && ops->confirm_name ? ops->confirm_name(c) : NULL;
	return name && *name ? name : "local-completion";
}

uint64_t efab_stream_windows(const efab_ctx_t *c, uint64_t size)
{
	return default_count(c, size);
}

/* -w capped by the row (bandwidth: 10, and 2 above 1 MiB); at least 1:
 * window 0 is the first, timed alone, never measured. */
uint64_t efab_stream_warmup_of(const efab_bench_row_t *row, const efab_opts_t *o, uint64_t size)
{
	uint64_t cap = row->counts.warmup_cap, w = o->warmup;
	if (cap && w > cap)
		w = cap;
	if (size > (1u << 20) && w > 2)
		w = 2;
	return w ? w : 1;
}

uint64_t efab_stream_warmup(const efab_ctx_t *c, uint64_t size)
{
	return efab_stream_warmup_of(c->row, &c->o, size);
}

typedef struct stream_state {
	const efab_stream_ops_t *ops;
	uint64_t size;
	int active;     /* this rank posts windows */
	uint64_t next;  /* index of the next window of this size (calibration included) */
	uint64_t total_ticks; /* the measured windows' times, summed */
	uint64_t loop_t0;     /* the first post of the first measured window */
	uint64_t loop_ticks;  /* from loop_t0 to the confirmed end of the last window */
	size_t ns;
	double first_us; /* < 0 until the size's first window is timed */
	uint64_t op;     /* --pipeline: index of the next operation of this size */
} stream_state_t;

static int timed_window(efab_ctx_t *c, stream_state_t *st, int measured, efab_waitfor_t *w)
{
	cost_mark_t cm;
	cost_mark(c, &cm);
	uint64_t t0 = efab_ticks();
	if (st->ops->post(c, st->size, st->next))
		return EFAB_ERR;
	if (c->fab.cost) { /* the post phase, less the completions read inside it */
		c->fab.post_ticks += efab_ticks() - t0 - (c->fab.poll_ticks - cm.poll_ticks);
		c->fab.post_ops += c->o.window;
	}
	if (efab_drive_wait_tx(&c->fab, c->fab.tx_posted, w))
		return EFAB_ERR;
	uint64_t dt = efab_ticks() - t0;
	if (st->first_us < 0)
		st->first_us = efab_ticks_us(dt);
	else if (measured) {
		if (c->fab.cost)
			cost_sample(c, &cm);
		st->total_ticks += dt;
		if (!c->o.no_window_stats && st->ns < c->max_samples) /* budget: the first 2^20 */
			c->samples[st->ns++] = efab_ticks_us(dt);
	}
	return EFAB_OK;
}

/* One window at every rank. Returns EFAB_ERR on a failure. */
static int one_window(efab_ctx_t *c, stream_state_t *st, int measured, efab_row_t *row,
		      efab_waitfor_t *w)
{
	const efab_stream_ops_t *ops = st->ops;
	int lockstep = ops->lockstep && c->o.check;
	uint64_t rx0 = c->fab.rx_data_count, e = 0;
	w->iter = st->next;
	if (lockstep) {
		w->what = "the other ranks before a checked window";
		if ((ops->prepare && ops->prepare(c, st->size, st->next)) ||
		    efab_barrier_progress(&c->fab, w))
			return EFAB_ERR;
		w->what = "window completions";
		if (st->active && timed_window(c, st, measured, w))
			return EFAB_ERR;
		w->what = "the window's data to arrive";
		e = ops->check(c, st->size, st->next, rx0);
		/* nobody refills a source or a slot before every check is done */
		w->what = "the other ranks after a checked window";
		if (e == UINT64_MAX || efab_barrier_progress(&c->fab, w))
			return EFAB_ERR;
	} else if (st->active) {
		w->what = "window completions";
		if ((ops->prepare && ops->prepare(c, st->size, st->next)) ||
		    timed_window(c, st, measured, w))
			return EFAB_ERR;
		if (c->o.check && ops->check && (e = ops->check(c, st->size, st->next, rx0)) == UINT64_MAX)
			return EFAB_ERR;
	}
	row->errors += e;
	st->next++;
	if (st->active && ops->answer && ops->answer(c, st->size))
		return EFAB_ERR;
	/* a test's slow rank (EFAB_FAULT_SLOW), outside the window's time */
	if (c->faults.slow_us && c->faults.slow_rank == c->rt->rank)
		usleep(c->faults.slow_us);
	return EFAB_OK;
}

/* --time: a short calibration, then as many windows as fit in the time.
 * Every rank takes the slowest rank's window time, so all pairs run the same
 * count. */
static int windows_for_time(efab_ctx_t *c, stream_state_t *st, uint64_t *out, efab_row_t *row)
{
	double budget = c->o.time_s * 0.05 < 0.2 ? c->o.time_s * 0.05 : 0.2;
	uint64_t t0 = efab_ticks(), nw = 0;
	efab_waitfor_t w = {"calibration window", efab_op_name(c->op), st->size, c->peer, 0};
	if (c->o.check && st->ops->lockstep) {
		for (; nw < 2; nw++)
			if (one_window(c, st, 0, row, &w))
				return EFAB_ERR;
	} else if (st->active) {
		do {
			if (one_window(c, st, 0, row, &w))
				return EFAB_ERR;
			nw++;
		} while (nw < 2 || efab_ticks_us(efab_ticks() - t0) / 1e6 < budget);
	}
	double per = nw ? efab_ticks_us(efab_ticks() - t0) / 1e6 / (double)nw : 0, most = 0;
	w.what = "the other ranks after calibration";
	if (efab_barrier_progress(&c->fab, &w) ||
	    c->rt->allreduce(c->rt, &per, &most, 1, EFAB_RT_MAX))
		return EFAB_ERR;
	uint64_t n = most > 0 ? (uint64_t)(c->o.time_s / most) : 1;
	*out = n < 1 ? 1 : n > 100000000 ? 100000000 : n;
	return EFAB_OK;
}

typedef struct bw_share {
	double active, bw, mops, bw_win, mops_win, p25, p50, p75, p99, link, first, failed, loop_us,
		ops;
	char host[64], domain[64];
} bw_share_t;

static void fill_bw_row(efab_ctx_t *c, efab_row_t *row, uint64_t n, const bw_share_t *r,
			double links, const char *pair, const char *footprint)
{
	row->iters = n;
	row->window = c->o.window;
	row->has_bw = 1;
	row->bw_MBps = r->bw;
	row->msg_rate_Mops = r->mops;
	efab_row_set(c, row, "pair", "%s", pair);
	if (!c->o.no_window_stats && r->p50 > 0) {
		efab_row_set(c, row, "window_us_p50", "%.3f", r->p50);
		efab_row_set(c, row, "window_us_p99", "%.3f", r->p99);
		efab_row_set(c, row, "window_us_p25", "%.3f", r->p25);
		efab_row_set(c, row, "window_us_p75", "%.3f", r->p75);
	}
	efab_row_set(c, row, "inject", "%s", c->use_inject ? "yes" : "no");
	if (links > 0) {
		efab_row_set(c, row, "link_Gbps", "%.1f", links);
		efab_row_set(c, row, "pct_of_link", "%.1f", efab_pct_of_link(r->bw, links));
	}
	if (r->first > 0)
		efab_row_set(c, row, "first_us", "%.3f", r->first);
	efab_row_set(c, row, "footprint", "%s", footprint);
	if (r->bw_win > 0) {
		efab_row_set(c, row, "bw_MBps_windows", "%.3f", r->bw_win);
		efab_row_set(c, row, "msg_rate_Mops_windows", "%.6f", r->mops_win);
	}
	efab_row_set(c, row, "end_confirm", "%s", efab_stream_confirm_name(c, c->stream_ops));
	/* the peak-rate techniques (the RMA streams' last columns) */
	char tc[32];
	efab_row_set(c, row, "post_list", "%llu", (unsigned long long)c->o.post_list);
	efab_row_set(c, row, "eps", "%zu", c->fab.nsub + 1);
	efab_row_set(c, row, "pipeline", "%s", c->o.pipeline ? "yes" : "no");
	efab_row_set(c, row, "high_pps", "%s", c->o.high_pps ? "yes" : "no");
	efab_row_set(c, row, "tclass", "%s",
		     efab_tclass_fi_name(c->fab.info->tx_attr->tclass, tc, sizeof(tc)));
}

/* The per-pair rows (--per-pair, rank 0): a pair's own figures, both
 * directions summed with --bidir. */
static int per_pair_rows(efab_ctx_t *c, const efab_row_t *row, uint64_t n, const bw_share_t *all,
			 const char *footprint)
{
	for (int p = 0; p < c->npairs; p++) {
		efab_row_t pr = *row;
		bw_share_t one = all[p];
		int q = p + c->npairs;
		if (c->o.bidir) {
			one.bw += all[q].bw;
			one.mops += all[q].mops;
			one.bw_win += all[q].bw_win;
			one.mops_win += all[q].mops_win;
		}
		char name[16];
		snprintf(name, sizeof(name), "%d", p);
		pr.errors = 0;
		memset(pr.extra, 0, sizeof(pr.extra));
		fill_bw_row(c, &pr, n, &one,
			    all[p].link * (c->o.bidir && strcmp(all[p].host, all[q].host) ? 2 : 1),
			    name, footprint);
		if (efab_more_row(c, &pr))
			return EFAB_ERR;
	}
	return EFAB_OK;
}

/* The port speed libfabric reported for this rank's NIC (0: none), or
 * EFAB_FAULT_LINK_GBPS=G, a test hook: as if it had reported G Gb/s (a driver
 * reporting a wrong speed; shm reports none). */
static double link_gbps(const efab_ctx_t *c)
{
	return c->faults.link_gbps > 0 ? c->faults.link_gbps : efab_info_link_gbps(c->fab.info);
}

/* Share every rank's figures and fill this size's rows: the aggregate row
 * (sum over initiating ranks; line rate summed over the distinct NICs, host
 * and domain, those ranks used) and, with --per-pair, one row per pair. */
static int stream_report(efab_ctx_t *c, const stream_state_t *st, uint64_t n, efab_row_t *row)
{
	return efab_stream_rows(c, st->ops, st->size, st->active, st->ns, efab_ticks_us(st->total_ticks),
				efab_ticks_us(st->loop_ticks), st->first_us, n, row);
}

int efab_stream_rows(efab_ctx_t *c, const efab_stream_ops_t *ops, uint64_t size, int active,
		     size_t ns, double total_us, double loop_us, double first_us, uint64_t n,
		     efab_row_t *row)
{
	const char *footprint = ops->footprint ? ops->footprint(c) : "";
	bw_share_t mine, agg;
	memset(&mine, 0, sizeof(mine));
	memset(&agg, 0, sizeof(agg));
	/* --pipeline has no window times (total_us 0): no *_windows figures */
	if (active && (total_us > 0 || c->o.pipeline) && loop_us > 0) {
		double nops = (double)n * (double)c->o.window;
		efab_stats_t ws;
		mine.active = 1;
		mine.bw = nops * (double)size / loop_us;
		mine.mops = nops / loop_us;
		mine.loop_us = loop_us;
		mine.ops = nops;
		mine.bw_win = total_us > 0 ? nops * (double)size / total_us : 0;
		mine.mops_win = total_us > 0 ? nops / total_us : 0;
		efab_stats_compute(c->samples, ns, &ws);
		mine.p25 = ws.p25;
		mine.p50 = ws.p50;
		mine.p75 = ws.p75;
		mine.p99 = ws.p99;
		mine.link = link_gbps(c);
		mine.first = first_us;
		gethostname(mine.host, sizeof(mine.host) - 1);
		snprintf(mine.domain, sizeof(mine.domain), "%s", c->fab.info->domain_attr->name);
	}
	mine.failed = c->failed;
	c->own_bw_MBps = mine.bw;
	c->own_Mops = mine.mops;
	bw_share_t *all = calloc((size_t)c->rt->size, sizeof(*all));
	if (!all || c->rt->allgather(c->rt, &mine, all, sizeof(mine))) {
		free(all);
		efab_log_error("gathering bandwidth results failed");
		return EFAB_ERR;
	}
	double links = 0;
	int first = -1;
	for (int r = 0; r < c->rt->size; r++) {
		row->failed |= all[r].failed > 0;
		if (!all[r].active)
			continue;
		if (first < 0)
			first = r;
		agg.bw += all[r].bw;
		agg.mops += all[r].mops;
		agg.bw_win += all[r].bw_win;
		agg.mops_win += all[r].mops_win;
		if (all[r].first > agg.first) /* the slowest initiator's first window */
			agg.first = all[r].first;
		int seen = 0;
		for (int q = 0; q < r; q++)
			seen |= all[q].active && !strcmp(all[q].host, all[r].host) &&
				!strcmp(all[q].domain, all[r].domain);
		if (!seen)
			links += all[r].link;
	}
	if (first >= 0) { /* window times of the first initiating rank */
		agg.p25 = all[first].p25;
		agg.p50 = all[first].p50;
		agg.p75 = all[first].p75;
		agg.p99 = all[first].p99;
	}
	fill_bw_row(c, row, n, &agg, links, "all", footprint);
	/* -v: each initiating rank's own share of the sum (with --bidir every
	 * rank's loop ends at its own confirmed end, so the shares differ) */
	for (int r = 0; c->o.verbose && c->rt->rank == 0 && r < c->rt->size; r++)
		if (all[r].active)
			efab_log_info("size %" PRIu64 " rank %d (%s): %.0f ops in its loop of %.1f us, "
				      "%.4f Mops/s, %.2f MB/s",
				      size, r, all[r].host, all[r].ops, all[r].loop_us, all[r].mops,
				      all[r].bw);
	int rc = EFAB_OK;
	if (c->o.per_pair && c->rt->rank == 0 && c->npairs > 1 && !c->o.contend)
		rc = per_pair_rows(c, row, n, all, footprint);
	free(all);
	return rc;
}

/* --time as a deadline (c->budget, efab_scan): window 0 and the warmup
 * while a quarter of the time is left unspent, then measured windows until
 * the time has passed, at least one: a slow NIC moves what it moves in the
 * time and that is its figure, whatever the calibration would have said.
 * Lockstep (-c) ranks stop together (the first to see the deadline decides).
 * *n: this rank's measured windows. */
static int budget_windows(efab_ctx_t *c, stream_state_t *st, uint64_t warm, uint64_t *n,
			  efab_row_t *row, efab_waitfor_t *w)
{
	int lockstep = st->ops->lockstep && c->o.check;
	efab_deadline_t end = efab_deadline_in(c->o.time_s), warm_end = efab_deadline_in(c->o.time_s / 4);
	*n = 0;
	if (!lockstep && !st->active)
		return EFAB_OK;
	for (uint64_t i = 0;; i++) {
		int measured = i >= warm;
		if (i == warm)
			st->loop_t0 = efab_ticks();
		if (one_window(c, st, measured, row, w)) {
			if (loop_failed(c))
				return EFAB_ERR;
			return EFAB_OK;
		}
		*n += (uint64_t)measured;
		double stop = efab_deadline_passed(measured ? end : warm_end) ? 1 : 0;
		if (!measured && stop) { /* the warmup is over early: measure from the next */
			warm = i + 1;
			stop = 0;
		}
		if (lockstep) {
			double any = 0;
			if (c->rt->allreduce(c->rt, &stop, &any, 1, EFAB_RT_MAX))
				return EFAB_ERR;
			stop = any;
		}
		if (measured && stop)
			return EFAB_OK;
	}
}

/* --pipeline: post operations [st->op, st->op + nops), at most -W in flight:
 * post until -W are in flight (or none is left), then read completions
 * until room for the next batch came back, and so on (fi_efa_rma_bw's
 * nonblocking loop); returns once all nops have completed.
 * --post-list N: whole post lists only (perftest's rule: a list is posted
 * once N slots are free), op k's list ending at the next multiple of N (or
 * at nops, or at -W when -W < N), FI_MORE on all its posts but the last:
 * one doorbell per N work requests. Posting every slot as soon as it is
 * free (fi_efa_rma_bw's rule, and this loop's before) ends a list early
 * wherever completions come back one at a time, and then rings a doorbell
 * for nearly every operation (measured on efasim with bench/tools/fipost.c:
 * 1.1-1.3 work requests per doorbell in both tools, issue 62). */
static int pipe_run(efab_ctx_t *c, stream_state_t *st, uint64_t nops, efab_waitfor_t *w,
		    uint64_t *full_at)
{
	efab_fabric_t *f = &c->fab;
	const efab_stream_ops_t *ops = st->ops;
	uint64_t win = c->o.window, end = st->op + nops, goal = f->tx_posted + nops;
	uint64_t pl = c->o.post_list > 1 ? c->o.post_list : 1;
	while (st->op < end || f->tx_done < goal) {
		/* the next list: to the next multiple of pl, within nops and -W */
		uint64_t batch = 0;
		while (st->op < end) {
			batch = pl - st->op % pl;
			if (batch > end - st->op)
				batch = end - st->op;
			if (batch > win)
				batch = win;
			if (f->tx_posted - f->tx_done + batch > win)
				break; /* no room for the whole list: read completions first */
			w->iter = st->op / win;
			for (uint64_t j = 0; j < batch; j++, st->op++)
				if (ops->post_one(c, st->size, st->op, j + 1 == batch))
					return EFAB_ERR;
			batch = 0;
		}
		if (full_at && !*full_at) /* the first fill is posted: the clock starts */
			*full_at = efab_ticks();
		/* completions until the next list fits (at least one: the last ones) */
		uint64_t room = f->tx_posted + batch > win ? f->tx_posted + batch - win : 0;
		if (room <= f->tx_done)
			room = f->tx_done < f->tx_posted ? f->tx_done + 1 : f->tx_posted;
		if (efab_wait_tx(f, room, w))
			return EFAB_ERR;
		if (ops->answer && ops->answer(c, st->size))
			return EFAB_ERR;
	}
	return EFAB_OK;
}

/* --pipeline, one size: (-c: prepare and a barrier on every rank) window 0
 * timed alone, the warmup's operations, then the measured ones from
 * st->loop_t0. *n stays the measured windows' count (-W ops each). */
static int pipe_loop(efab_ctx_t *c, stream_state_t *st, uint64_t warm, uint64_t n,
		     efab_waitfor_t *w)
{
	const efab_stream_ops_t *ops = st->ops;
	uint64_t win = c->o.window;
	if (c->o.check) {
		w->what = "the other ranks before the checked pipeline";
		if ((ops->prepare && ops->prepare(c, st->size, 0)) || efab_barrier_progress(&c->fab, w))
			return EFAB_ERR;
	}
	w->what = "window completions";
	if (st->active) {
		if (timed_window(c, st, 0, w))
			return EFAB_ERR;
		st->op = win;
		st->next = 1;
		if (pipe_run(c, st, (warm - 1) * win, w, NULL))
			return EFAB_ERR;
	}
	if (efab_evidence_begin(c, w))
		return EFAB_ERR;
	w->what = "pipelined completions";
	/* no per-poll cycle counter reads (post_ns/poll_ns are per window,
	 * which the pipeline has not): fi_efa_rma_bw's loop reads no clock */
	c->fab.cost = 0;
	/* the timed loop starts with -W operations in flight (fi_efa_rma_bw's
	 * clock starts once the warmup's completions are in, its pipeline full):
	 * the measured phase's first -W posts are made, then the clock starts */
	st->loop_t0 = st->active ? 0 : efab_ticks();
	if (st->active && pipe_run(c, st, n * win, w, &st->loop_t0))
		return EFAB_ERR;
	st->next = st->active ? warm + n : 0;
	return EFAB_OK;
}

int efab_stream(efab_ctx_t *c, const efab_stream_ops_t *ops, uint64_t size, efab_row_t *row)
{
	stream_state_t st = {.ops = ops, .size = size, .first_us = -1};
	uint64_t n = efab_stream_windows(c, size), warm = efab_stream_warmup(c, size);
	efab_waitfor_t w = {"window completions", efab_op_name(c->op), size, c->peer, 0};
	int budget = c->budget && c->o.time_s > 0;

	/* a rank whose pair failed already posts nothing (tolerant runs) */
	st.active = (c->initiator || c->o.bidir) && !c->failed;
	c->planned = 0;
	efab_clock_init();
	if (ops->begin && ops->begin(c, size))
		return EFAB_ERR;
	if (!budget && c->o.time_s > 0 && windows_for_time(c, &st, &n, row))
		return EFAB_ERR;
	if (efab_pattern_samples(c, budget ? 1u << 20 : n))
		return EFAB_ERR;
	c->stream_ops = ops;
	uint64_t rx0 = c->fab.rx_data_count;
	if (budget) {
		if (budget_windows(c, &st, warm, &n, row, &w))
			return EFAB_ERR;
	} else if (c->o.pipeline) {
		c->planned = warm + n;
		efab_cost_reset(&c->fab);
		c->ncost_post = c->ncost_poll = 0;
		if (pipe_loop(c, &st, warm, n, &w) && loop_failed(c))
			return EFAB_ERR;
	} else {
		/* --time: each rank calibrated its own number of windows */
		c->planned = c->o.time_s > 0 ? 0 : warm + n;
		efab_cost_reset(&c->fab);
		c->ncost_post = c->ncost_poll = 0;
		for (uint64_t i = 0; i < warm + n; i++) {
			if (i == warm) {
				if (efab_evidence_begin(c, &w))
					return EFAB_ERR;
				w.what = "window completions";
				/* software cost of the measured windows: completion reads
				 * timed in the waits, the post phase per window */
				c->fab.cost = st.active ? EFAB_COST_POLL : 0;
				st.loop_t0 = efab_ticks();
			}
			if (one_window(c, &st, i >= warm, row, &w)) {
				if (loop_failed(c))
					return EFAB_ERR;
				break;
			}
		}
	}
	c->fab.cost = 0;
	/* a rank whose pair failed confirms nothing; its peer's wait for the
	 * flag is bounded, and fails it too (tolerant runs) */
	if (!c->failed && ops->confirm && ops->confirm(c, size, st.active ? st.next : 0) &&
	    loop_failed(c))
		return EFAB_ERR;
	st.loop_ticks = efab_ticks() - st.loop_t0;
	if (!c->failed && ops->finish && ops->finish(c, size, st.active ? st.next : 0) &&
	    loop_failed(c))
		return EFAB_ERR;
	if (c->o.pipeline && c->o.check && !c->failed && ops->check_all) {
		uint64_t e = ops->check_all(c, size, (warm + n) * c->o.window, rx0);
		if (e == UINT64_MAX)
			return EFAB_ERR;
		row->errors += e;
	}
	w.what = "the other ranks after the last window";
	int any_failed;
	if (closing_barrier(c, &w, &any_failed) || efab_evidence_end(c, &w))
		return EFAB_ERR;
	if (ops->end && !any_failed) {
		uint64_t e = ops->end(c, size, st.next);
		if (e == UINT64_MAX)
			return EFAB_ERR;
		row->errors += e;
	}
	double payload = st.active ? (double)n * (double)c->o.window * (double)size : 0;
	if (stream_report(c, &st, n, row) || efab_evidence_report(c, payload, row))
		return EFAB_ERR;
	return EFAB_OK;
}
