/* Endpoint bring-up: fabric, domain, CQ, AV, endpoint, address exchange,
 * RMA size limits and the receive slots FI_RX_CQ_DATA needs. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include "efab.h"
#include "efab_abi.h"
#include "efab_endpoint.h"
#include "efab_registration.h"
#include "efab_rt.h"
#include "efab_select.h"
#include "endpoint_internal.h"

/* Receive slot i's context: the top EFAB_RX_CQ_DATA_DEPTH entries of ctx. */
static struct fi_context2 *rx_slot_ctx(efab_fabric_t *fab, size_t i)
{
	return &fab->ctx[fab->nctx - EFAB_RX_CQ_DATA_DEPTH + i];
}

/* The receive slot a completion's op_context names, or -1. */
long efab_rx_slot_of(const efab_fabric_t *fab, const void *op_context)
{
	const struct fi_context2 *first = &fab->ctx[fab->nctx - EFAB_RX_CQ_DATA_DEPTH];
	const struct fi_context2 *c = op_context;
	if (c < first || c >= fab->ctx + fab->nctx)
		return -1;
	return (long)(c - first);
}

/* Receives for FI_RX_CQ_DATA and messages: each slot on its own
 * EFAB_RX_BUF_SIZE bytes of a registered buffer, with its descriptor
 * (efa-direct rejects a receive without one under FI_MR_LOCAL, as any
 * FI_MR_LOCAL provider may); every posted slot is off the free list until a
 * completion names it. */
int efab_rx_repost(efab_fabric_t *fab)
{
	while (fab->rx_nfree > 0) {
		size_t slot = fab->rx_free[fab->rx_nfree - 1];
		int ret = (int)fi_recv(fab->ep, efab_rx_slot_buf(fab, slot), EFAB_RX_BUF_SIZE,
				       fab->rx_mr.desc, FI_ADDR_UNSPEC, rx_slot_ctx(fab, slot));
		if (ret == -FI_EAGAIN)
			return 0; /* reposted from efab_progress as completions come */
		if (ret) {
			efab_log_fi("fi_recv (a receive slot)", ret);
			return EFAB_ERR;
		}
		fab->rx_nfree--;
		fab->rx_live[slot] = 1;
		fab->rx_posted++;
	}
	return 0;
}

int efab_rx_slots_used(const efab_fabric_t *fab)
{
	/* FI_MSG is asked for only where receives are wanted: remote CQ data
	 * under FI_RX_CQ_DATA, and messages (select.c) */
	return (fab->info->caps & FI_MSG) != 0;
}

/* Set up the receive slots and their buffer, then post them. */
static int rx_slots_start(efab_fabric_t *fab)
{
	size_t bytes = (size_t)EFAB_RX_CQ_DATA_DEPTH * EFAB_RX_BUF_SIZE;
	fab->rx_free = calloc(EFAB_RX_CQ_DATA_DEPTH, sizeof(*fab->rx_free));
	fab->rx_live = calloc(EFAB_RX_CQ_DATA_DEPTH, 1);
	fab->rx_buf = aligned_alloc(4096, bytes);
	if (!fab->rx_free || !fab->rx_live || !fab->rx_buf) {
		efab_log_error("out of memory for the receive slots");
		return EFAB_ERR;
	}
	memset(fab->rx_buf, 0, bytes);
	for (size_t i = 0; i < EFAB_RX_CQ_DATA_DEPTH; i++)
		fab->rx_free[fab->rx_nfree++] = EFAB_RX_CQ_DATA_DEPTH - 1 - i;
	if (efab_mr_register(fab, fab->rx_buf, bytes, FI_HMEM_SYSTEM, 0, FI_RECV, &fab->rx_mr))
		return EFAB_ERR;
	return efab_rx_repost(fab);
}

efab_limit_t efab_limit_pick(int rc, size_t optval, const char *optname, size_t attr,
			     const char *attrname)
{
	efab_limit_t l = {attr, attrname, 0};
	if (rc == 0 && optval <= attr)
		l = (efab_limit_t){optval, optname, 1};
	return l;
}

/* fi_getopt of a size_t endpoint option; -FI_ENOPROTOOPT without an endpoint. */
static int ep_size_opt(struct fid_ep *ep, int opt, size_t *v)
{
	size_t len = sizeof(*v);
	*v = 0;
	return ep ? fi_getopt(&ep->fid, FI_OPT_ENDPOINT, opt, v, &len) : -FI_ENOPROTOOPT;
}

