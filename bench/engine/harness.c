#include <math.h>
#include <mpi.h>
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "efab_abi.h"
#include "efab_json.h"
#include "efab_topo.h"
#include "harness.h"

/* ---- the MPI runtime ---- */

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
	uint64_t deadline = efab_now_ns() + (uint64_t)(timeout_s * 1e9);
	if (MPI_Ibarrier(comm_of(rt), &req) != MPI_SUCCESS)
		return EFAB_ERR;
	while (!done) {
		if (MPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
			return EFAB_ERR;
		if (done)
			break;
		if (efab_now_ns() > deadline)
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

/* ---- helpers for benchmarks ---- */

void efab_note(efab_ctx_t *c, const char *fmt, ...)
{
	if (c->nnotes >= EFAB_MAX_NOTES)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->notes[c->nnotes++], sizeof(c->notes[0]), fmt, ap);
	va_end(ap);
}

uint64_t efab_iters_for(const efab_ctx_t *c, uint64_t size)
{
	return c->o.iters ? c->o.iters : efab_scaled_count(1000, 65536, size, 20);
}

uint64_t efab_warmup_for(const efab_ctx_t *c, uint64_t size)
{
	if (c->o.iters || size <= 65536)
		return c->o.warmup;
	uint64_t n = c->o.warmup * 65536 / size;
	return n < 2 && c->o.warmup >= 2 ? 2 : n;
}

int efab_fill(efab_ctx_t *c, size_t off, size_t len, uint64_t seq)
{
	int host = efab_mem_host_accessible(c->mem.kind);
	uint8_t *p = host ? efab_local(c, off) : c->bounce;
	for (size_t j = 0; j + 1 < len; j++)
		p[j] = efab_pattern(seq, j);
	p[len - 1] = efab_tag(seq);
	return host ? EFAB_OK : efab_mem_write(&c->mem, off, c->bounce, len);
}

/* One comparison of [off, off+len) with message seq; corrupt flips a byte of
 * the copy first (the EFAB_FAULT_CORRUPT test hook). */
static uint64_t verify_once(efab_ctx_t *c, size_t off, size_t len, uint64_t seq, int corrupt)
{
	uint8_t *p;
	uint64_t bad = 0;
	if (efab_mem_host_accessible(c->mem.kind) && !corrupt) {
		p = efab_local(c, off);
	} else { /* a snapshot: other (identical) writes of the window may still land */
		if (efab_mem_read(&c->mem, off, c->bounce, len))
			return len;
		p = c->bounce;
	}
	if (corrupt)
		p[len / 2] ^= 0x01;
	for (size_t j = 0; j + 1 < len; j++)
		bad += p[j] != efab_pattern(seq, j);
	bad += p[len - 1] != efab_tag(seq);
	return bad;
}

/* EFAB_FAULT_CORRUPT=N flips one received byte of every Nth checked message
 * so the tests can prove that -c catches damage; that damage is persistent. */
static int fault_now(efab_ctx_t *c)
{
	return c->faults.corrupt_every && ++c->nverified % c->faults.corrupt_every == 0;
}

static uint64_t report(uint64_t bad, size_t len, uint64_t seq)
{
	if (bad && efab_log_verbose())
		efab_log_error("payload check: %llu of %zu bytes differ (message %llu)",
			       (unsigned long long)bad, len, (unsigned long long)seq);
	return bad ? 1 : 0;
}

uint64_t efab_verify(efab_ctx_t *c, size_t off, size_t len, uint64_t seq)
{
	return report(verify_once(c, off, len, seq, fault_now(c)), len, seq);
}

uint64_t efab_verify_settled(efab_ctx_t *c, size_t off, size_t len, uint64_t seq)
{
	int corrupt = fault_now(c);
	uint64_t bad = verify_once(c, off, len, seq, corrupt);
	/* The tag byte can become visible before the bytes copied with it
	 * (x86 string copies do not store in address order): give the rest a
	 * moment to land, driving progress, before calling it an error. */
	for (int t = 0; bad && !corrupt && t < 2000; t++) {
		if (efab_progress(&c->fab) < 0)
			break;
		bad = verify_once(c, off, len, seq, 0);
		if (!bad)
			c->late++;
	}
	return report(bad, len, seq);
}

int efab_more_row(efab_ctx_t *c, const efab_row_t *row)
{
	efab_row_t *r = realloc(c->more_rows, (c->n_more_rows + 1) * sizeof(*r));
	if (!r) {
		efab_log_error("out of memory for result rows");
		return EFAB_ERR;
	}
	r[c->n_more_rows++] = *row;
	c->more_rows = r;
	return EFAB_OK;
}

void efab_fail(efab_ctx_t *c)
{
	c->rt->abort(c->rt, EFAB_ERR);
}

/* ---- test hooks ---- */

static void faults_read(struct efab_faults *f)
{
	const char *v = getenv("EFAB_FAULT_CORRUPT");
	f->corrupt_every = v ? strtoull(v, NULL, 10) : 0;
	v = getenv("EFAB_FAULT_INJECT_RMA");
	f->inject_rma_set = v && *v;
	f->inject_rma = f->inject_rma_set ? strtoull(v, NULL, 10) : 0;
	v = getenv("EFAB_FAULT_STALL");
	f->stall_rank = v && *v ? atoi(v) : -1;
}

/* ---- every node's facts ---- */

typedef struct node_facts {
	char host[64];
	char libfabric[16]; /* running: fi_version() */
	char path[256];     /* the libfabric.so loaded */
	char installer[32]; /* EFA installer of that library's install */
	char kernel[64];
	char topology[192]; /* the first rank of each node fills it */
} node_facts_t;

static void facts_of_this_rank(const efab_ctx_t *c, int want_topo, node_facts_t *me)
{
	struct utsname u;
	uint32_t v = fi_version();
	memset(me, 0, sizeof(*me));
	gethostname(me->host, sizeof(me->host) - 1);
	snprintf(me->libfabric, sizeof(me->libfabric), "%u.%u", FI_MAJOR(v), FI_MINOR(v));
	efab_libfabric_path(me->path, sizeof(me->path));
	efab_efa_installer_of(me->path, me->installer, sizeof(me->installer));
	if (!uname(&u))
		snprintf(me->kernel, sizeof(me->kernel), "%s", u.release);
	if (want_topo && c->rt->local_rank == 0)
		efab_topo_summary(me->topology, sizeof(me->topology));
}

/* "libfabric 2.6 (node1), 1.17 (node0, node2)": which nodes report which
 * value of one fact; "" when all agree. */
static void differing(const node_facts_t *nodes, int n, size_t off, const char *what, char *buf,
		      size_t len)
{
	size_t k = 0;
	buf[0] = '\0';
	int same = 1;
	for (int a = 1; a < n; a++)
		same &= !strcmp((const char *)&nodes[a] + off, (const char *)&nodes[0] + off);
	if (same)
		return;
	k += (size_t)snprintf(buf, len, "%s", what);
	for (int a = 0; a < n && k < len; a++) {
		const char *val = (const char *)&nodes[a] + off;
		int seen = 0;
		for (int b = 0; b < a; b++)
			seen |= !strcmp((const char *)&nodes[b] + off, val);
		if (seen)
			continue;
		k += (size_t)snprintf(buf + k, len - k, "%s %s (", a ? ";" : "", *val ? val : "none");
		for (int b = a, first = 1; b < n && k < len; b++)
			if (!strcmp((const char *)&nodes[b] + off, val)) {
				k += (size_t)snprintf(buf + k, len - k, "%s%s", first ? "" : ", ",
						      nodes[b].host);
				first = 0;
			}
		if (k < len)
			k += (size_t)snprintf(buf + k, len - k, ")");
	}
}

static void write_nodes_json(const char *path, const node_facts_t *nodes, int n,
			     const node_facts_t *all, int nranks, const char *mismatch)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		efab_log_error("--nodes-json: cannot write '%s': %s", path, strerror(errno));
		return;
	}
	fprintf(f, "{\"nodes\": [");
	for (int a = 0; a < n; a++) {
		const node_facts_t *x = &nodes[a];
		fprintf(f, "%s\n  {\"hostname\": ", a ? "," : "");
		efab_json_str(f, x->host);
		fprintf(f, ", \"ranks\": [");
		for (int r = 0, first = 1; r < nranks; r++)
			if (!strcmp(all[r].host, x->host)) {
				fprintf(f, "%s%d", first ? "" : ", ", r);
				first = 0;
			}
		fprintf(f, "], \"libfabric_version\": ");
		efab_json_str(f, x->libfabric);
		fprintf(f, ", \"libfabric_path\": ");
		efab_json_str(f, x->path);
		fprintf(f, ", \"efa_installer\": ");
		efab_json_str(f, x->installer);
		fprintf(f, ", \"kernel\": ");
		efab_json_str(f, x->kernel);
		fprintf(f, ", \"topology\": ");
		efab_json_str(f, x->topology);
		fprintf(f, "}");
	}
	fprintf(f, "\n],\n\"mismatch\": ");
	efab_json_str(f, mismatch);
	fprintf(f, "}\n");
	fclose(f);
}

