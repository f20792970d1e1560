/* The MPI implementation of the runtime (efab_rt_t): the world, sub-runtimes
 * of a communicator split, and a barrier that sleeps while it waits. */
#include <mpi.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "efab.h"
#include "efab_clock.h"
#include "mpi_rt.h"

/* rt->impl: NULL for MPI_COMM_WORLD, else the MPI_Comm of a sub-runtime */
static MPI_Comm comm_of(const efab_rt_t *rt)
{
	return rt->impl ? *(MPI_Comm *)rt->impl : MPI_COMM_WORLD;
}

static int mpi_barrier(efab_rt_t *rt)
{
	return MPI_Barrier(comm_of(rt)) != MPI_SUCCESS;
}

static int mpi_allgather(efab_rt_t *rt, const void *in, void *out, size_t len)
{
	return MPI_Allgather(in, (int)len, MPI_BYTE, out, (int)len, MPI_BYTE, comm_of(rt)) !=
	       MPI_SUCCESS;
}

static int mpi_allreduce(efab_rt_t *rt, const double *in, double *out, size_t n, int op)
{
	MPI_Op mop = op == EFAB_RT_MAX ? MPI_MAX : op == EFAB_RT_MIN ? MPI_MIN : MPI_SUM;
	return MPI_Allreduce(in, out, (int)n, MPI_DOUBLE, mop, comm_of(rt)) != MPI_SUCCESS;
}

static MPI_Request ibarrier_req; /* one non-blocking barrier at a time */

static int mpi_ibarrier(efab_rt_t *rt, void **req)
{
	*req = &ibarrier_req;
	return MPI_Ibarrier(comm_of(rt), &ibarrier_req) != MPI_SUCCESS;
}

static int mpi_ibarrier_test(efab_rt_t *rt, void *req, int *done)
{
	(void)rt;
	return MPI_Test((MPI_Request *)req, done, MPI_STATUS_IGNORE) != MPI_SUCCESS;
}

__attribute__((noreturn)) static void mpi_abort(efab_rt_t *rt, int code)
{
	(void)rt;
	MPI_Abort(MPI_COMM_WORLD, code);
	_exit(code);
}

int efab_mpi_rt_sub(const efab_rt_t *parent, int color, efab_rt_t *sub)
{
	MPI_Comm *comm = malloc(sizeof(*comm));
	*sub = (efab_rt_t){0};
	if (!comm)
		return EFAB_ERR;
	if (MPI_Comm_split(comm_of(parent), color < 0 ? MPI_UNDEFINED : color, parent->rank,
			   comm) != MPI_SUCCESS) {
		free(comm);
		return EFAB_ERR;
	}
	if (*comm == MPI_COMM_NULL) {
		free(comm);
		return EFAB_OK;
	}
	*sub = *parent;
	sub->impl = comm;
	MPI_Comm_rank(*comm, &sub->rank);
	MPI_Comm_size(*comm, &sub->size);
	return EFAB_OK;
}

void efab_mpi_rt_sub_free(efab_rt_t *sub)
{
	if (sub->impl) {
		MPI_Comm_free((MPI_Comm *)sub->impl);
		free(sub->impl);
	}
	*sub = (efab_rt_t){0};
}

int efab_mpi_idle_barrier(efab_rt_t *rt, double timeout_s)
{
	MPI_Request req;
	int done = 0;
	efab_deadline_t deadline = efab_deadline_in(timeout_s);
	if (MPI_Ibarrier(comm_of(rt), &req) != MPI_SUCCESS)
		return EFAB_ERR;
	while (!done) {
		if (MPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
			return EFAB_ERR;
		if (done)
			break;
		if (efab_deadline_passed(deadline))
			return EFAB_ERR;
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
	return EFAB_OK;
}

int efab_mpi_rt_init(efab_rt_t *rt)
{
	MPI_Comm local;
	*rt = (efab_rt_t){0};
	MPI_Comm_rank(MPI_COMM_WORLD, &rt->rank);
	MPI_Comm_size(MPI_COMM_WORLD, &rt->size);
	if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local) !=
	    MPI_SUCCESS)
		return -1;
	MPI_Comm_rank(local, &rt->local_rank);
	MPI_Comm_size(local, &rt->local_size);
	MPI_Comm_free(&local);
	rt->barrier = mpi_barrier;
	rt->allgather = mpi_allgather;
	rt->allreduce = mpi_allreduce;
	rt->ibarrier = mpi_ibarrier;
	rt->ibarrier_test = mpi_ibarrier_test;
	rt->abort = mpi_abort;
	return 0;
}

