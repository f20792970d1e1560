/* The timing patterns: the only place that reads the measurement clock.
 *
 * ping-pong (latency), windowed stream (bandwidth and message rate) and
 * single shot (registration, connection setup). A benchmark gives its
 * operation as callbacks; the pattern owns warmup, the first iteration,
 * per-iteration or per-window timing, the batch, samples, --time
 * calibration, the barriers that drive progress, and combining the ranks'
 * results into rows. A pattern reads and writes the context (context.h),
 * calls the evidence (evidence.h) around its timed phase and the operation
 * through its callbacks; it never calls the lifecycle (harness.c), so a unit
 * test can run it on a context it built (tests/unit/test_pattern.c). */
#ifndef EFAB_PATTERN_H
#define EFAB_PATTERN_H

#include <stddef.h>
#include <stdint.h>

#include "context.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- ping-pong: one operation at a time (latency) ----
 * Iterations [0, warm) are warmup (iteration 0, the size's first, is timed
 * alone: first_us), [warm, warm+n) are timed one by one (the samples), and
 * n more are timed as one batch (lat_us_batch, no clock read inside). */
typedef struct efab_pingpong_ops {
	/* every rank, once per size, before iteration 0 (may synchronise) */
	int (*begin)(efab_ctx_t *c, uint64_t size);
	/* before iteration i, untimed: initiators, and passive ranks that respond */
	int (*prepare)(efab_ctx_t *c, uint64_t size, uint64_t i);
	/* the timed operation at an initiator: post, and wait until it completed */
	int (*ping)(efab_ctx_t *c, uint64_t size, uint64_t i);
	/* the passive rank's share of iteration i; NULL: it only drives progress
	 * until the initiators are done */
	int (*respond)(efab_ctx_t *c, uint64_t size, uint64_t i);
	/* after iteration i, untimed, where prepare ran: bookkeeping and (-c)
	 * checks; returns mismatches */
	uint64_t (*after)(efab_ctx_t *c, uint64_t size, uint64_t i);
	/* every rank, after the closing barrier (may be collective): mismatches,
	 * or UINT64_MAX on a failure */
	uint64_t (*end)(efab_ctx_t *c, uint64_t size, uint64_t iterations);
	double per_sample; /* a sample is the timed span / per_sample (2: half a round trip) */
	/* operations of the size's bytes per iteration, both ranks together, for
	 * the payload the NIC counters are compared with (0 = 1; put: ping and pong) */
	int legs;
	const char *closing; /* what the closing barrier waits for, for timeout messages */
} efab_pingpong_ops_t;

/* One size: fills row (lat stats of the first initiating rank; first_us,
 * lat_us_batch and inject columns where the row has them; with --contend
 * the initiators' aggregate rate too). EFAB_OK or EFAB_ERR. */
int efab_pingpong(efab_ctx_t *c, const efab_pingpong_ops_t *ops, uint64_t size, efab_row_t *row);
uint64_t efab_pingpong_iters(const efab_ctx_t *c, uint64_t size);

/* ---- windowed stream (bandwidth, message rate) ----
 * A window is -W operations posted back to back and waited for; its time is
 * from the first post to the last local completion. The size's first window
 * is timed alone (first_us), [1, warm) are warmup, then n measured.
 * The headline figures (bw_MBps, msg_rate_Mops) divide the measured windows'
 * payload by the loop's elapsed time: from the first post of the first
 * measured window to the end of confirm (every rank runs it after the last
 * window), gaps between windows included, as fabtests, perftest and OSU
 * time their loops. The sum of window times divides the same payload in the
 * *_windows columns.
 * --pipeline: window 0 as above (first_us), then the warmup's and the
 * measured windows' operations (-W each) posted one by one while
 * completions are read, at most -W in flight and no wait at window ends
 * (fi_efa_rma_bw's loop); the warmup is drained before the measured phase,
 * whose clock (loop_t0) starts once its first -W operations are posted: the
 * pipeline full, as fi_efa_rma_bw's clock starts at the warmup's last
 * completion with -W in flight. No window times: window_us_* and *_windows stay empty. With -c,
 * prepare runs on every rank with a barrier before window 0 and check_all
 * after the loop. */
