/* --signal-send: the raw fabric's partner of NVSHMEM's put-with-signal on
 * EFA (docs/nvshmem-put-signal.md): every writedata is followed by a
 * 32-byte fi_send (the signal message), and the target counts both, as
 * NVSHMEM's nvshmemt_put_signal_unordered posts a writedata per chunk and an
 * fi_send of its 32-byte signal op, and its target proxy applies the signal
 * once it counted the writes. Not done here: NVSHMEM's target then stores
 * the signal word through GDRCopy and acknowledges every signal (3.6.5: a
 * 0-byte writedata back; 3.8.0: coalesced sends).
 *
 * Messages (32 bytes, any memory kind: they land in the fabric's receive
 * slots, host memory):
 *   SIGNAL initiator -> target, after each writedata: value = the
 *          writedata's CQ data (the size's message number)
 *   CREDIT target -> initiator: value = the pairs (writedata + signal) it
 *          counted, ever; sent every chunk of them and at the end
 *   END    initiator -> target, after the stream's last window: value =
 *          the signals it posted, ever
 * A signal consumes one of the target's posted receives, and nothing in
 * one-sided traffic stops an initiator from sending faster than the target
 * reposts them (a device answers a send with no receive posted with RNR):
 * the stream keeps at most `limit` pairs uncounted (credits, as the
 * writedata credits of rma.c but carried by messages, so GPU memory has
 * them too). The stream's end is confirmed by the final CREDIT. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "efab_ops.h"
#include "rma.h"
#include "rma_signal.h"

#define RMA(c) ((efab_rma_state_t *)(c)->priv)
#define SIG(c) (&RMA(c)->sig)

enum { MSG_SIGNAL = 0x53494701u, MSG_CREDIT = 0x53494702u, MSG_END = 0x53494703u };

typedef struct sig_msg {
	uint32_t kind;
	uint32_t bytes; /* sizeof(sig_msg_t): a short message is refused */
	uint64_t value;
	uint64_t op; /* the sender's count of messages of this kind before it */
	uint64_t pad;
} sig_msg_t;

/* The source buffer, 64 bytes a slot: signals [the stream's | a stream's
 * wrong one (EFAB_FAULT_SIGNAL) | a ping-pong's two halves], then 8 credit
 * sources, then 2 end sources */
#define SRC_SIGNAL(k) ((size_t)(k)*64)
#define SRC_CREDIT(k) (256 + (size_t)(k)*64)
#define SRC_END(k) (768 + (size_t)(k)*64)
#define SRC_BYTES 4096
#define CREDIT_SLOTS 8

/* Receives a pair of this stream takes at the target: the signal's, and the
 * writedata's where FI_RX_CQ_DATA makes remote CQ data consume one. */
static uint64_t recvs_per_pair(const efab_ctx_t *c)
{
	return 1 + ((c->fab.info->mode & FI_RX_CQ_DATA) != 0);
}

static void on_msg(void *arg, const void *buf, size_t len)
{
	efab_ctx_t *c = arg;
	efab_sig_state_t *s = SIG(c);
	sig_msg_t m;
	if (len != sizeof(m)) {
		s->bad++;
		return;
	}
	memcpy(&m, buf, sizeof(m));
	if (m.bytes != sizeof(m)) {
		s->bad++;
		return;
	}
	switch (m.kind) {
	case MSG_SIGNAL:
		s->received++;
		s->last_value = m.value;
		/* -c, a stream: every signal of a window carries the window's
		 * message, set before the window (efab_sig_expect: the ranks go in
		 * lockstep, and a window's check waits for all its signals) */
		s->wrong += s->expect && m.value != s->expect_value;
		break;
	case MSG_CREDIT:
		if (m.value > s->credit_seen)
			s->credit_seen = m.value; /* sends land in any order: keep the largest */
		break;
	case MSG_END:
		s->ends++;
		s->end_value = m.value;
		break;
	default: s->bad++;
	}
}

static int send_msg(efab_ctx_t *c, size_t src, uint32_t kind, uint64_t value, uint64_t op,
		    const efab_waitfor_t *w)
{
	efab_sig_state_t *s = SIG(c);
	sig_msg_t m = {kind, sizeof(m), value, op, 0};
	memcpy(s->buf + src, &m, sizeof(m));
	return efab_post_send(&c->fab, c->peer, s->buf + src, sizeof(m), s->mr.desc, w);
}

