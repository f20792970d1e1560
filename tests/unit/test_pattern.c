/* The timing patterns (bench/engine/pattern.c, pattern_shot.c) on a context
 * built here, without the lifecycle (harness.c): one process, the
 * single-rank runtime, a real shm endpoint (the patterns' barriers and
 * waits drive its CQ), and operations that are counters. What a pattern
 * must do with an operation's callbacks: how often and in which order it
 * calls them, that warmup and the batch stay out of the samples, that a
 * window's completions are waited for before the next window, that -c
 * runs the checks, how failures end a size. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "context.h"
#include "evidence.h"
#include "pattern.h"

#define RMA_CAPS (FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)
#define REGION 65536

/* What the fake operation saw. */
typedef struct calls {
	int begin, prepare, ping, respond, after, end, post, check, confirm, finish, answer;
	uint64_t last_prepare, end_arg, confirm_arg, finish_arg;
	int order_ok;            /* prepare i was followed by ping/post i */
	int window_not_drained;  /* a post found the previous window's ops still outstanding */
	uint64_t fail_at;        /* ping/post of this iteration fails (UINT64_MAX: none) */
	uint64_t bad_after[2];   /* after() reports a mismatch at these iterations */
	uint64_t end_errors;     /* end() returns this */
	uint64_t check_ret_at, check_ret; /* check() of window check_ret_at returns check_ret */
	unsigned warm_sleep_us, batch_sleep_us; /* ping's duration in warmup / in the batch */
	uint64_t warm, n;        /* the iteration plan the test expects (for the sleeps) */
	int real_writes;         /* post: -W real fi_writes to ourselves */
} calls_t;

typedef struct fixture {
	efab_ctx_t c;
	efab_bench_row_t row;
	efab_rkey_t rk;
	calls_t k;
} fixture_t;

static calls_t *K(efab_ctx_t *c)
{
	return c->priv;
}

/* ---- the fake operation: ping-pong ---- */

static int pp_begin(efab_ctx_t *c, uint64_t size)
{
	(void)size;
	K(c)->begin++;
	return EFAB_OK;
}
static int pp_prepare(efab_ctx_t *c, uint64_t size, uint64_t i)
{
	(void)size;
	calls_t *k = K(c);
	if (k->prepare != (int)i)
		k->order_ok = 0;
	k->prepare++;
	k->last_prepare = i;
	return EFAB_OK;
}
static int pp_ping(efab_ctx_t *c, uint64_t size, uint64_t i)
{
	(void)size;
	calls_t *k = K(c);
	if (k->last_prepare != i)
		k->order_ok = 0;
	k->ping++;
	if (i == k->fail_at)
		return EFAB_ERR;
	if (i < k->warm && k->warm_sleep_us)
		usleep(k->warm_sleep_us);
	else if (i >= k->warm + k->n && k->batch_sleep_us)
		usleep(k->batch_sleep_us);
	return EFAB_OK;
}
static int pp_respond(efab_ctx_t *c, uint64_t size, uint64_t i)
{
	(void)size;
	(void)i;
	K(c)->respond++;
	return EFAB_OK;
}
static uint64_t pp_after(efab_ctx_t *c, uint64_t size, uint64_t i)
{
	(void)size;
	calls_t *k = K(c);
	k->after++;
	return i == k->bad_after[0] || i == k->bad_after[1];
}
static uint64_t pp_end(efab_ctx_t *c, uint64_t size, uint64_t iterations)
{
	(void)size;
	K(c)->end++;
	K(c)->end_arg = iterations;
	return K(c)->end_errors;
}

static const efab_pingpong_ops_t fake_pp = {
	.begin = pp_begin, .prepare = pp_prepare, .ping = pp_ping, .respond = NULL,
	.after = pp_after, .end = pp_end, .per_sample = 2, .legs = 2, .closing = "test",
};

/* ---- the fake operation: stream ---- */

