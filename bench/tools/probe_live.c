/* efab_probe --live: each operation (put from registered and unregistered
 * memory, writedata, read, atomic fetch-add) run once from rank 0 to rank 1
 * on a fresh endpoint of the column's fabric; the result, "OK" or the first
 * error word for word, is the column's live_* row. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "efab_endpoint.h"
#include "efab_ops.h"
#include "efab_registration.h"
#include "efab_select.h"
#include "probe_int.h"

const char *const probe_live_names[LIVE_N] = {"live_put_registered", "live_put_unregistered",
					      "live_writedata", "live_read",
					      "live_atomic_fadd_u64"};

/* One live test's state, shared by its steps and its teardown. stage counts
 * the steps passed: 1 fabric open, 2 memory registered, 3 keys exchanged,
 * 4 the operation ran. */
typedef struct live {
	efab_rt_t *rt;
	const struct fi_info *col;
	int which;
	int stage;
	double ok, all_ok; /* this rank's verdict, and every rank's */
	efab_fabric_t fab;
	efab_mr_t mr;
	efab_rkey_t rk[2];
	uint64_t *buf;
	efab_waitfor_t w;
	char err[400];     /* what the library logged (efab_log_capture) */
	char skipped[200]; /* why the test was not run */
	char refused[400]; /* rank 0's refused post, in its own words */
} live_t;

/* Every rank's verdict on a collective step: whether all may go on. */
static int live_agree(live_t *lv, int rc)
{
	lv->ok = rc == 0;
	lv->rt->allreduce(lv->rt, &lv->ok, &lv->all_ok, 1, EFAB_RT_MIN);
	return lv->all_ok != 0;
}

static int live_open(live_t *lv, double timeout)
{
	const struct fi_info *col = lv->col;
	efab_fabric_req_t req = {
		.provider = col->fabric_attr->prov_name,
		.fabric = col->fabric_attr->name,
		.domain = col->domain_attr->name,
		.caps = FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE,
		.cq_data = lv->which == LIVE_WRITEDATA,
	};
	if (lv->which == LIVE_ATOMIC)
		req.caps = FI_ATOMIC | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
	struct fi_info *info = NULL;
	int rc;
	/* The unregistered put asks without FI_MR_LOCAL, as an application with an
	 * unregistered buffer would; a fabric that requires it (efa-direct) drops
	 * out, and then the put runs with it in force, to record what the provider
	 * says to a missing descriptor. */
	if (lv->which == LIVE_PUT_UNREG) {
		req.mr_mode_off = FI_MR_LOCAL;
		rc = efab_fabric_select(&req, &info);
		if (rc == EFAB_SKIP) {
			req.mr_mode_off = 0;
			lv->err[0] = '\0';
			rc = efab_fabric_select(&req, &info);
		}
	} else {
		rc = efab_fabric_select(&req, &info);
	}
	if (rc) {
		fi_freeinfo(info);
		return rc;
	}
	lv->stage = 1;
	return efab_fabric_open(info, lv->rt, timeout, &lv->fab);
}

static int live_register(live_t *lv)
{
	lv->buf = aligned_alloc(4096, 4096);
	memset(lv->buf, 0, 4096);
	/* layout: [0,64) source, [64,128) destination, [128,136) atomic word, [256,264) result.
	 * The sources are filled before the key exchange (collective): rank 0's read of
	 * rank 1's [0,64) may land as soon as it has the key (before, a read could find
	 * zeros: "the data read differ", seen on efasim 2.6.0's efa-direct). */
	for (int k = 0; k < 64; k++)
		((uint8_t *)lv->buf)[k] = (uint8_t)(lv->rt->rank == 1 ? 0xa0 + k : 0x10 + k);
	return efab_mr_register(&lv->fab, lv->buf, 4096, FI_HMEM_SYSTEM, 0,
				FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE, &lv->mr);
}

/* libfabric < 2.4's efa-direct dereferences a NULL descriptor (an assert
 * compiled out in release builds, efa_rma.c) instead of refusing it. */
