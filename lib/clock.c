/* The measurement clock, deadlines and stopwatches (efab_clock.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "efab_clock.h"

int efab_clock_source_g = EFAB_CLOCK_MONOTONIC;
double efab_clock_ns_per_tick_g = 1.0;

static efab_clock_info_t info = {EFAB_CLOCK_MONOTONIC, "CLOCK_MONOTONIC", 1.0, 0, 0, 0,
				 "not initialised"};
static int ready;

#define CALIB_NS 20000000ull /* 20 ms: read jitter of ~50 ns is 2.5e-6 of it */

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int efab_clock_rate(uint64_t t0, uint64_t n0, uint64_t t1, uint64_t n1, double *out)
{
	if (t1 <= t0 || n1 <= n0)
		return -1;
	double r = (double)(n1 - n0) / (double)(t1 - t0);
	if (!isfinite(r) || r <= 0)
		return -1;
	*out = r;
	return 0;
}

void efab_clock_pair(uint64_t (*tick_read)(void), int tries, uint64_t *ticks, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < tries; i++) {
		uint64_t a = tick_read();
		uint64_t n = mono_ns();
		uint64_t b = tick_read();
		if (b >= a && b - a < best) {
			best = b - a;
			*ticks = a + (b - a) / 2;
			*ns = n;
		}
	}
	if (best == UINT64_MAX) { /* a counter that never moved forward */
		*ticks = tick_read();
		*ns = mono_ns();
	}
}

#if defined(__x86_64__) || defined(__i386__)
static uint64_t read_tsc(void)
{
	_mm_lfence();
	return __rdtsc();
}

/* Invariant TSC (cpuid 0x80000007 EDX bit 8: constant rate in every P-, C-
 * and T-state). Read as lfence; rdtsc: on the AMD EPYC VM here that costs
 * 21 ns against 47 ns for rdtscp and 60 ns for clock_gettime (vDSO, tsc
 * clocksource), and lfence keeps earlier instructions from drifting past it. */
static uint64_t (*hw_counter(char *why, size_t len))(void)
{
	unsigned a, b, c, d;
	if (!__get_cpuid(0x80000000, &a, &b, &c, &d) || a < 0x80000007) {
		snprintf(why, len, "cpuid has no leaf 0x80000007 (invariant TSC unknown)");
		return NULL;
	}
	__get_cpuid(0x80000007, &a, &b, &c, &d);
	if (!(d & (1u << 8))) {
		snprintf(why, len, "TSC not invariant (cpuid 0x80000007 EDX bit 8 clear)");
		return NULL;
	}
	snprintf(why, len, "invariant TSC (cpuid 0x80000007 EDX bit 8), read with lfence; rdtsc");
	return read_tsc;
}
#define HW_SOURCE EFAB_CLOCK_TSC
#define HW_NAME "tsc"
#elif defined(__aarch64__)
static uint64_t read_cntvct(void)
{
	uint64_t v;
	__asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(v)::"memory");
	return v;
}

/* The generic timer runs at a constant rate by architecture. */
static uint64_t (*hw_counter(char *why, size_t len))(void)
{
	uint64_t f;
	__asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(f));
	if (!f) {
		snprintf(why, len, "cntfrq_el0 reads 0");
		return NULL;
	}
	snprintf(why, len, "Arm generic timer (cntfrq_el0 %.3f MHz), read with isb; mrs cntvct_el0",
		 (double)f / 1e6);
	return read_cntvct;
}
#define HW_SOURCE EFAB_CLOCK_CNTVCT
#define HW_NAME "cntvct_el0"
#else
static uint64_t (*hw_counter(char *why, size_t len))(void)
{
	snprintf(why, len, "no cycle counter support for this architecture");
	return NULL;
}
#define HW_SOURCE EFAB_CLOCK_MONOTONIC
#define HW_NAME "CLOCK_MONOTONIC"
#endif

