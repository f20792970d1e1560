/* Atomic latency and message rate.
 *
 * Each size is an element count (-m in bytes, a multiple of the datatype
 * size; default one element). Pairs as in the bandwidth benchmarks, or with
 * --contend every rank but 0 targets the same words on rank 0.
 *
 * Latency = full round trip of one atomic to its completion at the
 * initiator. Message rate (_bw) = atomics completed / sum of window times.
 *
 * Validation (-c): every target word starts from a known value and every
 * initiator applies a known operand sequence, so the final value is known
 * (N fetch-adds of 1 from K initiators -> N*K; min, max and the bit ops
 * likewise); fetched values are checked as they arrive where their order is
 * defined (single initiator, latency: fadd and swap return the op index,
 * cswap chains succeed every time; with contention fetch-add results must
 * increase and cswap successes must sum to the final value).
 *
 * Region per rank: [target words | operands x W | compares x W | results x W]. */
#include <stdlib.h>
#include <string.h>

#include "atomic.h"
#include "efab_clock.h"
#include "rma.h"


typedef struct at_state {
	int kind;
	enum fi_op op;
	enum fi_datatype dt;
	size_t dsz;
	size_t maxc; /* elements at the largest size */
	size_t max_count; /* the provider's */
	size_t tgt_bytes;
	uint64_t successes; /* cswap, this rank */
} at_state_t;

static at_state_t at; /* one benchmark per process */

static size_t per_op(void)
{
	return (at.maxc * 8 + 63) / 64 * 64;
}

static size_t opnd_off(const efab_ctx_t *c, uint64_t k)
{
	return at.tgt_bytes + (size_t)k * per_op() + 0 * c->o.window;
}

static size_t cmp_off(const efab_ctx_t *c, uint64_t k)
{
	return at.tgt_bytes + (size_t)(c->o.window + k) * per_op();
}

static size_t res_off(const efab_ctx_t *c, uint64_t k)
{
	return at.tgt_bytes + (size_t)(2 * c->o.window + k) * per_op();
}

size_t efab_atomic_region(const efab_ctx_t *c, uint64_t max_size)
{
	size_t dsz = efab_dtype_size(c->o.dtype);
	at.maxc = max_size / dsz ? max_size / dsz : 1;
	at.tgt_bytes = per_op();
	return at.tgt_bytes + 3 * (size_t)c->o.window * per_op();
}

int efab_atomic_setup(efab_ctx_t *c)
{
	at.dsz = efab_dtype_size(c->o.dtype);
	at.dt = efab_fi_dtype(c->o.dtype);
	efab_aop_map(c->o.aop, &at.kind, &at.op);
	int ret = efab_atomic_query(c->fab.domain, at.kind, at.dt, at.op, &at.max_count);
	if (ret) {
		if (c->rt->rank == 0)
			efab_log_error("%s (%s) does not support --aop %s (%s %s) on %s: %s",
				       c->ri.fabric, c->ri.provider, efab_aop_name(c->o.aop),
				       at.kind == EFAB_ATOMIC_PLAIN ? "fi_atomic"
				       : at.kind == EFAB_ATOMIC_FETCH ? "fi_fetch_atomic"
								      : "fi_compare_atomic",
				       efab_fi_op_name(at.op), efab_dtype_name(c->o.dtype),
				       fi_strerror(-ret));
		return EFAB_SKIP;
	}
	if (at.maxc > at.max_count) {
		if (c->rt->rank == 0)
			efab_log_error("--sizes: %zu elements of %s is above the provider's max atomic "
				       "count %zu", at.maxc, efab_dtype_name(c->o.dtype), at.max_count);
		return EFAB_EUSAGE;
	}
	if (c->b->mask & EFAB_B_ATOMIC_BW && c->o.window > c->fab.info->tx_attr->size) {
		if (c->rt->rank == 0)
			efab_log_error("--window %llu is above the provider's tx queue size %zu",
				       (unsigned long long)c->o.window, c->fab.info->tx_attr->size);
		return EFAB_EUSAGE;
	}
	efab_note(c, "atomic %s = %s(%s) on %s; sizes are bytes: elements x %zu; provider max count "
		     "%zu", efab_aop_name(c->o.aop),
		  at.kind == EFAB_ATOMIC_PLAIN ? "fi_atomic"
		  : at.kind == EFAB_ATOMIC_FETCH ? "fi_fetch_atomic" : "fi_compare_atomic",
		  efab_fi_op_name(at.op), efab_dtype_name(c->o.dtype), at.dsz, at.max_count);
	if (c->o.contend)
		efab_note(c, "--contend: %d initiators on the same words of rank 0", c->rt->size - 1);
	if (c->o.aop == EFAB_AOP_CSWAP && (c->b->mask & EFAB_B_ATOMIC_BW))
		efab_note(c, "cswap rate: each op compares with the current value and swaps in the "
			     "same value, so every op succeeds and the word is unchanged");
	if (c->o.check)
		efab_note(c, "-c: final target values and fetched values are checked");
	efab_clock_init();
	if (c->b->mask & EFAB_B_ATOMIC_LAT)
		efab_note(c, "first_us = the first atomic of each size alone (for the first size the "
			     "first operation to this peer), never among the samples; lat_us_batch = "
			     "one timed batch of -n further atomics / n (no clock read per atomic; "
			     "includes setting the operands)");
	else
		efab_note(c, "first_us = the first window of each size alone, never among the "
			     "windows measured; slowest initiating rank");
	return EFAB_OK;
}

