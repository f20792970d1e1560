/* The runtime of a program with a main of its own (runtime.h). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "efab.h"
#include "mpi_rt.h"
#include "runtime.h"

int efab_launched_by_mpi(void)
{
	static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK",
					   "SLURM_PROCID", "MPI_LOCALNRANKS"};
	for (size_t i = 0; i < EFAB_ARRAY_SIZE(vars); i++)
		if (getenv(vars[i]))
			return 1;
	return 0;
}

int efab_runtime_up(efab_runtime_t *r, int mode, const char *prog, int *argc, char ***argv)
{
	char prefix[96];
	efab_log_set_prefix(prog);
	r->mpi = 0;
	r->rt = efab_rt_single();
	if (mode == EFAB_RUNTIME_SINGLE || (mode == EFAB_RUNTIME_AUTO && !efab_launched_by_mpi()))
		return EFAB_OK;
	if (MPI_Init(argc, argv) != MPI_SUCCESS) {
		efab_log_error("MPI_Init failed");
		return EFAB_ERR;
	}
	if (efab_mpi_rt_init(&r->mpi_rt)) {
		efab_log_error("MPI communicator setup failed");
		MPI_Abort(MPI_COMM_WORLD, EFAB_ERR);
	}
	r->mpi = 1;
	r->rt = &r->mpi_rt;
	if (r->rt->rank)
		snprintf(prefix, sizeof(prefix), "%s[rank %d]", prog, r->rt->rank);
	else
		snprintf(prefix, sizeof(prefix), "%s", prog);
	efab_log_set_prefix(prefix);
	return EFAB_OK;
}

int efab_runtime_down(efab_runtime_t *r, int rc)
{
	if (!r->mpi)
		return rc;
	rc = efab_rt_agree(r->rt, rc);
	MPI_Finalize();
	r->mpi = 0;
	r->rt = efab_rt_single();
	return rc;
}