int efab_sig_setup(efab_ctx_t *c)
{
	efab_sig_state_t *s = SIG(c);
	if (!c->o.signal_send)
		return EFAB_OK;
	s->buf = aligned_alloc(4096, SRC_BYTES);
	if (!s->buf) {
		efab_log_error("out of memory for --signal-send's messages");
		return EFAB_ERR;
	}
	memset(s->buf, 0, SRC_BYTES);
	if (efab_mr_register(&c->fab, s->buf, SRC_BYTES, FI_HMEM_SYSTEM, 0, FI_SEND, &s->mr))
		return EFAB_ERR;
	c->fab.rx_msg_hook = on_msg;
	c->fab.rx_msg_arg = c;
	/* credits: at most half the receives posted in flight or unread (the
	 * other half may be read but not yet reposted: efab_progress reposts them
	 * once half are free), counted in pairs, less the chunk a credit comes
	 * every (an eighth of that half) */
	uint64_t half = (uint64_t)c->fab.rx_posted / 2 / recvs_per_pair(c);
	if (half < 2) {
		efab_log_error(
			"--signal-send: %zu receives posted (the provider took no more): too "
			"few to bound the signals in flight",
			c->fab.rx_posted);
		return EFAB_ERR;
	}
	s->chunk = half / CREDIT_SLOTS ? half / CREDIT_SLOTS : 1;
	s->limit = half - s->chunk;
	if (c->faults.no_credits) /* a test's fault: shows what the credits prevent */
		s->limit = UINT64_MAX / 2;
	return EFAB_OK;
}

void efab_sig_teardown(efab_ctx_t *c)
{
	efab_sig_state_t *s = SIG(c);
	if (!s->buf)
		return;
	efab_mr_dereg(&s->mr);
	free(s->buf);
	s->buf = NULL;
}

/* value, or value + 1 for every EFAB_FAULT_SIGNAL'th signal (a test's fault). */
static uint64_t sig_fault(const efab_ctx_t *c, uint64_t value)
{
	const efab_sig_state_t *s = SIG(c);
	uint64_t n = c->faults.signal_every;
	return n && (s->posted + 1) % n == 0 ? value + 1 : value;
}

int efab_sig_post(efab_ctx_t *c, uint64_t value, int half, const efab_waitfor_t *w)
{
	efab_sig_state_t *s = SIG(c);
	uint64_t v = sig_fault(c, value);
	int rc;
	if (half >= 0) { /* a ping-pong: its half's last send has completed (src_free) */
		rc = send_msg(c, SRC_SIGNAL(2 + (half & 1)), MSG_SIGNAL, v, s->posted, w);
	} else if (v != value) { /* a stream's wrong signal (a test's fault) */
		rc = send_msg(c, SRC_SIGNAL(1), MSG_SIGNAL, v, 0, w);
	} else {
		/* a stream: one source for every signal of the size (or of the
		 * checked window), written only when the message changes, which
		 * is after every earlier send completed (a window's end waits
		 * for them): sends still in flight never see it rewritten */
		sig_msg_t m = {MSG_SIGNAL, sizeof(m), value, 0, 0};
		if (!s->src_written || s->src_value != value) {
			memcpy(s->buf + SRC_SIGNAL(0), &m, sizeof(m));
			s->src_value = value;
			s->src_written = 1;
		}
		rc = efab_post_send(&c->fab, c->peer, s->buf + SRC_SIGNAL(0), sizeof(m), s->mr.desc,
				    w);
	}
	if (rc)
		return EFAB_ERR;
	s->posted++;
	return EFAB_OK;
}

/* The peer cannot have counted more pairs than this rank sent. */
static int credit_sane(const efab_sig_state_t *s)
{
	if (s->credit_seen <= s->posted)
		return EFAB_OK;
	efab_log_error("the peer counted %llu writedata + signal pairs, this rank sent %llu",
		       (unsigned long long)s->credit_seen, (unsigned long long)s->posted);
	return EFAB_ERR;
}

int efab_sig_room(efab_ctx_t *c, const efab_waitfor_t *w)
{
	efab_sig_state_t *s = SIG(c);
	if (s->posted + 1 <= s->credit_seen + s->limit)
		return EFAB_OK;
	efab_waitfor_t cw = *w;
	cw.what = "credits from the peer (its count of this rank's writedata + signal pairs)";
	if (efab_wait_count(&c->fab, &s->credit_seen, s->posted + 1 - s->limit, &cw))
		return EFAB_ERR;
	return credit_sane(s);
}

/* The pairs counted: a writedata and a signal each. */
static uint64_t pairs(const efab_ctx_t *c)
{
	uint64_t d = c->fab.rx_data_count, g = SIG(c)->received;
	return d < g ? d : g;
}

/* The target's CREDIT: n pairs counted, from the next of the 8 credit
 * sources (a source is rewritten 8 returns later, by a larger count: read
 * then by a send still in flight, it is as true). */
