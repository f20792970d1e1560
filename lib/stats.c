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
	st.p50 = efab_quantile_sorted(samples, n, 0.50);
	st.p99 = efab_quantile_sorted(samples, n, 0.99);
	st.p999 = efab_quantile_sorted(samples, n, 0.999);
	*out = st;
}

int efab_linfit(const double *x, const double *y, size_t n, efab_fit_t *out)
{
	if (n < 2)
		return -1;
	double mx = 0, my = 0;
	for (size_t i = 0; i < n; i++) {
		mx += x[i];
		my += y[i];
	}
	mx /= (double)n;
	my /= (double)n;
	double sxx = 0, sxy = 0, syy = 0;
	for (size_t i = 0; i < n; i++) {
		sxx += (x[i] - mx) * (x[i] - mx);
		sxy += (x[i] - mx) * (y[i] - my);
		syy += (y[i] - my) * (y[i] - my);
	}
	if (sxx == 0)
		return -1;
	efab_fit_t f;
	f.n = n;
	f.slope = sxy / sxx;
	f.intercept = my - f.slope * mx;
	double sse = 0;
	for (size_t i = 0; i < n; i++) {
		double e = y[i] - (f.intercept + f.slope * x[i]);
		sse += e * e;
	}
	f.r2 = syy > 0 ? 1.0 - sse / syy : (sse == 0 ? 1.0 : 0.0);
	*out = f;
	return 0;
}
