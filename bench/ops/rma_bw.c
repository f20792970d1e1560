/* Put and get bandwidth and message rate.
 *
 * Ranks pair up: [0, N) initiate towards [N, 2N) (with --bidir both sides
 * do). A window is W operations posted back to back, then waited for; the
 * window's time is from the first post to the last local completion. With
 * inject (sizes within the inject limit) the first W-1 writes are
 * fi_inject_write and the last a regular write whose completion ends the
 * window. Bandwidth of a rank = bytes moved / sum of its window times, in
 * 10^6 B/s; the aggregate row is the sum over the initiating ranks, all
 * running at once between barriers.
 *
 * Region per rank: [rx | tx]. --footprint buffer (default): every op of a
 * window reads one tx buffer and lands on the peer's one rx buffer
 * (concurrent identical writes), as perftest's ib_write_bw does.
 * --footprint window: op k of a window uses tx + k x size and rx + k x size,
 * window x size bytes on each side, as fabtests' fi_rma_bw and OSU's
 * osu_put_bw/osu_get_bw do (it matters where the window no longer fits a
 * cache: 4 MiB on shm). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "efab_clock.h"
#include "harness.h"
#include "rma.h"

enum { X_PAIR, X_WP50, X_WP99, X_INJECT, X_LINK, X_PCT, X_FIRST, X_FOOT };
const char *const efab_bw_cols[] = {"pair", "window_us_p50", "window_us_p99", "inject",
				    "link_Gbps", "pct_of_link", "first_us", "footprint"};
const size_t efab_n_bw_cols = 8;

/* Buffers per side and window: one (--footprint buffer: every op of a
 * window carries the same data, so they may share it, as in perftest) or one
 * per op (--footprint window, as fabtests and OSU). */
static size_t slots_for(const efab_ctx_t *c, uint64_t size)
{
	(void)size;
	return c->o.footprint == EFAB_FOOTPRINT_WINDOW && c->o.window > 1 ? (size_t)c->o.window
									  : 1;
}

static size_t rx_bytes(const efab_ctx_t *c)
{
	size_t most = 0;
	for (size_t i = 0; i < efab_sizes_count(&c->o.sizes); i++) {
		uint64_t s = efab_sizes_at(&c->o.sizes, i);
		size_t b = slots_for(c, s) * s;
		most = b > most ? b : most;
	}
	return most;
}

size_t efab_bw_region(const efab_ctx_t *c, uint64_t max_size)
{
	(void)max_size; /* rx_bytes already holds the largest size's slots */
	return 2 * rx_bytes(c);
}

int efab_bw_setup(efab_ctx_t *c)
{
	size_t txq = c->fab.info->tx_attr->size;
	if (c->o.window > txq) {
		if (c->rt->rank == 0)
			efab_log_error("--window %llu is above the provider's tx queue size %zu",
				       (unsigned long long)c->o.window, txq);
		return EFAB_EUSAGE;
	}
	if (c->o.check && !efab_mem_host_accessible(c->mem_kind) && c->op == EFAB_OP_WRITE) {
		if (c->rt->rank == 0)
			efab_log_error("-c on GPU memory needs -o writedata (the CPU cannot poll "
				       "device memory for arrival)");
		return EFAB_EUSAGE;
	}
	efab_note(c, "bandwidth = bytes / sum of window times (first post to last local "
		     "completion), 10^6 B/s; message rate in 10^6 ops/s; aggregate = sum over "
		     "initiating ranks; iters = windows of %llu ops", (unsigned long long)c->o.window);
	efab_note(c, "--footprint %s: %s", efab_footprint_name(c->o.footprint),
		  slots_for(c, 1) > 1 ? "op k of a window uses source and destination k x size "
					"(window x size bytes each side, as fabtests and OSU)"
				      : "every op of a window uses one source and one destination "
					"buffer (as perftest)");
	if (c->o.bidir)
		efab_note(c, "--bidir: both ranks of each pair issue at once; rows report the sum");
	if (c->op != EFAB_OP_READ)
		efab_note(c, "inject: %s%s", c->o.no_inject ? "off (--no-inject)"
			  : "fi_inject_write for sizes <= the inject size (first W-1 ops of a window)",
			  !c->o.no_inject && !(c->fab.info->tx_attr->msg_order & FI_ORDER_WAW)
				  ? "; this fabric does not order writes (no FI_ORDER_WAW: EFA's SRD), so "
				    "when a window ends (its last write completed) earlier injected writes "
				    "may still be in flight: for inject sizes the window time is a lower bound"
				  : "");
	return efab_rma_notes(c);
}

