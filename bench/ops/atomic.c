/* The atomic family: latency (ping-pong) and message rate (stream).
 *
 * Each size is an element count (-m in bytes, a multiple of the datatype
 * size; default one element). Pairs as in the bandwidth benchmarks, or with
 * --contend every rank but 0 targets the same words on rank 0.
 *
 * Latency = full round trip of one atomic to its completion at the
 * initiator. Message rate (_bw) = atomics completed / elapsed time of the
 * timed loop (its last completion ends it); the sum of window times in the
 * *_windows columns.
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
#include "efab_ops.h"

typedef struct at_state {
	int kind;
	enum fi_op op;
	enum fi_datatype dt;
	size_t dsz;
	size_t maxc;      /* elements at the largest size */
	size_t max_count; /* the provider's */
	size_t tgt_bytes;
	int rate;         /* the stream (message rate), else the ping-pong */
	uint64_t k;       /* initiators per target word */
	/* per size */
	size_t count;
	uint64_t successes; /* cswap, this rank */
	uint64_t expect, last; /* ping-pong: the cswap chain, the last fetched value */
} at_state_t;

static at_state_t *st_of(const efab_ctx_t *c)
{
	return (at_state_t *)c->priv;
}

static size_t per_op(const at_state_t *at)
{
	return (at->maxc * 8 + 63) / 64 * 64;
}

static size_t opnd_off(const efab_ctx_t *c, uint64_t k)
{
	return st_of(c)->tgt_bytes + (size_t)k * per_op(st_of(c));
}

static size_t cmp_off(const efab_ctx_t *c, uint64_t k)
{
	return st_of(c)->tgt_bytes + (size_t)(c->o.window + k) * per_op(st_of(c));
}

static size_t res_off(const efab_ctx_t *c, uint64_t k)
{
	return st_of(c)->tgt_bytes + (size_t)(2 * c->o.window + k) * per_op(st_of(c));
}

static const char *call_name(int kind)
{
	return kind == EFAB_ATOMIC_PLAIN ? "fi_atomic"
	       : kind == EFAB_ATOMIC_FETCH ? "fi_fetch_atomic" : "fi_compare_atomic";
}

/* Sizes are element counts: default one element, every size a whole number
 * of them; --contend lifts the ranks rule (any count >= 2). */
static int atomic_check_opts(efab_ctx_t *c)
{
	size_t dsz = efab_dtype_size(c->o.dtype);
	at_state_t *at = calloc(1, sizeof(*at));
	if (!at) {
		efab_log_error("out of memory");
		return EFAB_ERR;
	}
	c->priv = at;
	at->rate = c->row->pattern == EFAB_PATTERN_STREAM;
	at->k = c->o.contend ? (uint64_t)c->rt->size - 1 : 1;
	if (!c->o.sizes_given)
		c->o.sizes = (efab_sizes_t){dsz, dsz, 2};
	for (size_t i = 0; i < efab_sizes_count(&c->o.sizes); i++)
		if (efab_sizes_at(&c->o.sizes, i) % dsz) {
			efab_log_error("--sizes: %llu bytes is not a whole number of %s elements "
				       "(%zu bytes each)",
				       (unsigned long long)efab_sizes_at(&c->o.sizes, i),
				       efab_dtype_name(c->o.dtype), dsz);
			return EFAB_EUSAGE;
		}
	return EFAB_OK;
}

static size_t atomic_region(const efab_ctx_t *c, uint64_t max_size)
{
	at_state_t *at = st_of(c);
	size_t dsz = efab_dtype_size(c->o.dtype);
	at->maxc = max_size / dsz ? max_size / dsz : 1;
	at->tgt_bytes = per_op(at);
	return at->tgt_bytes + 3 * (size_t)c->o.window * per_op(at);
}