/* Collective: every rank's host, libfabric and installer; rank 0 lists the
 * nodes in the header and says what differs between them (a node on another
 * libfabric or installer is the first suspect of a multi-node surprise). */
static int node_provenance(efab_ctx_t *c)
{
	efab_rt_t *rt = c->rt;
	node_facts_t me, *all = calloc((size_t)rt->size, sizeof(*all));
	node_facts_t *nodes = calloc((size_t)rt->size, sizeof(*nodes));
	int rc = EFAB_OK;
	if (!all || !nodes) {
		efab_log_error("out of memory");
		rc = EFAB_ERR;
		goto out;
	}
	facts_of_this_rank(c, c->o.nodes_json[0] != '\0', &me);
	if (rt->allgather(rt, &me, all, sizeof(me))) {
		rc = EFAB_ERR;
		goto out;
	}
	if (rt->rank)
		goto out;
	int n = 0;
	for (int r = 0; r < rt->size; r++) {
		int a = 0;
		while (a < n && strcmp(nodes[a].host, all[r].host))
			a++;
		if (a == n)
			nodes[n++] = all[r];
		else if (!nodes[a].topology[0])
			memcpy(nodes[a].topology, all[r].topology, sizeof(nodes[a].topology));
	}
	c->nnodes = n;
	size_t k = (size_t)snprintf(c->nodes_summary, sizeof(c->nodes_summary), "%d node%s:", n,
				    n == 1 ? "" : "s");
	for (int a = 0; a < n && k < sizeof(c->nodes_summary); a++)
		k += (size_t)snprintf(c->nodes_summary + k, sizeof(c->nodes_summary) - k, "%s%s",
				      a ? ", " : " ", nodes[a].host);
	char d1[256], d2[256], d3[256];
	differing(nodes, n, offsetof(node_facts_t, libfabric), "libfabric", d1, sizeof(d1));
	differing(nodes, n, offsetof(node_facts_t, path), "libfabric library", d2, sizeof(d2));
	differing(nodes, n, offsetof(node_facts_t, installer), "EFA installer", d3, sizeof(d3));
	snprintf(c->nodes_mismatch, sizeof(c->nodes_mismatch), "%s%s%s%s%s", d1,
		 *d1 && (*d2 || *d3) ? "; " : "", d2, *d2 && *d3 ? "; " : "", d3);
	if (n > 1)
		efab_note(c, "%s", c->nodes_summary);
	if (c->nodes_mismatch[0]) {
		efab_note(c, "WARNING: the nodes differ: %s", c->nodes_mismatch);
		fprintf(stderr, "%s: warning: the nodes differ: %s\n", c->b->name, c->nodes_mismatch);
	}
	if (c->o.nodes_json[0])
		write_nodes_json(c->o.nodes_json, nodes, n, all, rt->size, c->nodes_mismatch);
out:
	free(all);
	free(nodes);
	return rc;
}

