/* Endpoint bring-up (endpoint.c): fabric, domain, CQ, AV and endpoint for a
 * selected fi_info, the address exchange, and the endpoint's RMA size limits.
 * Everything one rank needs travels in an efab_fabric_t: no globals. */
#ifndef EFAB_ENDPOINT_H
#define EFAB_ENDPOINT_H

#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include "efab_registration.h"
#include "efab_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Receives an endpoint opened with FI_MSG (or FI_RX_CQ_DATA) keeps posted,
 * reposted once half were consumed and read: a sender must keep fewer than
 * half of them in flight or unread. */
#define EFAB_RECV_SLOTS 256

/* Room for any endpoint name (fi_getname) efabench exchanges. */
#define EFAB_ADDR_MAX 256

/* A size limit of the endpoint and where it came from. */
typedef struct efab_limit {
	size_t value;
	const char *source; /* "FI_OPT_INJECT_RMA_SIZE", "tx_attr->inject_size", ... */
	int from_ep;        /* the endpoint answered the FI_OPT_* query */
} efab_limit_t;

typedef struct efab_fabric {
	struct fi_info *info; /* owned */
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	fi_addr_t *peers; /* by rank */
	efab_rt_t *rt;
	double timeout_s;
	uint64_t next_key; /* requested keys when not FI_MR_PROV_KEY */
	/* completion accounting, driven by efab_progress() (efab_ops.h) */
	uint64_t tx_posted, tx_done;
	uint64_t rx_data_count; /* remote CQ data arrivals */
	uint64_t rx_data_awaited; /* arrivals a ping-pong has waited for (put_arrival) */
	uint64_t rx_data_last;
	size_t rx_posted; /* receives posted (FI_RX_CQ_DATA, messages) */
	/* messages received (efab_post_send's, from the peers): their count,
	 * and a hook called with each one's bytes as efab_progress reads its
	 * completion (before its slot is reposted); it may only record (no
	 * post, no progress: efab_progress is reading the CQ) */
	uint64_t rx_msg_count;
	void (*rx_msg_hook)(void *arg, const void *buf, size_t len);
	void *rx_msg_arg;
	/* Receive slots for FI_RX_CQ_DATA and messages (opened with FI_MSG):
	 * their contexts are the top slots of ctx;
	 * a free list, because a completion consumes whichever receive the
	 * provider matched, and a slot must not be reposted while live. */
	size_t *rx_free;
	size_t rx_nfree;
	unsigned char *rx_live; /* per slot: its receive is posted (a completion naming a
				 * slot that is not is no receive of ours) */
	void *rx_buf;           /* registered (FI_MR_LOCAL) landing buffer for them */
	efab_mr_t rx_mr;
	struct fi_context2 *ctx; /* ring of op contexts */
	size_t nctx;
	efab_limit_t inject_rma, max_rma; /* efab_ep_rma_limits of ep */
	/* software cost accounting (efab_ops.h, EFAB_COST_*) */
	unsigned cost;
	uint64_t post_ticks, post_ops, poll_ticks, poll_n;
	/* --eps: further endpoints on this domain (efab_eps_open), each with its
	 * own CQ and AV, its peers the same-numbered endpoints of the other
	 * ranks. Their completions count in this fabric's accounting too
	 * (parent), and efab_progress of this fabric drives theirs. */
	struct efab_fabric *sub;
	size_t nsub;
	struct efab_fabric *parent;
	/* The CQ's entries as asked (the provider may have made it larger; a
	 * device CQ can be lapped past its size: a producer that outruns the
	 * reader overwrites or loses what was not read) */
	size_t cq_size;
	/* Called by efab_progress whenever rx_data_count or rx_msg_count moved since its last
	 * call (rx_hook_at), except from inside itself (a post it makes may
	 * drive progress) and from a post's -FI_EAGAIN progress (in_rx_hook);
	 * nonzero fails the progress call. rma.c's credit return. */
	int (*rx_hook)(struct efab_fabric *fab, void *arg);
	void *rx_hook_arg;
	int in_rx_hook;
	uint64_t rx_hook_at; /* rx_data_count + rx_msg_count at its last call */
} efab_fabric_t;

/* Bring up fabric, domain, CQ, AV and endpoint for info (ownership passes to
 * fab), then exchange addresses through rt. */
int efab_fabric_open(struct fi_info *info, efab_rt_t *rt, double timeout_s, efab_fabric_t *fab);
/* --no-cuda-api: nonzero, every endpoint opened after it gets
 * fi_setopt(FI_OPT_CUDA_API_PERMITTED, false) before fi_enable (what
 * aws-ofi-nccl sets); a provider that refuses it ends the open with EFAB_SKIP
 * and one line saying what libfabric answered. */
extern int efab_ep_no_cuda_api;
void efab_fabric_close(efab_fabric_t *fab);

/* A further endpoint on fab's domain (connection setup: a new endpoint has no
 * peers yet): its own CQ, AV (room for av_count) and endpoint, enabled, its
 * name in name/namelen (EFAB_ADDR_MAX bytes are enough); fabric, domain and
 * info are fab's (not owned). No addresses are inserted and no FI_RX_CQ_DATA
 * receives posted: plain writes and reads only. Close with efab_ep_close. */
int efab_ep_open(const efab_fabric_t *fab, size_t av_count, efab_fabric_t *out, void *name,
		 size_t *namelen);
void efab_ep_close(efab_fabric_t *ep);

/* Collective: n - 1 further endpoints on fab's domain (n endpoints in all),
 * their names exchanged through fab->rt, endpoint j of a rank addressing
 * endpoint j of every other. Plain RMA only (no FI_RX_CQ_DATA receives, no
 * FI_MR_ENDPOINT binding). Closed by efab_fabric_close. */
int efab_eps_open(efab_fabric_t *fab, size_t n);
/* Endpoint j modulo the endpoints (fab is number 0, its further ones 1..). */
static inline efab_fabric_t *efab_ep_at(efab_fabric_t *fab, uint64_t j)
{
	if (!fab->nsub)
		return fab;
	size_t k = (size_t)(j % (fab->nsub + 1));
	return k ? &fab->sub[k - 1] : fab;
}

/* fab's provider needs the application to drive progress (not FI_PROGRESS_AUTO). */
int efab_fabric_manual_progress(const efab_fabric_t *fab);

/* The endpoint's answer to an FI_OPT_* size option (rc from fi_getopt) when it
 * gave one within the fi_info attribute (the man page's contract), else the
 * attribute. efa-direct answers FI_OPT_INJECT_RMA_SIZE = 0 while its
 * tx_attr->inject_size is the device's inline size: fi_inject_write there
 * returns -FI_ENOSYS for any non-empty buffer. */
efab_limit_t efab_limit_pick(int rc, size_t optval, const char *optname, size_t attr,
			     const char *attrname);

/* RMA inject and maximum sizes of an enabled ep (FI_OPT_INJECT_RMA_SIZE, FI_OPT_MAX_RMA_SIZE
 * on libfabric >= 2.0; otherwise, and for providers that do not implement
 * them, tx_attr->inject_size and ep_attr->max_msg_size). */
void efab_ep_rma_limits(struct fid_ep *ep, const struct fi_info *info, efab_limit_t *inject,
			efab_limit_t *max);
/* The same for info without an endpoint of the caller's: a quiet one-rank
 * efab_fabric_open (some providers answer only on an enabled endpoint),
 * closed again; on any failure, and on libfabric < 2.0, the attributes. */
void efab_info_rma_limits(const struct fi_info *info, efab_limit_t *inject, efab_limit_t *max);

#ifdef __cplusplus
}
#endif

#endif