typedef struct efab_stream_ops {
	/* every rank, once per size (may synchronise) */
	int (*begin)(efab_ctx_t *c, uint64_t size);
	/* before window i, untimed */
	int (*prepare)(efab_ctx_t *c, uint64_t size, uint64_t i);
	/* timed: post window i's operations (the pattern waits for them) */
	int (*post)(efab_ctx_t *c, uint64_t size, uint64_t i);
	/* after window i, untimed, with -c: mismatches, UINT64_MAX on a failure;
	 * rx0 = remote CQ data count before the window */
	uint64_t (*check)(efab_ctx_t *c, uint64_t size, uint64_t i, uint64_t rx0);
	/* every rank after the closing barrier: mismatches or UINT64_MAX */
	uint64_t (*end)(efab_ctx_t *c, uint64_t size, uint64_t windows);
	/* every rank, after the last window, timed (it ends the loop): returns
	 * once this rank knows that what it wrote arrived at its peer and its
	 * peer knows the same of what it received, where a local completion
	 * does not mean delivery. NULL: the last local completion ends it.
	 * windows = every window this rank posted in this size. */
	int (*confirm)(efab_ctx_t *c, uint64_t size, uint64_t windows);
	/* a posting rank, after each of its windows, untimed but inside the
	 * loop: answer the peer's end (--bidir: the peer finished first, and
	 * its loop ends when this rank acknowledges, not when this rank's own
	 * loop ends); cheap when there is nothing to answer. NULL: none */
	int (*answer)(efab_ctx_t *c, uint64_t size);
	/* every rank, after the loop's time is taken, untimed: what confirm
	 * left to do for the peer (answer its end where not done yet) */
	int (*finish)(efab_ctx_t *c, uint64_t size, uint64_t windows);
	/* how the end is confirmed (the end_confirm column and the header) */
	const char *(*confirm_name)(const efab_ctx_t *c);
	/* the footprint column ("" if none) */
	const char *(*footprint)(const efab_ctx_t *c);
	/* with -c, fence every window with barriers and check on every rank (a
	 * source or slot is refilled only after every check is done) */
	int lockstep;
	/* --pipeline (NULL: the family has no pipelined loop): post the size's
	 * operation k (0, 1, ... over the size, windows of -W ops indexed alike);
	 * last = the pattern waits for a completion after it (no FI_MORE) */
	int (*post_one)(efab_ctx_t *c, uint64_t size, uint64_t k, int last);
	/* --pipeline with -c, every rank after finish: wait for and check what
	 * arrived of the nops operations (rx0 = remote CQ data count before
	 * them); mismatches, UINT64_MAX on a failure */
	uint64_t (*check_all)(efab_ctx_t *c, uint64_t size, uint64_t nops, uint64_t rx0);
} efab_stream_ops_t;

int efab_stream(efab_ctx_t *c, const efab_stream_ops_t *ops, uint64_t size, efab_row_t *row);
/* The end_confirm value of ops in this run ("local-completion" without a
 * confirm_name). */
const char *efab_stream_confirm_name(const efab_ctx_t *c, const efab_stream_ops_t *ops);
uint64_t efab_stream_windows(const efab_ctx_t *c, uint64_t size);
/* Counts and rows for a pattern timed elsewhere (the GPU initiator,
 * bench/engine/gda.c): -w as the pattern scales it; room for n samples in
 * c->samples; the size's rows from this rank's samples (c->samples, us) and
 * figures, gathered from every rank as the CPU patterns do. */
uint64_t efab_pingpong_warmup(const efab_ctx_t *c, uint64_t size);
uint64_t efab_stream_warmup(const efab_ctx_t *c, uint64_t size);
/* The same on a row and options (a program without a context: efab_shmem_lat/bw). */
uint64_t efab_pingpong_warmup_of(const efab_opts_t *o, uint64_t size);
uint64_t efab_stream_warmup_of(const efab_bench_row_t *row, const efab_opts_t *o, uint64_t size);
int efab_pattern_samples(efab_ctx_t *c, uint64_t n);
/* The provider's MTU (fi_info nic->link_attr->mtu), 0 when not reported. */
size_t efab_link_mtu(const efab_ctx_t *c);
int efab_pingpong_rows(efab_ctx_t *c, uint64_t size, size_t ns, double first_us, double batch_us,
		       uint64_t n, double payload, efab_row_t *row);
int efab_stream_rows(efab_ctx_t *c, const efab_stream_ops_t *ops, uint64_t size, int active,
		     size_t ns, double total_us, double loop_us, double first_us, uint64_t n,
		     efab_row_t *row);

/* The header notes of a row's pattern (what first_us and the batch mean). */
void efab_pattern_notes(efab_ctx_t *c);

/* ---- single shot ---- */

/* Time each of n calls of fn (i = 0..n-1) into us[i], microseconds. prep
 * and post (optional) run before and after each call, untimed. Stops at
 * the first error (its status returned); *done says how many calls were
 * timed. */
int efab_time_each(size_t n, int (*prep)(void *arg, size_t i), int (*fn)(void *arg, size_t i),
		   int (*post)(void *arg, size_t i), void *arg, double *us, size_t *done);

/* Time n pairs: first(i) into a[i], then second(i) into b[i], each apart
 * (register, then deregister). prep and post (optional, untimed) run before
 * first and after second; second NULL times first alone. */
int efab_time_pairs(size_t n, int (*prep)(void *arg, size_t i), int (*first)(void *arg, size_t i),
		    int (*second)(void *arg, size_t i), int (*post)(void *arg, size_t i), void *arg,
		    double *a, double *b, size_t *done);

/* One call, timed: *us its duration in microseconds. */
int efab_time_once(int (*fn)(void *arg), void *arg, double *us);

#ifdef __cplusplus
}
#endif

#endif