static uint64_t bw_windows_for(const efab_ctx_t *c, uint64_t size)
{
	return c->o.iters ? c->o.iters : efab_scaled_count(200, 8192, size, 10);
}

static uint64_t bw_warmup_for(const efab_ctx_t *c, uint64_t size)
{
	uint64_t w = c->o.warmup < 10 ? c->o.warmup : 10;
	return size > (1u << 20) && w > 2 ? 2 : w;
}

typedef struct bw_state {
	uint64_t size;
	size_t slots;
	int active;
	int arrival; /* this rank receives writes and must detect them (-c) */
	uint64_t total_ticks;
	size_t ns;
	double first_us; /* the size's first window, < 0 until timed */
} bw_state_t;

static int post_window(efab_ctx_t *c, bw_state_t *st, efab_waitfor_t *w)
{
	size_t tx = rx_bytes(c);
	int peer = c->peer;
	uint64_t key = c->rkeys[peer].key;
	for (uint64_t k = 0; k < c->o.window; k++) {
		size_t slot = (size_t)(k % st->slots) * st->size;
		int rc;
		if (c->op == EFAB_OP_READ) {
			rc = efab_post_read(&c->fab, peer, efab_local(c, slot), st->size, c->ldesc,
					    efab_raddr(c, peer, tx + slot), key, w);
		} else {
			uint64_t flags = c->op == EFAB_OP_WRITEDATA ? FI_REMOTE_CQ_DATA : 0;
			if (c->use_inject && k + 1 < c->o.window)
				flags |= FI_INJECT;
			rc = efab_post_write(&c->fab, peer, efab_local(c, tx + slot), st->size, c->ldesc,
					     efab_raddr(c, peer, slot), key, c->seq & 0xffffffffu,
					     flags, w);
		}
		if (rc)
			return rc;
	}
	return efab_wait_tx(&c->fab, c->fab.tx_posted, w);
}

static int timed_window(efab_ctx_t *c, bw_state_t *st, int measured, efab_waitfor_t *w)
{
	uint64_t t0 = efab_ticks();
	if (post_window(c, st, w))
		return EFAB_ERR;
	uint64_t dt = efab_ticks() - t0;
	if (st->first_us < 0)
		st->first_us = efab_ticks_us(dt);
	else if (measured) {
		st->total_ticks += dt;
		if (!c->o.no_window_stats)
			c->samples[st->ns++] = efab_ticks_us(dt);
	}
	return EFAB_OK;
}

/* -c: wait until every slot written this window carries its tag (host
 * memory) or all W remote CQ data arrived (writedata), then check. */
static uint64_t check_window(efab_ctx_t *c, bw_state_t *st, efab_waitfor_t *w, uint64_t rxd0)
{
	uint64_t errors = 0;
	size_t used = st->slots < c->o.window ? st->slots : c->o.window;
	if (c->op == EFAB_OP_READ) {
		if (!c->initiator && !c->o.bidir)
			return 0;
		for (size_t k = 0; k < used; k++)
			errors += efab_verify(c, k * st->size, st->size, c->seq);
		return errors;
	}
	if (!st->arrival)
		return 0;
	if (c->op == EFAB_OP_WRITEDATA) {
		if (efab_wait_rxdata(&c->fab, rxd0 + c->o.window, w))
			return UINT64_MAX;
	} else {
		for (size_t k = 0; k < used; k++)
			if (efab_wait_byte(&c->fab, efab_local(c, k * st->size + st->size - 1),
					   efab_tag(c->seq), w))
				return UINT64_MAX;
	}
	for (size_t k = 0; k < used; k++)
		errors += c->op == EFAB_OP_WRITE ? efab_verify_settled(c, k * st->size, st->size, c->seq)
						 : efab_verify(c, k * st->size, st->size, c->seq);
	return errors;
}

/* Prepare message c->seq: sources carry the pattern, read targets are
 * poisoned. */
static int prepare(efab_ctx_t *c, bw_state_t *st)
{
	size_t tx = rx_bytes(c);
	if (c->op == EFAB_OP_READ) {
		/* every rank's tx is a read source for its peer (bidir) or not used */
		for (size_t k = 0; k < st->slots; k++)
			if (efab_fill(c, tx + k * st->size, st->size, c->seq))
				return EFAB_ERR;
		if (st->active) {
			memset(c->bounce, 0xa5 ^ (int)(c->seq & 0xff), st->slots * st->size);
			return efab_mem_write(&c->mem, 0, c->bounce, st->slots * st->size);
		}
		return EFAB_OK;
	}
	for (size_t k = 0; st->active && k < st->slots; k++)
		if (efab_fill(c, tx + k * st->size, st->size, c->seq))
			return EFAB_ERR;
	return EFAB_OK;
}