static int live_unsafe(live_t *lv)
{
	if (lv->which != LIVE_PUT_UNREG ||
	    !efab_prov_matches("efa", lv->col->fabric_attr->prov_name) ||
	    !(lv->fab.info->domain_attr->mr_mode & FI_MR_LOCAL) || fi_version() >= FI_VERSION(2, 4))
		return 0;
	snprintf(lv->skipped, sizeof(lv->skipped),
		 "skipped: libfabric %u.%u's efa provider dereferences the NULL "
		 "descriptor of an unregistered source under FI_MR_LOCAL (checked from 2.4 on)",
		 FI_MAJOR(fi_version()), FI_MINOR(fi_version()));
	return 1;
}

static int live_post_op(live_t *lv)
{
	uint8_t *b = (uint8_t *)lv->buf;
	efab_rkey_t *peer = &lv->rk[1];
	switch (lv->which) {
	case LIVE_PUT:
	case LIVE_PUT_UNREG:
	case LIVE_WRITEDATA:
		return efab_post_write(&lv->fab, 1, b, 64,
				       lv->which == LIVE_PUT_UNREG ? NULL : lv->mr.desc,
				       peer->base + 64, peer->key, 7,
				       lv->which == LIVE_WRITEDATA ? FI_REMOTE_CQ_DATA : 0, &lv->w);
	case LIVE_READ:
		return efab_post_read(&lv->fab, 1, b + 64, 64, lv->mr.desc, peer->base, peer->key,
				      &lv->w);
	default: {
		uint64_t one = 1;
		memcpy(b, &one, 8);
		return efab_post_atomic(&lv->fab, 1, EFAB_ATOMIC_FETCH, b, 1, lv->mr.desc, NULL,
					NULL, b + 256, lv->mr.desc, peer->base + 128, peer->key,
					FI_UINT64, FI_SUM, &lv->w);
	}
	}
}

/* Rank 0: post, and wait for its completion. */
static int live_initiate(live_t *lv)
{
	/* the provider's own words for a refused post (warn level) */
	efab_provider_log_capture(1, "FI_MR_LOCAL", NULL, 0);
	int rc = live_post_op(lv);
	char said[400];
	efab_provider_log_capture(0, NULL, said, sizeof(said));
	if (rc) { /* the post's own words: what follows (the peer's wait) must not replace them */
		snprintf(lv->refused, sizeof(lv->refused), "%s%s%s", lv->err,
			 said[0] ? " | provider: " : "", said);
		return rc;
	}
	return efab_wait_tx(&lv->fab, lv->fab.tx_posted, &lv->w);
}

/* Rank 1 waits for the data itself: a local completion at the initiator may
 * only mean "sent" (tcp), not "placed". */
static int live_await(live_t *lv)
{
	uint8_t *b = (uint8_t *)lv->buf;
	if (lv->which == LIVE_PUT || lv->which == LIVE_PUT_UNREG) {
		lv->w.what = "the written data";
		return efab_wait_byte(&lv->fab, b + 64 + 63, (uint8_t)(0x10 + 63), &lv->w);
	}
	if (lv->which == LIVE_WRITEDATA) {
		lv->w.what = "the remote CQ data";
		return efab_wait_rxdata(&lv->fab, 1, &lv->w);
	}
	return 0;
}

/* Whether the 64 bytes at p count up from first. */
static int counts_up(const uint8_t *p, uint8_t first)
{
	for (int k = 0; k < 64; k++)
		if (p[k] != (uint8_t)(first + k))
			return 0;
	return 1;
}

