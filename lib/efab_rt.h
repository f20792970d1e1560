/* Out-of-band runtime: what the library needs from a job launcher. bench/
 * implements it over MPI, tests/ and single-process tools use efab_rt_single(). */
#ifndef EFAB_RT_H
#define EFAB_RT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct efab_rt efab_rt_t;
enum { EFAB_RT_SUM = 0, EFAB_RT_MAX, EFAB_RT_MIN };
struct efab_rt {
	int rank, size;
	int local_rank, local_size; /* within the node */
	void *impl;
	int (*barrier)(efab_rt_t *rt);
	/* out receives size * len bytes, rank-ordered */
	int (*allgather)(efab_rt_t *rt, const void *in, void *out, size_t len);
	/* Element-wise reduction over ranks (error counts, status agreement). */
	int (*allreduce)(efab_rt_t *rt, const double *in, double *out, size_t n, int op);
	/* Non-blocking barrier: start, then test until *done. A rank that serves
	 * one-sided traffic on a manual-progress provider waits in this while it
	 * keeps driving the fabric (efab_barrier_progress). */
	int (*ibarrier)(efab_rt_t *rt, void **req);
	int (*ibarrier_test)(efab_rt_t *rt, void *req, int *done);
	/* Ends the whole job; used when a rank cannot continue (timeout, peer failure). */
	void (*abort)(efab_rt_t *rt, int code) __attribute__((noreturn));
};

/* A one-rank runtime. */
efab_rt_t *efab_rt_single(void);

/* Collective: every rank gets the worst (largest) status any rank had, so
 * that all take the same path and none waits in a collective alone;
 * EFAB_ERR when the reduction itself fails. */
int efab_rt_agree(efab_rt_t *rt, int rc);

/* SIGINT and SIGTERM call handler (which asks the program to stop). */
void efab_catch_stop_signals(void (*handler)(int));

#ifdef __cplusplus
}
#endif

#endif
