/* efab_shmem_reg: what NVSHMEM's registration costs, per call and per byte:
 * nvshmemx_buffer_register / nvshmemx_buffer_unregister of cudaMalloc'd
 * (cuMemAlloc) and of host memory, and nvshmem_malloc / nvshmem_free of the
 * same sizes, with the fit and CSV columns of efab_mr_reg. NVSHMEM starts
 * from the MPI job with the unique-id bootstrap and the host-library init
 * (nvshmemx_hostlib_init_attr: no device code; a single PE works too).
 * Built only when NVSHMEM is found; exits 77 without a GPU. C++ because
 * NVSHMEM's headers are. */
#include <assert.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvshmem.h>
#include <nvshmemx.h>

#include "efab_cuda.h"
#include "efab_select.h"
#include "reg.h"
#include "rows.h"
#include "runtime.h"

static int reg_cb(reg_ctx_t *, void *buf, size_t len, void **h)
{
	*h = buf;
	int e = nvshmemx_buffer_register(buf, len);
	if (e) {
		efab_log_error("nvshmemx_buffer_register(%zu bytes) failed: %d", len, e);
		return EFAB_ERR;
	}
	return EFAB_OK;
}

static int unreg_cb(reg_ctx_t *, void *h)
{
	int e = nvshmemx_buffer_unregister(h);
	if (e) {
		efab_log_error("nvshmemx_buffer_unregister failed: %d", e);
		return EFAB_ERR;
	}
	return EFAB_OK;
}

static int malloc_cb(reg_ctx_t *, void *, size_t len, void **h)
{
	void *p = nvshmem_malloc(len); /* collective: every PE runs the same sequence */
	if (!p) {
		efab_log_error("nvshmem_malloc(%zu bytes) failed (symmetric heap too small? "
			       "NVSHMEM_SYMMETRIC_SIZE)", len);
		return EFAB_ERR;
	}
	*h = p;
	return EFAB_OK;
}

static int free_cb(reg_ctx_t *, void *h)
{
	nvshmem_free(h);
	return EFAB_OK;
}

static const efab_regop_t ops[] = {
	{"buffer_register_cuda", reg_cb, unreg_cb, 1, EFAB_MEM_CUDA, 1},
	{"buffer_register_host", reg_cb, unreg_cb, 1, EFAB_MEM_HOST, 1},
	{"nvshmem_malloc", malloc_cb, free_cb, 0, -1, 1},
};

/* NVSHMEM up through the unique-id bootstrap over MPI, the host library
 * alone (no device code, so no device link step), with a symmetric heap
 * for the largest size. */
static int nvshmem_up(reg_ctx_t *r)
{
	efab_rt_t &rt = *r->rt;
	char heap[64];
	int rc = EFAB_OK;
	uint64_t want = 2 * r->o.sizes.max + (256ull << 20);
	snprintf(heap, sizeof(heap), "%llu",
		 (unsigned long long)(want < (1ull << 30) ? (1ull << 30) : want));
	setenv("NVSHMEM_SYMMETRIC_SIZE", heap, 0); /* a user's setting wins */
	nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
	if (rt.rank == 0 && nvshmemx_get_uniqueid(&id)) {
		efab_log_error("nvshmemx_get_uniqueid failed");
		rc = EFAB_ERR;
	}
	MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
	nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
	nvshmemx_set_attr_uniqueid_args(rt.rank, rt.size, &id, &attr);
	if (!rc && nvshmemx_hostlib_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr)) {
		efab_log_error("nvshmemx_hostlib_init_attr (unique-id bootstrap) failed");
		rc = EFAB_ERR;
	}
	return rc;
}

/* The remote transport NVSHMEM really initialised, from what it loaded: its
 * transport plugins (nvshmem_transport_<name>.so.N: libfabric, ibrc, ucx,
 * ibgda, ...) mapped in this process after init, not what
 * NVSHMEM_REMOTE_TRANSPORT asked for; "none" when no plugin was loaded (then
 * registrations never reach a NIC). On a p5en node this says whether
 * nvshmemx_buffer_register went through libfabric. */
