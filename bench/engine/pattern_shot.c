/* The single-shot pattern (pattern.h): registration and setup costs, one
 * call at a time. */
#include "efab_clock.h"
#include "pattern.h"

int efab_time_each(size_t n, int (*prep)(void *arg, size_t i), int (*fn)(void *arg, size_t i),
		   int (*post)(void *arg, size_t i), void *arg, double *us, size_t *done)
{
	return efab_time_pairs(n, prep, fn, NULL, post, arg, us, NULL, done);
}

int efab_time_pairs(size_t n, int (*prep)(void *arg, size_t i), int (*first)(void *arg, size_t i),
		    int (*second)(void *arg, size_t i), int (*post)(void *arg, size_t i), void *arg,
		    double *a, double *b, size_t *done)
{
	efab_clock_init();
	for (*done = 0; *done < n; (*done)++) {
		size_t i = *done;
		int rc = prep ? prep(arg, i) : 0;
		if (rc)
			return rc;
		uint64_t t0 = efab_ticks();
		rc = first(arg, i);
		uint64_t t1 = efab_ticks();
		if (rc)
			return rc;
		a[i] = efab_ticks_us(t1 - t0);
		if (second) { /* timed from the end of the first */
			rc = second(arg, i);
			uint64_t t2 = efab_ticks();
			if (rc)
				return rc;
			b[i] = efab_ticks_us(t2 - t1);
		}
		if (post && (rc = post(arg, i)))
			return rc;
	}
	return 0;
}

int efab_time_once(int (*fn)(void *arg), void *arg, double *us)
{
	efab_clock_init();
	uint64_t t0 = efab_ticks();
	int rc = fn(arg);
	*us = efab_ticks_us(efab_ticks() - t0);
	return rc;
}
