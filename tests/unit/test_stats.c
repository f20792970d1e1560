#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>

#include "efab_stats.h"

#define NEAR(a, b) assert_true(fabs((a) - (b)) < 1e-9)

static void test_known(void **state)
{
	(void)state;
	/* 1..100 shuffled: numpy percentile (linear) gives p50 50.5, p99 99.01, p99.9 99.901 */
	double x[100];
	for (int i = 0; i < 100; i++)
		x[i] = (double)((i * 37) % 100 + 1);
	efab_stats_t s;
	efab_stats_compute(x, 100, &s);
	assert_int_equal(s.n, 100);
	NEAR(s.min, 1);
	NEAR(s.max, 100);
	NEAR(s.mean, 50.5);
	NEAR(s.p50, 50.5);
	NEAR(s.p99, 99.01);
	NEAR(s.p999, 99.901);
	NEAR(s.stdev, 29.011491975882016); /* numpy.std(ddof=1) */
}

static void test_small(void **state)
{
	(void)state;
	double one[1] = {3.5};
	efab_stats_t s;
	efab_stats_compute(one, 1, &s);
	NEAR(s.min, 3.5);
	NEAR(s.p50, 3.5);
	NEAR(s.p99, 3.5);
	NEAR(s.stdev, 0);
	double two[2] = {4, 2};
	efab_stats_compute(two, 2, &s);
	NEAR(s.p50, 3);
	NEAR(s.p99, 3.98);
	efab_stats_compute(NULL, 0, &s);
	assert_int_equal(s.n, 0);
	NEAR(s.max, 0);
}

static void test_outlier(void **state)
{
	(void)state;
	/* one slow sample among 1000 shows in max and p99.9, not in p50/p99 */
	double x[1000];
	for (int i = 0; i < 1000; i++)
		x[i] = 1.0;
	x[500] = 100.0;
	efab_stats_t s;
	efab_stats_compute(x, 1000, &s);
	NEAR(s.p50, 1);
	NEAR(s.p99, 1);
	assert_true(s.p999 > 1.0);
	NEAR(s.max, 100);
}

static void test_fit_exact(void **state)
{
	(void)state;
	double x[5] = {1, 2, 4, 8, 16}, y[5];
	for (int i = 0; i < 5; i++)
		y[i] = 12.3 + 0.8 * x[i];
	efab_fit_t f;
	assert_int_equal(efab_linfit(x, y, 5, &f), 0);
	NEAR(f.intercept, 12.3);
	NEAR(f.slope, 0.8);
	NEAR(f.r2, 1.0);
}

static void test_fit_noisy(void **state)
{
	(void)state;
	double x[4] = {0, 1, 2, 3}, y[4] = {1, 3, 2, 4};
	efab_fit_t f;
	assert_int_equal(efab_linfit(x, y, 4, &f), 0);
	NEAR(f.slope, 0.8);
	NEAR(f.intercept, 1.3);
	NEAR(f.r2, 0.64);
	double xs[3] = {2, 2, 2}, ys[3] = {1, 2, 3};
	assert_int_equal(efab_linfit(xs, ys, 3, &f), -1);
	assert_int_equal(efab_linfit(x, y, 1, &f), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known),   cmocka_unit_test(test_small),
		cmocka_unit_test(test_outlier), cmocka_unit_test(test_fit_exact),
		cmocka_unit_test(test_fit_noisy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
