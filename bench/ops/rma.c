/* The RMA family: write, writedata and read under the ping-pong and the
 * windowed-stream patterns (bench/engine/pattern.c times them).
 *
 * put (write), ping-pong: each side polls the last byte of its receive
 *     buffer (host memory) while driving progress; a sample is half the
 *     round trip. writedata: arrival is the remote CQ data completion (works
 *     on GPU memory, which the CPU cannot poll).
 * get (read), ping-pong: the initiator times fi_read to its completion (full
 *     round trip); the target only drives progress.
 *     Region per rank, S = largest size: [rx0 | rx1 | tx0 | tx1]. Message seq
 *     uses halves seq & 1, so a message can be checked while the next is in
 *     flight, and a source half is refilled only after its previous write
 *     completed.
 * stream: ranks pair up, [0, N) initiate towards [N, 2N) (with --bidir both
 *     sides do); a window is W operations posted back to back. With inject
 *     (sizes within the inject limit) all W writes are fi_inject_write, each
 *     complete locally when the call returns (as fabtests' fi_rma_bw posts
 *     them): the window ends at its last post, and the loop's end is
 *     confirmed at the target (bw_confirm). A regular write at the end of
 *     each window cost shm a process_vm_writev per window (its fast RMA path
 *     under FI_MR_VIRT_ADDR) and the 8 B rate a third against fabtests.
 *     Region per rank: [rx | tx]. --footprint buffer (default): every op of a
 *     window reads one tx buffer and lands on the peer's one rx buffer
 *     (concurrent identical writes), as perftest's ib_write_bw does.
 *     --footprint window: op k of a window uses tx + k x size and rx + k x
 *     size, window x size bytes on each side, as fabtests' fi_rma_bw and
 *     OSU's osu_put_bw/osu_get_bw do (it matters where the window no longer
 *     fits a cache: 4 MiB on shm). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "efab_ops.h"
#include "rma.h"
#include "rma_signal.h"

/* The family's state (rma.h), behind c->priv. */
#define RMA(c) ((efab_rma_state_t *)(c)->priv)

/* ---- ping-pong ---- */

#define RX(c, p) ((size_t)(p) * (c)->o.sizes.max)
#define TX(c, p) ((size_t)(2 + (p)) * (c)->o.sizes.max)

/* The message of iteration i of this size: c->seq moves on only when the
 * size is done (put: both ranks count alike). */
static uint64_t seq_of(const efab_ctx_t *c, uint64_t i)
{
	return c->seq + i;
}

static void put_waitfor(efab_ctx_t *c, efab_waitfor_t *w, const char *what, uint64_t size,
			uint64_t i)
{
	*w = (efab_waitfor_t){what, efab_op_name(c->op), size, c->peer, i};
}

/* Source half p is free once every write but the latest has completed
 * (--signal-send: the latest write and its signal). */
static int src_free(efab_ctx_t *c, efab_waitfor_t *w)
{
	uint64_t latest = 1 + (uint64_t)c->o.signal_send;
	if (c->fab.tx_posted > c->fab.tx_done + latest)
		return efab_wait_tx(&c->fab, c->fab.tx_posted - latest, w);
	return EFAB_OK;
}

static int put_send(efab_ctx_t *c, uint64_t size, int p, uint64_t seq, efab_waitfor_t *w)
{
	if (efab_post_write(&c->fab, c->peer, efab_local(c, TX(c, p)), size, c->ldesc,
			    efab_raddr(c, c->peer, RX(c, p)), c->rkeys[c->peer].key,
			    seq & 0xffffffffu, RMA(c)->put.flags, w))
		return EFAB_ERR;
	return c->o.signal_send ? efab_sig_post(c, seq & 0xffffffffu, p, w) : EFAB_OK;
}

static int put_arrival(efab_ctx_t *c, uint64_t size, int p, uint64_t seq, efab_waitfor_t *w)
{
	if (c->op == EFAB_OP_WRITEDATA) {
		/* the n-th arrival, not "one more than seen so far": the peer's
		 * message can complete here before our own last send does, and a
		 * poll for that send (src_free) then counts it already */
		if (efab_wait_rxdata(&c->fab, ++c->fab.rx_data_awaited, w))
			return EFAB_ERR;
		if (c->fab.rx_data_last != (seq & 0xffffffffu)) {
			efab_log_error("remote CQ data %llu, expected %llu",
				       (unsigned long long)c->fab.rx_data_last,
				       (unsigned long long)(seq & 0xffffffffu));
			return EFAB_ERR;
		}
		/* --signal-send: the write's signal too (either may come first) */
		return c->o.signal_send ? efab_sig_arrival(c, seq & 0xffffffffu, w) : EFAB_OK;
	}
	return efab_wait_byte(&c->fab, efab_local(c, RX(c, p) + size - 1), efab_tag(seq), w);
}

static int put_begin(efab_ctx_t *c, uint64_t size)
{
	/* per rank: both ranks send, each from its own memory kind */
	c->use_inject = !c->o.no_inject && !c->o.src_unregistered &&
			efab_inject_ok(c->mem.kind, size, c->fab.inject_rma.value);
	/* what every iteration would otherwise work out again */
	RMA(c)->put.flags = (c->op == EFAB_OP_WRITEDATA ? FI_REMOTE_CQ_DATA : 0) |
			    (c->use_inject ? FI_INJECT : 0);
	RMA(c)->put.host = efab_mem_host_accessible(c->mem.kind);
	put_waitfor(c, &RMA(c)->put.w, "", size, 0);
	return EFAB_OK;
}

/* The source half is free, then carries message i; only the tag byte
 * changes without -c (writedata on GPU memory: arrival is the CQ entry). */
static int put_prepare(efab_ctx_t *c, uint64_t size, uint64_t i)
{
	uint64_t seq = seq_of(c, i);
	int p = (int)(seq & 1);
	efab_waitfor_t *w = &RMA(c)->put.w;
	w->what = c->initiator ? "pong" : "ping";
	w->iter = i;
	if (src_free(c, w))
		return EFAB_ERR;
	if (c->o.check)
		return efab_fill(c, TX(c, p), size, seq);
	if (RMA(c)->put.host)
		efab_local(c, TX(c, p))[size - 1] = efab_tag(seq);
	return EFAB_OK;
}

/* One leg of iteration i: the initiator sends and waits for the pong, the
 * responder waits for the ping and sends it back. */
static int put_leg(efab_ctx_t *c, uint64_t size, uint64_t i, int sends_first)
{
	uint64_t seq = seq_of(c, i);
	int p = (int)(seq & 1), rc;
	efab_waitfor_t *w = &RMA(c)->put.w; /* put_prepare named it for this iteration */
	if (sends_first)
		rc = put_send(c, size, p, seq, w) || put_arrival(c, size, p, seq, w);
	else
		rc = put_arrival(c, size, p, seq, w) || put_send(c, size, p, seq, w);
	return rc ? EFAB_ERR : EFAB_OK;
}

static int put_ping(efab_ctx_t *c, uint64_t size, uint64_t i)
{
	return put_leg(c, size, i, 1);
}

static int put_respond(efab_ctx_t *c, uint64_t size, uint64_t i)
{
	return put_leg(c, size, i, 0);
}