/* Mean cost of one read and (for CLOCK_MONOTONIC) the smallest step seen. */
static void measure_reads(double *read_ns, double *step_ns)
{
	enum { N = 2000 };
	uint64_t prev = efab_ticks(), min_step = UINT64_MAX;
	uint64_t t0 = efab_ticks();
	for (int i = 0; i < N; i++) {
		uint64_t v = efab_ticks();
		if (v > prev && v - prev < min_step)
			min_step = v - prev;
		prev = v;
	}
	*read_ns = efab_ticks_ns(prev - t0) / N;
	*step_ns = min_step == UINT64_MAX ? 0 : efab_ticks_ns(min_step);
}

void efab_clock_reinit(void)
{
	ready = 0;
	efab_clock_source_g = EFAB_CLOCK_MONOTONIC;
	efab_clock_ns_per_tick_g = 1.0;
	info = (efab_clock_info_t){EFAB_CLOCK_MONOTONIC, "CLOCK_MONOTONIC", 1.0, 0, 0, 0, ""};
	efab_clock_init();
}

void efab_clock_init(void)
{
	if (ready)
		return;
	ready = 1;
	const char *env = getenv("EFAB_CLOCK");
	uint64_t (*hw)(void) = NULL;
	char why[160];
	if (env && !strcmp(env, "monotonic"))
		snprintf(why, sizeof(why), "EFAB_CLOCK=monotonic");
	else
		hw = hw_counter(why, sizeof(why));
	if (hw) {
		uint64_t t0, n0, t1, n1;
		double rate;
		efab_clock_pair(hw, 16, &t0, &n0);
		struct timespec nap = {0, (long)CALIB_NS};
		nanosleep(&nap, NULL);
		efab_clock_pair(hw, 16, &t1, &n1);
		/* 0.1..20 GHz: anything else is a counter we do not understand */
		if (efab_clock_rate(t0, n0, t1, n1, &rate) == 0 && rate > 0.05 && rate < 10) {
			efab_clock_ns_per_tick_g = rate;
			efab_clock_source_g = HW_SOURCE;
			info.source = HW_SOURCE;
			info.name = HW_NAME;
			info.ns_per_tick = rate;
			info.calib_ns = (double)(n1 - n0);
		} else {
			snprintf(why, sizeof(why), "%s calibration gave an implausible rate", HW_NAME);
		}
	}
	snprintf(info.why, sizeof(info.why), "%s", why);
	double step;
	measure_reads(&info.read_ns, &step);
	info.resolution_ns = info.source == EFAB_CLOCK_MONOTONIC ? step : info.ns_per_tick;
}

const efab_clock_info_t *efab_clock_info(void)
{
	return &info;
}

void efab_clock_describe(char *buf, size_t len)
{
	if (info.source == EFAB_CLOCK_MONOTONIC)
		snprintf(buf, len, "clock CLOCK_MONOTONIC (clock_gettime; %s), resolution %.0f ns "
			 "(smallest step seen), read %.1f ns", info.why,
			 info.resolution_ns > 0 ? info.resolution_ns : 1.0, info.read_ns);
	else
		snprintf(buf, len, "clock %s (%s; %.4f GHz calibrated against CLOCK_MONOTONIC over "
			 "%.0f ms), resolution %.2f ns, read %.1f ns", info.name, info.why,
			 1.0 / info.ns_per_tick, info.calib_ns / 1e6, info.resolution_ns,
			 info.read_ns);
}

efab_deadline_t efab_deadline_in(double seconds)
{
	uint64_t now = mono_ns();
	if (!(seconds > 0))
		return (efab_deadline_t){now};
	double ns = seconds * 1e9;
	if (ns >= (double)(UINT64_MAX - now))
		return (efab_deadline_t){UINT64_MAX};
	return (efab_deadline_t){now + (uint64_t)ns};
}

int efab_deadline_passed(efab_deadline_t d)
{
	return mono_ns() > d.at_ns;
}

double efab_deadline_left_s(efab_deadline_t d)
{
	uint64_t now = mono_ns();
	return now >= d.at_ns ? 0 : (double)(d.at_ns - now) / 1e9;
}

efab_stopwatch_t efab_stopwatch_start(void)
{
	return (efab_stopwatch_t){mono_ns()};
}

double efab_stopwatch_elapsed_s(efab_stopwatch_t sw)
{
	return (double)(mono_ns() - sw.start_ns) / 1e9;
}