static int atomic_setup(efab_ctx_t *c)
{
	at_state_t *at = st_of(c);
	at->dsz = efab_dtype_size(c->o.dtype);
	at->dt = efab_fi_dtype(c->o.dtype);
	efab_aop_map(c->o.aop, &at->kind, &at->op);
	int ret = efab_atomic_query(c->fab.domain, at->kind, at->dt, at->op, &at->max_count);
	if (ret) {
		if (c->rt->rank == 0)
			efab_log_error("%s (%s) does not support --aop %s (%s %s) on %s: %s",
				       c->ri.fabric, c->ri.provider, efab_aop_name(c->o.aop),
				       call_name(at->kind), efab_fi_op_name(at->op),
				       efab_dtype_name(c->o.dtype), fi_strerror(-ret));
		return EFAB_SKIP;
	}
	if (at->maxc > at->max_count) {
		if (c->rt->rank == 0)
			efab_log_error("--sizes: %zu elements of %s is above the provider's max atomic "
				       "count %zu", at->maxc, efab_dtype_name(c->o.dtype), at->max_count);
		return EFAB_EUSAGE;
	}
	if (at->rate && c->o.window > c->fab.info->tx_attr->size) {
		if (c->rt->rank == 0)
			efab_log_error("--window %llu is above the provider's tx queue size %zu",
				       (unsigned long long)c->o.window, c->fab.info->tx_attr->size);
		return EFAB_EUSAGE;
	}
	efab_note(c, "atomic %s = %s(%s) on %s; sizes are bytes: elements x %zu; provider max count "
		     "%zu", efab_aop_name(c->o.aop), call_name(at->kind), efab_fi_op_name(at->op),
		  efab_dtype_name(c->o.dtype), at->dsz, at->max_count);
	if (c->o.contend)
		efab_note(c, "--contend: %d initiators on the same words of rank 0", c->rt->size - 1);
	if (c->o.aop == EFAB_AOP_CSWAP && at->rate)
		efab_note(c, "cswap rate: each op compares with the current value and swaps in the "
			     "same value, so every op succeeds and the word is unchanged");
	if (c->o.check)
		efab_note(c, "-c: final target values and fetched values are checked");
	return EFAB_OK;
}

/* Fill operand (and compare) slot k for op j of this initiator. */
static int set_operands(efab_ctx_t *c, uint64_t k, uint64_t j, uint64_t cmp)
{
	at_state_t *at = st_of(c);
	uint8_t *b = c->bounce;
	size_t count = at->count;
	for (size_t e = 0; e < count; e++)
		efab_atomic_word_store(c->o.dtype, b, e, efab_atomic_operand(c->o.aop, c->o.dtype, j));
	if (c->o.aop == EFAB_AOP_CSWAP) /* the chain swaps in the next value */
		for (size_t e = 0; e < count; e++)
			efab_atomic_word_store(c->o.dtype, b, e, cmp + !at->rate);
	if (efab_mem_write(&c->mem, opnd_off(c, k), b, count * at->dsz))
		return EFAB_ERR;
	if (c->o.aop != EFAB_AOP_CSWAP)
		return EFAB_OK;
	for (size_t e = 0; e < count; e++)
		efab_atomic_word_store(c->o.dtype, b, e, cmp);
	return efab_mem_write(&c->mem, cmp_off(c, k), b, count * at->dsz);
}

static int post_one(efab_ctx_t *c, uint64_t k, efab_waitfor_t *w)
{
	at_state_t *at = st_of(c);
	int peer = c->peer;
	return efab_post_atomic(&c->fab, peer, at->kind, efab_local(c, opnd_off(c, k)), at->count,
				c->ldesc, efab_local(c, cmp_off(c, k)), c->ldesc,
				efab_local(c, res_off(c, k)), c->ldesc, efab_raddr(c, peer, 0),
				c->rkeys[peer].key, at->dt, at->op, w);
}

static int fetched(efab_ctx_t *c, uint64_t k, uint64_t *out0)
{
	at_state_t *at = st_of(c);
	if (efab_mem_read(&c->mem, res_off(c, k), c->bounce, at->count * at->dsz))
		return EFAB_ERR;
	*out0 = efab_atomic_word_load(c->o.dtype, c->bounce, 0);
	return EFAB_OK;
}

/* All elements of a fetched result must agree; returns mismatches. */
static uint64_t fetched_uniform(efab_ctx_t *c, uint64_t v0)
{
	uint64_t bad = 0;
	for (size_t e = 1; e < st_of(c)->count; e++)
		bad += efab_atomic_word_load(c->o.dtype, c->bounce, e) != v0;
	return bad ? 1 : 0;
}

/* An atomic without a fetch may complete at the initiator before the target
 * applied it: the target keeps driving progress until its words hold the
 * final value or the timeout passes (then they are wrong). */
