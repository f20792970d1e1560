/* Cluster scan without MPI: the round-robin schedule of node pairs and the
 * verdict over measured pair figures (the scan benchmark measures, this decides). */
#ifndef EFAB_SCAN_H
#define EFAB_SCAN_H

#include <stddef.h>
#include <stdio.h>

#include "efab_hwc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Round-robin tournament (circle method): every pair of nodes meets exactly
 * once, the pairs of a round are disjoint. N even: N-1 rounds of N/2 pairs;
 * N odd: N rounds, one node sits out each. */
int efab_scan_rounds(int nodes);
/* node's partner in round (0-based), -1 when it sits out. */
int efab_scan_partner(int nodes, int round, int node);
/* The round (0-based) in which nodes a and b meet, -1 if never (a == b). */
int efab_scan_round_of(int nodes, int a, int b);

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
	/* per cell [(a * nodes + b) * nics + i]: the trouble of node a's NIC
	 * i's counters in its round with node b, as efab_scan_nic_trouble
	 * writes it (errors and events at any count, retransmissions and drops
	 * above --max-retrans of its traffic), as text ("" or NULL: none);
	 * NULL: no counters read */
	const char *const *hw_trouble;
	/* optional (NULL: bw, lat): each pair's best figure over the passes
	 * (highest bandwidth, lowest latency); a pair finding needs its pair
	 * beyond the limits in every pass, as no other pair confirms it */
	const double *bw_best, *lat_best;
} efab_scan_data_t;

/* A figure is flagged when it is both beyond rel of the cluster median and
 * further from it than EFAB_SCAN_SIGMAS times its measurement noise on a log
 * scale (a ratio): the robust spread (1.4826 x MAD) of the logarithms of the
 * pair figures that involve neither the node nor a flagged end, scaled to the
 * median of as many as the figure is over. On a quiet cluster the ratio
 * decides, on a noisy one the noise must be exceeded too. */
#define EFAB_SCAN_SIGMAS 3.0

typedef struct efab_scan_limits {
	double rel;     /* flag below rel x the cluster median (bandwidth), above median / rel (latency) */
	double min_bw;  /* 0 = off */
	double max_lat; /* 0 = off */
} efab_scan_limits_t;

/* What a finding is about: the unit a site acts on (drain a node, replace a
 * NIC), a pair of NICs where nothing tells its ends apart, or a NIC index
 * slow on most nodes alike (a NIC-index effect: where the ranks sit against
 * their NICs, or the NICs' PCIe paths; no node to drain). */
enum { EFAB_SCAN_SUBJ_NODE = 0, EFAB_SCAN_SUBJ_NIC, EFAB_SCAN_SUBJ_PAIR, EFAB_SCAN_SUBJ_INDEX };
/* What was found. */
enum { EFAB_SCAN_KIND_FAILED = 0, EFAB_SCAN_KIND_SLOW_BW, EFAB_SCAN_KIND_SLOW_LAT,
       EFAB_SCAN_KIND_COUNTERS };

/* One pair a finding rests on: node a's NIC nic with node b's NIC nic, met in
 * round (1-based, of a pass: efab_scan_round_of + 1). */
typedef struct efab_scan_evidence {
	int a, b, nic;
	int round;
	int failed; /* the pair failed (d->why says why) */
	/* the figure quoted: EFAB_SCAN_SEND (a wrote to b), EFAB_SCAN_LAT, or
	 * EFAB_SCAN_NIC_COUNTERS (the counters are d->hw_trouble's) */
	int metric;
	double value; /* NAN: none (failed) */
	int off;      /* this figure alone is beyond the limits */
} efab_scan_evidence_t;

typedef struct efab_scan_flag {
	int subject; /* EFAB_SCAN_SUBJ_* */
	int kind;    /* EFAB_SCAN_KIND_* */
	int node;    /* the node; a pair's first end (for a bandwidth direction, the writer);
		      * 0 for an index (no node) */
	int nic;     /* the NIC index; -1 for a node (more than half its NICs) */
	int peer;    /* a pair's other end (node, same NIC index); -1 otherwise */
	int both;    /* a pair's bandwidth: slow both ways (else node writes to peer) */
	int metric;  /* EFAB_SCAN_SEND/RECV/LAT, or UNREACHABLE (a unit's failed pairs),
		      * PAIR_FAILED, NIC_COUNTERS */
	double value, ref, ratio; /* ratio: value/ref for bandwidth, ref/value for latency */
	/* a NIC of a NIC-index effect: ref is the median of the same index on
	 * the other nodes, not the cluster's */
	int vs_index;
	int peers;       /* figures: the peers the figure rests on; failed: the pairs tried;
			  * an index: the nodes whose NIC of that index is beyond the limits */
	int first_round; /* failed: the round (1-based) its first pair failed; else 0 */
	efab_scan_evidence_t *ev; /* every pair the finding rests on (owned) */
	size_t nev;
	char evidence[2048]; /* the text after "SUBJECT: KIND: " */
} efab_scan_flag_t;

