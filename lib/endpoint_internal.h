/* Private to lib/endpoint.c, which defines these, and lib/ops.c: the receive
 * slots that FI_RX_CQ_DATA needs (set up with the endpoint, reposted as
 * completions arrive). Not part of libefab's interface. */
#ifndef EFAB_ENDPOINT_INTERNAL_H
#define EFAB_ENDPOINT_INTERNAL_H

#include "efab_endpoint.h"

#define EFAB_RX_CQ_DATA_DEPTH 256
#define EFAB_RX_BUF_SIZE 64 /* remote-CQ-data writes place nothing in it */

/* The receive slot a completion's op_context names, or -1. */
long efab_rx_slot_of(const efab_fabric_t *fab, const void *op_context);
/* Post every free receive slot again (0, or EFAB_ERR on a failed fi_recv). */
int efab_rx_repost(efab_fabric_t *fab);
/* The endpoint consumes a posted receive per remote-CQ-data write. */
int efab_rx_cq_data_used(const efab_fabric_t *fab);

#endif