static int settle(efab_ctx_t *c, uint64_t cnt, uint64_t window)
{
	at_state_t *at = st_of(c);
	efab_deadline_t deadline = efab_deadline_in(c->o.timeout_s);
	for (;;) {
		size_t e = 0;
		while (e < at->count &&
		       efab_atomic_final_ok(c->o.aop, c->o.dtype, at->k, cnt, window, 0, 0,
					    efab_atomic_word_load(c->o.dtype, c->bounce, e)))
			e++;
		if (e == at->count || efab_deadline_passed(deadline))
			return EFAB_OK;
		if (efab_progress(&c->fab) < 0 ||
		    efab_mem_read(&c->mem, 0, c->bounce, at->count * at->dsz))
			return EFAB_ERR;
	}
}

/* The target's final check (-c, collective): every element equals the
 * expected value after cnt ops of each of k initiators. */
static uint64_t check_final(efab_ctx_t *c, uint64_t cnt, uint64_t window)
{
	at_state_t *at = st_of(c);
	double mine = (double)at->successes, total = 0;
	if (c->rt->allreduce(c->rt, &mine, &total, 1, EFAB_RT_SUM))
		return 1;
	int target = c->o.contend ? c->rt->rank == 0 : !c->initiator;
	if (!target)
		return 0;
	if (efab_mem_read(&c->mem, 0, c->bounce, at->count * at->dsz))
		return 1;
	if (at->kind == EFAB_ATOMIC_PLAIN && settle(c, cnt, window))
		return 1;
	uint64_t bad = 0;
	if (c->faults.corrupt_every) /* EFAB_FAULT_CORRUPT: prove the final check catches damage */
		efab_atomic_word_store(c->o.dtype, c->bounce, 0,
				       efab_atomic_word_load(c->o.dtype, c->bounce, 0) + 1);
	for (size_t e = 0; e < at->count; e++) {
		uint64_t v = efab_atomic_word_load(c->o.dtype, c->bounce, e);
		int ok = efab_atomic_final_ok(c->o.aop, c->o.dtype, at->k, cnt, window, !at->rate,
					      (uint64_t)total, v);
		if (!ok && bad == 0 && efab_log_verbose())
			efab_log_error("atomic %s: element %zu has final value %llu",
				       efab_aop_name(c->o.aop), e, (unsigned long long)v);
		bad += !ok;
	}
	return bad;
}

/* Every rank: the target words start from the op's initial value. */
static int atomic_begin(efab_ctx_t *c, uint64_t size)
{
	at_state_t *at = st_of(c);
	efab_waitfor_t w = {"the other ranks before the first atomic", efab_aop_name(c->o.aop),
			    size, c->peer, 0};
	at->count = size / at->dsz;
	at->successes = 0;
	at->expect = efab_atomic_init_value(c->o.aop, c->o.dtype);
	at->last = 0;
	for (size_t e = 0; e < at->count; e++)
		efab_atomic_word_store(c->o.dtype, c->bounce, e,
				       efab_atomic_init_value(c->o.aop, c->o.dtype));
	if (efab_mem_write(&c->mem, 0, c->bounce, at->count * at->dsz))
		return EFAB_ERR;
	return efab_barrier_progress(&c->fab, &w);
}

static uint64_t atomic_end(efab_ctx_t *c, uint64_t size, uint64_t n)
{
	(void)size;
	if (!c->o.check)
		return 0;
	return st_of(c)->rate ? check_final(c, n * c->o.window, c->o.window) : check_final(c, n, 1);
}

/* ---- ping-pong: one atomic at a time ---- */

static int lat_prepare(efab_ctx_t *c, uint64_t size, uint64_t j)
{
	(void)size;
	return set_operands(c, 0, j, st_of(c)->expect);
}

static int lat_ping(efab_ctx_t *c, uint64_t size, uint64_t j)
{
	efab_waitfor_t w = {"atomic completion", efab_aop_name(c->o.aop), size, c->peer, j};
	return post_one(c, 0, &w) || efab_wait_tx(&c->fab, c->fab.tx_posted, &w) ? EFAB_ERR
										  : EFAB_OK;
}

/* Fetched values are checked as they arrive where their order is defined
 * (one initiator: fadd and swap return the op index, a cswap chain succeeds
 * every time; with contention fetch-add results must increase). The cswap
 * chain needs the fetched value with or without -c. */