/* ---- the main flow ---- */


static int prescan(int argc, char **argv, const efab_bench_t *b)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			efab_opts_help(stdout, b->name, b->summary, b->mask);
			return 1;
		}
		if (!strcmp(argv[i], "-V") || !strcmp(argv[i], "--version")) {
			uint32_t v = fi_version();
			printf("%s (efabench) %s, built against libfabric %d.%d, running %u.%u\n",
			       b->name, EFAB_VERSION, FI_MAJOR_VERSION, FI_MINOR_VERSION, FI_MAJOR(v),
			       FI_MINOR(v));
			return 1;
		}
	}
	return 0;
}

static int check_opts(efab_ctx_t *c)
{
	const efab_bench_t *b = c->b;
	efab_rt_t *rt = c->rt;
	char sz[32];
	if (c->op == EFAB_OP_DEFAULT)
		c->op = b->default_op;
	/* The CPU cannot poll GPU memory for the last byte: arrival becomes the
	 * remote CQ data completion. */
	if ((b->mask & EFAB_B_PUT_LAT) && c->op == EFAB_OP_WRITE &&
	    (!efab_mem_host_accessible(c->o.mem_local) || !efab_mem_host_accessible(c->o.mem_remote)))
		c->op = EFAB_OP_WRITEDATA;
	if (!(b->ops & (1u << c->op))) {
		efab_log_error("--op %s is not an operation of %s", efab_op_name(c->op), b->name);
		return EFAB_EUSAGE;
	}
	if (b->mask & EFAB_B_ATOMIC) {
		size_t dsz = efab_dtype_size(c->o.dtype);
		if (!c->o.sizes_given)
			c->o.sizes = (efab_sizes_t){dsz, dsz, 2};
		for (size_t i = 0; i < efab_sizes_count(&c->o.sizes); i++)
			if (efab_sizes_at(&c->o.sizes, i) % dsz) {
				efab_log_error("--sizes: %llu bytes is not a whole number of %s elements "
					       "(%zu bytes each)",
					       (unsigned long long)efab_sizes_at(&c->o.sizes, i),
					       efab_dtype_name(c->o.dtype), dsz);
				return EFAB_EUSAGE;
			}
		if (c->o.contend) {
			if (rt->size < 2) {
				efab_log_error("--contend needs at least 2 ranks, got %d", rt->size);
				return EFAB_EUSAGE;
			}
			return EFAB_OK;
		}
	}
	if (b->exact_ranks > 0 && rt->size != b->exact_ranks) {
		efab_log_error("%s needs exactly %d ranks (mpirun -np %d), got %d", b->name,
			       b->exact_ranks, b->exact_ranks, rt->size);
		return EFAB_EUSAGE;
	}
	if (b->exact_ranks < 0 && rt->size < 2) {
		efab_log_error("%s needs at least 2 ranks, got %d", b->name, rt->size);
		return EFAB_EUSAGE;
	}
	if (!b->exact_ranks && (rt->size < 2 || rt->size % 2)) {
		efab_log_error("%s needs an even number of ranks >= 2 (pairs), got %d", b->name,
			       rt->size);
		return EFAB_EUSAGE;
	}
	if (c->o.dmabuf && c->o.mem_local != EFAB_MEM_CUDA && c->o.mem_remote != EFAB_MEM_CUDA) {
		efab_log_error("--dmabuf registers cuda memory: add --mem cuda (or cuda:host, host:cuda)");
		return EFAB_EUSAGE;
	}
	if (c->o.sizes.max > (1ull << 32)) {
		efab_size_str(c->o.sizes.max, sz, sizeof(sz));
		efab_log_error("--sizes: largest size %s is above the 4G a benchmark buffer may have",
			       sz);
		return EFAB_EUSAGE;
	}
	return EFAB_OK;
}

