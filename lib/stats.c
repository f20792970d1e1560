#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "efab_stats.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double efab_quantile_sorted(const double *s, size_t n, double q)
{
	if (n == 0)
		return 0.0;
	if (q <= 0)
		return s[0];
	if (q >= 1)
		return s[n - 1];
	double h = (double)(n - 1) * q;
	size_t lo = (size_t)floor(h);
	if (lo + 1 >= n)
		return s[n - 1];
	return s[lo] + (h - (double)lo) * (s[lo + 1] - s[lo]);
}

void efab_stats_compute(double *samples, size_t n, efab_stats_t *out)
{
	efab_stats_t st;
	memset(&st, 0, sizeof(st));
	st.n = n;
	if (n == 0) {
		*out = st;
		return;
	}
	qsort(samples, n, sizeof(double), cmp_double);
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += samples[i];
	st.mean = sum / (double)n;
	double ss = 0;
	for (size_t i = 0; i < n; i++)
		ss += (samples[i] - st.mean) * (samples[i] - st.mean);
	st.stdev = n > 1 ? sqrt(ss / (double)(n - 1)) : 0.0;
	st.min = samples[0];
	st.max = samples[n - 1];
	st.p25 = efab_quantile_sorted(samples, n, 0.25);
	st.p50 = efab_quantile_sorted(samples, n, 0.50);
	st.p75 = efab_quantile_sorted(samples, n, 0.75);
	st.p99 = efab_quantile_sorted(samples, n, 0.99);
	st.p999 = efab_quantile_sorted(samples, n, 0.999);
	*out = st;
}

void efab_stats_split_first(double *samples, size_t n, double *first, efab_stats_t *steady)
{
	*first = n ? samples[0] : 0.0;
	efab_stats_compute(n ? samples + 1 : samples, n ? n - 1 : 0, steady);
}

/* The continued fraction of the incomplete beta function (modified Lentz). */
static double beta_cf(double a, double b, double x)
{
	const double tiny = 1e-300;
	double c = 1.0, d = 1.0 - (a + b) * x / (a + 1.0);
	if (fabs(d) < tiny)
		d = tiny;
	d = 1.0 / d;
	double h = d;
	for (int m = 1; m <= 500; m++) {
		double m2 = 2.0 * m;
		double num = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
		d = 1.0 + num * d;
		c = 1.0 + num / c;
		d = 1.0 / (fabs(d) < tiny ? tiny : d);
		c = fabs(c) < tiny ? tiny : c;
		h *= d * c;
		num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
		d = 1.0 + num * d;
		c = 1.0 + num / c;
		d = 1.0 / (fabs(d) < tiny ? tiny : d);
		c = fabs(c) < tiny ? tiny : c;
		double del = d * c;
		h *= del;
		if (fabs(del - 1.0) < 1e-15)
			break;
	}
	return h;
}

/* Regularised incomplete beta I_x(a, b), the fraction taken on the side of x
 * where it converges fast. */
static double beta_reg(double a, double b, double x)
{
	if (x <= 0)
		return 0.0;
	if (x >= 1)
		return 1.0;
	double lf = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
	if (x < (a + 1.0) / (a + b + 2.0))
		return exp(lf) * beta_cf(a, b, x) / a;
	return 1.0 - exp(lf) * beta_cf(b, a, 1.0 - x) / b;
}

/* P(T > t) for t >= 0. */
static double t_upper(double t, double dof)
{
	return 0.5 * beta_reg(dof / 2.0, 0.5, dof / (dof + t * t));
}

double efab_t_quantile(double p, double dof)
{
	if (!(p > 0 && p < 1) || !(dof > 0) || !isfinite(dof))
		return NAN;
	if (p == 0.5)
		return 0.0;
	double tail = p < 0.5 ? p : 1.0 - p; /* find t > 0 with P(T > t) = tail */
	double lo = 0.0, hi = 1.0;
	while (t_upper(hi, dof) > tail && hi < 1e300)
		hi *= 2.0;
	for (int i = 0; i < 2000 && hi - lo > 1e-13 * hi; i++) {
		double mid = 0.5 * (lo + hi);
		if (t_upper(mid, dof) > tail)
			lo = mid;
		else
			hi = mid;
	}
	double t = 0.5 * (lo + hi);
	return p < 0.5 ? -t : t;
}