static int st_post(efab_ctx_t *c, uint64_t size, uint64_t i)
{
	calls_t *k = K(c);
	if (k->last_prepare != i)
		k->order_ok = 0;
	k->post++;
	if (c->fab.tx_done != c->fab.tx_posted)
		k->window_not_drained = 1;
	if (i == k->fail_at)
		return EFAB_ERR;
	if (k->real_writes) {
		efab_waitfor_t w = {"test window", "write", size, 0, i};
		for (uint64_t j = 0; j < c->o.window; j++)
			if (efab_post_write(&c->fab, 0, efab_local(c, 0), size, c->ldesc,
					    efab_raddr(c, 0, REGION / 2), c->rkeys[0].key, 0, 0, &w))
				return EFAB_ERR;
	}
	return EFAB_OK;
}
static uint64_t st_check(efab_ctx_t *c, uint64_t size, uint64_t i, uint64_t rx0)
{
	(void)size;
	(void)rx0;
	calls_t *k = K(c);
	k->check++;
	return i == k->check_ret_at ? k->check_ret : 0;
}
static uint64_t st_end(efab_ctx_t *c, uint64_t size, uint64_t windows)
{
	return pp_end(c, size, windows);
}
static int st_confirm(efab_ctx_t *c, uint64_t size, uint64_t windows)
{
	(void)size;
	K(c)->confirm++;
	K(c)->confirm_arg = windows;
	return EFAB_OK;
}
static int st_answer(efab_ctx_t *c, uint64_t size)
{
	(void)size;
	K(c)->answer++;
	return EFAB_OK;
}
static int st_finish(efab_ctx_t *c, uint64_t size, uint64_t windows)
{
	(void)size;
	K(c)->finish++;
	K(c)->finish_arg = windows;
	return EFAB_OK;
}

static const efab_stream_ops_t fake_stream = {
	.begin = pp_begin, .prepare = pp_prepare, .post = st_post, .check = st_check,
	.end = st_end, .confirm = st_confirm, .answer = st_answer, .finish = st_finish,
};

/* ---- the constructed context ---- */

static const char *const lat_cols[] = {"inject", "first_us", "lat_us_batch", "lat_us_p25",
				       "lat_us_p75"};
static const char *const bw_cols[] = {"pair", "window_us_p50", "window_us_p99", "inject",
				      "first_us", "footprint", "bw_MBps_windows",
				      "msg_rate_Mops_windows", "end_confirm"};

/* A one-rank context on a shm endpoint: this rank initiates towards itself
 * (peer 0); the row's columns plus the evidence's, as the lifecycle builds
 * them; the fake operation's counters in c->priv. */
static int setup(void **state, int pattern)
{
	fixture_t *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	efab_ctx_t *c = &f->c;
	efab_fabric_req_t req = {.provider = "shm", .caps = RMA_CAPS};
	struct fi_info *info = NULL;
	assert_int_equal(efab_fabric_select(&req, &info), EFAB_OK);
	c->rt = efab_rt_single();
	assert_int_equal(efab_fabric_open(info, c->rt, 10.0, &c->fab), EFAB_OK);
	assert_int_equal(efab_mem_alloc(EFAB_MEM_HOST, 0, REGION, &c->mem), EFAB_OK);
	assert_int_equal(efab_mr_register(&c->fab, c->mem.ptr, REGION, FI_HMEM_SYSTEM, 0,
					  RMA_CAPS & ~FI_RMA, &c->mr),
			 EFAB_OK);
	assert_int_equal(efab_mr_exchange(&c->fab, &c->mr, &f->rk), EFAB_OK);
	c->rkeys = &f->rk;
	c->ldesc = c->mr.desc;
	f->row.name = "test";
	f->row.pattern = pattern;
	f->row.counts = (efab_counts_t){.iters = 100, .pivot = 8192, .floor = 10, .warmup_cap = 10};
	c->row = &f->row;
	efab_opts_init(&c->o);
	c->op = EFAB_OP_WRITE;
	c->npairs = 1;
	c->initiator = 1;
	c->peer = 0;
	efab_run_info_begin(&c->ri, "test", 1);
	const char *const *cols = pattern == EFAB_PATTERN_PINGPONG ? lat_cols : bw_cols;
	size_t ncols = pattern == EFAB_PATTERN_PINGPONG ? EFAB_ARRAY_SIZE(lat_cols)
							: EFAB_ARRAY_SIZE(bw_cols);
	for (size_t i = 0; i < ncols; i++)
		c->ri.extra_cols[c->ri.n_extra++] = cols[i];
	efab_evidence_columns(&c->ri);
	f->k.order_ok = 1;
	f->k.fail_at = UINT64_MAX;
	f->k.bad_after[0] = f->k.bad_after[1] = UINT64_MAX;
	f->k.check_ret_at = UINT64_MAX;
	c->priv = &f->k;
	*state = f;
	return 0;
}