/* GPU and NIC pairing from the topology: for --domain auto and for GPU
 * memory. Binds the process near its GPU (or NIC) and notes the pairing. */
static int place(efab_ctx_t *c, efab_fabric_req_t *req)
{
	int gpu_kind = efab_mem_is_gpu(c->o.mem_local) || efab_mem_is_gpu(c->o.mem_remote);
	int want_auto = !strcmp(c->o.domain, "auto");
	char busid[32] = "";
	if (!want_auto && !gpu_kind)
		return EFAB_OK;
	if (gpu_kind && efab_cuda_device_count() > 0) {
		int n = efab_cuda_device_count();
		int g = c->o.gpu >= 0 ? c->o.gpu : c->rt->local_rank % n;
		efab_cuda_pci_bus_id(g, busid, sizeof(busid));
	}
	if (efab_topo_load(NULL, &c->topo))
		return want_auto ? EFAB_ERR : EFAB_OK;
	c->have_topo = 1;
	if (efab_topo_pair(&c->topo, c->rt->local_rank, c->o.gpu, busid, &c->pairing)) {
		if (want_auto)
			efab_note(c, "--domain auto: no GPU and no NIC in the topology; the first "
				     "matching domain is used");
		return EFAB_OK;
	}
	if (efab_topo_bind(&c->topo, &c->pairing) == EFAB_OK)
		efab_note(c, "rank 0 placement: GPU %s, NIC %s (%s), NUMA node %d, bound to cpuset %s",
			  c->pairing.gpu_busid[0] ? c->pairing.gpu_busid : "-",
			  c->pairing.nic_name[0] ? c->pairing.nic_name : "-",
			  c->pairing.nic_busid[0] ? c->pairing.nic_busid : "-", c->pairing.numa,
			  c->pairing.cpuset);
	if (want_auto && c->pairing.nic >= 0) {
		req->nic_busid = c->pairing.nic_busid;
		req->nic_name = c->pairing.nic_name;
	} else if (want_auto) {
		efab_note(c, "--domain auto: no NIC near the GPU in the topology; the first matching "
			     "domain is used");
	}
	return EFAB_OK;
}