static uint64_t put_after(efab_ctx_t *c, uint64_t size, uint64_t i)
{
	uint64_t seq = seq_of(c, i);
	if (!c->o.check)
		return 0;
	return c->op == EFAB_OP_WRITE ? efab_verify_settled(c, RX(c, seq & 1), size, seq)
				      : efab_verify(c, RX(c, seq & 1), size, seq);
}

static uint64_t put_end(efab_ctx_t *c, uint64_t size, uint64_t iterations)
{
	(void)size;
	c->seq += iterations;
	return 0;
}

const efab_pingpong_ops_t efab_put_pingpong = {
	.begin = put_begin, .end = put_end,
	.prepare = put_prepare, .ping = put_ping, .respond = put_respond, .after = put_after,
	.per_sample = 2, /* half the round trip */
	.legs = 2,       /* the ping and the pong, each size bytes */
	.closing = "write completions and the peer",
};

/* The target's source region holds message c->seq for the whole size; the
 * initiator reads it into rx0 after poisoning rx0 (-c), so a read that moved
 * nothing is caught. */
static int get_begin(efab_ctx_t *c, uint64_t size)
{
	if (!c->initiator && efab_fill(c, TX(c, 0), size, seq_of(c, 0)))
		return EFAB_ERR;
	return c->rt->barrier(c->rt) ? EFAB_ERR : EFAB_OK;
}

/* Poison the receive half so a transfer that moved nothing is caught. */
static int get_prepare(efab_ctx_t *c, uint64_t size, uint64_t i)
{
	if (!c->o.check)
		return EFAB_OK;
	memset(c->bounce, (int)(i & 0xff) ^ 0x5a, size);
	return efab_mem_write(&c->mem, RX(c, 0), c->bounce, size);
}

static int get_ping(efab_ctx_t *c, uint64_t size, uint64_t i)
{
	efab_waitfor_t w = {"read completion", "read", size, c->peer, i};
	if (efab_post_read(&c->fab, c->peer, efab_local(c, RX(c, 0)), size, c->ldesc,
			   efab_raddr(c, c->peer, TX(c, 0)), c->rkeys[c->peer].key, &w) ||
	    efab_wait_tx(&c->fab, c->fab.tx_posted, &w))
		return EFAB_ERR;
	return EFAB_OK;
}

static uint64_t get_after(efab_ctx_t *c, uint64_t size, uint64_t i)
{
	(void)i;
	return c->o.check ? efab_verify(c, RX(c, 0), size, seq_of(c, 0)) : 0;
}

static uint64_t get_end(efab_ctx_t *c, uint64_t size, uint64_t iterations)
{
	(void)size;
	(void)iterations;
	c->seq++;
	return 0;
}

static const efab_pingpong_ops_t get_pingpong = {
	.begin = get_begin, .end = get_end,
	.prepare = get_prepare, .ping = get_ping, .after = get_after,
	.per_sample = 1, /* the full round trip */
	.closing = "the initiator to finish its reads",
};

/* ---- windowed stream ---- */

/* Buffers per side and window: one (--footprint buffer: every op of a
 * window carries the same data, so they may share it, as in perftest) or one
 * per op (--footprint window, as fabtests and OSU). */
static size_t slots(const efab_ctx_t *c)
{
	return c->o.footprint == EFAB_FOOTPRINT_WINDOW && c->o.window > 1 ? (size_t)c->o.window : 1;
}

/* rx bytes: the largest size's slots (tx follows). */
static size_t rx_bytes(const efab_ctx_t *c)
{
	return slots(c) * c->o.sizes.max;
}

static void credit_begin(efab_ctx_t *c);
static int credit_wait(efab_ctx_t *c, uint64_t n, efab_waitfor_t *w);

/* Room for n more writedata in the peer's completion queue (credits, below):
 * the fast path a compare, the wait only where the peer's reads lag. */
static inline int credit_room(efab_ctx_t *c, uint64_t n, efab_waitfor_t *w)
{
	if (!RMA(c)->bw.credit_limit ||
	    RMA(c)->bw.wd_posted + n <= RMA(c)->bw.credit_seen + RMA(c)->bw.credit_limit)
		return EFAB_OK;
	return credit_wait(c, n, w);
}

static int bw_begin(efab_ctx_t *c, uint64_t size)
{
	RMA(c)->answered = 0;
	credit_begin(c);
	if (c->o.signal_send)
		efab_sig_begin(c); /* its own credits, in messages */
	/* --post-list and --high-pps post through fi_writemsg/fi_readmsg; with
	 * them and with --pipeline every operation has a completion (no inject:
	 * fi_inject_write takes no flags, and the pipeline counts completions) */
	RMA(c)->bw.msg = c->o.post_list > 1 || c->o.high_pps;
	RMA(c)->bw.wflags = (c->op == EFAB_OP_WRITEDATA ? FI_REMOTE_CQ_DATA : 0) |
			    (c->o.high_pps ? efab_high_pps_flag() : 0);
	c->use_inject = c->op != EFAB_OP_READ && !c->o.no_inject && !c->o.src_unregistered &&
			!RMA(c)->bw.msg && !c->o.pipeline &&
			efab_inject_ok(c->mem.kind, size, c->fab.inject_rma.value) &&
			c->o.window > 1;
	return EFAB_OK;
}

/* -c only: sources carry message c->seq, read targets are poisoned. */
static int bw_prepare(efab_ctx_t *c, uint64_t size, uint64_t i)
{
	size_t tx = rx_bytes(c), n = slots(c);
	int active = c->initiator || c->o.bidir;
	(void)i;
	if (!c->o.check)
		return EFAB_OK;
	if (c->o.signal_send) /* the window's signals carry its message */
		efab_sig_expect(c, c->seq & 0xffffffffu);
	if (c->op == EFAB_OP_READ) {
		/* every rank's tx is a read source for its peer (bidir) or not used */
		for (size_t k = 0; k < n; k++)
			if (efab_fill(c, tx + k * size, size, c->seq))
				return EFAB_ERR;
		if (active) {
			memset(c->bounce, 0xa5 ^ (int)(c->seq & 0xff), n * size);
			return efab_mem_write(&c->mem, 0, c->bounce, n * size);
		}
		return EFAB_OK;
	}
	for (size_t k = 0; active && k < n; k++)
		if (efab_fill(c, tx + k * size, size, c->seq))
			return EFAB_ERR;
	/* --pipeline checks once, after the loop: a slot no write reached must
	 * not pass for one that a write of an earlier size filled */
	if (c->o.pipeline && (!c->initiator || c->o.bidir)) {
		memset(c->bounce, (uint8_t)~efab_tag(c->seq), n * size); /* never the tag */
		return efab_mem_write(&c->mem, 0, c->bounce, n * size);
	}
	return EFAB_OK;
}

/* The endpoint of the size's operation k (--eps): batches of --post-list
 * operations round-robin over the endpoints, so FI_MORE always has a later
 * post on the same endpoint that rings its doorbell. */
static inline efab_fabric_t *ep_of(efab_ctx_t *c, uint64_t k)
{
	return efab_ep_at(&c->fab, c->fab.nsub ? k / c->o.post_list : 0);
}

/* Operation k of the size through fi_writemsg / fi_readmsg: slot k modulo
 * the slots, FI_MORE on all but every --post-list'th and unless last (a
 * wait follows it: the doorbell must ring). */