static int run_windows(efab_ctx_t *c, bw_state_t *st, uint64_t n, uint64_t warm, int measured,
		       efab_row_t *row)
{
	efab_waitfor_t w = {"window completions", efab_op_name(c->op), st->size, c->peer, 0};
	for (uint64_t i = 0; i < warm + n; i++) {
		w.iter = i;
		if (c->o.check) {
			uint64_t rxd0 = c->fab.rx_data_count;
			w.what = "the other ranks before a checked window";
			if (prepare(c, st) || efab_barrier_progress(&c->fab, &w))
				return EFAB_ERR;
			w.what = "window completions";
			if (st->active && timed_window(c, st, measured && i >= warm, &w))
				return EFAB_ERR;
			w.what = "the window's data to arrive";
			uint64_t e = check_window(c, st, &w, rxd0);
			if (e == UINT64_MAX)
				return EFAB_ERR;
			row->errors += e;
			c->seq++;
			/* nobody refills a source or a slot before every check is done */
			w.what = "the other ranks after a checked window";
			if (efab_barrier_progress(&c->fab, &w))
				return EFAB_ERR;
		} else if (st->active) {
			if (timed_window(c, st, measured && i >= warm, &w))
				return EFAB_ERR;
		}
	}
	w.what = "the other ranks after the last window";
	return efab_barrier_progress(&c->fab, &w);
}

/* --time: a short calibration, then as many windows as fit in the time.
 * Every rank takes the slowest rank's window time, so all pairs run the same
 * count. */
static int windows_for_time(efab_ctx_t *c, bw_state_t *st, uint64_t *out, efab_row_t *row)
{
	double budget = c->o.time_s * 0.05 < 0.2 ? c->o.time_s * 0.05 : 0.2;
	efab_stopwatch_t sw = efab_stopwatch_start();
	uint64_t nw = 0;
	efab_waitfor_t w = {"calibration window", efab_op_name(c->op), st->size, c->peer, 0};
	if (st->active && !c->o.check) {
		do {
			if (timed_window(c, st, 0, &w))
				return EFAB_ERR;
			nw++;
		} while (nw < 2 || efab_stopwatch_elapsed_s(sw) < budget);
	} else if (c->o.check) {
		if (run_windows(c, st, 2, 0, 0, row))
			return EFAB_ERR;
		nw = 2;
	}
	double per = nw ? efab_stopwatch_elapsed_s(sw) / (double)nw : 0, most = 0;
	w.what = "the other ranks after calibration";
	if (efab_barrier_progress(&c->fab, &w) ||
	    c->rt->allreduce(c->rt, &per, &most, 1, EFAB_RT_MAX))
		return EFAB_ERR;
	uint64_t n = most > 0 ? (uint64_t)(c->o.time_s / most) : 1;
	*out = n < 1 ? 1 : n > 100000000 ? 100000000 : n;
	return EFAB_OK;
}

typedef struct bw_share {
	double active, bw, mops, p50, p99, link, first;
	char host[64], domain[64];
} bw_share_t;

static void fill_row(efab_ctx_t *c, efab_row_t *row, uint64_t n, const bw_share_t *r,
		     double links, const char *pair, const char *inject, const char *footprint)
{
	row->iters = n;
	row->window = c->o.window;
	row->has_bw = 1;
	row->bw_MBps = r->bw;
	row->msg_rate_Mops = r->mops;
	snprintf(row->extra[X_PAIR], sizeof(row->extra[0]), "%s", pair);
	if (!c->o.no_window_stats && r->p50 > 0) {
		snprintf(row->extra[X_WP50], sizeof(row->extra[0]), "%.3f", r->p50);
		snprintf(row->extra[X_WP99], sizeof(row->extra[0]), "%.3f", r->p99);
	}
	snprintf(row->extra[X_INJECT], sizeof(row->extra[0]), "%s", inject);
	if (links > 0) {
		snprintf(row->extra[X_LINK], sizeof(row->extra[0]), "%.1f", links);
		snprintf(row->extra[X_PCT], sizeof(row->extra[0]), "%.1f",
			 efab_pct_of_link(r->bw, links));
	}
	if (r->first > 0)
		snprintf(row->extra[X_FIRST], sizeof(row->extra[0]), "%.3f", r->first);
	snprintf(row->extra[X_FOOT], sizeof(row->extra[0]), "%s", footprint);
}

