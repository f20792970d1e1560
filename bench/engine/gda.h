/* --initiator gpu: the ping-pong and stream patterns with a CUDA kernel as
 * the initiator (issue 37). The kernel (bench/ops/gda_kernels.cu) runs a
 * whole size on the GPU, timed on the GPU's %globaltimer; this part sets up
 * the GPU's endpoint (bench/engine/gda_host.c), launches it, and turns its samples into the
 * same rows the CPU patterns print (pattern.c's efab_pingpong_rows and
 * efab_stream_rows), with the proof-of-path counters around it. */
#ifndef EFAB_ENGINE_GDA_H
#define EFAB_ENGINE_GDA_H

#include "context.h"
#include "pattern.h"

/* The columns the rows with --initiator append (after the evidence). */
void efab_gda_columns(efab_run_info_t *ri);
/* Before anything opens: what --initiator gpu and --gpu-threads need. */
int efab_gda_check_opts(efab_ctx_t *c);
/* Collective, after the memory is registered and the keys exchanged: the
 * GPU's endpoint on every rank, the names exchanged, the kernel loaded.
 * EFAB_SKIP (77) with the reason where this host lacks a piece. */
int efab_gda_setup(efab_ctx_t *c);
/* One size: the ping-pong (put, get) or the stream (put_bw) on the GPU. */
int efab_gda_pingpong(efab_ctx_t *c, uint64_t size, efab_row_t *row);
int efab_gda_stream(efab_ctx_t *c, const efab_stream_ops_t *ops, uint64_t size, efab_row_t *row);
/* Every row: which initiator posted (cpu rows too). */
void efab_gda_row_cells(efab_ctx_t *c, efab_row_t *row);
void efab_gda_teardown(efab_ctx_t *c);

#endif