static int open_fabric(efab_ctx_t *c, uint64_t caps)
{
	efab_fabric_req_t req = {
		.provider = c->o.provider,
		.fabric = c->o.fabric,
		.domain = c->o.domain,
		.caps = caps,
		.hmem = efab_mem_is_gpu(c->o.mem_local) || efab_mem_is_gpu(c->o.mem_remote),
		.cq_data = c->op == EFAB_OP_WRITEDATA,
		/* an unregistered source is only possible where FI_MR_LOCAL is not in
		 * force: asked without it, efa answers with its MR-cache path and
		 * efa-direct (which requires it) drops out */
		.mr_mode_off = c->o.src_unregistered ? FI_MR_LOCAL : 0,
	};
	struct fi_info *info = NULL;
	if (c->rt->rank && !c->o.verbose)
		efab_log_set_verbose(-1); /* alike on every rank: rank 0 speaks */
	int rc0 = place(c, &req);
	efab_log_set_verbose(c->o.verbose);
	if (!rc0 && c->b->plan)
		rc0 = c->b->plan(c, &req);
	rc0 = efab_rt_agree(c->rt, rc0);
	if (rc0)
		return rc0;
	/* Selection is deterministic: only rank 0 speaks, every rank agrees. */
	if (c->rt->rank)
		efab_log_set_verbose(-1);
	int rc = efab_fabric_select(&req, &info);
	if (c->rt->rank)
		efab_log_set_verbose(c->o.verbose);
	rc = efab_rt_agree(c->rt, rc);
	if (rc) {
		fi_freeinfo(info);
		return rc;
	}
	if (c->o.verbose && c->rt->rank == 0)
		fprintf(stderr, "%s", fi_tostr(info, FI_TYPE_INFO));
	efab_run_info_from_fi(info, &c->ri);
	efab_run_info_request(&c->ri, c->o.provider, c->o.fabric);
	rc = efab_fabric_open(info, c->rt, c->o.timeout_s, &c->fab);
	return efab_rt_agree(c->rt, rc);
}