static int bw_post_msg(efab_ctx_t *c, uint64_t size, uint64_t k, int last, efab_waitfor_t *w)
{
	size_t tx = rx_bytes(c), slot = (size_t)(k % slots(c)) * size;
	uint64_t more = !last && c->o.post_list > 1 && (k + 1) % c->o.post_list ? FI_MORE : 0;
	int read = c->op == EFAB_OP_READ;
	uint8_t *local = efab_local(c, read ? slot : tx + slot);
	uint64_t remote = efab_raddr(c, c->peer, read ? tx + slot : slot);
	/* credits: room for the whole post list at its first op (no wait
	 * between an FI_MORE post and the one that rings the doorbell) */
	uint64_t pl = c->o.post_list > 1 ? c->o.post_list : 1;
	if (k % pl == 0 && credit_room(c, pl, w))
		return EFAB_ERR;
	if (efab_post_rma_msg(ep_of(c, k), c->peer, read, local, size, c->ldesc, remote,
			      c->rkeys[c->peer].key, c->seq & 0xffffffffu,
			      (read ? 0 : RMA(c)->bw.wflags) | more, w))
		return EFAB_ERR;
	RMA(c)->bw.wd_posted += c->op == EFAB_OP_WRITEDATA;
	return EFAB_OK;
}

/* --pipeline: operation k, alone (the pattern keeps -W in flight). */
static int bw_post_one(efab_ctx_t *c, uint64_t size, uint64_t k, int last)
{
	efab_waitfor_t w = {"pipelined completions", efab_op_name(c->op), size, c->peer,
			    k / c->o.window};
	if (RMA(c)->bw.msg)
		return bw_post_msg(c, size, k, last, &w);
	size_t tx = rx_bytes(c), slot = (size_t)(k % slots(c)) * size;
	if (c->op == EFAB_OP_READ)
		return efab_post_read(ep_of(c, k), c->peer, efab_local(c, slot), size, c->ldesc,
				      efab_raddr(c, c->peer, tx + slot), c->rkeys[c->peer].key, &w);
	if (credit_room(c, 1, &w) ||
	    efab_post_write(ep_of(c, k), c->peer, efab_local(c, tx + slot), size, c->ldesc,
			    efab_raddr(c, c->peer, slot), c->rkeys[c->peer].key,
			    c->seq & 0xffffffffu, RMA(c)->bw.wflags, &w))
		return EFAB_ERR;
	RMA(c)->bw.wd_posted += c->op == EFAB_OP_WRITEDATA;
	return EFAB_OK;
}

/* The per-operation work is the post alone: what depends on the options
 * (op, flags, inject, the step between slots) is settled before the loop. */
static int bw_post(efab_ctx_t *c, uint64_t size, uint64_t i)
{
	size_t tx = rx_bytes(c), step = slots(c) > 1 ? size : 0;
	uint64_t window = c->o.window, key = c->rkeys[c->peer].key, k = 0;
	uint8_t *local = efab_local(c, 0);
	uint64_t remote = efab_raddr(c, c->peer, 0);
	efab_waitfor_t w = {"window completions", efab_op_name(c->op), size, c->peer, i};
	size_t slot = 0;
	if (RMA(c)->bw.msg) {
		for (; k < window; k++)
			if (bw_post_msg(c, size, i * window + k, k + 1 == window, &w))
				return EFAB_ERR;
		return EFAB_OK;
	}
	if (c->op == EFAB_OP_READ) {
		for (; k < window; k++, slot += step)
			if (efab_post_read(ep_of(c, i * window + k), c->peer, local + slot, size, c->ldesc,
					   remote + tx + slot, key, &w))
				return EFAB_ERR;
		return EFAB_OK;
	}
	uint64_t flags = c->op == EFAB_OP_WRITEDATA ? FI_REMOTE_CQ_DATA : 0;
	uint64_t data = c->seq & 0xffffffffu;
	uint64_t credited = c->op == EFAB_OP_WRITEDATA; /* (what the peer's credits count) */
	/* with inject, every write of the window is injected */
	int sig = c->o.signal_send;
	for (uint64_t injected = c->use_inject ? window : 0; k < injected; k++, slot += step) {
		if (credit_room(c, 1, &w) || (sig && efab_sig_room(c, &w)) ||
		    efab_post_write(ep_of(c, i * window + k), c->peer, local + tx + slot, size,
				    c->ldesc, remote + slot, key, data, flags | FI_INJECT, &w) ||
		    (sig && efab_sig_post(c, data, -1, &w)))
			return EFAB_ERR;
		RMA(c)->bw.wd_posted += credited;
	}
	for (; k < window; k++, slot += step) {
		if (credit_room(c, 1, &w) || (sig && efab_sig_room(c, &w)) ||
		    efab_post_write(ep_of(c, i * window + k), c->peer, local + tx + slot, size,
				    c->ldesc, remote + slot, key, data, flags, &w) ||
		    (sig && efab_sig_post(c, data, -1, &w)))
			return EFAB_ERR;
		RMA(c)->bw.wd_posted += credited;
	}
	return EFAB_OK;
}

/* -c: wait until every slot written this window carries its tag (host
 * memory) or all W remote CQ data arrived (writedata), then check. Every
 * rank, every window (lockstep); the next window carries the next message. */
static uint64_t check_arrived(efab_ctx_t *c, uint64_t size, uint64_t i, uint64_t rx0, uint64_t nops)
{
	size_t used = slots(c) < c->o.window ? slots(c) : (size_t)c->o.window;
	int arrival = c->op != EFAB_OP_READ && (!c->initiator || c->o.bidir);
	int reader = c->op == EFAB_OP_READ && (c->initiator || c->o.bidir);
	efab_waitfor_t w = {"the window's data to arrive", efab_op_name(c->op), size, c->peer, i};
	uint64_t errors = 0, seq = c->seq++;
	if (c->op == EFAB_OP_WRITEDATA && arrival) {
		if (efab_wait_rxdata(&c->fab, rx0 + nops, &w))
			return UINT64_MAX;
		/* --signal-send: as many signals, each carrying the message */
		if (c->o.signal_send) {
			w.what = "the window's signal messages";
			uint64_t bad = efab_sig_check(c, rx0 + nops, &w);
			if (bad == UINT64_MAX)
				return UINT64_MAX;
			errors += bad;
		}
	} else if (arrival) {
		for (size_t k = 0; k < used; k++)
			if (efab_wait_byte(&c->fab, efab_local(c, k * size + size - 1), efab_tag(seq),
					   &w))
				return UINT64_MAX;
	}
	for (size_t k = 0; (arrival || reader) && k < used; k++)
		errors += c->op == EFAB_OP_WRITE ? efab_verify_settled(c, k * size, size, seq)
						 : efab_verify(c, k * size, size, seq);
	return errors;
}

static uint64_t bw_check(efab_ctx_t *c, uint64_t size, uint64_t i, uint64_t rx0)
{
	return check_arrived(c, size, i, rx0, c->o.window);
}

/* --pipeline, after the loop: every slot carries the size's message (all
 * nops operations arrived: writedata counts them). */
