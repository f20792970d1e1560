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
#include "efab_cuda.h"
#include "efab_endpoint.h"
#include "efab_json.h"
#include "efab_ops.h"
#include "efab_registration.h"
#include "efab_reglog.h"
#include "efab_select.h"
#include "efab_topo.h"
#include "gda.h"
#include "harness.h"
#include "runtime.h"

/* ---- the main flow ---- */


static int prescan(int argc, char **argv, const efab_bench_row_t *b)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			efab_opts_help(stdout, b->name, b->summary, b->options);
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

/* The row's ranks rule; --contend (many initiators on one target) takes any
 * count >= 2. */
static int ranks_ok(const efab_bench_row_t *b, int n, int contend)
{
	if (contend || b->ranks == EFAB_RANKS_ANY) {
		if (n >= 2)
			return 1;
		if (contend)
			efab_log_error("--contend needs at least 2 ranks, got %d", n);
		else
			efab_log_error("%s needs at least 2 ranks, got %d", b->name, n);
	} else if (b->ranks > 0) {
		if (n == b->ranks)
			return 1;
		efab_log_error("%s needs exactly %d ranks (mpirun -np %d), got %d", b->name, b->ranks,
			       b->ranks, n);
	} else {
		if (n >= 2 && n % 2 == 0)
			return 1;
		efab_log_error("%s needs an even number of ranks >= 2 (pairs), got %d", b->name, n);
	}
	return 0;
}

/* Every check that needs no fabric, before anything opens: the row's ops
 * and ranks rule, then the family's own (sizes in elements, ...). */
