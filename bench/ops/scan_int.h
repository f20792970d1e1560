/* efab_scan's own interface (private to bench/ops/scan*.c): the scan's
 * state, a rank's placement and its report after a round. scan.c places the
 * ranks and runs a round; scan_drive.c (passes, figures, CSV, report, the
 * family) calls it. */
#ifndef SCAN_INT_H
#define SCAN_INT_H

#include <stddef.h>

#include "context.h"
#include "rma.h"

#define HOST_LEN 64
#define NIC_LEN 64

#define BIND_LEN 112

typedef struct scan_rank {
	char host[HOST_LEN];
	char nic[NIC_LEN];
	/* where the rank runs against its NIC (bind_near_nic): "cpus 0-47 (NUMA
	 * node 0, the NIC's)" or "not bound: why" */
	char bind[BIND_LEN];
	int bound;
} scan_rank_t;

#define WHY_LEN 200
#define HW_LEN 160

/* What a rank reports after a round. */
typedef struct scan_report {
	int partner;             /* node, -1: sat out */
	double lat_p50, lat_p99; /* as the ping-pong's initiator (the lower node), else NAN */
	double bw_sent;          /* its own bandwidth as the writer, 10^6 B/s, NAN if none */
	double errors;
	int failed;        /* this rank's NIC pair failed (either end) */
	char why[WHY_LEN]; /* "phase: error" of the first failure this rank saw, "" */
	/* its NIC's counters that were trouble in the round (efab_scan_nic_trouble), "name=delta;..."
	 * ("" none rose, "-" no counters, lib/efab_hwc.h) */
	char hw[HW_LEN];
} scan_report_t;

typedef struct scan_state {
	efab_rma_state_t rma; /* first: the RMA callbacks the scan measures with read it (rma.h) */
	int nodes, nics;
	int node, nic;       /* this rank's */
	char bind[BIND_LEN]; /* this rank's placement (bind_near_nic) */
	int bound;
	int *rank_of;       /* [node * nics + nic] */
	scan_rank_t *ranks; /* by rank */
	char domain[NIC_LEN];
	char **node_names; /* nodes */
	char **nic_names;  /* nodes * nics */
	int world_size;
} scan_state_t;

/* The index of NIC i of the pair (node a, node b) in a node x node x NIC matrix. */
static inline size_t at(const scan_state_t *scan, int a, int b, int i)
{
	return ((size_t)a * (size_t)scan->nodes + (size_t)b) * (size_t)scan->nics + (size_t)i;
}

/* scan.c: the family's callbacks before and after the drive, and one round */
int scan_check_opts(efab_ctx_t *c);
int scan_plan(efab_ctx_t *c, efab_fabric_req_t *req);
int scan_setup(efab_ctx_t *c);
void scan_teardown(efab_ctx_t *c);
int scan_round(efab_ctx_t *c, int round, scan_report_t *rep);

#endif
