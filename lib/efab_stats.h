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
	/* quartiles: the robust within-run spread (the interquartile range), which
	 * a few preempted samples cannot inflate as they do stdev and p99 */
	double p25, p75;
} efab_stats_t;

/* Sorts samples in place. Percentiles interpolate linearly between the closest
 * ranks (numpy's default): p = x[floor(h)] + (h - floor(h)) * (x[floor(h)+1] - x[floor(h)]),
 * h = (n - 1) * q. stdev is the sample standard deviation (n - 1). n = 0 gives zeros. */
void efab_stats_compute(double *samples, size_t n, efab_stats_t *out);

/* The cold/steady split: samples[0] is the first call (a new buffer's or a
 * new peer's first use, far slower than the rest) and goes to *first, never
 * into the statistics, which are over samples[1..n) (sorted in place; n = 1
 * gives zeros). n = 0: *first = 0 and zeros. */
void efab_stats_split_first(double *samples, size_t n, double *first, efab_stats_t *steady);

/* Value at quantile q in [0,1] of sorted samples. */
double efab_quantile_sorted(const double *sorted, size_t n, double q);

/* Confidence level of the intervals in efab_fit_t. */
#define EFAB_FIT_LEVEL 0.95

/* A straight line y = intercept + slope * x fitted by (weighted) least squares,
 * minimising sum w_i * (y_i - intercept - slope * x_i)^2.
 *
 * r2 is the R^2 of that weighted fit: 1 - sum w e^2 / sum w (y - ybar_w)^2,
 * ybar_w the weighted mean of y (what statsmodels' WLS reports as rsquared;
 * plain R^2 when every w is 1). With w = 1/y^2 it measures relative residuals.
 * 1 when y is constant and fitted exactly, 0 when constant and not.
 *
 * The intervals are EFAB_FIT_LEVEL confidence intervals, estimate -/+ t * se,
 * t the two-sided Student-t quantile for n - 2 degrees of freedom and se from
 * the fit's covariance s^2 (X'WX)^-1, s^2 = sum w e^2 / (n - 2): the weights
 * are taken as known up to one common scale, estimated from the residuals.
 * With exactly two points the line is exact but nothing is left to estimate
 * the scatter: has_ci is 0, se are 0 and the bounds are -inf / +inf. */
typedef struct efab_fit {
	double intercept; /* fixed cost */
	double slope;     /* per unit of x */
	double r2;
	double intercept_se, slope_se;
	double intercept_lo, intercept_hi;
	double slope_lo, slope_hi;
	int has_ci;   /* n >= 3: the bounds are finite */
	int weighted; /* 1: efab_linfit_rel or efab_linfit_weighted; 0: ordinary */
	size_t n;
} efab_fit_t;

/* Every fit returns 0 and sets *out, or returns -1 and leaves *out untouched
 * ("no fit") when the line is undefined: n < 2, all x equal, a value that is
 * not finite, a weight that is not positive and finite, or (efab_linfit_rel)
 * a y that is not positive. */

/* Ordinary least squares (every weight 1): carried by the largest y when y
 * spans decades, as registration times over 4 KiB..1 GiB do. */
int efab_linfit(const double *x, const double *y, size_t n, efab_fit_t *out);

/* Weighted least squares with the caller's weights w[i] > 0. */
int efab_linfit_weighted(const double *x, const double *y, const double *w, size_t n,
			 efab_fit_t *out);

/* Weighted least squares with w = 1/y^2: minimises the relative residuals
 * (y - fit) / y, so that a 4 KiB point weighs as much as a 1 GiB one and the
 * fixed cost comes from the small sizes, the slope from the large ones. The
 * model for errors that scale with the value (constant relative noise). */
int efab_linfit_rel(const double *x, const double *y, size_t n, efab_fit_t *out);

/* Quantile of Student's t distribution with dof degrees of freedom (dof > 0,
 * not necessarily an integer), 0 < p < 1; NaN outside those ranges. Accurate
 * to about 1e-10 relative. */
double efab_t_quantile(double p, double dof);

#ifdef __cplusplus
}
#endif

#endif