static int check_opts(efab_ctx_t *c)
{
	const efab_bench_row_t *b = c->row;
	efab_rt_t *rt = c->rt;
	char sz[32];
	if (c->op == EFAB_OP_DEFAULT)
		c->op = b->default_op;
	int grc = efab_gda_check_opts(c);
	if (grc)
		return grc;
	if (c->fam->check_opts) {
		int rc = c->fam->check_opts(c);
		if (rc)
			return rc;
	}
	if (!(b->ops & (1u << c->op))) {
		efab_log_error("--op %s is not an operation of %s", efab_op_name(c->op), b->name);
		return EFAB_EUSAGE;
	}
	if (!ranks_ok(b, rt->size, c->o.contend))
		return EFAB_EUSAGE;
	if (c->o.dmabuf && !efab_mem_is_device(c->o.mem_local) && !efab_mem_is_device(c->o.mem_remote)) {
		efab_log_error("--dmabuf registers cuda memory: add --mem cuda or cuda-vmm (or cuda:host, "
			       "host:cuda)");
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
	int g;
	if (gpu_kind && efab_cuda_device_count() > 0 &&
	    efab_gpu_pick(c->o.gpu, c->rt->local_rank, &g) == EFAB_OK)
		efab_cuda_pci_bus_id(g, busid, sizeof(busid));
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

/* The efa fabric on a NIC without GPU peer-to-peer cannot do RDMA between a
 * host buffer and a CUDA buffer of the peer: the provider then gives a CUDA
 * buffer a key of its own instead of registering it with the NIC (2.4:
 * efa_mr.c efa_mr_reg_impl, 2.6: rdm/efa_rdm_mr.c efa_rdm_mr_reg_impl, "non p2p
 * keygen"), while the rank posting from host memory picks device RDMA from its
 * own buffer alone (rdm/efa_rdm_rma.c efa_rdm_rma_post_write/post_read:
 * efa_rdm_ep_use_p2p(ep, txe->desc[0]); efa_rdm_rma.h
 * efa_rdm_rma_should_write_using_rdma), so the NIC refuses the key at the first
 * operation ("Remote memory registration is invalid"). Refused up front (exit
 * 77) where some rank would post from host memory into the peer's CUDA memory:
 * the initiator with host:cuda, and the responder of a put ping-pong with
 * cuda:host. Atomics travel as messages and are not affected. */
/* The efa provider's efa fabric (its RDM protocol path), not efa-direct. */
static int efa_fabric(const struct fi_info *info)
{
	return info && info->fabric_attr && info->fabric_attr->prov_name &&
	       !strcmp(info->fabric_attr->prov_name, "efa") && info->fabric_attr->name &&
	       !strcmp(info->fabric_attr->name, "efa");
}

static int efa_mixed_gpu_refused(efab_ctx_t *c, const struct fi_info *info, uint64_t caps)
{
	int lg = efab_mem_is_gpu(c->o.mem_local), rg = efab_mem_is_gpu(c->o.mem_remote);
	if (lg == rg || !(caps & FI_RMA) || (caps & FI_ATOMIC) || !efa_fabric(info))
		return EFAB_OK;
	int responder_puts = c->row->pattern == EFAB_PATTERN_PINGPONG && c->op != EFAB_OP_READ;
	if (!(!lg && rg) && !(lg && !rg && responder_puts))
		return EFAB_OK;
	if (efab_efa_p2p(info) != 0)
		return EFAB_OK;
	efab_log_error("efa: --mem %s:%s needs GPU peer-to-peer on this EFA NIC, which it lacks (efa-direct "
		       "offers no FI_HMEM here): without it the provider keys a CUDA buffer itself instead of "
		       "registering it with the NIC (efa_rdm_mr_reg_impl, 2.4: efa_mr_reg_impl), and the rank "
		       "posting from host memory uses device RDMA on its own buffer's word "
		       "(efa_rdm_rma_post_write/post_read: efa_rdm_ep_use_p2p on the local descriptor), which "
		       "the NIC refuses; use one memory kind on both sides, or a NIC with GPUDirect RDMA",
		       efab_mem_name(c->o.mem_local), efab_mem_name(c->o.mem_remote));
	return EFAB_SKIP;
}

/* CUDA VMM memory on the efa fabric: before each send, RMA or atomic from or
 * into a CUDA buffer, libfabric's efa fabric sets CU_POINTER_ATTRIBUTE_
 * SYNC_MEMOPS on it (2.6, 2.7: rdm/efa_rdm_ep.h efa_rdm_attempt_to_sync_
 * memops_iov, while the endpoint may call CUDA), which CUDA refuses for VMM
 * memory (CUDA_ERROR_NOT_SUPPORTED: cuda_set_sync_memops returns -FI_EINVAL),
 * so the operation fails with "Invalid argument" (libfabric issue 12853,
 * open). Seen on the H200 machine with efasim, where the refusal is real
 * CUDA's. The post's error then says so. */
static void vmm_sync_memops_hint(efab_ctx_t *c, const struct fi_info *info)
{
	efab_post_einval_hint = NULL;
	/* the posting rank's own buffer is the one the provider touches */
	if (c->mem_kind != EFAB_MEM_CUDA_VMM || c->o.no_cuda_api || !efa_fabric(info))
		return;
	efab_post_einval_hint =
		"the efa fabric sets CU_POINTER_ATTRIBUTE_SYNC_MEMOPS on a CUDA buffer before using it, which "
		"CUDA refuses for --mem cuda-vmm memory (CUDA_ERROR_NOT_SUPPORTED; libfabric issue 12853); "
		"efa-direct does not (-f efa-direct), nor does an endpoint with FI_OPT_CUDA_API_PERMITTED=false "
		"(--no-cuda-api, as aws-ofi-nccl sets it)";
}

/* --tclass: asked for in the hints (tx_attr->tclass). Where the provider
 * returns FI_TC_UNSPEC (libfabric 2.6's efa does not copy the hint into its
 * answer; 2.7's turns a class it cannot honour into FI_TC_UNSPEC) the class
 * is set in the info passed to fi_endpoint, whose tx_attr the endpoint
 * reads (efa_base_ep.c efa_qp_create: FI_TC_LOW_LATENCY = service level
 * 8); a class the provider answered with stays. The header says which. */
static void tclass_settle(efab_ctx_t *c, struct fi_info *info, uint32_t want)
{
	char a[32], b[32], d[32];
	uint32_t got = info->tx_attr->tclass;
	if (want == FI_TC_UNSPEC)
		return;
	if (got == FI_TC_UNSPEC)
		info->tx_attr->tclass = want;
	efab_note(c, "--tclass %s: asked %s in tx_attr (hints); fi_getinfo returned %s; the endpoint "
		     "was opened with %s%s",
		  efab_tclass_name(c->o.tclass), efab_tclass_fi_name(want, a, sizeof(a)),
		  efab_tclass_fi_name(got, b, sizeof(b)),
		  efab_tclass_fi_name(info->tx_attr->tclass, d, sizeof(d)),
		  got == FI_TC_UNSPEC ? " (set in the info passed to fi_endpoint)" : "");
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
		.tclass = efab_tclass_value(c->o.tclass),
	};
	struct fi_info *info = NULL;
	if (c->rt->rank && !c->o.verbose)
		efab_log_set_verbose(-1); /* alike on every rank: rank 0 speaks */
	int rc0 = place(c, &req);
	efab_log_set_verbose(c->o.verbose);
	if (!rc0 && c->fam->plan)
		rc0 = c->fam->plan(c, &req);
	rc0 = efab_rt_agree(c->rt, rc0);
	if (rc0)
		return rc0;
	/* Selection and the refusal after it are deterministic: only rank 0
	 * speaks, every rank agrees (a rank whose selection failed refuses
	 * nothing more). */
	if (c->rt->rank)
		efab_log_set_verbose(-1);
	int rc = efab_fabric_select(&req, &info);
	if (!rc)
		rc = efa_mixed_gpu_refused(c, info, caps);
	if (c->rt->rank)
		efab_log_set_verbose(c->o.verbose);
	rc = efab_rt_agree(c->rt, rc);
	if (rc) {
		fi_freeinfo(info);
		return rc;
	}
	tclass_settle(c, info, req.tclass);
	if (c->o.verbose && c->rt->rank == 0)
		fprintf(stderr, "%s", fi_tostr(info, FI_TYPE_INFO));
	efab_run_info_fabric(&c->ri, info, &c->o);
	/* before any address crosses: ranks on another provider would only time out */
	if ((rc = efab_rt_agree(c->rt, efab_provider_agree(c, info)))) {
		fi_freeinfo(info);
		return rc;
	}
	efab_ep_no_cuda_api = c->o.no_cuda_api;
	rc = efab_rt_agree(c->rt, efab_fabric_open(info, c->rt, c->o.timeout_s, &c->fab));
	if (!rc && c->o.no_cuda_api)
		efab_note(c, "--no-cuda-api: every endpoint was opened with FI_OPT_CUDA_API_PERMITTED = false "
			     "(fi_setopt before fi_enable)");
	return rc;
}

/* Collective: every rank's reg_path; with GPU memory on either side (or -v)
 * a header note names them. */
static int reg_path_note(efab_ctx_t *c)
{
	char(*all)[24] = calloc((size_t)c->rt->size, sizeof(*all));
	if (!all || c->rt->allgather(c->rt, c->reg_path, all, sizeof(*all))) {
		free(all);
		efab_log_error("reg_path exchange failed");
		return EFAB_ERR;
	}
	if (efab_mem_is_gpu(c->o.mem_local) || efab_mem_is_gpu(c->o.mem_remote) || c->o.verbose) {
		char s[400];
		size_t o = 0;
		for (int r = 0; r < c->rt->size && o < sizeof(s); r++)
			o += (size_t)snprintf(s + o, sizeof(s) - o, "%s%d %s", r ? ", " : "", r, all[r]);
		efab_note(c, "reg_path (the path libfabric reported in its log for each rank's "
			     "registration of its buffer, by rank): %s", s);
	}
	free(all);
	return EFAB_OK;
}

static int setup_memory(efab_ctx_t *c)
{
	size_t region = c->fam->region ? c->fam->region(c, c->o.sizes.max) : 4 * c->o.sizes.max;
	c->confirm_off = (region + 63) & ~(size_t)63;
	region = c->confirm_off + EFAB_CONFIRM_BYTES;
	c->mem_kind = c->initiator ? c->o.mem_local : c->o.mem_remote;
	vmm_sync_memops_hint(c, c->fab.info);
	c->gpu = -1;
	int rc;
	if (efab_mem_is_gpu(c->mem_kind) && (rc = efab_gpu_pick(c->o.gpu, c->rt->local_rank, &c->gpu)))
		return rc;
	rc = efab_mem_alloc(c->mem_kind, c->gpu, region, &c->mem);
	if (rc)
		return rc;
	c->bounce = malloc(region);
	if (!c->bounce) {
		efab_log_error("out of memory (%zu bytes staging)", region);
		return EFAB_ERR;
	}
	memset(c->bounce, 0, EFAB_CONFIRM_BYTES);
	if ((rc = efab_mem_write(&c->mem, c->confirm_off, c->bounce, EFAB_CONFIRM_BYTES)))
		return rc;
	uint64_t access = c->row->access;
	/* set-up, untimed: libfabric's log taken around it says the path (reg_path) */
	efab_reglog_t rl;
	int dmabuf = c->o.dmabuf && efab_mem_is_device(c->mem_kind);
	efab_reglog_begin(&rl);
	if (dmabuf)
		rc = efab_mr_register_dmabuf(&c->fab, c->mem.ptr, region, c->gpu, access, &c->mr);
	else
		rc = efab_mr_register(&c->fab, c->mem.ptr, region, efab_mem_iface(c->mem_kind),
				      c->gpu < 0 ? 0 : c->gpu, access, &c->mr);
	efab_reglog_end(&rl);
	if (rc)
		return rc;
	snprintf(c->reg_path, sizeof(c->reg_path), "%s",
		 efab_reglog_classify(&rl, efab_mem_is_device(c->mem_kind), dmabuf,
				      efab_reglog_nic_provider(c->fab.info->fabric_attr->prov_name)));
	if (c->o.verbose)
		fprintf(stderr, "# reg_path rank %d (%s memory): %s%s%s%s\n", c->rt->rank,
			efab_mem_name(c->mem_kind), c->reg_path,
			rl.captured ? "" : " (libfabric's log not taken: ", rl.why,
			rl.captured ? "" : ")");
	for (size_t i = 0; c->o.verbose && i < rl.n; i++)
		fprintf(stderr, "#   libfabric mr: %s\n", rl.line[i]);
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
	efab_gda_teardown(c); /* its endpoint before the fabric, its kernel before the memory */
	if (c->fam->teardown)
		c->fam->teardown(c);
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
	free(c->cost_post);
	free(c->cost_poll);
	free(c->more_rows);
}

/* One size under the row's pattern. */
static int measure(efab_ctx_t *c, uint64_t size, efab_row_t *row)
{
	int gpu = c->o.initiator == EFAB_INITIATOR_GPU, rc;
	if (c->row->pattern == EFAB_PATTERN_PINGPONG)
		rc = gpu ? efab_gda_pingpong(c, size, row) : efab_pingpong(c, c->fam->pingpong(c), size, row);
	else
		rc = gpu ? efab_gda_stream(c, c->fam->stream(c), size, row)
			 : efab_stream(c, c->fam->stream(c), size, row);
	efab_gda_row_cells(c, row);
	return rc;
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
	efab_catch_stop_signals(on_signal);
	efab_set_stop_flag(&stop_signal);
}

/* Runtime up, options parsed and checked on every rank (rank 0 speaks). */
static int plan(efab_ctx_t *c, int argc, char **argv)
{
	const efab_bench_row_t *b = c->row;
	char err[2048];
	efab_run_info_begin(&c->ri, b->csv_name, c->rt->size);
	for (size_t i = 0; i < b->n_extra && i < EFAB_MAX_EXTRA; i++)
		c->ri.extra_cols[c->ri.n_extra++] = b->extra_cols[i];
	if (b->pattern != EFAB_PATTERN_NONE) /* every traffic row: the proof of path */
		efab_evidence_columns(&c->ri);
	if (b->options & EFAB_OG_INITIATOR) /* who posted: cpu or gpu (gda.c) */
		efab_gda_columns(&c->ri);
	for (size_t i = 0; i < b->n_tail && c->ri.n_extra < EFAB_MAX_EXTRA; i++)
		c->ri.extra_cols[c->ri.n_extra++] = b->tail_cols[i];
	efab_opts_init(&c->o);
	efab_faults_read(&c->faults);
	if (efab_opts_parse(&c->o, b->options, argc, argv, err, sizeof(err))) {
		if (c->rt->rank == 0)
			efab_log_error("%s", err);
		return EFAB_EUSAGE;
	}
	efab_log_set_verbose(c->o.verbose);
	if (efab_table_columns(c, err, sizeof(err))) { /* an unknown --columns name */
		if (c->rt->rank == 0)
			efab_log_error("%s", err);
		return EFAB_EUSAGE;
	}
	efab_mr_cache_env(c->o.mr_cache); /* before libfabric reads its environment */
	c->op = c->o.op;
	install_signals();
	if (c->rt->rank)
		efab_log_set_verbose(-1);
	int rc = check_opts(c);
	efab_log_set_verbose(c->o.verbose);
	return efab_rt_agree(c->rt, rc);
}

/* Who talks to whom: ranks [0, N) initiate towards [N, 2N), or with
 * --contend every rank but 0 targets rank 0. */
static void pair_ranks(efab_ctx_t *c)
{
	int rank = c->rt->rank, size = c->rt->size;
	if (c->o.contend) {
		c->npairs = size - 1;
		c->initiator = rank != 0;
		c->pair = rank ? rank - 1 : 0;
		c->peer = 0;
	} else {
		c->npairs = size / 2;
		c->initiator = rank < c->npairs;
		c->pair = rank % c->npairs;
		c->peer = c->initiator ? rank + c->npairs : rank - c->npairs;
	}
	snprintf(c->ri.mem_local, sizeof(c->ri.mem_local), "%s", efab_mem_name(c->o.mem_local));
	snprintf(c->ri.mem_remote, sizeof(c->ri.mem_remote), "%s", efab_mem_name(c->o.mem_remote));
}

/* What the endpoint we got allows: an unregistered source where FI_MR_LOCAL
 * is in force (from the mr_mode, not the fabric's name), the largest size. */
static int check_endpoint(efab_ctx_t *c)
{
	char err[512];
	int rc;
	if (c->o.src_unregistered &&
	    (rc = efab_check_src_unregistered(c->fab.info, err, sizeof(err)))) {
		if (c->rt->rank == 0)
			efab_log_error("%s", err);
		return rc;
	}
	if (c->faults.inject_rma_set) {
		c->fab.inject_rma.value = c->faults.inject_rma;
		c->fab.inject_rma.source = "EFAB_FAULT_INJECT_RMA test hook";
	}
	efab_limit_t max_size = c->fab.max_rma;
	if (c->row->max_size_is_msg)
		max_size = (efab_limit_t){c->fab.info->ep_attr->max_msg_size, "ep_attr->max_msg_size", 0};
	if (c->o.sizes.max > max_size.value) {
		if (c->rt->rank == 0)
			efab_log_error("--sizes: largest size %llu is above the endpoint's maximum "
				       "%llu (%s)", (unsigned long long)c->o.sizes.max,
				       (unsigned long long)max_size.value, max_size.source);
		return EFAB_EUSAGE;
	}
	return EFAB_OK;
}

/* Fabric, memory, keys and the family's setup, each agreed by all ranks. */
static int bring_up(efab_ctx_t *c)
{
	efab_rt_t *rt = c->rt;
	int rc;
	if ((rc = open_fabric(c, c->row->caps)) || (rc = check_endpoint(c)))
		return rc;
	/* Memory errors are alike on every rank (no GPU, no huge pages): rank 0
	 * speaks; if only another rank failed, rank 0 says so. */
	if (rt->rank && !c->o.verbose)
		efab_log_set_verbose(-1);
	int mine = setup_memory(c);
	efab_log_set_verbose(c->o.verbose);
	rc = efab_rt_agree(rt, mine);
	if (rc && !mine && rt->rank == 0)
		efab_log_error("another rank failed to set up its memory (rerun with -v for its "
			       "message)");
	if (rc)
		return rc;
	/* collective: only once every rank has its memory registered */
	if ((rc = efab_rt_agree(rt, efab_mr_exchange(&c->fab, &c->mr, c->rkeys))))
		return rc;
	if ((rc = reg_path_note(c)))
		return rc;
	if (c->fam->setup)
		rc = c->fam->setup(c);
	efab_pattern_notes(c);
	/* the NIC counters: every traffic row's proof of path; efab_scan's rounds */
	if ((c->row->pattern != EFAB_PATTERN_NONE || c->row->family == EFAB_FAMILY_SCAN) &&
	    efab_evidence_setup(c))
		rc = EFAB_ERR;
	if ((rc = efab_rt_agree(rt, rc)))
		return rc;
	return efab_gda_setup(c); /* --initiator gpu: the GPU's endpoint and kernel */
}

/* Rank 0: the header block (fabric line, definition, notes) and columns. */
static void print_header(efab_ctx_t *c)
{
	const struct fi_info *info = c->fab.info;
	char mrm[256], line1[512];
	const char *notes[EFAB_MAX_NOTES + 2];
	size_t nn = 0;
	efab_mr_mode_str(info->domain_attr->mr_mode, mrm, sizeof(mrm));
	snprintf(line1, sizeof(line1),
		 "mr_mode %s; mode %s; progress %s; RMA inject size %zu (%s); max RMA size %zu (%s); "
		 "pairs %d",
		 mrm,
		 (info->mode & FI_RX_CQ_DATA) ? "FI_RX_CQ_DATA (remote CQ data consumes posted receives)"
					      : "-",
		 efab_progress_name(efab_info_progress(info)), c->fab.inject_rma.value,
		 c->fab.inject_rma.source, c->fab.max_rma.value, c->fab.max_rma.source, c->npairs);
	notes[nn++] = line1;
	if (c->row->definition)
		notes[nn++] = c->row->definition;
	for (size_t i = 0; i < c->nnotes; i++)
		notes[nn++] = c->notes[i];
	char op[32];
	if (c->fam->op_label)
		c->fam->op_label(c, op, sizeof(op));
	else
		snprintf(op, sizeof(op), "%s", efab_op_name(c->op));
	efab_table_header(c, op, notes, nn);
}

/* Rank 0: the size's rows to the table and the CSV. */
static void print_rows(efab_ctx_t *c, efab_csv_t *csv, const efab_row_t *row)
{
	for (size_t k = 0; k <= c->n_more_rows; k++) {
		const efab_row_t *r = k ? &c->more_rows[k - 1] : row;
		efab_table_line(stdout, &c->table, &c->ri, r);
		if (csv->fd >= 0 && efab_csv_write(csv, &c->ri, r))
			efab_fail(c);
	}
}

/* One size on every rank: measured under the row's pattern, errors summed
 * over ranks, rows printed. Returns the size's errors. */
static uint64_t one_size(efab_ctx_t *c, efab_csv_t *csv, uint64_t size)
{
	efab_rt_t *rt = c->rt;
	efab_row_t row;
	memset(&row, 0, sizeof(row));
	row.size = size;
	row.pairs = c->npairs;
	if (c->fam->op_label)
		c->fam->op_label(c, row.op, sizeof(row.op));
	else
		snprintf(row.op, sizeof(row.op), "%s", efab_op_name(c->op));
	if (measure(c, size, &row)) {
		if (stop_signal) { /* the peer may be mid-size: end the job now */
			efab_log_error("stopped by signal %d during size %llu; rows measured before "
				       "it are complete", (int)stop_signal, (unsigned long long)size);
			efab_csv_close(csv);
		}
		efab_fail(c);
	}
	double e = (double)row.errors, esum = 0;
	rt->allreduce(rt, &e, &esum, 1, EFAB_RT_SUM);
	row.errors = (uint64_t)esum;
	if (rt->rank == 0)
		print_rows(c, csv, &row);
	c->n_more_rows = 0;
	/* a signal on any rank stops every rank at the same size */
	double sig = stop_signal, sall = 0;
	rt->allreduce(rt, &sig, &sall, 1, EFAB_RT_MAX);
	if (sall)
		stop_signal = (int)sall;
	return row.errors;
}

/* The size loop with its table and CSV; the exit status. */
static int run_sizes(efab_ctx_t *c)
{
	efab_rt_t *rt = c->rt;
	efab_csv_t csv = {.fd = -1};
	uint64_t errors = 0;
	int rc = EFAB_OK;
	if (rt->rank == 0 && c->o.csv[0])
		rc = efab_csv_open(c->o.csv, &c->ri, &csv);
	if ((rc = efab_rt_agree(rt, rc)))
		return rc;
	if (rt->rank == 0)
		print_header(c);
	if (c->faults.stall_rank == rt->rank) /* as a hung or wedged peer would */
		for (;;)
			pause();
	for (size_t i = 0; i < efab_sizes_count(&c->o.sizes) && !stop_signal; i++)
		errors += one_size(c, &csv, efab_sizes_at(&c->o.sizes, i));
	if (rt->rank == 0)
		efab_csv_close(&csv);
	if (c->late && c->o.verbose)
		efab_log_info("-c: %llu messages had bytes land after their last byte (checked again "
			      "once settled)", (unsigned long long)c->late);
	if (stop_signal) {
		if (rt->rank == 0)
			efab_log_error("stopped by signal %d; rows measured so far are complete",
				       (int)stop_signal);
		return EFAB_ERR;
	}
	if (errors) {
		if (rt->rank == 0)
			efab_log_error("validation failed: %llu errors (see the errors column)",
				       (unsigned long long)errors);
		return EFAB_ERR;
	}
	return EFAB_OK;
}

int efab_bench_main(int argc, char **argv, const efab_bench_row_t *b, const efab_family_t *fam)
{
	static efab_ctx_t ctx;
	static efab_runtime_t runtime;
	efab_ctx_t *c = &ctx;
	int rc;

	if (prescan(argc, argv, b))
		return 0;
	if (efab_runtime_up(&runtime, EFAB_RUNTIME_MPI, b->name, &argc, &argv))
		return EFAB_ERR;
	memset(c, 0, sizeof(*c));
	c->row = b;
	c->fam = fam;
	c->rt = runtime.rt;
	if (!(rc = plan(c, argc, argv))) {
		pair_ranks(c);
		rc = efab_rt_agree(c->rt, efab_node_provenance(c));
		if (!rc && !(rc = bring_up(c)))
			rc = c->fam->drive ? c->fam->drive(c) : run_sizes(c);
	}
	teardown(c); /* safe on what was never opened (family state included) */
	return efab_runtime_down(&runtime, rc);
}