static int setup_memory(efab_ctx_t *c)
{
	size_t region = c->b->region ? c->b->region(c, c->o.sizes.max) : 4 * c->o.sizes.max;
	c->mem_kind = c->initiator ? c->o.mem_local : c->o.mem_remote;
	c->gpu = -1;
	if (efab_mem_is_gpu(c->mem_kind)) {
		int n = efab_cuda_device_count();
		if (n < 0)
			return -n;
		if (n == 0) {
			efab_log_error("cuda memory kinds unavailable: no GPU visible");
			return EFAB_SKIP;
		}
		c->gpu = c->o.gpu >= 0 ? c->o.gpu : c->rt->local_rank % n;
	}
	int rc = efab_mem_alloc(c->mem_kind, c->gpu, region, &c->mem);
	if (rc)
		return rc;
	c->bounce = malloc(region);
	if (!c->bounce) {
		efab_log_error("out of memory (%zu bytes staging)", region);
		return EFAB_ERR;
	}
	uint64_t access = FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
	if (c->b->mask & EFAB_B_ATOMIC)
		access |= FI_SEND | FI_RECV; /* some providers check these for atomics */
	if (c->o.dmabuf && c->mem_kind == EFAB_MEM_CUDA)
		rc = efab_mr_reg_dmabuf(&c->fab, c->mem.ptr, region, c->gpu, access, &c->mr);
	else
		rc = efab_mr_reg(&c->fab, c->mem.ptr, region, efab_mem_iface(c->mem_kind),
				 c->gpu < 0 ? 0 : c->gpu, access, &c->mr);
	if (rc)
		return rc;
	c->ldesc = c->o.src_unregistered ? NULL : c->mr.desc;
	c->rkeys = calloc((size_t)c->rt->size, sizeof(*c->rkeys));
	if (!c->rkeys) {
		efab_log_error("out of memory for keys");
		return EFAB_ERR;
	}
	return EFAB_OK;
}

static void teardown(efab_ctx_t *c)
{
	if (c->b->teardown)
		c->b->teardown(c);
	if (c->rkeys) {
		efab_rkeys_release(&c->fab, c->rkeys, (size_t)c->rt->size);
		free(c->rkeys);
	}
	efab_mr_dereg(&c->mr);
	if (c->fab.ep)
		efab_fabric_close(&c->fab);
	else
		fi_freeinfo(c->fab.info);
	efab_mem_free(&c->mem);
	if (c->have_topo)
		efab_topo_free(&c->topo);
	free(c->bounce);
	free(c->samples);
	free(c->more_rows);
}

static volatile int stop_signal;

/* The first signal stops every wait (the size being measured is dropped,
 * rows already written stay); a second one ends the process at once. */
static void on_signal(int sig)
{
	if (stop_signal)
		_exit(EFAB_ERR);
	stop_signal = sig;
}

/* Rows already measured are in the CSV (each appended whole). A signal ends
 * every completion wait at once (lib: efab_set_stop_flag) and the job with
 * MPI_Abort; between sizes the loop stops cleanly. */
static void install_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	efab_set_stop_flag(&stop_signal);
}