static int send_credit(efab_ctx_t *c, uint64_t n, const efab_waitfor_t *w)
{
	efab_sig_state_t *s = SIG(c);
	unsigned k = (unsigned)(s->credit_returns % CREDIT_SLOTS);
	s->credit_sent_at = n;
	return send_msg(c, SRC_CREDIT(k), MSG_CREDIT, n, s->credit_returns++, w);
}

/* efab_progress's rx_hook on the target: a CREDIT every chunk of pairs. */
static int credit_return(efab_fabric_t *fab, void *arg)
{
	efab_ctx_t *c = arg;
	efab_sig_state_t *s = SIG(c);
	uint64_t n = pairs(c);
	(void)fab;
	/* a test's descheduled reader: once per size, past half the pairs the
	 * size's windows send (EFAB_FAULT_RX_PAUSE_MS) */
	if (c->faults.rx_pause_ms && !s->paused &&
	    n - s->size_start >= c->planned * c->o.window / 2) {
		s->paused = 1;
		usleep(c->faults.rx_pause_ms * 1000u);
	}
	if (n - s->credit_sent_at < s->chunk)
		return 0;
	efab_waitfor_t w = {"a credit message to be posted", "writedata+send", 0, c->peer, 0};
	return send_credit(c, n, &w) ? -1 : 0;
}

void efab_sig_begin(efab_ctx_t *c)
{
	SIG(c)->expect = c->o.check;
	SIG(c)->paused = 0;
	SIG(c)->size_start = pairs(c);
	c->fab.rx_hook = c->initiator ? NULL : credit_return;
	c->fab.rx_hook_arg = c;
}

int efab_sig_arrival(efab_ctx_t *c, uint64_t value, const efab_waitfor_t *w)
{
	efab_sig_state_t *s = SIG(c);
	if (efab_wait_count(&c->fab, &s->received, ++s->awaited, w))
		return EFAB_ERR;
	if (s->last_value != value) {
		efab_log_error("signal message carried %llu, the writedata before it %llu",
			       (unsigned long long)s->last_value, (unsigned long long)value);
		return EFAB_ERR;
	}
	return efab_sig_bad(c);
}

int efab_sig_bad(const efab_ctx_t *c)
{
	if (!SIG(c)->bad)
		return EFAB_OK;
	efab_log_error("%llu messages of no --signal-send kind or length received",
		       (unsigned long long)SIG(c)->bad);
	return EFAB_ERR;
}

void efab_sig_expect(efab_ctx_t *c, uint64_t value)
{
	SIG(c)->expect_value = value;
}

uint64_t efab_sig_check(efab_ctx_t *c, uint64_t target, const efab_waitfor_t *w)
{
	efab_sig_state_t *s = SIG(c);
	/* (on_msg compared every signal with efab_sig_expect's message) */
	if (efab_wait_count(&c->fab, &s->received, target, w))
		return UINT64_MAX;
	uint64_t wrong = s->wrong - s->wrong_seen;
	s->wrong_seen = s->wrong;
	return wrong + (s->received != target);
}

int efab_sig_confirm(efab_ctx_t *c, uint64_t size, uint64_t windows)
{
	efab_sig_state_t *s = SIG(c);
	efab_waitfor_t w = {"", "writedata+send", size, c->peer, windows};
	if (c->initiator) {
		w.what = "the end message to be posted";
		if (send_msg(c, SRC_END(s->ends_sent & 1), MSG_END, s->posted, s->ends_sent, &w))
			return EFAB_ERR;
		s->ends_sent++;
		w.what = "the peer's count of every writedata + signal pair (its final credit)";
		if (efab_wait_count(&c->fab, &s->credit_seen, s->posted, &w) || credit_sane(s))
			return EFAB_ERR;
		return efab_sig_bad(c);
	}
	w.what = "the peer's end message after its last window";
	if (efab_wait_count(&c->fab, &s->ends, s->ends_done + 1, &w))
		return EFAB_ERR;
	s->ends_done++;
	uint64_t need = s->end_value;
	w.what = "the remote CQ data of every writedata of the size";
	if (efab_wait_count(&c->fab, &c->fab.rx_data_count, need, &w))
		return EFAB_ERR;
	w.what = "the signal message of every writedata of the size";
	if (efab_wait_count(&c->fab, &s->received, need, &w))
		return EFAB_ERR;
	if (c->fab.rx_data_count != need || s->received != need) {
		efab_log_error("%llu remote CQ data and %llu signals counted, %llu pairs sent",
			       (unsigned long long)c->fab.rx_data_count,
			       (unsigned long long)s->received, (unsigned long long)need);
		return EFAB_ERR;
	}
	w.what = "the final credit to be posted";
	if (send_credit(c, need, &w))
		return EFAB_ERR;
	return efab_sig_bad(c);
}
