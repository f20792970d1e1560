/* A program's runtime, up and down: MPI when the program runs as a job, or a
 * single process. For the executables with a main of their own (mr_reg,
 * shmem_reg, probe); the engine's benchmarks always run under MPI. */
#ifndef EFAB_RUNTIME_H
#define EFAB_RUNTIME_H

#include "efab_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

enum efab_runtime_mode {
	EFAB_RUNTIME_AUTO = 0, /* MPI when a launcher started the process, else single */
	EFAB_RUNTIME_MPI,      /* MPI always (alone, a one-rank job) */
	EFAB_RUNTIME_SINGLE,   /* one process, no MPI */
};

typedef struct efab_runtime {
	efab_rt_t *rt;    /* the runtime in use: &mpi_rt or efab_rt_single() */
	int mpi;          /* MPI is initialised: efab_runtime_down finalizes it */
	efab_rt_t mpi_rt;
} efab_runtime_t;

/* 1 when mpirun, srun or another PMI launcher started this process. */
int efab_launched_by_mpi(void);

/* Bring the runtime up (mode: enum efab_runtime_mode) and name the process
 * in messages: prog on rank 0 and alone, prog[rank N] elsewhere. EFAB_OK, or
 * EFAB_ERR when MPI_Init fails (logged). */
int efab_runtime_up(efab_runtime_t *r, int mode, const char *prog, int *argc, char ***argv);

/* Take it down: under MPI every rank leaves with the worst status any rank
 * had (efab_rt_agree), then MPI_Finalize. Returns the status to exit with. */
int efab_runtime_down(efab_runtime_t *r, int rc);

#ifdef __cplusplus
}
#endif

#endif
