/* Private to lib/endpoint.c, which defines these, and lib/ops.c: the receive
 * slots that FI_RX_CQ_DATA and messages (FI_MSG) need (set up with the
 * endpoint, reposted as completions arrive). Not part of libefab's interface. */
#ifndef EFAB_ENDPOINT_INTERNAL_H
#define EFAB_ENDPOINT_INTERNAL_H

#include "efab_endpoint.h"

#define EFAB_RX_CQ_DATA_DEPTH EFAB_RECV_SLOTS
/* Bytes of each slot's own landing area (remote-CQ-data writes place
 * nothing in it; a message up to this size lands whole) */
#define EFAB_RX_BUF_SIZE 64

/* Receive slot i's landing area in fab->rx_buf. */
static inline void *efab_rx_slot_buf(const efab_fabric_t *fab, size_t i)
{
	return (char *)fab->rx_buf + i * EFAB_RX_BUF_SIZE;
}

/* The receive slot a completion's op_context names, or -1. */
long efab_rx_slot_of(const efab_fabric_t *fab, const void *op_context);
/* Post every free receive slot again (0, or EFAB_ERR on a failed fi_recv). */
int efab_rx_repost(efab_fabric_t *fab);
/* The endpoint has posted receives: it was opened with FI_MSG (messages,
 * efab_post_send), or FI_RX_CQ_DATA makes every remote-CQ-data write consume
 * one. */
int efab_rx_slots_used(const efab_fabric_t *fab);

#endif
