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
#include "efab_fitrace.h"
#include "efab_select.h"
#include "reg.h"
#include "rows.h"
#include "runtime.h"
#include "shmem_up.h"

/* ---- registrations counted below NVSHMEM (libefab_fitrace.so) ----
 * Around every registration call the interposer's per-domain counts are
 * read before and after: the calls it caused (fi_mr_reg/regv/regattr) on
 * domains NVSHMEM opened, on how many of them, and the provider's own
 * (inner domains: the efa fabric's shm peer domain). A row reports the
 * range over its size's calls ("2", or "2-3" when they differ). */
static efab_fitrace_read_fn trace_read;
static efab_fitrace_dom_t trace_before[EFAB_FITRACE_MAX_DOMAINS];
struct trace_range {
	uint64_t lo, hi;
	int any;
};
/* Per op and size (rows are written after all sizes of an op, for the fit) */
#define TRACE_KEYS 256
static struct trace_key {
	int op; /* EFAB_MEM_CUDA / _HOST / _CUDA_VMM for buffer_register, OP_MALLOC */
	uint64_t size;
	struct trace_range calls, doms, inner;
} keys[TRACE_KEYS];
static size_t nkeys;
enum { OP_MALLOC = 1000 };

static struct trace_key *key_of(int op, uint64_t size, int add)
{
	for (size_t i = 0; i < nkeys; i++)
		if (keys[i].op == op && keys[i].size == size)
			return &keys[i];
	if (!add || nkeys == TRACE_KEYS)
		return NULL;
	keys[nkeys].op = op;
	keys[nkeys].size = size;
	return &keys[nkeys++];
}

static void range_add(struct trace_range *t, uint64_t v)
{
	if (!t->any || v < t->lo)
		t->lo = v;
	if (!t->any || v > t->hi)
		t->hi = v;
	t->any = 1;
}

static void range_str(const struct trace_range *t, char *out, size_t len)
{
	if (!t || !t->any)
		snprintf(out, len, "-");
	else if (t->lo == t->hi)
		snprintf(out, len, "%llu", (unsigned long long)t->lo);
	else
		snprintf(out, len, "%llu-%llu", (unsigned long long)t->lo, (unsigned long long)t->hi);
}

static size_t trace_snap(efab_fitrace_dom_t *out)
{
	size_t n = trace_read(out, EFAB_FITRACE_MAX_DOMAINS);
	return n < EFAB_FITRACE_MAX_DOMAINS ? n : EFAB_FITRACE_MAX_DOMAINS;
}

static void trace_begin(void)
{
	if (trace_read)
		trace_snap(trace_before);
}

static void trace_end(int op, uint64_t size)
{
	static efab_fitrace_dom_t after[EFAB_FITRACE_MAX_DOMAINS];
	struct trace_key *k = trace_read ? key_of(op, size, 1) : NULL;
	if (!k)
		return;
	size_t n = trace_snap(after);
	uint64_t calls = 0, inner = 0, doms = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t b = 0;
		for (size_t j = 0; j < EFAB_FITRACE_MAX_DOMAINS; j++)
			if (trace_before[j].fid == after[i].fid) {
				b = trace_before[j].regs;
				break;
			}
		uint64_t d = after[i].regs - b;
		if (after[i].inner)
			inner += d;
		else {
			calls += d;
			doms += d > 0;
		}
	}
	range_add(&k->calls, calls);
	range_add(&k->doms, doms);
	range_add(&k->inner, inner);
}

static int reg_cb(reg_ctx_t *r, void *buf, size_t len, void **h)
{
	*h = buf;
	trace_begin();
	int e = nvshmemx_buffer_register(buf, len);
	trace_end(r->kind, len);
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
	trace_begin();
	void *p = nvshmem_malloc(len); /* collective: every PE runs the same sequence */
	trace_end(OP_MALLOC, len);
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
	/* only with --mem cuda-vmm: VMM memory (cuMemCreate), what PyTorch's
	 * expandable segments hand to nvshmemx_buffer_register */
	{"buffer_register_cuda_vmm", reg_cb, unreg_cb, 1, EFAB_MEM_CUDA_VMM, 1},
};