/* Share every rank's figures and fill this size's rows: the aggregate row
 * (sum over initiating ranks; line rate summed over the distinct NICs, host
 * and domain, those ranks used) and, with --per-pair, one row per pair. */
int efab_bw_report(efab_ctx_t *c, efab_row_t *row, int active, double total_us, size_t ns,
		   uint64_t n, double bytes_per_op, const char *inject, double first_us,
		   const char *footprint)
{
	bw_share_t mine;
	memset(&mine, 0, sizeof(mine));
	if (active && total_us > 0) {
		double us = total_us, ops = (double)n * (double)c->o.window;
		efab_stats_t ws;
		mine.active = 1;
		mine.bw = ops * bytes_per_op / us;
		mine.mops = ops / us;
		efab_stats_compute(c->samples, ns, &ws);
		mine.p50 = ws.p50;
		mine.p99 = ws.p99;
		mine.link = efab_info_link_gbps(c->fab.info);
		mine.first = first_us;
		gethostname(mine.host, sizeof(mine.host) - 1);
		snprintf(mine.domain, sizeof(mine.domain), "%s", c->fab.info->domain_attr->name);
	}
	c->own_bw_MBps = mine.bw;
	c->own_Mops = mine.mops;
	bw_share_t *all = calloc((size_t)c->rt->size, sizeof(*all));
	if (!all || c->rt->allgather(c->rt, &mine, all, sizeof(mine))) {
		free(all);
		efab_log_error("gathering bandwidth results failed");
		return EFAB_ERR;
	}
	bw_share_t agg;
	memset(&agg, 0, sizeof(agg));
	double links = 0;
	int first = -1;
	for (int r = 0; r < c->rt->size; r++) {
		if (!all[r].active)
			continue;
		if (first < 0)
			first = r;
		agg.bw += all[r].bw;
		agg.mops += all[r].mops;
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
		agg.p50 = all[first].p50;
		agg.p99 = all[first].p99;
	}
	fill_row(c, row, n, &agg, links, "all", inject, footprint);
	if (c->o.per_pair && c->rt->rank == 0 && c->npairs > 1 && !c->o.contend) {
		for (int p = 0; p < c->npairs; p++) {
			efab_row_t pr = *row;
			bw_share_t one = all[p];
			int q = p + c->npairs;
			if (c->o.bidir) { /* the pair's two directions */
				one.bw += all[q].bw;
				one.mops += all[q].mops;
			}
			char name[16];
			snprintf(name, sizeof(name), "%d", p);
			pr.errors = 0;
			memset(pr.extra, 0, sizeof(pr.extra));
			fill_row(c, &pr, n, &one,
				 all[p].link * (c->o.bidir && strcmp(all[p].host, all[q].host) ? 2 : 1),
				 name, inject, footprint);
			if (efab_more_row(c, &pr)) {
				free(all);
				return EFAB_ERR;
			}
		}
	}
	free(all);
	return EFAB_OK;
}

int efab_bw_run(efab_ctx_t *c, uint64_t size, efab_row_t *row)
{
	bw_state_t st = {.size = size, .slots = slots_for(c, size), .first_us = -1};
	st.active = c->initiator || c->o.bidir;
	st.arrival = c->op != EFAB_OP_READ && (!c->initiator || c->o.bidir);
	c->use_inject = c->op != EFAB_OP_READ && !c->o.no_inject && !c->o.src_unregistered &&
			efab_inject_ok(c->mem.kind, size, c->fab.inject_rma.value) && c->o.window > 1;
	uint64_t n = bw_windows_for(c, size), warm = bw_warmup_for(c, size);
	if (warm < 1) /* window 0 is the first: timed alone, never measured */
		warm = 1;

	if (c->o.time_s > 0 && windows_for_time(c, &st, &n, row))
		return EFAB_ERR;
	if (n > c->max_samples) {
		double *s = realloc(c->samples, n * sizeof(double));
		if (!s) {
			efab_log_error("out of memory for %llu window samples", (unsigned long long)n);
			return EFAB_ERR;
		}
		c->samples = s;
		c->max_samples = n;
	}
	if (run_windows(c, &st, n, warm, 1, row))
		return EFAB_ERR;
	if (!c->o.check)
		c->seq++;

	return efab_bw_report(c, row, st.active, efab_ticks_us(st.total_ticks), st.ns, n,
			      (double)size, c->use_inject ? "yes" : "no", st.first_us,
			      efab_footprint_name(c->o.footprint));
}
