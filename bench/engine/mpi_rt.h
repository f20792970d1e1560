/* The MPI runtime (mpi_rt.c). */
#ifndef EFAB_MPI_RT_H
#define EFAB_MPI_RT_H

#include "efab_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The MPI implementation of the runtime (after MPI_Init). */
int efab_mpi_rt_init(efab_rt_t *rt);
/* Collective over parent: a runtime over the ranks that gave the same color
 * (MPI_Comm_split); a rank with color < 0 gets an empty one (impl NULL,
 * size 0). local_rank/local_size stay the parent's. */
int efab_mpi_rt_sub(const efab_rt_t *parent, int color, efab_rt_t *sub);
void efab_mpi_rt_sub_free(efab_rt_t *sub);
/* A barrier that sleeps while it waits (1 ms polls): for ranks with no
 * traffic to drive, so that they leave the cores to those measuring. EFAB_ERR
 * after timeout_s. */
int efab_mpi_idle_barrier(efab_rt_t *rt, double timeout_s);

#ifdef __cplusplus
}
#endif

#endif