static int op_wanted(const reg_ctx_t *r, const efab_regop_t *op)
{
	return op->kind != EFAB_MEM_CUDA_VMM || r->o.mem_local == EFAB_MEM_CUDA_VMM;
}

/* NVSHMEM up (shmem_up.h) with a symmetric heap for the largest size. */
static int nvshmem_up(reg_ctx_t *r)
{
	uint64_t want = 2 * r->o.sizes.max + (256ull << 20);
	return efab_nvshmem_up(r->rt->rank, r->rt->size, want < (1ull << 30) ? (1ull << 30) : want);
}

/* The columns efab_shmem_reg adds after the registration columns. */
enum { S_VERSION, S_TRANSPORT, S_LF_FABRIC, S_LF_MR_MODE, S_REGS, S_DOMS, S_INNER, S_N };
static const char *const shmem_cols[S_N] = {"nvshmem_version", "transport", "lf_fabric", "lf_mr_mode",
					    "fi_mr_reg_calls", "fi_mr_reg_domains", "fi_mr_reg_inner"};
static char nv_version[32], nv_transport[96];

static void row_more(reg_ctx_t *, const char *op, efab_row_t *row, size_t first)
{
	char fab[128], mrm[32];
	efab_fitrace_fabric(trace_read, fab, sizeof(fab), mrm, sizeof(mrm));
	snprintf(row->extra[first + S_VERSION], sizeof(row->extra[0]), "%s", nv_version);
	snprintf(row->extra[first + S_TRANSPORT], sizeof(row->extra[0]), "%s", nv_transport);
	snprintf(row->extra[first + S_LF_FABRIC], sizeof(row->extra[0]), "%s", fab);
	snprintf(row->extra[first + S_LF_MR_MODE], sizeof(row->extra[0]), "%s", mrm);
	int id = !strcmp(op, "nvshmem_malloc")	 ? (int)OP_MALLOC
		 : strstr(op, "host")		 ? (int)EFAB_MEM_HOST
		 : strstr(op, "vmm")		 ? (int)EFAB_MEM_CUDA_VMM
						 : (int)EFAB_MEM_CUDA;
	const struct trace_key *k = key_of(id, row->size, 0);
	range_str(k ? &k->calls : NULL, row->extra[first + S_REGS], sizeof(row->extra[0]));
	range_str(k ? &k->doms : NULL, row->extra[first + S_DOMS], sizeof(row->extra[0]));
	range_str(k ? &k->inner : NULL, row->extra[first + S_INNER], sizeof(row->extra[0]));
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
	const char *asked = getenv("NVSHMEM_REMOTE_TRANSPORT");
	char loaded[96];
	efab_nvshmem_ran_on(&r->ri, trace_read, r->gpu, loaded, sizeof(loaded));
	snprintf(r->ri.mem_local, sizeof(r->ri.mem_local), "%s",
		 r->o.mem_local == EFAB_MEM_CUDA_VMM ? "cuda+host+cuda-vmm" : "cuda+host");
	snprintf(r->ri.mem_remote, sizeof(r->ri.mem_remote), "-");
	efab_reg_columns(&r->ri);
	for (size_t i = 0; i < S_N; i++)
		r->ri.extra_cols[r->ri.n_extra++] = shmem_cols[i];
	efab_nvshmem_version_of(name, maj, min, nv_version, sizeof(nv_version));
	snprintf(nv_transport, sizeof(nv_transport), "%s", loaded);
	r->row_more = row_more;
	efab_run_info_begin(&r->ri, row->csv_name, rt.size);
	/* the table: the registration columns, reg_path (CUDA) and what the
	 * interposer counted; the op column as wide as the longest op run */
	int opw = 0;
	for (size_t i = 0; i < r->nops; i++)
		if (op_wanted(r, &ops[i]) && (int)strlen(ops[i].name) > opw)
			opw = (int)strlen(ops[i].name);
	char err[2048];
	r->kind = EFAB_MEM_CUDA;
	rc = efab_reg_table(r, trace_read ? "fi_mr_reg_calls,fi_mr_reg_domains" : NULL, opw, err,
			    sizeof(err));
	if (rc && rt.rank == 0)
		efab_log_error("%s", err);
	if (!rc)
		rc = efab_reg_open_csv(r);
	char note1[512], note2[256], note3[512], tfab[128], tmrm[32];
	efab_fitrace_fabric(trace_read, tfab, sizeof(tfab), tmrm, sizeof(tmrm));
	if (trace_read)
		snprintf(note3, sizeof(note3),
			 "fi_mr_reg_calls = fi_mr_reg/regv/regattr calls one registration caused on the "
			 "domains NVSHMEM opened (libfabric fabric %s, mr_mode %s), fi_mr_reg_domains = on how "
			 "many, fi_mr_reg_inner = the provider's own on its inner domains; counted below "
			 "NVSHMEM by libefab_fitrace.so, range over the size's calls",
			 tfab, tmrm);
	else
		snprintf(note3, sizeof(note3),
			 "fi_mr_reg_* not counted: libefab_fitrace.so not preloaded (EFAB_FITRACE=0, or "
			 "not found beside the binary in ../lib)");
	snprintf(
		note1, sizeof(note1),
		"NVSHMEM %s (%s; OpenSHMEM %d.%d), %d PEs, GPU %d, symmetric heap %s B; remote transport "
		"loaded: %s (NVSHMEM_REMOTE_TRANSPORT %s)",
		nv_version, name, maj, min, rt.size, r->gpu, getenv("NVSHMEM_SYMMETRIC_SIZE"),
		loaded, asked && *asked ? asked : "unset");
	snprintf(note2, sizeof(note2),
		 "lat_us_* = register (or nvshmem_malloc) time, dereg_us_* = unregister (or "
		 "nvshmem_free) time, microseconds");
	const char *notes[] = {note1, note2, note3};
	char b1[512];
	snprintf(b1, sizeof(b1),
		 "NVSHMEM %s, %d PEs, GPU %d; transport %s (libfabric fabric %s, mr_mode %s)",
		 nv_version, rt.size, r->gpu, loaded, tfab, tmrm);
	const char *lines[] = {
		b1, "*_us = register (nvshmem_malloc) time, dereg_us = unregister (nvshmem_free) "
		    "time, microseconds; fi_mr_reg_*: counted below NVSHMEM (-v)"};
	if (!rc && rt.rank == 0)
		efab_table_top(stdout, &r->table, &r->ri, r->o.verbose, lines,
			       EFAB_ARRAY_SIZE(lines), notes, 3);
	for (size_t i = 0; i < r->nops && !rc; i++) {
		if (!op_wanted(r, &ops[i]))
			continue;
		r->kind = ops[i].kind >= 0 ? ops[i].kind : EFAB_MEM_CUDA;
		rc = efab_reg_run_regime(r, ops[i].name);
	}
	efab_csv_close(&r->csv);
	return rc;
}

int main(int argc, char **argv)
{
	int rc;
	trace_read = efab_fitrace_up(argv);
	reg_ctx_t *r = efab_reg_start("efab_shmem_reg", argc, argv, &rc);
	if (!r)
		return rc;
	/* --mem picks only whether VMM buffers are measured too: cuda and host
	 * buffers always are, and NVSHMEM, not efabench, registers them */
	if ((r->o.mem_local != EFAB_MEM_HOST && r->o.mem_local != EFAB_MEM_CUDA_VMM) ||
	    r->o.mem_remote != r->o.mem_local || r->o.dmabuf) {
		efab_log_error("efab_shmem_reg takes --mem cuda-vmm (adds buffer_register_cuda_vmm) and no "
			       "other --mem or --dmabuf: cuda and host buffers are always measured");
		return EFAB_EUSAGE;
	}
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
