/* The timing patterns: the only place that reads the measurement clock.
 *
 * ping-pong (latency), windowed stream (bandwidth and message rate) and
 * single shot (registration, connection setup). A benchmark gives its
 * operation as callbacks; the pattern owns warmup, the first iteration,
 * per-iteration or per-window timing, the batch, samples, --time
 * calibration, the barriers that drive progress, and combining the ranks'
 * results into rows. */
#ifndef EFAB_PATTERN_H
#define EFAB_PATTERN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- single shot ---- */

/* Time each of n calls of fn (i = 0..n-1) into us[i], microseconds. prep
 * (optional) runs before each call, untimed. Stops at the first error
 * (its status returned); *done says how many calls were timed. */
int efab_time_each(size_t n, int (*prep)(void *arg, size_t i), int (*fn)(void *arg, size_t i),
		   void *arg, double *us, size_t *done);

/* Time n pairs: first(i) into a[i], then second(i) into b[i], each apart
 * (register, then deregister). prep and post (optional, untimed) run before
 * first and after second. */
int efab_time_pairs(size_t n, int (*prep)(void *arg, size_t i), int (*first)(void *arg, size_t i),
		    int (*second)(void *arg, size_t i), int (*post)(void *arg, size_t i), void *arg,
		    double *a, double *b, size_t *done);

/* One call, timed: *us its duration in microseconds. */
int efab_time_once(int (*fn)(void *arg), void *arg, double *us);

#ifdef __cplusplus
}
#endif

#endif