static int setup_pingpong(void **state)
{
	return setup(state, EFAB_PATTERN_PINGPONG);
}
static int setup_stream(void **state)
{
	return setup(state, EFAB_PATTERN_STREAM);
}

static int teardown(void **state)
{
	fixture_t *f = *state;
	efab_ctx_t *c = &f->c;
	efab_rkeys_release(&c->fab, &f->rk, 1);
	efab_mr_dereg(&c->mr);
	efab_mem_free(&c->mem);
	efab_fabric_close(&c->fab);
	free(c->samples);
	free(c->cost_post);
	free(c->cost_poll);
	free(c->more_rows);
	free(f);
	return 0;
}

/* The row's cell called name ("" if the run has no such column). */
static const char *cell(const efab_ctx_t *c, const efab_row_t *row, const char *name)
{
	for (size_t i = 0; i < c->ri.n_extra; i++)
		if (!strcmp(c->ri.extra_cols[i], name))
			return row->extra[i];
	return "";
}

/* ---- ping-pong ---- */

/* -n 10 -w 3: iterations 0..2 warmup, 3..12 sampled, 13..22 the batch;
 * every callback in order, the samples only the timed ones. */
static void pingpong_calls_and_samples(void **state)
{
	fixture_t *f = *state;
	efab_ctx_t *c = &f->c;
	calls_t *k = &f->k;
	efab_row_t row;
	memset(&row, 0, sizeof(row));
	c->o.iters = 10;
	c->o.warmup = 3;
	k->warm = 3;
	k->n = 10;
	k->warm_sleep_us = 100000; /* 100 ms: a warmup iteration among the samples shows */
	k->batch_sleep_us = 20000;
	k->bad_after[0] = 5;
	k->bad_after[1] = 17;
	k->end_errors = 3;
	assert_int_equal(efab_pingpong(c, &fake_pp, 8, &row), EFAB_OK);
	assert_int_equal(k->begin, 1);
	assert_int_equal(k->prepare, 23);
	assert_int_equal(k->ping, 23);
	assert_int_equal(k->after, 23);
	assert_int_equal(k->respond, 0);
	assert_true(k->order_ok);
	assert_int_equal(k->end, 1);
	assert_int_equal(k->end_arg, 23);
	/* after's and end's mismatches, nothing else */
	assert_int_equal(row.errors, 2 + 3);
	assert_int_equal(row.iters, 10);
	assert_true(row.has_lat);
	assert_int_equal(row.lat.n, 10);
	/* a sampled ping does nothing: far below the 100 ms warmup and 20 ms batch ones */
	assert_true(row.lat.max < 5000.0);
	/* iteration 0 alone, half a round trip (per_sample 2): >= 100 ms / 2 */
	assert_true(atof(cell(c, &row, "first_us")) >= 50000.0);
	/* the batch: 10 iterations of >= 20 ms, / n / per_sample */
	assert_true(atof(cell(c, &row, "lat_us_batch")) >= 10000.0);
	assert_string_equal(cell(c, &row, "inject"), "no");
	/* payload of the timed phase: (samples + batch) x size x legs */
	assert_string_equal(cell(c, &row, "payload_bytes"), "320");
	/* no NIC counters here: the path is '-' */
	assert_string_equal(cell(c, &row, "path"), "-");
}