/* The data where it landed; on a mismatch, err says what differs. */
static int live_data_ok(live_t *lv)
{
	const uint8_t *b = (const uint8_t *)lv->buf;
	int rank = lv->rt->rank, which = lv->which;
	if (rank == 1 && which <= LIVE_WRITEDATA && !counts_up(b + 64, 0x10)) {
		snprintf(lv->err, sizeof(lv->err), "completed, but the data at the target differ");
		return 0;
	}
	if (rank == 1 && which == LIVE_WRITEDATA && lv->fab.rx_data_count != 1) {
		snprintf(lv->err, sizeof(lv->err), "completed, but no remote CQ data arrived");
		return 0;
	}
	if (rank == 0 && which == LIVE_READ && !counts_up(b + 64, 0xa0)) {
		snprintf(lv->err, sizeof(lv->err), "completed, but the data read differ");
		return 0;
	}
	if (rank == 1 && which == LIVE_ATOMIC && lv->buf[16] != 1) {
		snprintf(lv->err, sizeof(lv->err), "completed, but the target word is %llu, not 1",
			 (unsigned long long)lv->buf[16]);
		return 0;
	}
	return 1;
}

/* The operation from rank 0 to rank 1, then both ranks' verdict. */
static void live_run(live_t *lv)
{
	if (lv->rt->rank == 0)
		lv->ok = live_initiate(lv) == 0;
	if (lv->rt->rank == 1 && live_await(lv))
		lv->ok = 0;
	lv->w.what = "the other rank";
	if (efab_barrier_progress(&lv->fab, &lv->w))
		lv->ok = 0;
	if (lv->ok && !live_data_ok(lv))
		lv->ok = 0;
	lv->rt->allreduce(lv->rt, &lv->ok, &lv->all_ok, 1, EFAB_RT_MIN);
}

/* Rank 0 reports; if only rank 1 saw the failure, its words travel. */
static void live_result(live_t *lv, char *result, size_t rlen)
{
	struct {
		double ok; /* this rank's own verdict */
		char err[400];
	} mine, both[2];
	mine.ok = lv->ok;
	snprintf(mine.err, sizeof(mine.err), "%s",
		 lv->err[0] ? lv->err : "failed without a message");
	lv->rt->allgather(lv->rt, &mine, both, sizeof(mine));
	if (lv->skipped[0])
		snprintf(result, rlen, "%s", lv->skipped);
	else if (lv->refused
			 [0]) /* rank 0's post was refused: rank 1 only timed out waiting for it */
		snprintf(result, rlen, "%s", lv->refused);
	else if (both[0].ok && both[1].ok && (lv->stage < 4 || lv->all_ok))
		snprintf(result, rlen, lv->stage == 4 ? "OK" : "failed during setup");
	else if (!both[0].ok)
		snprintf(result, rlen, "%s", both[0].err);
	else
		snprintf(result, rlen, "rank 1: %s", both[1].err);
}

static void live_close(live_t *lv)
{
	if (lv->stage >= 3)
		efab_rkeys_release(&lv->fab, lv->rk, 2);
	efab_mr_dereg(&lv->mr);
	if (lv->fab.ep)
		efab_fabric_close(&lv->fab);
	free(lv->buf);
}

/* One operation from rank 0 to rank 1 on a fresh endpoint; the result is
 * "OK" or the first error, word for word. Every rank reaches the same
 * verdict before the next step, so a failure never leaves a rank waiting. */
void probe_live_one(efab_rt_t *rt, const struct fi_info *col, int which, double timeout,
		    char *result, size_t rlen)
{
	live_t lv;
	memset(&lv, 0, sizeof(lv));
	lv.rt = rt;
	lv.col = col;
	lv.which = which;
	lv.ok = 1;
	lv.w = (efab_waitfor_t){"live test completion", probe_live_names[which], 64, 1, 0};
	efab_log_capture(lv.err, sizeof(lv.err));
	/* collective steps only while every rank is still fine */
	int go_on = live_agree(&lv, live_open(&lv, timeout));
	if (go_on) {
		lv.stage = 2;
		go_on = live_agree(&lv, live_register(&lv)) &&
			!efab_mr_exchange(&lv.fab, &lv.mr, lv.rk);
	}
	if (go_on) {
		lv.stage = 3;
		go_on = !live_unsafe(&lv);
	}
	if (go_on) {
		live_run(&lv);
		lv.stage = 4;
	}
	efab_log_capture(NULL, 0);
	live_result(&lv, result, rlen);
	live_close(&lv);
}
