/* Put and get latency.
 *
 * put (write):     ping-pong; each side polls the last byte of its receive
 *                  buffer (host memory) while driving progress. Reported:
 *                  half the round trip.
 * put (writedata): the same, but arrival is the remote CQ data completion
 *                  (works on GPU memory, which the CPU cannot poll).
 * get (read):      the initiator times fi_read to its completion: full round
 *                  trip. The target only drives progress.
 *
 * Region per rank, S = largest size: [rx0 | rx1 | tx0 | tx1]. Message seq
 * uses halves seq & 1, so a message can be checked while the next is in
 * flight, and a source half is refilled only after its previous write
 * completed. */
#include <string.h>

#include "efab_clock.h"
#include "harness.h"
#include "rma.h"

#define RX(c, p) ((size_t)(p) * (c)->o.sizes.max)
#define TX(c, p) ((size_t)(2 + (p)) * (c)->o.sizes.max)

/* Iteration 0 of every size is its first operation: timed on its own
 * (first_us) and never among the measured samples, also with -w 0. */
uint64_t efab_lat_warmup(const efab_ctx_t *c, uint64_t size)
{
	uint64_t w = efab_warmup_for(c, size);
	return w ? w : 1;
}

void efab_lat_extra(efab_row_t *row, int col, double first_us, double batch_us)
{
	snprintf(row->extra[col], sizeof(row->extra[0]), "%.3f", first_us);
	if (batch_us > 0)
		snprintf(row->extra[col + 1], sizeof(row->extra[0]), "%.3f", batch_us);
}

int efab_rma_notes(efab_ctx_t *c)
{
	efab_clock_init();
	if (c->b->mask & EFAB_B_LAT)
		efab_note(c, "first_us = the first iteration of each size alone (for the first size "
			     "the first operation to this peer), never among the samples; "
			     "lat_us_batch = one timed batch of -n further iterations / n (no clock "
			     "read per iteration), in the same definition");
	else if (c->b->mask & EFAB_B_BW)
		efab_note(c, "first_us = the first window of each size alone (for the first size it "
			     "holds the first operations to this peer), never among the windows "
			     "measured; slowest initiating rank");
	if (c->op == EFAB_OP_WRITEDATA && (c->b->mask & EFAB_B_PUT_LAT) &&
	    (!efab_mem_host_accessible(c->o.mem_local) || !efab_mem_host_accessible(c->o.mem_remote)))
		efab_note(c, "GPU memory cannot be polled by the CPU: arrival is the remote CQ data "
			     "completion (writedata)");
	if (c->op == EFAB_OP_WRITE && (c->b->mask & EFAB_B_PUT_LAT))
		efab_note(c, "-o write: arrival = its last byte seen; where a fabric may place a "
			     "message's bytes out of order (EFA's SRD sends a write above the MTU as "
			     "packets in any order) this is a lower bound for multi-packet sizes: "
			     "-o writedata times the completion");
	if (c->o.check)
		efab_note(c, "-c: every payload is checked; checking runs between timed intervals "
			     "but can still delay the peer: quote numbers from runs without -c");
	if (c->o.src_unregistered)
		efab_note(c, "--src-unregistered: local buffers passed with desc = NULL");
	return EFAB_OK;
}

/* Poison the receive half so a transfer that moved nothing is caught. */
static int poison(efab_ctx_t *c, size_t off, size_t len, uint64_t i)
{
	memset(c->bounce, (int)(i & 0xff) ^ 0x5a, len);
	return efab_mem_write(&c->mem, off, c->bounce, len);
}

static void put_waitfor(efab_ctx_t *c, efab_waitfor_t *w, const char *what, uint64_t size,
			uint64_t i)
{
	*w = (efab_waitfor_t){what, efab_op_name(c->op), size, c->peer, i};
}

/* Source half p is free once every write but the latest has completed. */
static int src_free(efab_ctx_t *c, efab_waitfor_t *w)
{
	if (c->fab.tx_posted > c->fab.tx_done + 1)
		return efab_wait_tx(&c->fab, c->fab.tx_posted - 1, w);
	return EFAB_OK;
}

static int put_send(efab_ctx_t *c, uint64_t size, int p, uint64_t seq, efab_waitfor_t *w)
{
	uint64_t flags = 0;
	if (c->op == EFAB_OP_WRITEDATA)
		flags |= FI_REMOTE_CQ_DATA;
	if (c->use_inject)
		flags |= FI_INJECT;
	return efab_post_write(&c->fab, c->peer, efab_local(c, TX(c, p)), size, c->ldesc,
			       efab_raddr(c, c->peer, RX(c, p)), c->rkeys[c->peer].key,
			       seq & 0xffffffffu, flags, w);
}

static int put_arrival(efab_ctx_t *c, uint64_t size, int p, uint64_t seq, efab_waitfor_t *w)
{
	if (c->op == EFAB_OP_WRITEDATA) {
		if (efab_wait_rxdata(&c->fab, c->fab.rx_data_count + 1, w))
			return EFAB_ERR;
		if (c->fab.rx_data_last != (seq & 0xffffffffu)) {
			efab_log_error("remote CQ data %llu, expected %llu",
				       (unsigned long long)c->fab.rx_data_last,
				       (unsigned long long)(seq & 0xffffffffu));
			return EFAB_ERR;
		}
		return EFAB_OK;
	}
	return efab_wait_byte(&c->fab, efab_local(c, RX(c, p) + size - 1), efab_tag(seq), w);
}