static uint64_t bw_check_all(efab_ctx_t *c, uint64_t size, uint64_t nops, uint64_t rx0)
{
	return check_arrived(c, size, nops / c->o.window, rx0, nops);
}

static uint64_t bw_end(efab_ctx_t *c, uint64_t size, uint64_t windows)
{
	(void)size;
	(void)windows;
	if (!c->o.check) /* checked windows counted their messages */
		c->seq++;
	return 0;
}

/* ---- the confirmed end of a stream's timed loop ----
 * A write's local completion does not say that its data is in the target's
 * buffer on every provider: shm completes an inline or injected write once
 * it is queued for the peer, whose progress copies it later; tcp (ofi_rxm
 * over tcp) once it is in the socket; the efa fabric's eager and long-CTS
 * writes once the data reached a staging buffer at the target ("transmit
 * complete", libfabric prov/efa/docs/efa_rdm_protocol_v4.md, section 4.2).
 * efa-direct's RDMA write completes when the device has SRD's
 * acknowledgement from the remote device (its tx op flags are
 * FI_TRANSMIT_COMPLETE, prov/efa/src/efa_prov_info.c; the remote device
 * places the data in the registered buffer itself, with no staging buffer).
 * So after its last window the initiator writes an end flag (8 bytes: the
 * count of operations it posted in this size) into the target's confirm
 * slot; the target waits for the flag and, for writedata, until it counted
 * the remote CQ data of every one of those operations, then writes an
 * acknowledgement back; the initiator's loop ends when it sees it.
 *   remote-cq-data   writedata: every operation's remote completion counted
 *                    at the target (proves delivery on any provider)
 *   ordered-flag     write on a fabric that orders writes (FI_ORDER_WAW:
 *                    shm, tcp): the flag lands after every earlier write
 *   unordered-flag   write without FI_ORDER_WAW (efa, efa-direct): the flag
 *                    proves only that the target saw the flag; delivery rests
 *                    on the completion (efa-direct above; not proven for the
 *                    efa fabric's emulated writes: use -o writedata)
 *   local-completion GPU memory (the CPU cannot poll the flag) and reads
 *                    (a read's completion at the initiator is its arrival) */
enum confirm_kind {
	CONFIRM_NONE,
	CONFIRM_CQ_DATA,
	CONFIRM_ORDERED,
	CONFIRM_UNORDERED,
	CONFIRM_SIGNAL
};

#define CONFIRM_MARK (1ull << 63) /* byte 7 of the flag: 0x80, never 0 */
#define CONFIRM_COUNT ((1ull << 56) - 1)

static int gpu_polls(const efab_ctx_t *c);

static enum confirm_kind confirm_kind(const efab_ctx_t *c)
{
	if (c->o.signal_send && c->op == EFAB_OP_WRITEDATA)
		return CONFIRM_SIGNAL; /* messages: any memory kind (rma_signal.c) */
	if (c->op == EFAB_OP_READ || !gpu_polls(c))
		return CONFIRM_NONE;
	if (c->op == EFAB_OP_WRITEDATA)
		return CONFIRM_CQ_DATA;
	return c->fab.info->tx_attr->msg_order & FI_ORDER_WAW ? CONFIRM_ORDERED : CONFIRM_UNORDERED;
}

static const char *bw_confirm_name(const efab_ctx_t *c)
{
	static const char *const names[] = {"local-completion", "remote-cq-data", "ordered-flag",
					    "unordered-flag", "signal-count"};
	return names[confirm_kind(c)];
}

/* Post the 8-byte value v from local slot src to the peer's slot dst. */
static int confirm_send(efab_ctx_t *c, size_t src, size_t dst, uint64_t v, efab_waitfor_t *w)
{
	memcpy(efab_local(c, src), &v, sizeof(v));
	return efab_post_write(&c->fab, c->peer, efab_local(c, src), sizeof(v), c->ldesc,
			       efab_raddr(c, c->peer, dst), c->rkeys[c->peer].key, 0, 0, w);
}

/* Wait for the flag in local slot at, take its value and clear the slot
 * (before anything is sent that lets the peer write it again). */
static int confirm_take(efab_ctx_t *c, size_t at, uint64_t *v, efab_waitfor_t *w)
{
	volatile uint64_t *slot = (volatile uint64_t *)(void *)efab_local(c, at);
	if (efab_wait_byte(&c->fab, efab_local(c, at + 7), (uint8_t)(CONFIRM_MARK >> 56), w))
		return EFAB_ERR;
	*v = *slot;
	*slot = 0;
	return EFAB_OK;
}

/* Slots at c->confirm_off: [the peer's end flag | the peer's acknowledgement |
 * source of mine | source of my acknowledgement]. */
#define SLOT_FLAG(c) ((c)->confirm_off)
#define SLOT_ACK(c) ((c)->confirm_off + 8)
#define SLOT_FLAG_SRC(c) ((c)->confirm_off + 16)
#define SLOT_ACK_SRC(c) ((c)->confirm_off + 24)

/* ---- writedata's credits ----
 * A writedata's remote CQ data is an entry in the target's completion queue,
 * and one-sided traffic has nothing that stops an initiator from making
 * entries faster than the target reads them. On efa-direct the CQ is a ring
 * the device writes in memory the provider reads; the provider tells the
 * device how far it read through the CQ doorbell (consumer index), and the
 * kernel driver has no event for a full CQ (amzn-drivers efa_main.c: only
 * completion events). Where the device supports unsolicited write receive
 * (EFADV_DEVICE_ATTR_CAPS_UNSOLICITED_WRITE_RECV, newer devices) a write with
 * immediate consumes no posted receive, so no receive queue bounds the
 * entries either (with receives, RNR bounds them). A target descheduled for
 * 1 ms while a NIC delivers 4 Mops/s is 4000 entries behind: a 4096-entry
 * ring is lapped and completions are lost (efasim: the run timed out waiting
 * for them, about one run in two of the 8 B pipelined writedata case on 2
 * cores; EFAB_FAULT_NO_CREDITS=1 brings it back). So the target returns
 * credits: each time it has read credit_chunk more remote CQ data it writes
 * its running count (every remote CQ data it ever read: monotonic) into one
 * of 8 words of the initiator's confirm area, in turn; the initiator takes
 * the largest word it sees (writes land in any order on efa: an older value
 * landing late never lowers it) and posts a writedata only while at most
 * credit_limit of its own may be unread. Host memory only (the words are
 * polled by the CPU, as the confirm flags): GPU memory confirms nothing and
 * has no credits. A wait for credits is in the timed phase: a target that
 * reads slower than the fabric delivers is the rate. */
#define CREDIT_WORDS 8
#define SLOT_CREDIT(c, k) ((c)->confirm_off + 64 + 8 * (size_t)(k))
#define SLOT_CREDIT_SRC(c, k) ((c)->confirm_off + 128 + 8 * (size_t)(k))