int efab_bench_main(int argc, char **argv, const efab_bench_t *b)
{
	static efab_ctx_t ctx;
	static efab_rt_t rt;
	efab_ctx_t *c = &ctx;
	char err[512], prefix[96];
	int rc;

	if (prescan(argc, argv, b))
		return 0;
	if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
		fprintf(stderr, "%s: MPI_Init failed\n", b->name);
		return EFAB_ERR;
	}
	if (efab_mpi_rt_init(&rt)) {
		fprintf(stderr, "%s: MPI communicator setup failed\n", b->name);
		MPI_Abort(MPI_COMM_WORLD, EFAB_ERR);
	}
	if (rt.rank)
		snprintf(prefix, sizeof(prefix), "%s[rank %d]", b->name, rt.rank);
	else
		snprintf(prefix, sizeof(prefix), "%s", b->name);
	efab_log_set_prefix(prefix);
	memset(c, 0, sizeof(*c));
	c->b = b;
	c->rt = &rt;
	c->ri.ranks = rt.size;
	snprintf(c->ri.bench, sizeof(c->ri.bench), "%s", b->csv_name);
	for (size_t i = 0; i < b->n_extra && i < EFAB_MAX_EXTRA; i++)
		c->ri.extra_cols[c->ri.n_extra++] = b->extra_cols[i];
	efab_run_info_stamp(&c->ri);
	efab_opts_init(&c->o);
	faults_read(&c->faults);

	rc = efab_opts_parse(&c->o, b->mask, argc, argv, err, sizeof(err));
	if (rc) {
		if (rt.rank == 0)
			efab_log_error("%s", err);
		rc = EFAB_EUSAGE;
		goto finalize;
	}
	efab_log_set_verbose(c->o.verbose);
	efab_mr_cache_env(c->o.mr_cache); /* before libfabric reads its environment */
	c->op = c->o.op;
	install_signals();
	if (rt.rank)
		efab_log_set_verbose(-1);
	rc = check_opts(c);
	efab_log_set_verbose(c->o.verbose);
	if ((rc = efab_rt_agree(&rt, rc)))
		goto finalize;

	if (c->o.contend) { /* every rank but 0 targets rank 0 */
		c->npairs = rt.size - 1;
		c->initiator = rt.rank != 0;
		c->pair = rt.rank ? rt.rank - 1 : 0;
		c->peer = 0;
	} else {
		c->npairs = rt.size / 2;
		c->initiator = rt.rank < c->npairs;
		c->pair = rt.rank % c->npairs;
		c->peer = c->initiator ? rt.rank + c->npairs : rt.rank - c->npairs;
	}
	snprintf(c->ri.mem_local, sizeof(c->ri.mem_local), "%s", efab_mem_name(c->o.mem_local));
	snprintf(c->ri.mem_remote, sizeof(c->ri.mem_remote), "%s", efab_mem_name(c->o.mem_remote));

	if ((rc = efab_rt_agree(&rt, node_provenance(c))))
		goto finalize;

	uint64_t caps = FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
	if (b->mask & EFAB_B_ATOMIC)
		caps = FI_ATOMIC | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
	if ((rc = open_fabric(c, caps)))
		goto teardown;

	/* FI_MR_LOCAL forbids unregistered local buffers: detected from the mr_mode
	 * we got, not from the fabric's name. */
	if (c->o.src_unregistered &&
	    (rc = efab_check_src_unregistered(c->fab.info, err, sizeof(err)))) {
		if (rt.rank == 0)
			efab_log_error("%s", err);
		goto teardown;
	}
	if (c->faults.inject_rma_set) {
		c->fab.inject_rma.value = c->faults.inject_rma;
		c->fab.inject_rma.source = "EFAB_FAULT_INJECT_RMA test hook";
	}
	efab_limit_t max_size = c->fab.max_rma;
	if (b->mask & EFAB_B_ATOMIC)
		max_size = (efab_limit_t){c->fab.info->ep_attr->max_msg_size, "ep_attr->max_msg_size", 0};
	if (c->o.sizes.max > max_size.value) {
		if (rt.rank == 0)
			efab_log_error("--sizes: largest size %llu is above the endpoint's maximum "
				       "%llu (%s)", (unsigned long long)c->o.sizes.max,
				       (unsigned long long)max_size.value, max_size.source);
		rc = EFAB_EUSAGE;
		goto teardown;
	}
	/* Memory errors are alike on every rank (no GPU, no huge pages): rank 0
	 * speaks; if only another rank failed, rank 0 says so. */
	if (rt.rank && !c->o.verbose)
		efab_log_set_verbose(-1);
	int mine = setup_memory(c);
	efab_log_set_verbose(c->o.verbose);
	rc = efab_rt_agree(&rt, mine);
	if (rc && !mine && rt.rank == 0)
		efab_log_error("another rank failed to set up its memory (rerun with -v for its "
			       "message)");
	if (rc)
		goto teardown;
	/* collective: only once every rank has its memory registered */
	if ((rc = efab_rt_agree(&rt, efab_mr_exchange(&c->fab, &c->mr, c->rkeys))))
		goto teardown;
	uint64_t most = 0;
	for (size_t i = 0; i < efab_sizes_count(&c->o.sizes); i++) {
		uint64_t n = efab_iters_for(c, efab_sizes_at(&c->o.sizes, i));
		most = n > most ? n : most;
	}
	c->max_samples = most;
	c->samples = calloc(most ? most : 1, sizeof(double));
	if (!c->samples) {
		efab_log_error("out of memory for %llu samples", (unsigned long long)most);
		rc = EFAB_ERR;
	}
	if (!rc && b->setup)
		rc = b->setup(c);
	if ((rc = efab_rt_agree(&rt, rc)))
		goto teardown;

	if (b->drive) {
		rc = b->drive(c);
		goto teardown;
	}
	efab_csv_t csv = {.fd = -1};
	if (rt.rank == 0 && c->o.csv[0])
		rc = efab_csv_open(c->o.csv, &c->ri, &csv);
	if ((rc = efab_rt_agree(&rt, rc)))
		goto teardown;

	if (rt.rank == 0) {
		char mrm[256];
		const char *notes[EFAB_MAX_NOTES + 2];
		size_t nn = 0;
		efab_mr_mode_str(c->fab.info->domain_attr->mr_mode, mrm, sizeof(mrm));
		char line1[512];
		snprintf(line1, sizeof(line1),
			 "mr_mode %s; mode %s; progress %s; RMA inject size %zu (%s); max RMA size %zu (%s); "
			 "pairs %d",
			 mrm,
			 (c->fab.info->mode & FI_RX_CQ_DATA)
				 ? "FI_RX_CQ_DATA (remote CQ data consumes posted receives)"
				 : "-",
			 efab_progress_name(efab_info_progress(c->fab.info)),
			 c->fab.inject_rma.value, c->fab.inject_rma.source, c->fab.max_rma.value,
			 c->fab.max_rma.source, c->npairs);
		notes[nn++] = line1;
		if (b->definition)
			notes[nn++] = b->definition;
		for (size_t i = 0; i < c->nnotes; i++)
			notes[nn++] = c->notes[i];
		efab_table_begin(stdout, &c->ri, notes, nn, b->show_lat, b->show_bw);
	}

	if (c->faults.stall_rank == rt.rank) /* as a hung or wedged peer would */
		for (;;)
			pause();
	uint64_t total_errors = 0;
	for (size_t i = 0; i < efab_sizes_count(&c->o.sizes) && !stop_signal; i++) {
		uint64_t size = efab_sizes_at(&c->o.sizes, i);
		efab_row_t row;
		memset(&row, 0, sizeof(row));
		row.size = size;
		row.pairs = c->npairs;
		if (b->mask & EFAB_B_ATOMIC)
			snprintf(row.op, sizeof(row.op), "%s_%s", efab_aop_name(c->o.aop),
				 efab_dtype_name(c->o.dtype));
		else
			snprintf(row.op, sizeof(row.op), "%s", efab_op_name(c->op));
		if (b->run(c, size, &row)) {
			if (stop_signal) { /* the peer may be mid-size: end the job now */
				efab_log_error("stopped by signal %d during size %llu; rows measured "
					       "before it are complete", (int)stop_signal,
					       (unsigned long long)size);
				efab_csv_close(&csv);
			}
			efab_fail(c);
		}
		double e = (double)row.errors, esum = 0;
		rt.allreduce(&rt, &e, &esum, 1, EFAB_RT_SUM);
		row.errors = (uint64_t)esum;
		total_errors += row.errors;
		if (rt.rank == 0) {
			efab_table_row(stdout, &c->ri, &row, b->show_lat, b->show_bw);
			if (csv.fd >= 0 && efab_csv_write(&csv, &c->ri, &row))
				efab_fail(c);
			for (size_t k = 0; k < c->n_more_rows; k++) {
				efab_table_row(stdout, &c->ri, &c->more_rows[k], b->show_lat,
					       b->show_bw);
				if (csv.fd >= 0 && efab_csv_write(&csv, &c->ri, &c->more_rows[k]))
					efab_fail(c);
			}
		}
		c->n_more_rows = 0;
		/* a signal on any rank stops every rank at the same size */
		double s = stop_signal, sall = 0;
		rt.allreduce(&rt, &s, &sall, 1, EFAB_RT_MAX);
		if (sall)
			stop_signal = (int)sall;
	}
	if (rt.rank == 0)
		efab_csv_close(&csv);
	if (c->late && c->o.verbose)
		efab_log_info("-c: %llu messages had bytes land after their last byte (checked again "
			      "once settled)", (unsigned long long)c->late);
	if (stop_signal) {
		if (rt.rank == 0)
			efab_log_error("stopped by signal %d; rows measured so far are complete",
				       (int)stop_signal);
		rc = EFAB_ERR;
	} else if (total_errors) {
		if (rt.rank == 0)
			efab_log_error("validation failed: %llu errors (see the errors column)",
				       (unsigned long long)total_errors);
		rc = EFAB_ERR;
	}

teardown:
	teardown(c);
finalize:
	MPI_Finalize();
	return rc;
}