typedef struct efab_scan_verdict {
	/* cluster reference per metric: median over every (node, NIC) */
	double ref[EFAB_SCAN_NMETRIC];
	/* per metric, the noise of a median of 1 pair figure on a log scale (all
	 * pairs): 1.2533 x the robust standard deviation of the logarithms; 0.1 =
	 * about 10 % */
	double spread[EFAB_SCAN_NMETRIC];
	/* per (node, NIC) figure per metric: the median over its peers */
	double *unit; /* [(a * nics + i) * EFAB_SCAN_NMETRIC + m] */
	efab_scan_flag_t *flags;
	size_t nflags;
	/* rounds in which every measured pair (at least 2, one NIC index) was
	 * beyond the pair limits for latency: the machine or the fabric at that
	 * time, no unit or pair named (2., last) -- "" when none */
	char round_note[512];
} efab_scan_verdict_t;

/* The trouble rule for one NIC in one round: the text of the trouble
 * counters in delta d ("name=delta;...", "" when none), with note (a counter
 * that went backwards or became unreadable, efab_hwc_delta) appended: a
 * counter reset or gone is trouble too. max_retrans: see docs/scan.md. The
 * text goes to buf (len bytes), which the verdict counts as trouble when it
 * is not empty. */
void efab_scan_nic_trouble(const efab_hwc_snap_t *d, const char *note, double max_retrans,
			   char *buf, size_t len);

const char *efab_scan_metric_name(int metric);

/* Median of the finite values among v[0..n) (NAN if none); v is not changed. */
double efab_scan_median(const double *v, size_t n);

/* The verdict (docs/scan.md, "Verdict rules"): findings in order of
 * gravity, each with one subject. (2. opens with the NIC-index effects: with
 * 3 or more nodes, a NIC index beyond the limits against the cluster median
 * on more than half of the nodes is one finding, subject the index; each of
 * its NICs is then judged against the same index on the other nodes, and its
 * pairs against the index's median, so that only a NIC slow against its
 * index peers is named. A unit's figure must also be off in its best passes,
 * where bw_best/lat_best are given.)
 *  1. Failures. A (node, NIC) unit is the common end of its failed pairs when
 *     at least 2 of them failed with peers that passed with another unit (the
 *     evidence of more than one peer), and every peer it failed with either
 *     passed with another unit or is a common end itself; a node when more
 *     than half its NICs are. Its evidence: the failed pairs and its passed
 *     ones, with their rounds (when the failures began). Every failed pair no
 *     common end explains is a finding of its own, the pair as subject (with
 *     2 nodes always: nothing tells the ends apart).
 *  2. Figures. A (node, NIC) unit is flagged for a figure when the median over
 *     its peers is beyond the limits (below rel x the cluster median and
 *     further from it than EFAB_SCAN_SIGMAS x its noise, or past an absolute
 *     limit) and so is the pair figure of more than one of those peers: one
 *     outlier pair names the pair, not an end. Worst first; once a unit is
 *     flagged its pairs no longer count for its peers (a slow sender does not
 *     make its receivers look slow). A node whose NICs are more than half
 *     flagged for a metric is the subject instead of its NICs. Then every pair
 *     figure no flagged end explains and beyond the limits, with rel squared
 *     (one figure that no other confirms; noise: the spread of the other pair
 *     figures), is a finding with the pair as subject -- except a latency
 *     figure whose every round mate (the other pairs measured at the same
 *     time, at least 2 pairs in all) is beyond those limits too: a whole
 *     round off is the machine's or the fabric's state then, said in
 *     round_note, not a unit's or a pair's.
 *  3. NIC counters (d->hw_trouble), whatever the figures: a round with trouble
 *     is one where either end's counters were trouble (efab_scan_nic_trouble;
 *     SRD counts a lost packet's retransmission at the sender: a lossy link at
 *     one NIC shows at its every peer too). A unit with trouble in every round it met a peer
 *     (at least 2) is the common end and the subject; every other troubled
 *     round not explained by such an end names the pair.
 * EFAB_OK, or EFAB_ERR when out of memory. Free with efab_scan_verdict_free. */
int efab_scan_verdict(const efab_scan_data_t *d, const efab_scan_limits_t *lim,
		      efab_scan_verdict_t *out);
void efab_scan_verdict_free(efab_scan_verdict_t *v);

const char *efab_scan_subject_name(int subject); /* "node", "nic", "pair", "index" */
const char *efab_scan_kind_name(int kind);       /* "failed", "slow bandwidth", ... */

/* The verdict's line of finding f, without indentation or newline:
 * "node node3: failed: ...", "node node1 NIC eth0: slow bandwidth: ...",
 * "NIC index 1: slow bandwidth: ...",
 * "pair node0 NIC eth0 - node2 NIC eth0: slow latency: ..." (a bandwidth
 * direction: "->"). Truncated to len. */
void efab_scan_flag_line(const efab_scan_data_t *d, const efab_scan_flag_t *f, char *buf,
			 size_t len);

/* The verdict as JSON (schema in docs/scan.md): one record per finding, in
 * the verdict's order, each with its subject, kind, figures, evidence pairs
 * and its text line (efab_scan_flag_line). EFAB_OK or EFAB_ERR (write). */
int efab_scan_verdict_json(FILE *fp, const efab_scan_data_t *d, const efab_scan_verdict_t *v);

#ifdef __cplusplus
}
#endif

#endif