/* Only the tag byte changes without -c: the payload is not rewritten. */
static int prepare(efab_ctx_t *c, uint64_t size, int p, uint64_t seq)
{
	if (c->o.check)
		return efab_fill(c, TX(c, p), size, seq);
	if (efab_mem_host_accessible(c->mem.kind)) {
		efab_local(c, TX(c, p))[size - 1] = efab_tag(seq);
		return EFAB_OK;
	}
	return EFAB_OK; /* writedata on GPU memory: arrival is the CQ entry */
}

int efab_put_lat_run(efab_ctx_t *c, uint64_t size, efab_row_t *row)
{
	uint64_t n = efab_iters_for(c, size), warm = efab_lat_warmup(c, size), nb = n;
	efab_waitfor_t w;
	size_t ns = 0;
	uint64_t tb0 = 0, tb1 = 0;
	double first_us = 0;

	/* per rank: both ranks send, each from its own memory kind */
	c->use_inject = !c->o.no_inject && !c->o.src_unregistered &&
			efab_inject_ok(c->mem.kind, size, c->fab.inject_rma.value);
	/* [0, warm) warmup, iteration 0 the first; [warm, warm+n) sampled one by
	 * one; [warm+n, warm+n+nb) one batch with no clock read inside */
	for (uint64_t i = 0; i < warm + n + nb; i++, c->seq++) {
		int p = (int)(c->seq & 1);
		put_waitfor(c, &w, c->initiator ? "pong" : "ping", size, i);
		if (src_free(c, &w) || prepare(c, size, p, c->seq))
			return EFAB_ERR;
		if (c->initiator) {
			if (i < warm + n) {
				uint64_t t0 = efab_ticks();
				if (put_send(c, size, p, c->seq, &w) ||
				    put_arrival(c, size, p, c->seq, &w))
					return EFAB_ERR;
				uint64_t t1 = efab_ticks();
				if (i >= warm)
					c->samples[ns++] = efab_ticks_us(t1 - t0) / 2;
				else if (i == 0)
					first_us = efab_ticks_us(t1 - t0) / 2;
			} else {
				if (i == warm + n)
					tb0 = efab_ticks();
				if (put_send(c, size, p, c->seq, &w) ||
				    put_arrival(c, size, p, c->seq, &w))
					return EFAB_ERR;
				if (i + 1 == warm + n + nb)
					tb1 = efab_ticks();
			}
		} else {
			if (put_arrival(c, size, p, c->seq, &w) || put_send(c, size, p, c->seq, &w))
				return EFAB_ERR;
		}
		if (c->o.check)
			row->errors += c->op == EFAB_OP_WRITE
					       ? efab_verify_settled(c, RX(c, p), size, c->seq)
					       : efab_verify(c, RX(c, p), size, c->seq);
	}
	put_waitfor(c, &w, "write completions and the peer", size, n);
	if (efab_barrier_progress(&c->fab, &w))
		return EFAB_ERR;
	row->iters = n;
	row->has_lat = 1;
	efab_stats_compute(c->samples, ns, &row->lat);
	snprintf(row->extra[0], sizeof(row->extra[0]), "%s", c->use_inject ? "yes" : "no");
	efab_lat_extra(row, 1, first_us, nb ? efab_ticks_us(tb1 - tb0) / 2 / (double)nb : 0);
	return EFAB_OK;
}

int efab_get_lat_run(efab_ctx_t *c, uint64_t size, efab_row_t *row)
{
	uint64_t n = efab_iters_for(c, size), warm = efab_lat_warmup(c, size), nb = n;
	efab_waitfor_t w = {"read completion", "read", size, c->peer, 0};
	size_t ns = 0;
	uint64_t seq = c->seq++; /* the target's data for this size */
	uint64_t tb0 = 0, tb1 = 0;
	double first_us = 0;

	/* The target's source region holds message seq; the initiator reads it
	 * into rx0 after poisoning rx0, so a read that moved nothing is caught. */
	if (!c->initiator && efab_fill(c, TX(c, 0), size, seq))
		return EFAB_ERR;
	if (c->rt->barrier(c->rt))
		return EFAB_ERR;
	if (c->initiator) {
		for (uint64_t i = 0; i < warm + n + nb; i++) {
			int single = i < warm + n;
			w.iter = i;
			if (c->o.check && poison(c, RX(c, 0), size, i))
				return EFAB_ERR;
			if (i == warm + n)
				tb0 = efab_ticks();
			uint64_t t0 = single ? efab_ticks() : 0;
			if (efab_post_read(&c->fab, c->peer, efab_local(c, RX(c, 0)), size, c->ldesc,
					   efab_raddr(c, c->peer, TX(c, 0)), c->rkeys[c->peer].key,
					   &w) ||
			    efab_wait_tx(&c->fab, c->fab.tx_posted, &w))
				return EFAB_ERR;
			if (single) {
				uint64_t t1 = efab_ticks();
				if (i >= warm)
					c->samples[ns++] = efab_ticks_us(t1 - t0);
				else if (i == 0)
					first_us = efab_ticks_us(t1 - t0);
			} else if (i + 1 == warm + n + nb) {
				tb1 = efab_ticks();
			}
			if (c->o.check)
				row->errors += efab_verify(c, RX(c, 0), size, seq);
		}
	}
	w.what = "the initiator to finish its reads";
	if (efab_barrier_progress(&c->fab, &w))
		return EFAB_ERR;
	row->iters = n;
	row->has_lat = 1;
	efab_stats_compute(c->samples, ns, &row->lat);
	efab_lat_extra(row, 0, first_us, nb ? efab_ticks_us(tb1 - tb0) / (double)nb : 0);
	return EFAB_OK;
}