/* Fill operand (and compare) slot k for op j of this initiator. */
static int set_operands(efab_ctx_t *c, uint64_t k, size_t count, uint64_t j, uint64_t cmp)
{
	uint8_t *b = c->bounce;
	for (size_t e = 0; e < count; e++)
		efab_atomic_word_store(c->o.dtype, b, e, efab_atomic_operand(c->o.aop, c->o.dtype, j));
	if (c->o.aop == EFAB_AOP_CSWAP)
		for (size_t e = 0; e < count; e++)
			efab_atomic_word_store(c->o.dtype, b, e, cmp + ((c->b->mask & EFAB_B_ATOMIC_LAT) != 0));
	if (efab_mem_write(&c->mem, opnd_off(c, k), b, count * at.dsz))
		return EFAB_ERR;
	if (c->o.aop != EFAB_AOP_CSWAP)
		return EFAB_OK;
	for (size_t e = 0; e < count; e++)
		efab_atomic_word_store(c->o.dtype, b, e, cmp);
	return efab_mem_write(&c->mem, cmp_off(c, k), b, count * at.dsz);
}

static int post_one(efab_ctx_t *c, uint64_t k, size_t count, efab_waitfor_t *w)
{
	int peer = c->peer;
	return efab_post_atomic(&c->fab, peer, at.kind, efab_local(c, opnd_off(c, k)), count,
				c->ldesc, efab_local(c, cmp_off(c, k)), c->ldesc,
				efab_local(c, res_off(c, k)), c->ldesc, efab_raddr(c, peer, 0),
				c->rkeys[peer].key, at.dt, at.op, w);
}

static int reset_target(efab_ctx_t *c, size_t count)
{
	for (size_t e = 0; e < count; e++)
		efab_atomic_word_store(c->o.dtype, c->bounce, e,
			      efab_atomic_init_value(c->o.aop, c->o.dtype));
	return efab_mem_write(&c->mem, 0, c->bounce, count * at.dsz);
}

static int fetched(efab_ctx_t *c, uint64_t k, size_t count, uint64_t *out0)
{
	if (efab_mem_read(&c->mem, res_off(c, k), c->bounce, count * at.dsz))
		return EFAB_ERR;
	*out0 = efab_atomic_word_load(c->o.dtype, c->bounce, 0);
	return EFAB_OK;
}

/* All elements of a fetched result must agree; returns mismatches. */
static uint64_t fetched_uniform(efab_ctx_t *c, size_t count, uint64_t v0)
{
	uint64_t bad = 0;
	for (size_t e = 1; e < count; e++)
		bad += efab_atomic_word_load(c->o.dtype, c->bounce, e) != v0;
	return bad ? 1 : 0;
}