static void loaded_transport(char *out, size_t len)
{
	static const char tag[] = "nvshmem_transport_";
	char line[4096];
	size_t n = 0;
	out[0] = 0;
	FILE *f = fopen("/proc/self/maps", "r");
	while (f && fgets(line, sizeof(line), f)) {
		const char *p = strstr(line, tag);
		if (!p)
			continue;
		p += sizeof(tag) - 1;
		char name[64];
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(p, ".\n"), p);
		if (!name[0] || strstr(out, name))
			continue;
		n += (size_t)snprintf(out + n, n < len ? len - n : 0, "%s%s", n ? "+" : "", name);
	}
	if (f)
		fclose(f);
	if (!out[0])
		snprintf(out, len, "none");
}

/* Run info, the CSV (rank 0's verdict for every rank, before any
 * collective), the header, then every op of the table. */
static int run_ops(reg_ctx_t *r, const efab_bench_row_t *row)
{
	efab_rt_t &rt = *r->rt;
	int maj = 0, min = 0, rc;
	nvshmem_info_get_version(&maj, &min);
	char name[NVSHMEM_MAX_NAME_LEN] = "";
	nvshmem_info_get_name(name);
	char gpu_name[16];
	snprintf(gpu_name, sizeof(gpu_name), "gpu%d", r->gpu);
	/* the fabric column: the remote transport NVSHMEM loaded, and what was asked
	 * where that differs */
	const char *asked = getenv("NVSHMEM_REMOTE_TRANSPORT");
	char loaded[96], fabric[128];
	loaded_transport(loaded, sizeof(loaded));
	if (asked && *asked && strcmp(asked, loaded))
		snprintf(fabric, sizeof(fabric), "%s (asked %s)", loaded, asked);
	else
		snprintf(fabric, sizeof(fabric), "%s", loaded);
	efab_run_info_ran_on(&r->ri, "nvshmem", fabric, gpu_name, name);
	snprintf(r->ri.mem_local, sizeof(r->ri.mem_local), "cuda+host");
	snprintf(r->ri.mem_remote, sizeof(r->ri.mem_remote), "-");
	efab_reg_columns(&r->ri);
	efab_run_info_begin(&r->ri, row->csv_name, rt.size);
	rc = efab_reg_open_csv(r);
	char note1[512], note2[256];
	snprintf(note1, sizeof(note1),
		 "NVSHMEM %d.%d (%s), %d PEs, GPU %d, symmetric heap %s B; remote transport loaded: %s "
		 "(NVSHMEM_REMOTE_TRANSPORT %s)",
		 maj, min, name, rt.size, r->gpu, getenv("NVSHMEM_SYMMETRIC_SIZE"), loaded,
		 asked && *asked ? asked : "unset");
	snprintf(note2, sizeof(note2),
		 "lat_us_* = register (or nvshmem_malloc) time, dereg_us_* = unregister (or "
		 "nvshmem_free) time, microseconds");
	const char *notes[] = {note1, note2};
	if (!rc && rt.rank == 0)
		efab_table_begin(stdout, &r->ri, notes, 2, 1, 0);
	for (size_t i = 0; i < r->nops && !rc; i++) {
		r->kind = ops[i].kind >= 0 ? ops[i].kind : EFAB_MEM_CUDA;
		rc = efab_reg_run_regime(r, ops[i].name);
	}
	efab_csv_close(&r->csv);
	return rc;
}

int main(int argc, char **argv)
{
	int rc;
	reg_ctx_t *r = efab_reg_start("efab_shmem_reg", argc, argv, &rc);
	if (!r)
		return rc;
	/* MPI even alone: NVSHMEM's unique-id bootstrap goes over it */
	if (efab_runtime_up(&r->run, EFAB_RUNTIME_MPI, r->row->name, &argc, &argv))
		return EFAB_ERR;
	efab_reg_init(r, r->run.rt, ops, sizeof(ops) / sizeof(ops[0]), "no",
		      "NVSHMEM; registers with its remote transport when one is in use");
	if (!(rc = efab_gpu_pick(r->o.gpu, r->rt->local_rank, &r->gpu)) &&
	    !(rc = efab_cuda_set_device(r->gpu)) && !(rc = nvshmem_up(r))) {
		rc = run_ops(r, r->row);
		nvshmemx_hostlib_finalize();
	}
	return efab_runtime_down(&r->run, rc);
}
