/* --signal-send (rma_signal.c): writedata + a 32-byte signal message per
 * operation, counted at the target; for rma.c only. */
#ifndef EFAB_RMA_SIGNAL_H
#define EFAB_RMA_SIGNAL_H

#include "family.h"

/* Register the message buffer and hook the fabric's messages (a no-op
 * without --signal-send); teardown undoes it. */
int efab_sig_setup(efab_ctx_t *c);
void efab_sig_teardown(efab_ctx_t *c);
/* A stream's size begins: the target returns credits. */
void efab_sig_begin(efab_ctx_t *c);
/* Post the signal carrying value (the writedata's CQ data): a ping-pong
 * from its source half (0 or 1, alternating), a stream (half -1) from one
 * source written when the message changes. */
int efab_sig_post(efab_ctx_t *c, uint64_t value, int half, const efab_waitfor_t *w);
/* A stream: wait until one more pair may be uncounted at the target. */
int efab_sig_room(efab_ctx_t *c, const efab_waitfor_t *w);
/* A ping-pong: wait for the peer's next signal and check it carries value. */
int efab_sig_arrival(efab_ctx_t *c, uint64_t value, const efab_waitfor_t *w);
/* -c, a stream, before a window: the message its signals must carry. */
void efab_sig_expect(efab_ctx_t *c, uint64_t value);
/* -c, a stream's window: wait until target signals arrived; the errors:
 * each signal that carried another message than the window's, and 1 more
 * where more arrived; UINT64_MAX on a failed wait. */
uint64_t efab_sig_check(efab_ctx_t *c, uint64_t target, const efab_waitfor_t *w);
/* A stream's confirmed end: END, then the final CREDIT (both ranks). */
int efab_sig_confirm(efab_ctx_t *c, uint64_t size, uint64_t windows);
/* EFAB_ERR (said) once a message of no known kind or length arrived. */
int efab_sig_bad(const efab_ctx_t *c);

#endif