/* The target's final check: every element equals the expected value. */
static uint64_t check_final(efab_ctx_t *c, size_t count, uint64_t k, uint64_t cnt,
			    uint64_t window)
{
	double mine = (double)at.successes, total = 0;
	if (c->rt->allreduce(c->rt, &mine, &total, 1, EFAB_RT_SUM))
		return 1;
	int target = c->o.contend ? c->rt->rank == 0 : !c->initiator;
	if (!target)
		return 0;
	if (efab_mem_read(&c->mem, 0, c->bounce, count * at.dsz))
		return 1;
	/* An atomic without a fetch may complete at the initiator before the
	 * target applied it: the target keeps driving progress until its words
	 * hold the final value or the timeout passes (then they are wrong). */
	if (at.kind == EFAB_ATOMIC_PLAIN) {
		uint64_t deadline = efab_now_ns() + (uint64_t)(c->o.timeout_s * 1e9);
		for (;;) {
			size_t e = 0;
			while (e < count && efab_atomic_final_ok(c->o.aop, c->o.dtype, k, cnt, window,
								 0, 0,
								 efab_atomic_word_load(c->o.dtype, c->bounce, e)))
				e++;
			if (e == count || efab_now_ns() > deadline)
				break;
			if (efab_progress(&c->fab) < 0 ||
			    efab_mem_read(&c->mem, 0, c->bounce, count * at.dsz))
				return 1;
		}
	}
	uint64_t bad = 0;
	if (c->faults.corrupt_every) /* EFAB_FAULT_CORRUPT: prove the final check catches damage */
		efab_atomic_word_store(c->o.dtype, c->bounce, 0, efab_atomic_word_load(c->o.dtype, c->bounce, 0) + 1);
	for (size_t e = 0; e < count; e++) {
		uint64_t v = efab_atomic_word_load(c->o.dtype, c->bounce, e);
		int ok = efab_atomic_final_ok(c->o.aop, c->o.dtype, k, cnt, window,
					      (c->b->mask & EFAB_B_ATOMIC_LAT) != 0, (uint64_t)total, v);
		if (!ok && bad == 0 && efab_log_verbose())
			efab_log_error("atomic %s: element %zu has final value %llu", efab_aop_name(c->o.aop),
				       e, (unsigned long long)v);
		bad += !ok;
	}
	return bad;
}

static int begin_size(efab_ctx_t *c, size_t count, efab_waitfor_t *w)
{
	at.successes = 0;
	if (reset_target(c, count))
		return EFAB_ERR;
	w->what = "the other ranks before the first atomic";
	return efab_barrier_progress(&c->fab, w);
}

int efab_atomic_lat_run(efab_ctx_t *c, uint64_t size, efab_row_t *row)
{
	size_t count = size / at.dsz;
	uint64_t n = efab_iters_for(c, size), warm = efab_lat_warmup(c, size), nb = n;
	efab_waitfor_t w = {"", efab_aop_name(c->o.aop), size, c->peer, 0};
	uint64_t k = c->o.contend ? (uint64_t)c->rt->size - 1 : 1;
	size_t ns = 0;
	uint64_t tb0 = 0, tb1 = 0;
	double first_us = 0, batch_us = 0;
	uint64_t expect = efab_atomic_init_value(c->o.aop, c->o.dtype), last = 0;

	if (begin_size(c, count, &w))
		return EFAB_ERR;
	if (c->initiator) {
		w.what = "atomic completion";
		/* [0, warm) warmup, j = 0 the first; [warm, warm+n) sampled; then one
		 * batch of nb timed as a whole (its operand setup and checks included) */
		for (uint64_t j = 0; j < warm + n + nb; j++) {
			w.iter = j;
			if (j == warm + n)
				tb0 = efab_ticks();
			if (set_operands(c, 0, count, j, expect))
				return EFAB_ERR;
			uint64_t t0 = efab_ticks();
			if (post_one(c, 0, count, &w) || efab_wait_tx(&c->fab, c->fab.tx_posted, &w))
				return EFAB_ERR;
			if (j < warm + n) {
				uint64_t t1 = efab_ticks();
				if (j >= warm)
					c->samples[ns++] = efab_ticks_us(t1 - t0);
				else if (j == 0)
					first_us = efab_ticks_us(t1 - t0);
			}
			if (j + 1 == warm + n + nb)
				tb1 = efab_ticks();
			if (at.kind == EFAB_ATOMIC_PLAIN)
				continue;
			uint64_t v;
			if (fetched(c, 0, count, &v))
				return EFAB_ERR;
			if (c->o.aop == EFAB_AOP_CSWAP) {
				/* a chain: success moves expect on, failure learns the value */
				if (v == expect) {
					at.successes++;
					expect++;
				} else {
					if (c->o.check && (k == 1 || v < expect))
						row->errors++;
					expect = v;
				}
			} else if (c->o.check) {
				if (k == 1 && v != (c->o.aop == EFAB_AOP_FADD ? j : j & efab_dtype_mask(c->o.dtype)))
					row->errors++;
				else if (k > 1 && c->o.aop == EFAB_AOP_FADD && j > 0 && v <= last)
					row->errors++;
			}
			if (c->o.check)
				row->errors += fetched_uniform(c, count, v);
			last = v;
		}
	}
	w.what = "the other ranks after the last atomic";
	if (efab_barrier_progress(&c->fab, &w))
		return EFAB_ERR;
	if (c->o.check)
		row->errors += check_final(c, count, k, warm + n + nb, 1);
	if (nb && tb1 > tb0)
		batch_us = efab_ticks_us(tb1 - tb0) / (double)nb;

	/* Rank 0 prints: with --contend it is the target, so the first
	 * initiator's statistics travel to it. */
	typedef struct {
		efab_stats_t st;
		double first_us, batch_us;
	} lat_share_t;
	lat_share_t mine, *all = calloc((size_t)c->rt->size, sizeof(*all));
	memset(&mine, 0, sizeof(mine));
	efab_stats_compute(c->samples, ns, &mine.st);
	mine.first_us = first_us;
	mine.batch_us = batch_us;
	if (!all || c->rt->allgather(c->rt, &mine, all, sizeof(mine))) {
		free(all);
		efab_log_error("gathering latency results failed");
		return EFAB_ERR;
	}
	int first = c->o.contend ? 1 : 0;
	row->lat = all[first].st;
	efab_lat_extra(row, 0, all[first].first_us, all[first].batch_us);
	row->has_lat = 1;
	if (c->o.contend) { /* aggregate rate of the contending initiators */
		double rate = 0;
		for (int r = 1; r < c->rt->size; r++)
			rate += all[r].st.mean > 0 ? 1.0 / all[r].st.mean : 0;
		row->has_bw = 1;
		row->msg_rate_Mops = rate;
		row->bw_MBps = rate * (double)size;
	}
	free(all);
	row->iters = n;
	return EFAB_OK;
}

