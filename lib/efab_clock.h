/* The measurement clock: a cycle counter calibrated against CLOCK_MONOTONIC
 * where the CPU has an invariant one (x86: TSC with cpuid's invariant-TSC
 * bit; Arm64: the generic timer's virtual count, cntvct_el0, at cntfrq_el0),
 * else CLOCK_MONOTONIC itself. Reading it costs a few ns instead of the
 * ~20 ns of a clock_gettime call, which matters for 0.2 us half round trips.
 *
 * efab_clock_init() picks and calibrates (about 20 ms, once per process) and
 * must run before the first timed interval: until then efab_ticks() reads
 * CLOCK_MONOTONIC in ns, so an uninitialised clock is slow, never wrong.
 * EFAB_CLOCK=monotonic forces the fallback (comparisons, tests). */
#ifndef EFAB_CLOCK_H
#define EFAB_CLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

enum efab_clock_source { EFAB_CLOCK_MONOTONIC = 0, EFAB_CLOCK_TSC, EFAB_CLOCK_CNTVCT };

typedef struct efab_clock_info {
	int source;           /* enum efab_clock_source */
	const char *name;     /* "tsc", "cntvct_el0", "CLOCK_MONOTONIC" */
	double ns_per_tick;   /* 1 for CLOCK_MONOTONIC */
	double resolution_ns; /* one tick; CLOCK_MONOTONIC: smallest step seen between reads */
	double read_ns;       /* cost of one read, measured */
	double calib_ns;      /* calibration interval (0: none) */
	char why[160];        /* why this source (fallback reason, or what was checked) */
} efab_clock_info_t;

extern int efab_clock_source_g;     /* read by efab_ticks: 0 until efab_clock_init */
extern double efab_clock_ns_per_tick_g;

/* Pick and calibrate the clock (idempotent; not thread-safe). */
void efab_clock_init(void);
/* Forget the choice and calibrate again (reads EFAB_CLOCK again): tests. */
void efab_clock_reinit(void);
const efab_clock_info_t *efab_clock_info(void);
/* "tsc (invariant; 2.445 GHz calibrated against CLOCK_MONOTONIC over 20 ms),
 * resolution 0.41 ns, read 8 ns" */
void efab_clock_describe(char *buf, size_t len);

static inline uint64_t efab_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	if (efab_clock_source_g == EFAB_CLOCK_TSC) {
		_mm_lfence(); /* earlier instructions finish before the read */
		return __rdtsc();
	}
#elif defined(__aarch64__)
	if (efab_clock_source_g == EFAB_CLOCK_CNTVCT) {
		uint64_t v;
		__asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(v)::"memory");
		return v;
	}
#endif
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline double efab_ticks_ns(uint64_t dt)
{
	return (double)dt * efab_clock_ns_per_tick_g;
}

static inline double efab_ticks_us(uint64_t dt)
{
	return (double)dt * efab_clock_ns_per_tick_g * 1e-3;
}

/* Calibration arithmetic, exposed for the unit tests: ns per tick from two
 * (ticks, ns) points, each the best of several bracketed reads. Returns 0,
 * or -1 (and *out untouched) when the points cannot define a rate. */
int efab_clock_rate(uint64_t t0, uint64_t n0, uint64_t t1, uint64_t n1, double *out);

/* Pair a tick read with a CLOCK_MONOTONIC read: the tick value is the
 * midpoint of two tick reads around the clock_gettime, taken from the
 * tightest of tries attempts (tick_read may be a test stub). */
void efab_clock_pair(uint64_t (*tick_read)(void), int tries, uint64_t *ticks, uint64_t *ns);

/* Deadlines and stopwatches: CLOCK_MONOTONIC in ns, for timeouts and
 * progress reports ("round 3/7 done in 2.1 s"), never for results. What a
 * benchmark reports is timed with efab_ticks() inside the pattern module.
 * The two are separate types so that a deadline or a stopwatch cannot be
 * mistaken for a measurement, nor a tick count for either. */
typedef struct efab_deadline {
	uint64_t at_ns; /* CLOCK_MONOTONIC */
} efab_deadline_t;

/* The moment seconds from now (<= 0: now; beyond the clock's range: never). */
efab_deadline_t efab_deadline_in(double seconds);
/* 1 once the deadline is behind us. A clock_gettime each call: loops that
 * spin on a completion ask every few hundred turns, not every turn. */
int efab_deadline_passed(efab_deadline_t d);
/* Seconds until the deadline, 0 once it has passed (a poll's timeout). */
double efab_deadline_left_s(efab_deadline_t d);

typedef struct efab_stopwatch {
	uint64_t start_ns; /* CLOCK_MONOTONIC */
} efab_stopwatch_t;

efab_stopwatch_t efab_stopwatch_start(void);
/* Seconds since the stopwatch started. */
double efab_stopwatch_elapsed_s(efab_stopwatch_t sw);

#ifdef __cplusplus
}
#endif

#endif
