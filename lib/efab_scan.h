/* Cluster scan without MPI: the round-robin schedule of node pairs and the
 * verdict over measured pair figures (the scan benchmark measures, this decides). */
#ifndef EFAB_SCAN_H
#define EFAB_SCAN_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Round-robin tournament (circle method): every pair of nodes meets exactly
 * once, the pairs of a round are disjoint. N even: N-1 rounds of N/2 pairs;
 * N odd: N rounds, one node sits out each. */
int efab_scan_rounds(int nodes);
/* node's partner in round (0-based), -1 when it sits out. */
int efab_scan_partner(int nodes, int round, int node);

enum { EFAB_SCAN_SEND = 0, EFAB_SCAN_RECV, EFAB_SCAN_LAT, EFAB_SCAN_NMETRIC };
/* Findings that are not a figure: a unit that made no progress with any peer
 * it met, and a node pair's NIC that failed without such a unit to explain it. */
enum { EFAB_SCAN_UNREACHABLE = EFAB_SCAN_NMETRIC, EFAB_SCAN_PAIR_FAILED, EFAB_SCAN_NIC_COUNTERS };

/* Figures of one scan; NAN where nothing was measured. Indexing:
 * [(a * nodes + b) * nics + i] for node a, node b, NIC index i. */
typedef struct efab_scan_data {
	int nodes, nics;
	const char *const *node_names; /* nodes */
	const char *const *nic_names;  /* nodes * nics: node a's NIC i at [a * nics + i] */
	const double *bw;  /* 10^6 B/s written from a's NIC i to b's NIC i (directed) */
	const double *lat; /* half round trip p50, microseconds (symmetric) */
	/* pairs that failed (no progress within the timeout, or an error
	 * completion), symmetric, and why (a phase and the error, "" if unknown);
	 * NULL: none failed */
	const unsigned char *failed;
	const char *const *why;
	/* per cell [(a * nodes + b) * nics + i]: the trouble counters of node
	 * a's NIC i (drops, retransmissions, timeouts, errors,
	 * unresponsive/impaired remote events; lib/efab_hwc.h) that rose during
	 * its round with node b, as text ("" or NULL: none rose); NULL: no
	 * counters read */
	const char *const *hw_trouble;
} efab_scan_data_t;

/* A figure is flagged when it is both beyond rel of the cluster median and
 * further from it than EFAB_SCAN_SIGMAS times its measurement noise: the
 * robust spread (1.4826 x MAD) of the pair figures that involve neither the
 * node nor a flagged end, scaled to the median of as many as the figure is
 * over. On a quiet cluster the ratio decides, on a noisy one the noise must
 * be exceeded too. */
#define EFAB_SCAN_SIGMAS 3.0

typedef struct efab_scan_limits {
	double rel;     /* flag below rel x the cluster median (bandwidth), above median / rel (latency) */
	double min_bw;  /* 0 = off */
	double max_lat; /* 0 = off */
} efab_scan_limits_t;

typedef struct efab_scan_flag {
	int node;
	int nic;    /* -1: the whole node (more than half its NICs are flagged for metric) */
	int metric; /* EFAB_SCAN_* */
	double value, ref, ratio; /* ratio: value/ref for bandwidth, ref/value for latency */
	char evidence[768];
} efab_scan_flag_t;

typedef struct efab_scan_verdict {
	/* cluster reference per metric: median over every (node, NIC) */
	double ref[EFAB_SCAN_NMETRIC];
	/* robust standard deviation of one pair figure per metric (all pairs) */
	double spread[EFAB_SCAN_NMETRIC];
	/* per (node, NIC) figure per metric: the median over its peers */
	double *unit; /* [(a * nics + i) * EFAB_SCAN_NMETRIC + m] */
	efab_scan_flag_t *flags;
	size_t nflags;
} efab_scan_verdict_t;

const char *efab_scan_metric_name(int metric);

/* Median of the finite values among v[0..n) (NAN if none); v is not changed. */
double efab_scan_median(const double *v, size_t n);

/* NIC counters (d->hw_trouble), whatever the figures: a round with trouble
 * is one where either end's trouble counters rose (SRD counts a lost
 * packet's retransmission at the sender: a lossy link at one NIC shows at
 * its every peer too). A unit with trouble in every round it met a peer
 * (at least 2) is the common end and named; every other troubled round not
 * explained by a named end names the NIC whose counters rose, with the pair
 * (EFAB_SCAN_NIC_COUNTERS; evidence: the counters, and whether the unit's
 * figures passed). First the failures: a (node, NIC) unit whose every measured pair failed
 * while each of those peers succeeded with another unit is unreachable ("no
 * progress with any peer", with every failed pair as evidence; with 2 nodes
 * both ends are named, as nothing tells them apart); a node whose NICs are
 * more than half unreachable is reported as the node; every other failed pair
 * is a finding of its own. Then flag (node, NIC) units whose median over
 * their peers is below the thresholds, worst first; once a unit is flagged its pairs no longer count
 * for its peers (a slow sender does not make its receivers look slow). A
 * node whose NICs are more than half flagged for a metric is reported as the
 * node. EFAB_OK, or EFAB_ERR when out of memory. Free with
 * efab_scan_verdict_free. */
int efab_scan_verdict(const efab_scan_data_t *d, const efab_scan_limits_t *lim,
		      efab_scan_verdict_t *out);
void efab_scan_verdict_free(efab_scan_verdict_t *v);

#ifdef __cplusplus
}
#endif

#endif