/* efab_progress's rx_hook on a writedata stream's ranks that receive. */
static int credit_return(efab_fabric_t *fab, void *arg)
{
	efab_ctx_t *c = arg;
	/* a test's descheduled reader: once, halfway through the size's
	 * operations (in the timed phase) */
	if (c->faults.rx_pause_ms && !RMA(c)->bw.paused &&
	    fab->rx_data_count - RMA(c)->rx_data_confirmed >= c->planned * c->o.window / 2) {
		RMA(c)->bw.paused = 1;
		usleep(c->faults.rx_pause_ms * 1000u);
	}
	uint64_t n = fab->rx_data_count;
	if (!RMA(c)->bw.credit_chunk || n - RMA(c)->bw.credit_sent_at < RMA(c)->bw.credit_chunk)
		return 0;
	unsigned k = (unsigned)(RMA(c)->bw.credit_returns++ % CREDIT_WORDS);
	efab_waitfor_t w = {"a credit return to be posted", efab_op_name(c->op), 0, c->peer, 0};
	RMA(c)->bw.credit_sent_at = n;
	/* a source word is rewritten 8 returns later, by a larger count: should
	 * its write still be in flight then, the device reads a newer credit,
	 * which is as true (an aligned 8-byte store is never read torn) */
	return confirm_send(c, SLOT_CREDIT_SRC(c, k), SLOT_CREDIT(c, k), n, &w) ? -1 : 0;
}

/* Whether a writedata stream has credits: its remote CQ data counted at a
 * host-memory target (confirm remote-cq-data), posted by the CPU (--initiator
 * gpu: the GPU posts, never asks for credits; the GDA stream bounds its own
 * rings). */
static int credits_apply(const efab_ctx_t *c)
{
	/* (--signal-send: its own credits, counted in pairs, rma_signal.c) */
	return confirm_kind(c) == CONFIRM_CQ_DATA && c->o.initiator != EFAB_INITIATOR_GPU;
}

/* bw_begin, every rank, every size: credits where the remote CQ data is
 * counted at a host-memory target (confirm remote-cq-data), sized to the CQ
 * as asked (both ranks' are alike; the device's may be larger): what it holds
 * less what the target's own operations can have in it (--bidir: a window,
 * at most the transmit queue; 64 more for credit returns, flags and
 * acknowledgements), returned in eighths. */
static void credit_begin(efab_ctx_t *c)
{
	int on = credits_apply(c);
	RMA(c)->bw.paused = 0;
	RMA(c)->bw.credit_limit = RMA(c)->bw.credit_chunk = 0;
	c->fab.rx_hook = on ? credit_return : NULL;
	c->fab.rx_hook_arg = c;
	if (!on || c->faults.no_credits)
		return;
	uint64_t cq = c->fab.cq_size, tx = c->fab.info->tx_attr->size;
	uint64_t own = (c->o.bidir ? (c->o.window < tx ? c->o.window : tx) : 0) + 64;
	/* (the CQ asked holds the tx queue, at least a window, and the
	 * receives: more than own wherever 64 < the receives; else 16, and
	 * -v shows the CQ can be passed) */
	uint64_t room = cq > own + 16 ? cq - own : 16;
	uint64_t pl = c->o.post_list > 1 ? c->o.post_list : 1;
	RMA(c)->bw.credit_chunk = room / CREDIT_WORDS ? room / CREDIT_WORDS : 1;
	RMA(c)->bw.credit_limit = room - RMA(c)->bw.credit_chunk;
	/* never stuck: with every op read but fewer than a chunk returned, a
	 * post list still fits (where the CQ asked for is smaller than that,
	 * the limit can pass it: -v shows both) */
	if (RMA(c)->bw.credit_limit < RMA(c)->bw.credit_chunk + pl)
		RMA(c)->bw.credit_limit = RMA(c)->bw.credit_chunk + pl;
	if (c->o.verbose && c->rt->rank == 0 && !RMA(c)->bw.credit_said++)
		fprintf(stderr,
			"# credits: CQ %llu entries asked, %llu kept for the target's own "
			"completions: at most %llu remote CQ data unread, returned every %llu%s\n",
			(unsigned long long)cq, (unsigned long long)own,
			(unsigned long long)RMA(c)->bw.credit_limit,
			(unsigned long long)RMA(c)->bw.credit_chunk,
			own + RMA(c)->bw.credit_limit > cq
				? " (MORE than the CQ asked can hold: it may be "
				  "lapped where the device's is no larger)"
				: "");
}

/* credit_room's slow path: wait until the peer has read enough. */
static int credit_wait(efab_ctx_t *c, uint64_t n, efab_waitfor_t *w)
{
	volatile const uint64_t *words = (volatile const uint64_t *)(void *)efab_local(c, SLOT_CREDIT(c, 0));
	efab_waitfor_t cw = *w;
	cw.what = "credits from the peer (its count of this rank's remote CQ data read)";
	if (efab_wait_credit(&c->fab, words, CREDIT_WORDS, &RMA(c)->bw.credit_seen,
			     RMA(c)->bw.wd_posted + n - RMA(c)->bw.credit_limit, &cw))
		return EFAB_ERR;
	if (RMA(c)->bw.credit_seen > RMA(c)->bw.wd_posted) {
		efab_log_error(
			"the peer returned credits for %llu remote CQ data, this rank posted %llu",
			(unsigned long long)RMA(c)->bw.credit_seen,
			(unsigned long long)RMA(c)->bw.wd_posted);
		return EFAB_ERR;
	}
	return EFAB_OK;
}

/* The peer's end flag is in its slot: once every operation it counts
 * arrived (writedata: as remote CQ data), clear the slot and acknowledge
 * it. wait = 0: return 0 with nothing done (the flag left in place) where
 * the remote CQ data is still short (bw_answer tries again after the next
 * window). Returns 1 once acknowledged, EFAB_ERR on a failure. */
static int acknowledge(efab_ctx_t *c, enum confirm_kind kind, int wait, efab_waitfor_t *w)
{
	uint64_t v = *(volatile uint64_t *)(void *)efab_local(c, SLOT_FLAG(c));
	if (kind == CONFIRM_CQ_DATA) {
		uint64_t want = RMA(c)->rx_data_confirmed + (v & CONFIRM_COUNT);
		w->what = "the remote CQ data of every operation of the size";
		if (!wait && c->fab.rx_data_count < want)
			return 0;
		if (efab_wait_rxdata(&c->fab, want, w))
			return EFAB_ERR;
		if (c->fab.rx_data_count != want) {
			efab_log_error("%llu remote CQ data completions counted, %llu written",
				       (unsigned long long)(c->fab.rx_data_count -
							    RMA(c)->rx_data_confirmed),
				       (unsigned long long)(v & CONFIRM_COUNT));
			return EFAB_ERR;
		}
		RMA(c)->rx_data_confirmed = want;
	}
	*(volatile uint64_t *)(void *)efab_local(c, SLOT_FLAG(c)) = 0;
	w->what = "the acknowledgement to be posted";
	if (confirm_send(c, SLOT_ACK_SRC(c), SLOT_ACK(c), v, w))
		return EFAB_ERR;
	RMA(c)->answered = 1;
	return 1;
}

/* --bidir, between this rank's windows: a peer that finished first waits
 * for its acknowledgement; giving it now ends the peer's loop when its
 * data arrived, not when this rank's own loop ends (which would count
 * this rank's remaining windows in the peer's time). One byte read per
 * window while nothing is there. */