void efab_ep_rma_limits(struct fid_ep *ep, const struct fi_info *info, efab_limit_t *inject,
			efab_limit_t *max)
{
	/* the options exist from libfabric 2.0 on, whatever headers we were built
	 * with; an older library is not asked (its option numbers mean nothing) */
	if (!efab_fi_has_rma_size_opts())
		ep = NULL;
	size_t v;
	int rc = ep_size_opt(ep, EFAB_FI_OPT_INJECT_RMA_SIZE, &v);
	*inject = efab_limit_pick(rc, v, "FI_OPT_INJECT_RMA_SIZE", info->tx_attr->inject_size,
				  "tx_attr->inject_size");
	rc = ep_size_opt(ep, EFAB_FI_OPT_MAX_RMA_SIZE, &v);
	*max = efab_limit_pick(rc, v, "FI_OPT_MAX_RMA_SIZE", info->ep_attr->max_msg_size,
			       "ep_attr->max_msg_size");
}

void efab_info_rma_limits(const struct fi_info *info, efab_limit_t *inject, efab_limit_t *max)
{
	efab_ep_rma_limits(NULL, info, inject, max);
	if (!efab_fi_has_rma_size_opts())
		return;
	/* the benchmarks' own bring-up on one rank, quietly: some providers'
	 * getopt (shm's) needs an enabled endpoint, and a fabric that cannot be
	 * opened here keeps the attributes */
	struct fi_info *dup = fi_dupinfo(info);
	efab_fabric_t fab;
	int verbose = efab_log_verbose();
	if (!dup)
		return;
	efab_log_set_verbose(-1);
	int rc = efab_fabric_open(dup, efab_rt_single(), 5.0, &fab);
	efab_log_set_verbose(verbose);
	if (rc) {
		fi_freeinfo(dup);
		return;
	}
	*inject = fab.inject_rma;
	*max = fab.max_rma;
	efab_fabric_close(&fab);
}

/* CQ, AV (av_count entries), endpoint, binds and enable on e->domain for
 * e->info, then the endpoint's name; e->ctx holds extra_ctx slots beyond
 * twice the tx queue (receive slots), e->peers one per rank. EFAB_ERR with
 * the failing call logged; close_endpoint undoes whatever was opened. */
static int open_endpoint(efab_fabric_t *e, size_t av_count, size_t extra_ctx, void *name,
			 size_t *namelen)
{
	const struct fi_info *info = e->info;
	int ret;
	e->nctx = 2 * (info->tx_attr->size > 512 ? info->tx_attr->size : 512) + extra_ctx;
	e->ctx = calloc(e->nctx, sizeof(*e->ctx));
	e->peers = calloc((size_t)e->rt->size, sizeof(*e->peers));
	if (!e->ctx || !e->peers) {
		efab_log_error("out of memory allocating endpoint state");
		return EFAB_ERR;
	}
	/* The CQ holds what can be in flight at once: at most tx_attr->size
	 * operations, and at most EFAB_RX_CQ_DATA_DEPTH receives (the only ones
	 * efabench posts; remote CQ data consumes them). Asking for tx + rx
	 * (rx up to the device's max_rq_wr, 8192 on efasim) needs a deeper CQ
	 * than that, which a device whose max_cq_depth is smaller refuses
	 * (efa_create_cq: cqe > max_cq_depth, EINVAL) before anything runs. */
	size_t rx_need = info->rx_attr->size < EFAB_RX_CQ_DATA_DEPTH ? info->rx_attr->size
								      : EFAB_RX_CQ_DATA_DEPTH;
	struct fi_cq_attr cq_attr = {
		.format = FI_CQ_FORMAT_DATA,
		.wait_obj = FI_WAIT_NONE,
		.size = info->tx_attr->size + rx_need,
	};
	struct fi_av_attr av_attr = {
		.type = info->domain_attr->av_type != FI_AV_UNSPEC ? info->domain_attr->av_type
								   : FI_AV_TABLE,
		.count = av_count ? av_count : 1,
	};
	size_t cq_want = cq_attr.size; /* the efa fabric raises attr.size to its own CQ's */
	if ((ret = fi_cq_open(e->domain, &cq_attr, &e->cq, NULL))) {
		efab_log_error("fi_cq_open (%zu entries asked: tx queue %zu + %zu receives; the provider "
			       "made it %zu): %s (%d)", cq_want, info->tx_attr->size, rx_need,
			       cq_attr.size, fi_strerror(-ret), ret);
		return EFAB_ERR;
	}
	e->cq_size = cq_want;
	if ((ret = fi_av_open(e->domain, &av_attr, &e->av, NULL))) {
		efab_log_fi("fi_av_open", ret);
		return EFAB_ERR;
	}
	if ((ret = fi_endpoint(e->domain, (struct fi_info *)info, &e->ep, NULL))) {
		efab_log_fi("fi_endpoint", ret);
		return EFAB_ERR;
	}
	if ((ret = fi_ep_bind(e->ep, &e->av->fid, 0))) {
		efab_log_fi("fi_ep_bind (av)", ret);
		return EFAB_ERR;
	}
	if ((ret = fi_ep_bind(e->ep, &e->cq->fid, FI_TRANSMIT | FI_RECV))) {
		efab_log_fi("fi_ep_bind (cq)", ret);
		return EFAB_ERR;
	}
	/* before fi_enable (the efa fabric acts on it there: efa_rdm_ep_update_shm) */
	if (efab_ep_no_cuda_api) {
		bool no = false;
		ret = fi_setopt(&e->ep->fid, FI_OPT_ENDPOINT, EFAB_FI_OPT_CUDA_API_PERMITTED, &no, sizeof(no));
		if (ret) {
			efab_log_error("--no-cuda-api: fi_setopt(FI_OPT_CUDA_API_PERMITTED, false) on %s (fabric "
				       "%s): %s (%d)%s",
				       info->fabric_attr->prov_name, info->fabric_attr->name, fi_strerror(-ret), ret,
				       ret == -FI_EINVAL ? ": the provider refuses it where it has no CUDA library "
							   "or device (efa, shm)"
				       : ret == -FI_EOPNOTSUPP
					       ? ": the provider needs the CUDA API for CUDA memory here (efa without "
						 "GPU peer-to-peer; shm always)"
					       : "");
			return EFAB_SKIP;
		}
	}
	ret = fi_enable(e->ep);
	if (ret == -FI_EBUSY && efab_prov_matches("shm", info->fabric_attr->prov_name)) {
		efab_log_error("fi_enable failed: %s: shm's endpoint name is taken (a /dev/shm/<pid>:0:0 "
			       "left by a killed process with this pid?)", fi_strerror(-ret));
		return EFAB_ERR;
	}
	if (ret) {
		efab_log_fi("fi_enable", ret);
		return EFAB_ERR;
	}
	if ((ret = fi_getname(&e->ep->fid, name, namelen))) {
		efab_log_fi("fi_getname", ret);
		return EFAB_ERR;
	}
	return EFAB_OK;
}

