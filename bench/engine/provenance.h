/* Every node's facts (provenance.c): a rung above the context (context.h),
 * called by the lifecycle once per job. */
#ifndef EFAB_PROVENANCE_H
#define EFAB_PROVENANCE_H

#include "context.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Collective: every rank's host, libfabric, installer and kernel; rank 0
 * notes the nodes and what differs (c->nodes_summary, c->nodes_mismatch,
 * header notes, --nodes-json). */
int efab_node_provenance(efab_ctx_t *c);
/* Collective, after every rank selected its fabric (info) and before any
 * address is exchanged: the ranks' providers, fabrics and provider versions.
 * Different providers: exit 1 with one line (they cannot talk); different
 * versions: a header note and a warning, exit 2 with --strict-versions. */
int efab_provider_agree(efab_ctx_t *c, const struct fi_info *info);

#ifdef __cplusplus
}
#endif

#endif