int efab_atomic_bw_run(efab_ctx_t *c, uint64_t size, efab_row_t *row)
{
	size_t count = size / at.dsz;
	uint64_t n = efab_iters_for(c, size) / 5, warm = 2, W = c->o.window;
	efab_waitfor_t w = {"", efab_aop_name(c->o.aop), size, c->peer, 0};
	uint64_t k = c->o.contend ? (uint64_t)c->rt->size - 1 : 1, total_ticks = 0;
	double first_us = 0;
	uint64_t init = efab_atomic_init_value(c->o.aop, c->o.dtype);
	size_t ns = 0;

	if (c->o.iters)
		n = c->o.iters;
	if (n < 1)
		n = 1;
	if (begin_size(c, count, &w))
		return EFAB_ERR;
	if (c->initiator) {
		w.what = "atomic window completions";
		for (uint64_t i = 0; i < warm + n; i++) {
			w.iter = i;
			for (uint64_t q = 0; q < W; q++)
				if (set_operands(c, q, count, i * W + q, init))
					return EFAB_ERR;
			uint64_t t0 = efab_ticks();
			for (uint64_t q = 0; q < W; q++)
				if (post_one(c, q, count, &w))
					return EFAB_ERR;
			if (efab_wait_tx(&c->fab, c->fab.tx_posted, &w))
				return EFAB_ERR;
			uint64_t dt = efab_ticks() - t0;
			if (i == 0) /* warm >= 1: window 0 is the first, never measured */
				first_us = efab_ticks_us(dt);
			else if (i >= warm) {
				total_ticks += dt;
				if (!c->o.no_window_stats)
					c->samples[ns++] = efab_ticks_us(dt);
			}
			if (!c->o.check || at.kind == EFAB_ATOMIC_PLAIN)
				continue;
			for (uint64_t q = 0; q < W; q++) {
				uint64_t v;
				if (fetched(c, q, count, &v))
					return EFAB_ERR;
				if (c->o.aop == EFAB_AOP_CSWAP)
					row->errors += v != init;
				else if (c->o.aop == EFAB_AOP_FADD)
					row->errors += v >= k * (warm + n) * W;
				row->errors += fetched_uniform(c, count, v);
			}
		}
	}
	w.what = "the other ranks after the last window";
	if (efab_barrier_progress(&c->fab, &w))
		return EFAB_ERR;
	if (c->o.check)
		row->errors += check_final(c, count, k, (warm + n) * W, W);
	return efab_bw_report(c, row, c->initiator, efab_ticks_us(total_ticks), ns, n, (double)size,
			      "no", first_us, "");
}