static int bw_answer(efab_ctx_t *c, uint64_t size)
{
	enum confirm_kind kind;
	if (!c->o.bidir || RMA(c)->answered || (kind = confirm_kind(c)) == CONFIRM_NONE ||
	    *(volatile uint8_t *)efab_local(c, SLOT_FLAG(c) + 7) != (uint8_t)(CONFIRM_MARK >> 56))
		return EFAB_OK; /* (GPU memory: CONFIRM_NONE, the slot is never read) */
	efab_waitfor_t w = {"", efab_op_name(c->op), size, c->peer, 0};
	return acknowledge(c, kind, 0, &w) < 0 ? EFAB_ERR : EFAB_OK;
}

/* Timed, it ends this rank's loop: the initiator posts its end flag and
 * waits for the acknowledgement; the target waits for the flag and
 * acknowledges. --bidir, both: the peer's flag, where it comes before the
 * acknowledgement of this rank's own, is acknowledged at once (the peer may
 * be waiting for it); otherwise after the loop (bw_finish). */
static int bw_confirm(efab_ctx_t *c, uint64_t size, uint64_t windows)
{
	enum confirm_kind kind = confirm_kind(c);
	int sends = c->initiator || c->o.bidir, receives = !c->initiator || c->o.bidir;
	efab_waitfor_t w = {"", efab_op_name(c->op), size, c->peer, windows};
	volatile uint8_t *flag = efab_local(c, SLOT_FLAG(c) + 7), *ack = efab_local(c, SLOT_ACK(c) + 7);
	const uint8_t mark = (uint8_t)(CONFIRM_MARK >> 56);
	uint64_t v;
	if (kind == CONFIRM_NONE)
		return EFAB_OK;
	if (kind == CONFIRM_SIGNAL)
		return efab_sig_confirm(c, size, windows);
	w.what = "the end flag to be posted";
	uint64_t posted = windows * c->o.window + c->faults.confirm_extra;
	if (sends &&
	    confirm_send(c, SLOT_FLAG_SRC(c), SLOT_FLAG(c), CONFIRM_MARK | (posted & CONFIRM_COUNT), &w))
		return EFAB_ERR;
	while (receives && !RMA(c)->answered) {
		w.what = sends ? "the peer's end flag or the acknowledgement of this rank's"
			       : "the peer's end flag after its last window";
		if (efab_wait_byte2(&c->fab, flag, sends ? ack : flag, mark, &w))
			return EFAB_ERR;
		if (*flag != mark)
			break; /* this rank's end is confirmed: the peer's flag after the loop */
		if (acknowledge(c, kind, 1, &w) < 0)
			return EFAB_ERR;
	}
	w.what = "the peer's acknowledgement of the last window";
	if (sends && confirm_take(c, SLOT_ACK(c), &v, &w))
		return EFAB_ERR;
	return EFAB_OK;
}

/* After the loop, untimed: the peer's flag where it was not answered yet. */
static int bw_finish(efab_ctx_t *c, uint64_t size, uint64_t windows)
{
	enum confirm_kind kind = confirm_kind(c);
	int receives = !c->initiator || c->o.bidir;
	efab_waitfor_t w = {"the peer's end flag after its last window", efab_op_name(c->op), size,
			    c->peer, windows};
	int rc = EFAB_OK;
	if (kind != CONFIRM_NONE && kind != CONFIRM_SIGNAL && receives && !RMA(c)->answered &&
	    (efab_wait_byte(&c->fab, efab_local(c, SLOT_FLAG(c) + 7), (uint8_t)(CONFIRM_MARK >> 56),
			    &w) ||
	     acknowledge(c, kind, 1, &w) < 0))
		rc = EFAB_ERR;
	RMA(c)->answered = 0; /* the next size's flag is a new one */
	return rc;
}

static const char *bw_footprint(const efab_ctx_t *c)
{
	return efab_footprint_name(c->o.footprint);
}

const efab_stream_ops_t efab_rma_stream = {
	.begin = bw_begin, .end = bw_end,
	.prepare = bw_prepare, .post = bw_post, .check = bw_check,
	.confirm = bw_confirm, .answer = bw_answer, .finish = bw_finish,
	.confirm_name = bw_confirm_name,
	.footprint = bw_footprint,
	.lockstep = 1, /* a slot is rewritten only once every rank checked it */
	.post_one = bw_post_one, .check_all = bw_check_all,
};

/* ---- the family ---- */

/* The CPU cannot poll GPU memory for the last byte: a ping-pong's arrival
 * becomes the remote CQ data completion. */
static int gpu_polls(const efab_ctx_t *c)
{
	return efab_mem_host_accessible(c->o.mem_local) && efab_mem_host_accessible(c->o.mem_remote);
}

/* A ping-pong's arrival can be a write's last byte: the CPU polls host
 * memory, the GPU initiator's kernel (--initiator gpu) GPU memory. */
static int last_byte_polled(const efab_ctx_t *c)
{
	return c->o.initiator == EFAB_INITIATOR_GPU || gpu_polls(c);
}

/* The peak-rate options (--post-list, --pipeline, --high-pps) against
 * what else was asked: usage errors, before any fabric opens. */
static int peak_check_opts(efab_ctx_t *c)
{
	const char *bad = NULL;
	int peak = c->o.post_list > 1 || c->o.pipeline || c->o.high_pps;
	peak |= c->o.eps > 1;
	if (peak && c->o.initiator == EFAB_INITIATOR_GPU)
		bad = "--post-list, --pipeline, --eps and --high-pps are CPU posting techniques: not "
		      "with --initiator gpu (its doorbell batch is the window)";
	else if (c->o.pipeline && c->o.time_s > 0)
		bad = "--pipeline counts operations: give -n (windows of -W ops), not --time";
	if (!bad)
		return EFAB_OK;
	if (c->rt->rank == 0)
		efab_log_error("%s", bad);
	return EFAB_EUSAGE;
}

/* --signal-send against what else was asked: usage errors, before any
 * fabric opens (after -o's default is settled: writedata on GPU memory). */
static int signal_check_opts(efab_ctx_t *c)
{
	const char *bad = NULL;
	if (!c->o.signal_send)
		return EFAB_OK;
	if (c->op != EFAB_OP_WRITEDATA)
		bad = "--signal-send follows every writedata with its signal: give -o writedata";
	else if (c->o.initiator == EFAB_INITIATOR_GPU)
		bad = "--signal-send: the CPU posts the signals, not with --initiator gpu";
	else if (c->o.bidir || c->o.pipeline || c->o.post_list > 1 || c->o.eps > 1 || c->o.high_pps)
		bad = "--signal-send runs windows of one direction: not with --bidir, --pipeline, "
		      "--post-list, --eps or --high-pps";
	if (!bad)
		return EFAB_OK;
	if (c->rt->rank == 0)
		efab_log_error("%s", bad);
	return EFAB_EUSAGE;
}

static int rma_check_opts(efab_ctx_t *c)
{
	if (!c->priv && !(c->priv = calloc(1, sizeof(efab_rma_state_t)))) {
		efab_log_error("out of memory");
		return EFAB_ERR;
	}
	if (c->row->pattern == EFAB_PATTERN_STREAM && peak_check_opts(c))
		return EFAB_EUSAGE;
	if (c->row->pattern == EFAB_PATTERN_PINGPONG && c->op == EFAB_OP_WRITE && !last_byte_polled(c)) {
		/* -o write times arrival by its last byte, which the CPU cannot
		 * poll in GPU memory: asked for, it is refused (a silent switch
		 * filled one sweep series from two jobs); by default the row is
		 * writedata, and the op column and the header say so */
		if (c->o.op == EFAB_OP_WRITE) {
			efab_log_error("-o write with GPU memory (--mem): the CPU cannot poll GPU "
				       "memory for the last byte; use -o writedata (the default there)");
			return EFAB_EUSAGE;
		}
		c->op = EFAB_OP_WRITEDATA;
	}
	return signal_check_opts(c);
}