/* Weight of point i: the caller's, 1/y^2 (rel), or 1. */
static double weight_at(const double *w, int rel, const double *y, size_t i)
{
	return w ? w[i] : rel ? 1.0 / (y[i] * y[i]) : 1.0;
}

static int fit_line(const double *x, const double *y, const double *w, int rel, size_t n,
		    efab_fit_t *out)
{
	if (n < 2 || !x || !y)
		return -1;
	int distinct = 0;
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(x[i]) || !isfinite(y[i]) || (rel && !(y[i] > 0)))
			return -1;
		double wi = weight_at(w, rel, y, i);
		if (!(wi > 0) || !isfinite(wi))
			return -1;
		distinct |= x[i] != x[0];
	}
	if (!distinct)
		return -1;
	/* centred sums (x spans 4 KiB..1 GiB in MiB, y decades); the means are
	 * taken as offsets from the first point so that a constant y gives a mean
	 * equal to it, a flat line and R^2 1, not rounding noise */
	double sw = 0, mx = 0, my = 0;
	for (size_t i = 0; i < n; i++) {
		double wi = weight_at(w, rel, y, i);
		sw += wi;
		mx += wi * (x[i] - x[0]);
		my += wi * (y[i] - y[0]);
	}
	mx = x[0] + mx / sw;
	my = y[0] + my / sw;
	double sxx = 0, sxy = 0, syy = 0;
	for (size_t i = 0; i < n; i++) {
		double wi = weight_at(w, rel, y, i);
		sxx += wi * (x[i] - mx) * (x[i] - mx);
		sxy += wi * (x[i] - mx) * (y[i] - my);
		syy += wi * (y[i] - my) * (y[i] - my);
	}
	if (!(sxx > 0) || !isfinite(sxx) || !isfinite(sxy) || !isfinite(syy))
		return -1;
	efab_fit_t f;
	memset(&f, 0, sizeof(f));
	f.n = n;
	f.weighted = w || rel;
	f.slope = sxy / sxx;
	f.intercept = my - f.slope * mx;
	double sse = 0;
	for (size_t i = 0; i < n; i++) {
		double e = y[i] - (f.intercept + f.slope * x[i]);
		sse += weight_at(w, rel, y, i) * e * e;
	}
	/* rounding can leave sse a hair above syy for a flat line */
	f.r2 = syy > 0 ? fmax(0.0, 1.0 - sse / syy) : (sse == 0 ? 1.0 : 0.0);
	if (n > 2) {
		double s2 = sse / (double)(n - 2);
		double t = efab_t_quantile(0.5 + EFAB_FIT_LEVEL / 2, (double)(n - 2));
		f.intercept_se = sqrt(s2 * (1.0 / sw + mx * mx / sxx));
		f.slope_se = sqrt(s2 / sxx);
		f.intercept_lo = f.intercept - t * f.intercept_se;
		f.intercept_hi = f.intercept + t * f.intercept_se;
		f.slope_lo = f.slope - t * f.slope_se;
		f.slope_hi = f.slope + t * f.slope_se;
		f.has_ci = 1;
	} else {
		f.intercept_lo = f.slope_lo = -INFINITY;
		f.intercept_hi = f.slope_hi = INFINITY;
	}
	if (!isfinite(f.intercept) || !isfinite(f.slope) || !isfinite(f.r2) ||
	    (f.has_ci && (!isfinite(f.intercept_lo) || !isfinite(f.intercept_hi) ||
			  !isfinite(f.slope_lo) || !isfinite(f.slope_hi))))
		return -1;
	*out = f;
	return 0;
}

int efab_linfit(const double *x, const double *y, size_t n, efab_fit_t *out)
{
	return fit_line(x, y, NULL, 0, n, out);
}

int efab_linfit_weighted(const double *x, const double *y, const double *w, size_t n,
			 efab_fit_t *out)
{
	if (!w)
		return -1;
	return fit_line(x, y, w, 0, n, out);
}

int efab_linfit_rel(const double *x, const double *y, size_t n, efab_fit_t *out)
{
	return fit_line(x, y, NULL, 1, n, out);
}