static uint64_t lat_after(efab_ctx_t *c, uint64_t size, uint64_t j)
{
	at_state_t *at = st_of(c);
	uint64_t v, errors = 0;
	(void)size;
	if (at->kind == EFAB_ATOMIC_PLAIN)
		return 0;
	if (fetched(c, 0, &v))
		efab_fail(c);
	if (c->o.aop == EFAB_AOP_CSWAP) {
		/* a chain: success moves expect on, failure learns the value */
		if (v == at->expect) {
			at->successes++;
			at->expect++;
		} else {
			errors += c->o.check && (at->k == 1 || v < at->expect);
			at->expect = v;
		}
	} else if (c->o.check) {
		if (at->k == 1 && v != (c->o.aop == EFAB_AOP_FADD ? j : j & efab_dtype_mask(c->o.dtype)))
			errors++;
		else if (at->k > 1 && c->o.aop == EFAB_AOP_FADD && j > 0 && v <= at->last)
			errors++;
	}
	if (c->o.check)
		errors += fetched_uniform(c, v);
	at->last = v;
	return errors;
}

static const efab_pingpong_ops_t atomic_pingpong = {
	.begin = atomic_begin, .end = atomic_end,
	.prepare = lat_prepare, .ping = lat_ping, .after = lat_after,
	.per_sample = 1, /* the full round trip */
	.closing = "the other ranks after the last atomic",
};

/* ---- stream: windows of atomics ---- */

static int rate_prepare(efab_ctx_t *c, uint64_t size, uint64_t i)
{
	(void)size;
	for (uint64_t q = 0; q < c->o.window; q++)
		if (set_operands(c, q, i * c->o.window + q,
				 efab_atomic_init_value(c->o.aop, c->o.dtype)))
			return EFAB_ERR;
	return EFAB_OK;
}

static int rate_post(efab_ctx_t *c, uint64_t size, uint64_t i)
{
	efab_waitfor_t w = {"atomic window completions", efab_aop_name(c->o.aop), size, c->peer, i};
	for (uint64_t q = 0; q < c->o.window; q++)
		if (post_one(c, q, &w))
			return EFAB_ERR;
	return EFAB_OK;
}

/* -c: every cswap returns the initial value (it swaps in the same one);
 * fetch-add results stay below the total of adds. */
static uint64_t rate_check(efab_ctx_t *c, uint64_t size, uint64_t i, uint64_t rx0)
{
	at_state_t *at = st_of(c);
	uint64_t errors = 0, init = efab_atomic_init_value(c->o.aop, c->o.dtype);
	(void)size;
	(void)i;
	(void)rx0;
	if (at->kind == EFAB_ATOMIC_PLAIN)
		return 0;
	for (uint64_t q = 0; q < c->o.window; q++) {
		uint64_t v;
		if (fetched(c, q, &v))
			return UINT64_MAX;
		if (c->o.aop == EFAB_AOP_CSWAP)
			errors += v != init;
		else if (c->o.aop == EFAB_AOP_FADD && c->planned)
			errors += v >= at->k * c->planned * c->o.window;
		errors += fetched_uniform(c, v);
	}
	return errors;
}

static const efab_stream_ops_t atomic_stream = {
	.begin = atomic_begin, .end = atomic_end,
	.prepare = rate_prepare, .post = rate_post, .check = rate_check,
};

/* ---- the family ---- */

static void atomic_op_label(const efab_ctx_t *c, char *buf, size_t len)
{
	snprintf(buf, len, "%s_%s", efab_aop_name(c->o.aop), efab_dtype_name(c->o.dtype));
}

static const efab_pingpong_ops_t *atomic_pingpong_of(const efab_ctx_t *c)
{
	(void)c;
	return &atomic_pingpong;
}

static const efab_stream_ops_t *atomic_stream_of(const efab_ctx_t *c)
{
	(void)c;
	return &atomic_stream;
}

static void atomic_teardown(efab_ctx_t *c)
{
	free(c->priv);
	c->priv = NULL;
}

const efab_family_t efab_family_atomic = {
	.check_opts = atomic_check_opts, .region = atomic_region, .setup = atomic_setup,
	.op_label = atomic_op_label, .pingpong = atomic_pingpong_of, .stream = atomic_stream_of,
	.teardown = atomic_teardown,
};
