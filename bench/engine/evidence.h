/* Proof of path (evidence.c): NIC counters and software cost.
 * Each traffic row (ping-pong and stream) carries the deltas of the NIC
 * hardware counters over its timed phase, the path they show and the
 * software cost per operation. A rung above the context (context.h): the
 * lifecycle calls setup and columns, the patterns the rest, on every rank. */
#ifndef EFAB_EVIDENCE_H
#define EFAB_EVIDENCE_H

#include "context.h"

#ifdef __cplusplus
extern "C" {
#endif

/* once, collective, after the fabric is up: which NIC counters exist here */
int efab_evidence_setup(efab_ctx_t *c);
/* the columns evidence adds (appended to the row's own) */
void efab_evidence_columns(efab_run_info_t *ri);
/* collective: a snapshot before the timed phase (after the warmup) */
int efab_evidence_begin(efab_ctx_t *c, efab_waitfor_t *w);
/* collective: a snapshot after it (after the closing barrier) */
int efab_evidence_end(efab_ctx_t *c, efab_waitfor_t *w);
/* collective: the deltas, the path and the software cost into row;
 * payload = bytes this rank's operations moved in the timed phase */
int efab_evidence_report(efab_ctx_t *c, double payload, efab_row_t *row);

#ifdef __cplusplus
}
#endif

#endif
