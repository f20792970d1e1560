/* Statistics over per-iteration samples, and least-squares fits. */
#ifndef EFAB_STATS_H
#define EFAB_STATS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct efab_stats {
	size_t n;
	double min, p50, mean, p99, p999, max, stdev;
} efab_stats_t;

/* Sorts samples in place. Percentiles interpolate linearly between the closest
 * ranks (numpy's default): p = x[floor(h)] + (h - floor(h)) * (x[floor(h)+1] - x[floor(h)]),
 * h = (n - 1) * q. stdev is the sample standard deviation (n - 1). n = 0 gives zeros. */
void efab_stats_compute(double *samples, size_t n, efab_stats_t *out);

/* Value at quantile q in [0,1] of sorted samples. */
double efab_quantile_sorted(const double *sorted, size_t n, double q);

typedef struct efab_fit {
	double intercept; /* fixed cost */
	double slope;     /* per unit of x */
	double r2;        /* coefficient of determination; 1 when y is constant and fitted exactly */
	size_t n;
} efab_fit_t;

/* Ordinary least squares y = intercept + slope * x. Returns 0, or -1 when
 * fewer than two distinct x values make the slope undefined. */
int efab_linfit(const double *x, const double *y, size_t n, efab_fit_t *out);

#ifdef __cplusplus
}
#endif

#endif