static size_t rma_region(const efab_ctx_t *c, uint64_t max_size)
{
	if (c->row->pattern == EFAB_PATTERN_STREAM)
		return 2 * rx_bytes(c);
	return 4 * max_size;
}

int efab_rma_notes(efab_ctx_t *c)
{
	if (c->op == EFAB_OP_WRITEDATA && c->row->pattern == EFAB_PATTERN_PINGPONG && !last_byte_polled(c))
		efab_note(c, "-o writedata%s: GPU memory cannot be polled by the CPU, arrival is the "
			     "remote CQ data completion", c->o.op == EFAB_OP_DEFAULT ? " (the default "
			     "on GPU memory)" : "");
	if (c->op == EFAB_OP_WRITE && c->row->pattern == EFAB_PATTERN_PINGPONG) {
		size_t mtu = efab_link_mtu(c);
		char m[96] = "the provider reports no MTU: column lat_lower_bound unknown";
		if (mtu)
			snprintf(m, sizeof(m), "above the MTU %zu B (fi_info link_attr): column "
					       "lat_lower_bound yes", mtu);
		efab_note(c, "-o write: arrival = its last byte seen; where a fabric may place a "
			     "message's bytes out of order (EFA's SRD sends a write above the MTU as "
			     "packets in any order) this is a lower bound for multi-packet sizes (%s; "
			     "with -c, late_msgs/late_bytes count the messages whose bytes landed "
			     "after the last one): -o writedata times the completion", m);
	}
	if (c->o.check)
		efab_note(c, "-c: every payload is checked; checking runs between timed intervals "
			     "but can still delay the peer: quote numbers from runs without -c");
	if (c->o.src_unregistered)
		efab_note_brief(c, "--src-unregistered: local buffers passed with desc = NULL");
	if (c->o.signal_send)
		efab_note_brief(c, "--signal-send: every writedata followed by a 32-byte fi_send "
				   "(the signal), both counted at the target (NVSHMEM's put-with-"
				   "signal on EFA, without its GDRCopy store and acknowledgement)");
	return efab_sig_setup(c);
}

/* --high-pps where it can work: the headers define FI_EFA_WR_HIGH_PPS and
 * the provider is efa (the flag is one of its own, fi_ext_efa.h; both its
 * fabrics pass a write's flags to efa_qp_post_write). Elsewhere exit 77. */
static int high_pps_offered(efab_ctx_t *c)
{
	const char *prov = c->fab.info->fabric_attr->prov_name;
	if (!c->o.high_pps)
		return EFAB_OK;
	if (!efab_high_pps_flag()) {
		if (c->rt->rank == 0)
			efab_log_error("--high-pps: not offered by this libfabric: efabench was built "
				       "against libfabric %d.%d, whose headers have no "
				       "FI_EFA_WR_HIGH_PPS (rdma/fi_ext_efa.h, libfabric >= 2.6)",
				       FI_MAJOR_VERSION, FI_MINOR_VERSION);
		return EFAB_SKIP;
	}
	if (!efab_prov_matches("efa", prov)) {
		if (c->rt->rank == 0)
			efab_log_error("--high-pps: not offered by provider %s: FI_EFA_WR_HIGH_PPS is "
				       "the efa provider's flag (fi_ext_efa.h)", prov ? prov : "?");
		return EFAB_SKIP;
	}
	return EFAB_OK;
}

/* Header notes of the peak-rate options in force. */
static void peak_notes(efab_ctx_t *c)
{
	if (c->o.post_list > 1)
		efab_note(c,
			  "--post-list %llu: operations posted with fi_%smsg, FI_MORE on all but "
			  "every %llu-th and on none that a wait follows (the window's last; "
			  "--pipeline posts whole lists only, once that many slots are free): one "
			  "doorbell per %llu work requests; inject off",
			  (unsigned long long)c->o.post_list,
			  c->op == EFAB_OP_READ ? "read" : "write",
			  (unsigned long long)c->o.post_list, (unsigned long long)c->o.post_list);
	if (c->o.pipeline)
		efab_note(c, "--pipeline: operations posted while completions are read, at most %llu "
			     "in flight, no wait at window ends (fi_efa_rma_bw's loop; window 0 timed "
			     "alone as first_us, the warmup drained before the measured phase); the "
			     "timed loop starts once the measured phase's first -W operations are "
			     "posted (the pipeline full, as fi_efa_rma_bw's clock) and ends confirmed as "
			     "with windows; no window times: window_us_* and *_windows empty; inject "
			     "off%s",
			  (unsigned long long)c->o.window,
			  c->o.check ? "; -c: sources filled and destinations poisoned once before "
				       "the size, every destination checked after its loop" : "");
	if (c->o.high_pps) {
		uint32_t v = fi_version();
		efab_note(c, "--high-pps: FI_EFA_WR_HIGH_PPS on every write (fi_writemsg; the EFA "
			     "burst-PPS processing hint); running libfabric %u.%u%s",
			  FI_MAJOR(v), FI_MINOR(v),
			  FI_VERSION_LT(v, FI_VERSION(2, 7))
				  ? (getenv("FI_EFA_ENABLE_HIGH_PPS") &&
						     atoi(getenv("FI_EFA_ENABLE_HIGH_PPS")) > 0
					     ? ", FI_EFA_ENABLE_HIGH_PPS set: the provider applies it"
					     : ", which applies it only with FI_EFA_ENABLE_HIGH_PPS=1 "
					       "(unset here: the flag is ignored)")
				  : ", which applies it without FI_EFA_ENABLE_HIGH_PPS");
	}
}

/* --eps N > 1: what it needs of the fabric, then the endpoints (collective:
 * every rank reaches it, the refusals are alike on every rank). */
static int eps_open(efab_ctx_t *c)
{
	const struct fi_info *info = c->fab.info;
	const char *why = NULL;
	int rc = EFAB_SKIP;
	if (c->o.eps <= 1)
		return EFAB_OK;
	if (c->op == EFAB_OP_WRITEDATA && (info->mode & FI_RX_CQ_DATA))
		why = "remote CQ data consumes receives posted on each endpoint (FI_RX_CQ_DATA): "
		      "only the first endpoint posts them";
	else if (info->domain_attr->mr_mode & FI_MR_ENDPOINT)
		why = "FI_MR_ENDPOINT binds the buffer's registration to one endpoint";
	else if (confirm_kind(c) == CONFIRM_ORDERED) {
		/* the end flag goes through the first endpoint: ordered only behind
		 * that endpoint's writes, and a local completion here does not say
		 * that a write arrived */
		why = "-o write confirms its end with a flag ordered behind the writes of one "
		      "endpoint (FI_ORDER_WAW); use -o writedata (every arrival counted)";
		rc = EFAB_EUSAGE;
	}
	if (why) {
		if (c->rt->rank == 0)
			efab_log_error("--eps %llu on fabric %s: %s", (unsigned long long)c->o.eps,
				       info->fabric_attr->name, why);
		return rc;
	}
	efab_note(c, "--eps %llu: %llu endpoints per rank on domain %s, each with its own CQ and "
		     "AV; the size's operations go to them in turn%s, endpoint j to the peer's "
		     "endpoint j; the end flag and its acknowledgement through the first",
		  (unsigned long long)c->o.eps, (unsigned long long)c->o.eps,
		  info->domain_attr->name,
		  c->o.post_list > 1 ? " by --post-list batches" : " (round-robin)");
	return efab_eps_open(&c->fab, c->o.eps);
}