/* A passive rank: with respond it answers every iteration, without it it
 * only joins the closing barrier; never prepare or ping. */
static void pingpong_passive_rank(void **state)
{
	fixture_t *f = *state;
	efab_ctx_t *c = &f->c;
	calls_t *k = &f->k;
	efab_row_t row;
	efab_pingpong_ops_t ops = fake_pp;
	c->initiator = 0;
	c->o.iters = 4;
	c->o.warmup = 2;
	memset(&row, 0, sizeof(row));
	assert_int_equal(efab_pingpong(c, &ops, 64, &row), EFAB_OK);
	assert_int_equal(k->prepare + k->ping + k->respond + k->after, 0);
	assert_int_equal(k->end, 1);
	ops.respond = pp_respond;
	memset(&row, 0, sizeof(row));
	k->prepare = k->after = 0;
	k->last_prepare = 0;
	assert_int_equal(efab_pingpong(c, &ops, 64, &row), EFAB_OK);
	assert_int_equal(k->respond, 2 + 4 + 4);
	assert_int_equal(k->prepare, 10);
	assert_int_equal(k->after, 10);
	assert_int_equal(k->ping, 0);
	assert_string_equal(cell(c, &row, "payload_bytes"), "0");
}

/* A failed ping ends the size: an error, or under c->tolerate (efab_scan)
 * a failed row and no collective end. */
static void pingpong_failure(void **state)
{
	fixture_t *f = *state;
	efab_ctx_t *c = &f->c;
	calls_t *k = &f->k;
	efab_row_t row;
	memset(&row, 0, sizeof(row));
	c->o.iters = 10;
	c->o.warmup = 3;
	k->fail_at = 4;
	assert_int_equal(efab_pingpong(c, &fake_pp, 8, &row), EFAB_ERR);
	assert_int_equal(k->ping, 5);
	assert_int_equal(k->end, 0);
	memset(k, 0, sizeof(*k));
	k->order_ok = 1;
	k->fail_at = 4;
	k->bad_after[0] = k->bad_after[1] = UINT64_MAX;
	c->tolerate = 1;
	memset(&row, 0, sizeof(row));
	assert_int_equal(efab_pingpong(c, &fake_pp, 8, &row), EFAB_OK);
	assert_true(c->failed);
	assert_true(row.failed);
	assert_int_equal(k->ping, 5);
	assert_int_equal(k->after, 4); /* not after the failed one */
	assert_int_equal(k->end, 0);
}

/* The counts: -n as given, else the row's scaled count; the warmup at
 * least 1 (iteration 0 is the first, never a sample). */
static void pingpong_counts(void **state)
{
	fixture_t *f = *state;
	efab_ctx_t *c = &f->c;
	calls_t *k = &f->k;
	efab_row_t row;
	c->o.iters = 7;
	assert_int_equal(efab_pingpong_iters(c, 1 << 20), 7);
	c->o.iters = 0;
	assert_int_equal(efab_pingpong_iters(c, 8), efab_scaled_count(100, 8192, 8, 10));
	c->o.iters = 5;
	c->o.warmup = 0;
	memset(&row, 0, sizeof(row));
	assert_int_equal(efab_pingpong(c, &fake_pp, 8, &row), EFAB_OK);
	assert_int_equal(k->ping, 1 + 5 + 5);
	assert_int_equal(row.lat.n, 5);
}