static void close_endpoint(efab_fabric_t *e)
{
	if (e->ep)
		fi_close(&e->ep->fid);
	if (e->av)
		fi_close(&e->av->fid);
	if (e->cq)
		fi_close(&e->cq->fid);
	free(e->peers);
	free(e->ctx);
	e->ep = NULL;
	e->av = NULL;
	e->cq = NULL;
	e->peers = NULL;
	e->ctx = NULL;
}

int efab_ep_no_cuda_api;

int efab_fabric_open(struct fi_info *info, efab_rt_t *rt, double timeout_s, efab_fabric_t *out)
{
	efab_fabric_t fab;
	int ret, fail = EFAB_ERR;
	char *names = NULL;
	char myname[EFAB_ADDR_MAX + sizeof(size_t)];

	memset(&fab, 0, sizeof(fab));
	fab.info = info;
	fab.rt = rt;
	fab.timeout_s = timeout_s;
	fab.next_key = 1;

	ret = fi_fabric(info->fabric_attr, &fab.fabric, NULL);
	if (ret) {
		efab_log_fi("fi_fabric", ret);
		return EFAB_ERR;
	}
	ret = fi_domain(fab.fabric, info, &fab.domain, NULL);
	if (ret) {
		efab_log_fi("fi_domain", ret);
		goto close_fabric;
	}
	size_t addrlen = EFAB_ADDR_MAX;
	memset(myname, 0, sizeof(myname));
	ret = open_endpoint(&fab, (size_t)rt->size, EFAB_RX_CQ_DATA_DEPTH, myname + sizeof(size_t),
			    &addrlen);
	if (ret == EFAB_SKIP)
		fail = EFAB_SKIP; /* every rank's provider answers the same */
	if (!ret) /* after fi_enable: shm's getopt dereferences state that enable creates */
		efab_ep_rma_limits(fab.ep, info, &fab.inject_rma, &fab.max_rma);
	/* every rank learns whether all got this far before the collective
	 * exchange, so a rank that failed never leaves the others waiting in it */
	double failed = ret != 0, any = 0;
	if (rt->allreduce(rt, &failed, &any, 1, EFAB_RT_MAX) || any)
		goto close_ep;
	memcpy(myname, &addrlen, sizeof(size_t));
	names = malloc(sizeof(myname) * (size_t)rt->size);
	if (!names) {
		efab_log_error("out of memory for the address exchange");
		goto close_ep;
	}
	if (rt->allgather(rt, myname, names, sizeof(myname))) {
		efab_log_error("address exchange failed");
		goto free_names;
	}
	for (int r = 0; r < rt->size; r++) {
		const char *slot = names + sizeof(myname) * (size_t)r;
		ret = fi_av_insert(fab.av, slot + sizeof(size_t), 1, &fab.peers[r], 0, NULL);
		if (ret != 1) {
			efab_log_fi("fi_av_insert", ret < 0 ? ret : -FI_EINVAL);
			goto free_names;
		}
	}
	free(names);
	if (efab_rx_slots_used(&fab) && rx_slots_start(&fab))
		goto close_rx;
	if (rt->barrier(rt)) {
		efab_log_error("barrier after endpoint bring-up failed");
		goto close_rx;
	}
	*out = fab;
	return EFAB_OK;

free_names:
	free(names);
	goto close_ep;
close_rx:
	efab_mr_dereg(&fab.rx_mr);
	free(fab.rx_buf);
	free(fab.rx_free);
	free(fab.rx_live);
close_ep:
	close_endpoint(&fab);
	fi_close(&fab.domain->fid);
close_fabric:
	fi_close(&fab.fabric->fid);
	return fail;
}