int efab_rma_stream_setup(efab_ctx_t *c)
{
	size_t txq = c->fab.info->tx_attr->size;
	int hrc = high_pps_offered(c);
	if (!hrc)
		hrc = eps_open(c);
	if (hrc)
		return hrc;
	if (c->o.window * (1 + (uint64_t)c->o.signal_send) > txq) {
		if (c->rt->rank == 0)
			efab_log_error("--window %llu is above the provider's tx queue size %zu%s",
				       (unsigned long long)c->o.window, txq,
				       c->o.signal_send
					       ? " (--signal-send: two posts per operation)"
					       : "");
		return EFAB_EUSAGE;
	}
	if (c->o.check && !efab_mem_host_accessible(c->mem_kind) && c->op == EFAB_OP_WRITE &&
	    c->o.initiator != EFAB_INITIATOR_GPU) {
		if (c->rt->rank == 0)
			efab_log_error("-c on GPU memory needs -o writedata (the CPU cannot poll "
				       "device memory for arrival)");
		return EFAB_EUSAGE;
	}
	efab_note(c, "bandwidth (bw_MBps) = payload bytes of the measured windows / the elapsed "
		     "time of the timed loop (first post to last completion, the end confirmed: "
		     "%s), 10^6 B/s; message rate (msg_rate_Mops) = operations / the same time",
		  efab_stream_confirm_name(c, &efab_rma_stream));
	efab_note(c, "bw_MBps_windows and msg_rate_Mops_windows divide by the sum of window times "
		     "(first post to last local completion of each window, gaps excluded); "
		     "every window ends with a progress call (as fabtests' fi_rma_bw); "
		     "aggregate = sum over initiating ranks; iters = windows of %llu ops",
		  (unsigned long long)c->o.window);
	static const char *const confirm_why[] = {
		[CONFIRM_NONE] =
			"the loop ends at the last local completion (reads: the data is at "
			"the initiator; GPU memory: the CPU cannot poll an end flag)",
		[CONFIRM_CQ_DATA] =
			"after its last window the initiator writes an end flag with its "
			"operation count; the target counts the remote CQ data of every "
			"operation, then writes an acknowledgement back, which ends the loop",
		[CONFIRM_ORDERED] =
			"after its last window the initiator writes an end flag; this fabric "
			"orders writes (FI_ORDER_WAW), so at the flag every earlier write "
			"has landed; the target's acknowledgement ends the loop",
		[CONFIRM_UNORDERED] =
			"after its last window the initiator writes an end flag and waits "
			"for the target's acknowledgement; this fabric does not order "
			"writes (no FI_ORDER_WAW), so delivery rests on the provider's "
			"completion (EFA efa-direct: after SRD's remote acknowledgement; "
			"-o writedata counts every arrival)",
		[CONFIRM_SIGNAL] =
			"after its last window the initiator sends an end message with its "
			"count of writedata + signal pairs; the target counts the remote CQ "
			"data and the signal of each, then sends a credit message with the "
			"count, which ends the loop",
	};
	efab_note(c, "end_confirm %s: %s", bw_confirm_name(c), confirm_why[confirm_kind(c)]);
	if (c->o.signal_send)
		efab_note(c,
			  "credits (--signal-send): the target sends its count of pairs (writedata "
			  "+ signal) every eighth of half its %zu posted receives; the initiator "
			  "keeps at most that half, less the eighth, uncounted (the other half may "
			  "be read but not yet reposted; a send with no receive posted meets RNR)",
			  c->fab.rx_posted);
	if (credits_apply(c))
		efab_note(c, "credits (writedata): %s",
			  c->faults.no_credits
				  ? "OFF (EFAB_FAULT_NO_CREDITS=1, a test fault): a target that reads its "
				    "CQ slower than the remote CQ data arrive can lose them"
				  : "the target returns its count of remote CQ data read every eighth of "
				    "its CQ (as asked, less 64 entries for its own completions, less a "
				    "window with --bidir); the initiator posts a writedata only while at "
				    "most the rest can be unread, waiting in the timed loop otherwise (a "
				    "device CQ read too slowly is lapped and loses completions; a target "
				    "that reads slower than the fabric delivers is the rate); -v gives "
				    "the figures");
	efab_note(c, "--footprint %s: %s", efab_footprint_name(c->o.footprint),
		  slots(c) > 1 ? "op k of a window uses source and destination k x size "
				 "(window x size bytes each side, as fabtests and OSU)"
			       : "every op of a window uses one source and one destination "
				 "buffer (as perftest)");
	peak_notes(c);
	if (c->o.bidir)
		efab_note(c, "--bidir: both ranks of each pair issue at once; rows report the sum; "
			     "each rank's loop ends at its own confirmed end (a rank still posting "
			     "acknowledges its peer's end flag between its windows)");
	if (c->op != EFAB_OP_READ)
		efab_note(c, "inject: %s", c->o.no_inject ? "off (--no-inject)"
			  : "fi_inject_write for sizes <= the inject size (every op of a window, "
			    "complete locally when posted: the window ends at its last post, its "
			    "writes may still be in flight, so for inject sizes the window time and "
			    "*_windows are lower bounds; bw_MBps ends with the confirmed end)");
	return efab_rma_notes(c);
}

static int rma_setup(efab_ctx_t *c)
{
	return c->row->pattern == EFAB_PATTERN_STREAM ? efab_rma_stream_setup(c) : efab_rma_notes(c);
}

static const efab_pingpong_ops_t *rma_pingpong(const efab_ctx_t *c)
{
	return c->op == EFAB_OP_READ ? &get_pingpong : &efab_put_pingpong;
}

static const efab_stream_ops_t *rma_stream(const efab_ctx_t *c)
{
	(void)c;
	return &efab_rma_stream;
}

static void rma_teardown(efab_ctx_t *c)
{
	if (c->priv)
		efab_sig_teardown(c);
	free(c->priv);
	c->priv = NULL;
}

/* --signal-send: messages need FI_MSG (and receives posted). */
static int rma_plan(efab_ctx_t *c, efab_fabric_req_t *req)
{
	req->msg = c->o.signal_send;
	return EFAB_OK;
}

static void rma_op_label(const efab_ctx_t *c, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s", efab_op_name(c->op), c->o.signal_send ? "+send" : "");
}

const efab_family_t efab_family_rma = {
	.check_opts = rma_check_opts,
	.plan = rma_plan,
	.op_label = rma_op_label,
	.region = rma_region,
	.setup = rma_setup,
	.pingpong = rma_pingpong,
	.stream = rma_stream,
	.teardown = rma_teardown,
};