static void pattern_notes(void **state)
{
	fixture_t *f = *state;
	efab_ctx_t *c = &f->c;
	efab_pattern_notes(c);
	assert_int_equal(c->nnotes, 1);
	assert_non_null(strstr(c->notes[0], "first_us = the first iteration"));
}

/* ---- stream ---- */

/* -n 5 -w 3 -W 4 with real writes: 8 windows (window 0 alone, 1..2 warmup,
 * 3..7 measured), each waited for before the next, the end confirmed once;
 * no checks without -c. */
static void stream_windows(void **state)
{
	fixture_t *f = *state;
	efab_ctx_t *c = &f->c;
	calls_t *k = &f->k;
	efab_row_t row;
	memset(&row, 0, sizeof(row));
	c->o.iters = 5;
	c->o.warmup = 3;
	c->o.window = 4;
	k->real_writes = 1;
	assert_int_equal(efab_stream(c, &fake_stream, 64, &row), EFAB_OK);
	assert_int_equal(k->begin, 1);
	assert_int_equal(k->prepare, 8);
	assert_int_equal(k->post, 8);
	assert_true(k->order_ok);
	assert_int_equal(k->answer, 8);
	assert_int_equal(k->check, 0);
	assert_int_equal(k->confirm, 1);
	assert_int_equal(k->confirm_arg, 8);
	assert_int_equal(k->finish, 1);
	assert_int_equal(k->finish_arg, 8);
	assert_int_equal(k->end, 1);
	assert_int_equal(k->end_arg, 8);
	/* every window's completions were read before the next was posted */
	assert_false(k->window_not_drained);
	assert_int_equal(c->fab.tx_posted, 8 * 4);
	assert_int_equal(c->fab.tx_done, 8 * 4);
	assert_int_equal(row.iters, 5);
	assert_int_equal(row.window, 4);
	assert_true(row.has_bw);
	assert_true(row.bw_MBps > 0 && row.msg_rate_Mops > 0);
	/* both over the same loop time: bytes = operations x size */
	assert_true(fabs(row.bw_MBps - row.msg_rate_Mops * 64) <= 1e-9 * row.bw_MBps);
	assert_int_equal(row.errors, 0);
	assert_string_equal(cell(c, &row, "pair"), "all");
	assert_string_equal(cell(c, &row, "end_confirm"), "local-completion");
	assert_true(atof(cell(c, &row, "window_us_p50")) > 0);
	assert_true(atof(cell(c, &row, "first_us")) > 0);
	/* measured windows x window x size */
	assert_string_equal(cell(c, &row, "payload_bytes"), "1280");
	assert_true(c->stream_ops == &fake_stream);
}

/* -c: the check after every window (warmup too), its mismatches in the row;
 * UINT64_MAX from a check ends the size with an error. */
static void stream_check(void **state)
{
	fixture_t *f = *state;
	efab_ctx_t *c = &f->c;
	calls_t *k = &f->k;
	efab_row_t row;
	memset(&row, 0, sizeof(row));
	c->o.iters = 5;
	c->o.warmup = 3;
	c->o.window = 2;
	c->o.check = 1;
	k->check_ret_at = 6;
	k->check_ret = 2;
	assert_int_equal(efab_stream(c, &fake_stream, 8, &row), EFAB_OK);
	assert_int_equal(k->check, 8);
	assert_int_equal(row.errors, 2);
	memset(k, 0, sizeof(*k));
	k->order_ok = 1;
	k->fail_at = UINT64_MAX;
	k->check_ret_at = 1;
	k->check_ret = UINT64_MAX;
	memset(&row, 0, sizeof(row));
	assert_int_equal(efab_stream(c, &fake_stream, 8, &row), EFAB_ERR);
	assert_int_equal(k->check, 2);
	assert_int_equal(k->end, 0);
}

/* A rank that posts nothing (the target of a one-way stream): no window of
 * its own, but with -c and a lockstep stream it prepares and checks every
 * window with the initiators. */