int efab_ep_open(const efab_fabric_t *fab, size_t av_count, efab_fabric_t *out, void *name,
		 size_t *namelen)
{
	efab_fabric_t e;
	memset(&e, 0, sizeof(e));
	e.info = fab->info;
	e.fabric = fab->fabric;
	e.domain = fab->domain;
	e.rt = fab->rt;
	e.timeout_s = fab->timeout_s;
	e.next_key = fab->next_key;
	e.inject_rma = fab->inject_rma;
	e.max_rma = fab->max_rma;
	if (open_endpoint(&e, av_count, 0, name, namelen)) {
		efab_ep_close(&e);
		return EFAB_ERR;
	}
	*out = e;
	return EFAB_OK;
}

void efab_ep_close(efab_fabric_t *e)
{
	close_endpoint(e);
	memset(e, 0, sizeof(*e));
}

int efab_eps_open(efab_fabric_t *fab, size_t n)
{
	efab_rt_t *rt = fab->rt;
	size_t slot = EFAB_ADDR_MAX + sizeof(size_t), len;
	char *names = NULL, mine[EFAB_ADDR_MAX + sizeof(size_t)];
	double failed = 0, any = 0;
	if (n <= 1)
		return EFAB_OK;
	fab->sub = calloc(n - 1, sizeof(*fab->sub));
	names = malloc(slot * (size_t)rt->size);
	failed = !fab->sub || !names;
	if (failed)
		efab_log_error("out of memory for %zu endpoints", n);
	for (size_t j = 0; !failed && j + 1 < n; j++) {
		len = EFAB_ADDR_MAX;
		memset(mine, 0, sizeof(mine));
		failed = efab_ep_open(fab, (size_t)rt->size, &fab->sub[j], mine + sizeof(size_t), &len) != 0;
		if (failed)
			break;
		fab->nsub = j + 1;
		fab->sub[j].parent = fab;
		memcpy(mine, &len, sizeof(size_t));
		/* every rank opened this one before the exchange: none waits alone */
		if (rt->allreduce(rt, &failed, &any, 1, EFAB_RT_MAX) || any ||
		    rt->allgather(rt, mine, names, slot)) {
			failed = 1;
			break;
		}
		for (int r = 0; r < rt->size; r++) {
			int ret = fi_av_insert(fab->sub[j].av, names + slot * (size_t)r + sizeof(size_t), 1,
					       &fab->sub[j].peers[r], 0, NULL);
			if (ret != 1) {
				efab_log_fi("fi_av_insert (further endpoint)", ret < 0 ? ret : -FI_EINVAL);
				failed = 1;
				break;
			}
		}
	}
	free(names);
	if (rt->allreduce(rt, &failed, &any, 1, EFAB_RT_MAX) || any)
		return EFAB_ERR;
	return rt->barrier(rt) ? EFAB_ERR : EFAB_OK;
}

int efab_fabric_manual_progress(const efab_fabric_t *fab)
{
	return efab_info_progress(fab->info) != FI_PROGRESS_AUTO;
}

void efab_fabric_close(efab_fabric_t *fab)
{
	for (size_t j = 0; j < fab->nsub; j++)
		efab_ep_close(&fab->sub[j]);
	free(fab->sub);
	close_endpoint(fab); /* (its posted receives go with it, then their buffer's MR) */
	efab_mr_dereg(&fab->rx_mr);
	if (fab->domain)
		fi_close(&fab->domain->fid);
	if (fab->fabric)
		fi_close(&fab->fabric->fid);
	free(fab->rx_buf);
	free(fab->rx_free);
	free(fab->rx_live);
	fi_freeinfo(fab->info);
	memset(fab, 0, sizeof(*fab));
}
