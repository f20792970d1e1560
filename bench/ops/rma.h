/* The RMA family (rma.c): write, writedata and read. */
#ifndef EFAB_RMA_H
#define EFAB_RMA_H

#include "family.h"

/* The write ping-pong and the RMA stream, for efab_scan's own schedule. */
extern const efab_pingpong_ops_t efab_put_pingpong;
extern const efab_stream_ops_t efab_rma_stream;
/* Limits and header notes of the stream (and of the RMA ops in general). */
int efab_rma_stream_setup(efab_ctx_t *c);
int efab_rma_notes(efab_ctx_t *c);

#endif