static void stream_passive_lockstep(void **state)
{
	fixture_t *f = *state;
	efab_ctx_t *c = &f->c;
	calls_t *k = &f->k;
	efab_row_t row;
	efab_stream_ops_t ops = fake_stream;
	c->initiator = 0;
	c->o.iters = 4;
	c->o.warmup = 2;
	memset(&row, 0, sizeof(row));
	assert_int_equal(efab_stream(c, &ops, 8, &row), EFAB_OK);
	assert_int_equal(k->prepare + k->post + k->check + k->answer, 0);
	assert_int_equal(k->confirm_arg, 0);
	assert_int_equal(k->end, 1);
	ops.lockstep = 1;
	c->o.check = 1;
	memset(k, 0, sizeof(*k));
	k->order_ok = 1;
	k->fail_at = k->check_ret_at = UINT64_MAX;
	memset(&row, 0, sizeof(row));
	assert_int_equal(efab_stream(c, &ops, 8, &row), EFAB_OK);
	assert_int_equal(k->prepare, 6);
	assert_int_equal(k->check, 6);
	assert_int_equal(k->post, 0);
	assert_string_equal(cell(c, &row, "payload_bytes"), "0");
}

/* ---- single shot ---- */

typedef struct shot {
	int prep, first, second, post;
	size_t fail_at;
} shot_t;

static int s_prep(void *arg, size_t i)
{
	(void)i;
	((shot_t *)arg)->prep++;
	return 0;
}
static int s_first(void *arg, size_t i)
{
	shot_t *s = arg;
	s->first++;
	return i == s->fail_at ? EFAB_ERR : 0;
}
static int s_second(void *arg, size_t i)
{
	(void)i;
	((shot_t *)arg)->second++;
	usleep(2000);
	return 0;
}
static int s_post(void *arg, size_t i)
{
	(void)i;
	((shot_t *)arg)->post++;
	return 0;
}
static int s_once(void *arg)
{
	(void)arg;
	usleep(3000);
	return 7;
}

/* Each pair timed apart: second's time from the end of first; the first
 * error stops the loop with the count of calls timed. */
static void single_shot(void **state)
{
	(void)state;
	shot_t s = {.fail_at = SIZE_MAX};
	double a[5], b[5], us = 0;
	size_t done = 0;
	assert_int_equal(efab_time_pairs(5, s_prep, s_first, s_second, s_post, &s, a, b, &done), 0);
	assert_int_equal(done, 5);
	assert_int_equal(s.prep + s.first + s.second + s.post, 20);
	for (int i = 0; i < 5; i++) {
		assert_true(b[i] >= 2000.0);
		assert_true(a[i] < b[i]);
	}
	memset(&s, 0, sizeof(s));
	s.fail_at = 3;
	assert_int_equal(efab_time_each(5, s_prep, s_first, s_post, &s, a, &done), EFAB_ERR);
	assert_int_equal(done, 3);
	assert_int_equal(s.first, 4);
	assert_int_equal(s.post, 3);
	assert_int_equal(efab_time_once(s_once, NULL, &us), 7);
	assert_true(us >= 3000.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(pingpong_calls_and_samples, setup_pingpong, teardown),
		cmocka_unit_test_setup_teardown(pingpong_passive_rank, setup_pingpong, teardown),
		cmocka_unit_test_setup_teardown(pingpong_failure, setup_pingpong, teardown),
		cmocka_unit_test_setup_teardown(pingpong_counts, setup_pingpong, teardown),
		cmocka_unit_test_setup_teardown(pattern_notes, setup_pingpong, teardown),
		cmocka_unit_test_setup_teardown(stream_windows, setup_stream, teardown),
		cmocka_unit_test_setup_teardown(stream_check, setup_stream, teardown),
		cmocka_unit_test_setup_teardown(stream_passive_lockstep, setup_stream, teardown),
		cmocka_unit_test(single_shot),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
