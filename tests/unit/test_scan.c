#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "efab.h"
#include "efab_scan.h"

/* Every pair exactly once, rounds of disjoint pairs, partner symmetric; odd
 * counts: exactly one node sits out per round. */
static void test_schedule(void **state)
{
	(void)state;
	for (int n = 2; n <= 33; n++) {
		int rounds = efab_scan_rounds(n);
		assert_int_equal(rounds, n % 2 ? n : n - 1);
		unsigned char *met = calloc((size_t)(n * n), 1);
		assert_non_null(met);
		for (int r = 0; r < rounds; r++) {
			int out = 0;
			for (int a = 0; a < n; a++) {
				int b = efab_scan_partner(n, r, a);
				if (b < 0) {
					out++;
					continue;
				}
				assert_true(b != a && b < n);
				assert_int_equal(efab_scan_partner(n, r, b), a);
				if (a < b) {
					assert_int_equal(met[a * n + b], 0); /* never twice */
					met[a * n + b] = 1;
				}
			}
			assert_int_equal(out, n % 2);
		}
		for (int a = 0; a < n; a++)
			for (int b = a + 1; b < n; b++)
				assert_int_equal(met[a * n + b], 1);
		free(met);
	}
	assert_int_equal(efab_scan_rounds(1), 0);
	assert_int_equal(efab_scan_partner(1, 0, 0), -1);
}

static void test_median(void **state)
{
	(void)state;
	double v[] = {5, NAN, 1, 3};
	assert_true(fabs(efab_scan_median(v, 4) - 3) < 1e-12);
	double w[] = {4, 1, 3, 2};
	assert_true(fabs(efab_scan_median(w, 4) - 2.5) < 1e-12);
	double z[] = {NAN};
	assert_true(isnan(efab_scan_median(z, 1)));
}

/* A constructed cluster: every directed pair and NIC at bw_base (+-5 %
 * deterministic jitter), latency lat_base; then the faults of each test. */
typedef struct cluster {
	int nodes, nics;
	double *bw, *lat;
	char names[16][16], nicn[256][16];
	const char *np[16], *nicp[256];
	efab_scan_data_t d;
} cluster_t;

static void cluster_init_jitter(cluster_t *c, int nodes, int nics, double jitter);
static void cluster_init(cluster_t *c, int nodes, int nics)
{
	cluster_init_jitter(c, nodes, nics, 0.05);
}

static void cluster_init_jitter(cluster_t *c, int nodes, int nics, double jitter)
{
	memset(c, 0, sizeof(*c));
	c->nodes = nodes;
	c->nics = nics;
	size_t n = (size_t)(nodes * nodes * nics);
	c->bw = calloc(n, sizeof(double));
	c->lat = calloc(n, sizeof(double));
	assert_non_null(c->bw);
	assert_non_null(c->lat);
	for (int a = 0; a < nodes; a++) {
		snprintf(c->names[a], sizeof(c->names[a]), "node%d", a);
		c->np[a] = c->names[a];
		for (int i = 0; i < nics; i++) {
			snprintf(c->nicn[a * nics + i], 16, "nic%d", i);
			c->nicp[a * nics + i] = c->nicn[a * nics + i];
		}
		for (int b = 0; b < nodes; b++)
			for (int i = 0; i < nics; i++) {
				size_t k = ((size_t)(a * nodes + b)) * (size_t)nics + (size_t)i;
				/* per measurement: deterministic, uncorrelated across pairs */
				double j = 1 + jitter * sin(1.7 * (double)k);
				c->bw[k] = a == b ? NAN : 1000 * j;
				c->lat[k] = a == b ? NAN : 20 / j;
			}
	}
	c->d = (efab_scan_data_t){nodes, nics, c->np, c->nicp, c->bw, c->lat, NULL, NULL, NULL, NULL, NULL};
}

static size_t idx(const cluster_t *c, int a, int b, int i)
{
	return ((size_t)(a * c->nodes + b)) * (size_t)c->nics + (size_t)i;
}

/* node x sends slowly on every NIC (its egress rate-limited) */
static void slow_sender(cluster_t *c, int x, double factor)
{
	for (int b = 0; b < c->nodes; b++)
		for (int i = 0; i < c->nics; i++)
			if (b != x)
				c->bw[idx(c, x, b, i)] *= factor;
}

static void cluster_free(cluster_t *c)
{
	free(c->bw);
	free(c->lat);
}

static const efab_scan_limits_t limits = {0.8, 0, 0};

/* Every finding's "SUBJECT: KIND" (its text line up to the second ": "), in
 * the verdict's order, one a line: what a test compares exactly. */
static const char *subjects(const cluster_t *c, const efab_scan_verdict_t *v)
{
	static char out[8192];
	char line[4096];
	size_t n = 0;
	out[0] = 0;
	for (size_t f = 0; f < v->nflags && n < sizeof(out); f++) {
		efab_scan_flag_line(&c->d, &v->flags[f], line, sizeof(line));
		char *k = strstr(line, ": ");
		k = k ? strstr(k + 2, ": ") : NULL;
		if (k)
			*k = 0;
		n += (size_t)snprintf(out + n, sizeof(out) - n, "%s%s", f ? "\n" : "", line);
	}
	return out;
}

/* The JSON says what the text says: one record per finding, in order, each
 * with the finding's text line, subject and names; the verdict word. */
static void check_json(const cluster_t *c, const efab_scan_verdict_t *v)
{
	char *json = NULL, line[4096], want[4200];
	size_t len = 0;
	FILE *fp = open_memstream(&json, &len);
	assert_non_null(fp);
	assert_int_equal(efab_scan_verdict_json(fp, &c->d, v), EFAB_OK);
	fclose(fp);
	assert_non_null(strstr(json, v->nflags ? "\"verdict\": \"flagged\"" : "\"verdict\": \"clean\""));
	const char *at = json;
	for (size_t f = 0; f < v->nflags; f++) {
		const efab_scan_flag_t *g = &v->flags[f];
		if (g->subject == EFAB_SCAN_SUBJ_INDEX) /* no node: the index */
			snprintf(want, sizeof(want), "{\"subject\": \"index\", \"node\": null, \"nic\": null, "
						     "\"nic_index\": %d", g->nic);
		else
			snprintf(want, sizeof(want), "{\"subject\": \"%s\", \"node\": \"%s\"",
				 efab_scan_subject_name(g->subject), c->d.node_names[g->node]);
		at = strstr(at, want);
		assert_non_null(at);
		efab_scan_flag_line(&c->d, g, line, sizeof(line));
		snprintf(want, sizeof(want), "\"text\": \"%s\"", line);
		assert_non_null(strstr(at, want));
		snprintf(want, sizeof(want), "\"kind\": \"%s\"", efab_scan_kind_name(g->kind));
		assert_non_null(strstr(at, want));
	}
	size_t records = 0;
	for (const char *p = json; (p = strstr(p, "{\"subject\": ")); p++)
		records++;
	assert_int_equal(records, v->nflags);
	free(json);
}

/* The verdict of c, its subjects exactly want, the JSON in agreement. */
static void verdict_is(const cluster_t *c, const efab_scan_limits_t *lim, efab_scan_verdict_t *v,
		       const char *want)
{
	assert_int_equal(efab_scan_verdict(&c->d, lim, v), EFAB_OK);
	assert_string_equal(subjects(c, v), want);
	check_json(c, v);
}

static void test_no_fault(void **state)
{
	(void)state;
	for (int n = 2; n <= 9; n++) {
		cluster_t c;
		cluster_init(&c, n, 2);
		efab_scan_verdict_t v;
		verdict_is(&c, &limits, &v, "");
		assert_int_equal(v.nflags, 0);
		assert_true(fabs(v.ref[EFAB_SCAN_SEND] - 1000) < 60);
		assert_true(fabs(v.ref[EFAB_SCAN_LAT] - 20) < 1.5);
		efab_scan_verdict_free(&v);
		cluster_free(&c);
	}
}

/* 4 and 8 nodes, one NIC: only the slow sender is flagged, as a node,
 * although each of its peers has one slow incoming pair. */
static void test_slow_node(void **state)
{
	(void)state;
	int sizes[] = {3, 4, 8};
	for (size_t s = 0; s < EFAB_ARRAY_SIZE(sizes); s++) {
		cluster_t c;
		cluster_init(&c, sizes[s], 1);
		slow_sender(&c, 2, 0.05);
		efab_scan_verdict_t v;
		verdict_is(&c, &limits, &v, "node node2: slow bandwidth");
		assert_int_equal(v.nflags, 1);
		assert_int_equal(v.flags[0].node, 2);
		assert_int_equal(v.flags[0].nic, -1);
		assert_int_equal(v.flags[0].metric, EFAB_SCAN_SEND);
		assert_true(v.flags[0].ratio < 0.1);
		assert_non_null(strstr(v.flags[0].evidence, "send bandwidth"));
		efab_scan_verdict_free(&v);
		cluster_free(&c);
	}
}

/* One NIC of one node slow (both directions, and its latency): that NIC is
 * flagged, not its node (1 of 2 NICs), nothing else. */
static void test_slow_nic(void **state)
{
	(void)state;
	cluster_t c;
	cluster_init(&c, 4, 2);
	for (int b = 0; b < 4; b++) {
		if (b == 1)
			continue;
		c.bw[idx(&c, 1, b, 1)] *= 0.3;
		c.bw[idx(&c, b, 1, 1)] *= 0.3;
		c.lat[idx(&c, 1, b, 1)] *= 4;
		c.lat[idx(&c, b, 1, 1)] *= 4;
	}
	efab_scan_verdict_t v;
	verdict_is(&c, &limits, &v,
		   "node node1 NIC nic1: slow latency\nnode node1 NIC nic1: slow bandwidth\n"
		   "node node1 NIC nic1: slow bandwidth");
	assert_int_equal(v.nflags, 3); /* send, receive, latency */
	for (size_t f = 0; f < v.nflags; f++) {
		assert_int_equal(v.flags[f].node, 1);
		assert_int_equal(v.flags[f].nic, 1);
	}
	efab_scan_verdict_free(&v);
	cluster_free(&c);
}

/* A small slowdown (0.9x) stays below the default threshold; absolute
 * limits catch what the relative rule cannot (every node alike). */
static void test_thresholds(void **state)
{
	(void)state;
	cluster_t c;
	cluster_init(&c, 4, 1);
	slow_sender(&c, 0, 0.9);
	efab_scan_verdict_t v;
	assert_int_equal(efab_scan_verdict(&c.d, &limits, &v), EFAB_OK);
	assert_int_equal(v.nflags, 0);
	efab_scan_verdict_free(&v);
	efab_scan_limits_t abs_lim = {0.8, 5000, 0};
	assert_int_equal(efab_scan_verdict(&c.d, &abs_lim, &v), EFAB_OK);
	/* every node sends and receives below 5000 MB/s: all four are flagged */
	int nodes_flagged = 0;
	for (size_t f = 0; f < v.nflags; f++)
		nodes_flagged += v.flags[f].nic == -1 && v.flags[f].metric == EFAB_SCAN_SEND;
	assert_int_equal(nodes_flagged, 4);
	efab_scan_verdict_free(&v);
	efab_scan_limits_t lat_lim = {0.8, 0, 10};
	assert_int_equal(efab_scan_verdict(&c.d, &lat_lim, &v), EFAB_OK);
	assert_int_equal(v.nflags, 4);
	assert_int_equal(v.flags[0].metric, EFAB_SCAN_LAT);
	efab_scan_verdict_free(&v);
	cluster_free(&c);
}

/* Pair figures as noisy as tcp between test nodes sharing 2 cores (+-45 %):
 * a node's median falls below 0.8 x the cluster's, yet within its noise: no
 * false positive; a 0.05x sender still stands out. */
static void test_noise(void **state)
{
	(void)state;
	for (int n = 4; n <= 8; n += 4) {
		cluster_t c;
		cluster_init_jitter(&c, n, 1, 0.45);
		efab_scan_verdict_t v;
		assert_int_equal(efab_scan_verdict(&c.d, &limits, &v), EFAB_OK);
		assert_int_equal(v.nflags, 0);
		/* some unit is below 0.8 x the median (0.79, 0.77): only the noise
		 * rule keeps it */
		double lowest = INFINITY;
		for (int u = 0; u < n; u++)
			lowest = fmin(lowest, v.unit[u * EFAB_SCAN_NMETRIC + EFAB_SCAN_SEND] /
						      v.ref[EFAB_SCAN_SEND]);
		assert_true(lowest < 0.8);
		efab_scan_verdict_free(&v);
		slow_sender(&c, n - 1, 0.05);
		assert_int_equal(efab_scan_verdict(&c.d, &limits, &v), EFAB_OK);
		assert_int_equal(v.nflags, 1);
		assert_int_equal(v.flags[0].node, n - 1);
		efab_scan_verdict_free(&v);
		cluster_free(&c);
	}
	/* 2 nodes: no pair outside a node to measure noise by, the ratio
	 * decides; each end rests on one peer, so the slow direction's pair is
	 * the subject (nothing tells its ends apart) */
	cluster_t c;
	cluster_init(&c, 2, 1);
	slow_sender(&c, 0, 0.1);
	efab_scan_verdict_t v;
	verdict_is(&c, &limits, &v, "pair node0 NIC nic0 -> node1 NIC nic0: slow bandwidth");
	assert_true(isnan(v.spread[EFAB_SCAN_SEND]));
	assert_int_equal(v.flags[0].subject, EFAB_SCAN_SUBJ_PAIR);
	assert_int_equal(v.flags[0].node, 0);
	assert_int_equal(v.flags[0].peer, 1);
	assert_non_null(strstr(v.flags[0].evidence, "2 nodes: nothing tells its ends apart"));
	efab_scan_verdict_free(&v);
	cluster_free(&c);
}

/* The figures of CI's failed t_scan_defaults_slow_node_and_clean (stop 42,
 * 2026-12-02; the bandwidth figures solved from its printed medians): node2
 * rate-limited sends at 0.03x to each of its 3 peers while the pairs without
 * it spread from 478 to 1039 MB/s (4 ranks spinning on 2 cores). An additive
 * noise (1.4826 x MAD = 352 MB/s, 3 x 254 for a median of 3) hid a 738 MB/s
 * gap and named the 3 pairs ("one pair, not an end"); on a log scale
 * (bandwidth is bounded by 0) node2 stands out, and is the subject. */
static void test_noise_ci_slow_node(void **state)
{
	(void)state;
	cluster_t c;
	cluster_init(&c, 4, 1);
	const double bw[4][4] = {
		{NAN, 759.7, 961.2, 478.0},
		{1038.9, NAN, 481.5, 987.2},
		{20.71, 21.23, NAN, 19.93},
		{512.9, 756.9, 1611, NAN},
	};
	for (int a = 0; a < 4; a++)
		for (int b = 0; b < 4; b++) {
			c.bw[idx(&c, a, b, 0)] = bw[a][b];
			c.lat[idx(&c, a, b, 0)] = a == b ? NAN : 4000;
		}
	const efab_scan_limits_t half = {0.5, 0, 0};
	efab_scan_verdict_t v;
	verdict_is(&c, &half, &v, "node node2: slow bandwidth");
	assert_int_equal(v.flags[0].metric, EFAB_SCAN_SEND);
	efab_scan_verdict_free(&v);
	/* the same spread without the slow node flags nothing, at 0.5 and at
	 * the default 0.8 too, where node1's receive median sits at 0.79x the
	 * cluster's and only the (log-scale) noise keeps it */
	for (int b = 0; b < 4; b++)
		if (b != 2)
			c.bw[idx(&c, 2, b, 0)] = bw[b][2];
	verdict_is(&c, &half, &v, "");
	efab_scan_verdict_free(&v);
	verdict_is(&c, &limits, &v, "");
	double lowest = INFINITY;
	for (int u = 0; u < 4; u++)
		lowest = fmin(lowest, v.unit[u * EFAB_SCAN_NMETRIC + EFAB_SCAN_RECV] / v.ref[EFAB_SCAN_RECV]);
	assert_true(lowest < 0.8);
	efab_scan_verdict_free(&v);
	cluster_free(&c);
}

/* Failed pairs: failed[] and why[] set symmetric for (a, b, NIC i), the
 * figures gone as the scan leaves them (NAN). */
typedef struct failures {
	unsigned char failed[16 * 16 * 4];
	char why[16 * 16 * 4][64];
	const char *whyp[16 * 16 * 4];
} failures_t;

static void fail_pair(cluster_t *c, failures_t *f, int a, int b, int i, const char *why)
{
	size_t k = idx(c, a, b, i), k2 = idx(c, b, a, i);
	f->failed[k] = f->failed[k2] = 1;
	snprintf(f->why[k], sizeof(f->why[k]), "%s", why);
	c->bw[k] = c->bw[k2] = c->lat[k] = c->lat[k2] = NAN;
}

static void failures_attach(cluster_t *c, failures_t *f)
{
	for (size_t k = 0; k < EFAB_ARRAY_SIZE(f->whyp); k++)
		f->whyp[k] = f->why[k];
	c->d.failed = f->failed;
	c->d.why = f->whyp;
}

/* 4 nodes, 2 NICs: every pair of node2 failed on both NICs while the others
 * succeeded among themselves: node2 alone, as a node, unreachable, with the
 * failed pairs and their errors as evidence; nothing else (its NAN figures
 * flag no bandwidth or latency). */
static void test_unreachable_node(void **state)
{
	(void)state;
	cluster_t c;
	static failures_t f;
	memset(&f, 0, sizeof(f));
	cluster_init(&c, 4, 2);
	for (int b = 0; b < 4; b++)
		for (int i = 0; i < 2 && b != 2; i++)
			fail_pair(&c, &f, 2, b, i, "latency: timeout");
	failures_attach(&c, &f);
	efab_scan_verdict_t v;
	verdict_is(&c, &limits, &v, "node node2: failed");
	assert_int_equal(v.flags[0].node, 2);
	assert_int_equal(v.flags[0].nic, -1);
	assert_int_equal(v.flags[0].metric, EFAB_SCAN_UNREACHABLE);
	assert_int_equal(v.flags[0].first_round, 1);
	assert_int_equal(v.flags[0].nev, 6);
	assert_non_null(strstr(v.flags[0].evidence,
			       "all 6 of its NIC pairs failed (no progress with any peer) (2 of 2 NICs)"));
	assert_non_null(strstr(v.flags[0].evidence, "NIC nic0 with node0 NIC nic0 in round 3 (latency: timeout)"));
	assert_non_null(strstr(v.flags[0].evidence, "with node3 NIC nic1"));
	efab_scan_verdict_free(&v);
	/* one NIC of node2 only: that NIC, not the node */
	cluster_free(&c);
	memset(&f, 0, sizeof(f));
	cluster_init(&c, 4, 2);
	for (int b = 0; b < 4; b++)
		if (b != 2)
			fail_pair(&c, &f, 2, b, 1, "bandwidth a->b: timeout");
	failures_attach(&c, &f);
	verdict_is(&c, &limits, &v, "node node2 NIC nic1: failed");
	assert_int_equal(v.flags[0].node, 2);
	assert_int_equal(v.flags[0].nic, 1);
	assert_int_equal(v.flags[0].metric, EFAB_SCAN_UNREACHABLE);
	efab_scan_verdict_free(&v);
	cluster_free(&c);
}

/* 2 nodes whose only pair failed: nothing tells the ends apart, the pair is
 * the subject. */
static void test_unreachable_two_nodes(void **state)
{
	(void)state;
	cluster_t c;
	static failures_t f;
	memset(&f, 0, sizeof(f));
	cluster_init(&c, 2, 1);
	fail_pair(&c, &f, 0, 1, 0, "latency: timeout");
	failures_attach(&c, &f);
	efab_scan_verdict_t v;
	verdict_is(&c, &limits, &v, "pair node0 NIC nic0 - node1 NIC nic0: failed");
	assert_int_equal(v.flags[0].metric, EFAB_SCAN_PAIR_FAILED);
	assert_non_null(strstr(v.flags[0].evidence, "2 nodes: nothing tells its ends apart"));
	efab_scan_verdict_free(&v);
	cluster_free(&c);
}

/* One failed pair between nodes that succeed with others: not an
 * unreachable unit; the pair itself is the finding, once. */
static void test_one_failed_pair(void **state)
{
	(void)state;
	cluster_t c;
	static failures_t f;
	memset(&f, 0, sizeof(f));
	cluster_init(&c, 4, 1);
	fail_pair(&c, &f, 1, 3, 0, "bandwidth b->a: completion error");
	failures_attach(&c, &f);
	efab_scan_verdict_t v;
	verdict_is(&c, &limits, &v, "pair node1 NIC nic0 - node3 NIC nic0: failed");
	assert_int_equal(v.flags[0].metric, EFAB_SCAN_PAIR_FAILED);
	assert_int_equal(v.flags[0].node, 1);
	assert_int_equal(v.flags[0].peer, 3);
	assert_int_equal(v.flags[0].first_round, 3);
	assert_non_null(strstr(v.flags[0].evidence, "the pair failed in round 3 (bandwidth b->a: completion error); "
						    "both ends passed with other nodes: no common end"));
	efab_scan_verdict_free(&v);
	cluster_free(&c);
}

/* NIC counters: a lossy link at node2's NIC makes node2 and every peer
 * that sends to it retransmit (SRD counts at the sender). node2, troubled in
 * its round with every peer, is named once, with its figures passed; its
 * peers' troubled rounds (only with node2) are explained by it. A troubled
 * round between two other nodes names the NIC whose counters rose. */
static void test_nic_counters(void **state)
{
	(void)state;
	cluster_t c;
	static const char *t[4 * 4 * 1];
	cluster_init(&c, 4, 1);
	memset(t, 0, sizeof(t));
	for (int b = 0; b < 4; b++)
		if (b != 2) {
			t[idx(&c, 2, b, 0)] = "retrans_pkts=40 (round 1)";
			t[idx(&c, b, 2, 0)] = "retrans_pkts=38 (round 1)";
		}
	c.d.hw_trouble = t;
	efab_scan_verdict_t v;
	verdict_is(&c, &limits, &v, "node node2 NIC nic0: counters");
	assert_int_equal(v.nflags, 1);
	assert_int_equal(v.flags[0].metric, EFAB_SCAN_NIC_COUNTERS);
	assert_int_equal(v.flags[0].node, 2);
	assert_int_equal(v.flags[0].nic, 0);
	assert_non_null(strstr(v.flags[0].evidence, "in its round with every peer (its bandwidth and latency passed)"));
	assert_non_null(strstr(v.flags[0].evidence, "with node0: here retrans_pkts=40"));
	assert_non_null(strstr(v.flags[0].evidence, "at the peer retrans_pkts=38"));
	efab_scan_verdict_free(&v);
	/* one troubled round of node0 with node1 only: evidence from one pair,
	 * the pair is the subject (the counters say at which end they rose) */
	memset(t, 0, sizeof(t));
	t[idx(&c, 0, 1, 0)] = "rx_drops=3 (round 2)";
	verdict_is(&c, &limits, &v, "pair node0 NIC nic0 - node1 NIC nic0: counters");
	assert_int_equal(v.flags[0].node, 0);
	assert_non_null(strstr(v.flags[0].evidence, "only: at node0 NIC nic0 rx_drops=3 (round 2);"));
	efab_scan_verdict_free(&v);
	/* no counter rose: nothing */
	memset(t, 0, sizeof(t));
	assert_int_equal(efab_scan_verdict(&c.d, &limits, &v), EFAB_OK);
	assert_int_equal(v.nflags, 0);
	efab_scan_verdict_free(&v);
	/* a slow node whose counters rose too: both findings, the figures flagged */
	slow_sender(&c, 1, 0.3);
	for (int b = 0; b < 4; b++)
		if (b != 1)
			t[idx(&c, 1, b, 0)] = "retrans_timeout_events=2 (round 3)";
	assert_int_equal(efab_scan_verdict(&c.d, &limits, &v), EFAB_OK);
	int counters = 0, send = 0;
	for (size_t k = 0; k < v.nflags; k++) {
		counters += v.flags[k].metric == EFAB_SCAN_NIC_COUNTERS && v.flags[k].node == 1 &&
			    strstr(v.flags[k].evidence, "(its figures are flagged too)");
		send += v.flags[k].metric == EFAB_SCAN_SEND && v.flags[k].node == 1;
	}
	assert_int_equal(counters, 1);
	assert_int_equal(send, 1);
	efab_scan_verdict_free(&v);
	cluster_free(&c);
}

/* One NIC's counter deltas of a round, for the trouble rule. */
static efab_hwc_snap_t deltas(int n, const int *ids, const uint64_t *vals)
{
	efab_hwc_snap_t d;
	memset(&d, 0, sizeof(d));
	for (int k = 0; k < n; k++) {
		d.v[ids[k]] = vals[k];
		d.have |= 1u << ids[k];
	}
	return d;
}

static const char *rule(const efab_hwc_snap_t *d, const char *note, double max_retrans)
{
	static char buf[160];
	efab_scan_nic_trouble(d, note, max_retrans, buf, sizeof(buf));
	return buf;
}

/* Issue 45: the trouble rule is relative to the NIC's traffic in the round.
 * SRD retransmits at some background rate under load: retransmissions are
 * trouble only above max_retrans x tx_pkts (default 0.01; 0: any), rx_drops
 * only above max_retrans x rx_pkts; errors, timeouts, unresponsive or
 * impaired remotes at any count; a counter reset or gone always. (The old
 * rule named a NIC for a single retransmission.) */
static void test_trouble_rule(void **state)
{
	(void)state;
	const double thr = 0.01;
	enum { TXP = EFAB_HWC_tx_pkts, RXP = EFAB_HWC_rx_pkts, RTP = EFAB_HWC_retrans_pkts,
	       RTB = EFAB_HWC_retrans_bytes, DROP = EFAB_HWC_rx_drops };
	/* a healthy NIC under load: 10 of 10000 packets resent (0.1 %), a drop in 10^4 */
	efab_hwc_snap_t d = deltas(5, (const int[]){TXP, RXP, RTP, RTB, DROP},
				   (const uint64_t[]){10000, 10000, 10, 80000, 1});
	assert_string_equal(rule(&d, "", thr), "");
	/* at the threshold (1 %) still healthy, above it trouble, with the rate */
	d.v[RTP] = 100;
	assert_string_equal(rule(&d, "", thr), "");
	d.v[RTP] = 500;
	d.v[RTB] = 4000000;
	assert_string_equal(rule(&d, "", thr),
			    "retrans_bytes=4000000;retrans_pkts=500 (5.00% of 10000 tx_pkts)");
	/* 0: every retransmission is trouble (the old rule) */
	d.v[RTP] = 1;
	d.v[RTB] = 8000;
	assert_string_equal(rule(&d, "", 0), "rx_drops=1 (0.01% of 10000 rx_pkts);retrans_bytes=8000;"
					     "retrans_pkts=1 (0.01% of 10000 tx_pkts)");
	d.v[DROP] = 0;
	/* nothing sent, or tx_pkts not read: no traffic to relate them to */
	d.v[TXP] = 0;
	assert_string_equal(rule(&d, "", thr), "retrans_bytes=8000;retrans_pkts=1 (0 tx_pkts)");
	d.v[TXP] = 10000;
	d.have &= ~(1u << TXP);
	assert_string_equal(rule(&d, "", thr), "retrans_bytes=8000;retrans_pkts=1 (tx_pkts not read)");
	/* rx_drops against rx_pkts */
	d = deltas(3, (const int[]){TXP, RXP, DROP}, (const uint64_t[]){10000, 10000, 300});
	assert_string_equal(rule(&d, "", thr), "rx_drops=300 (3.00% of 10000 rx_pkts)");
	d.v[DROP] = 99;
	assert_string_equal(rule(&d, "", thr), "");
	/* errors and events at any count, whatever the traffic */
	static const int errs[] = {EFAB_HWC_rdma_write_wr_err, EFAB_HWC_rdma_read_wr_err,
				   EFAB_HWC_retrans_timeout_events, EFAB_HWC_unresponsive_remote_events,
				   EFAB_HWC_impaired_remote_conn_events};
	for (size_t k = 0; k < sizeof(errs) / sizeof(errs[0]); k++) {
		char want[64];
		d = deltas(3, (const int[]){TXP, RXP, errs[k]}, (const uint64_t[]){1000000, 1000000, 1});
		snprintf(want, sizeof(want), "%s=1", efab_hwc_names[errs[k]]);
		assert_string_equal(rule(&d, "", thr), want);
	}
	/* background retransmissions beside an error: the error alone */
	d = deltas(4, (const int[]){TXP, RTP, RTB, EFAB_HWC_retrans_timeout_events},
		   (const uint64_t[]){10000, 10, 80000, 2});
	assert_string_equal(rule(&d, "", thr), "retrans_timeout_events=2");
	/* a counter reset or gone mid-round */
	d = deltas(1, (const int[]){TXP}, (const uint64_t[]){10000});
	assert_string_equal(rule(&d, "tx_bytes went backwards (reset/wrap)", thr),
			    "tx_bytes went backwards (reset/wrap)");
	/* traffic alone */
	assert_string_equal(rule(&d, NULL, thr), "");
}

/* Issue 35, the case on the test cluster: 4 nodes, node3's link went down
 * after its first round. Round 1 (node0-node3) passed; its pairs with node2
 * (round 2) and node1 (round 3) failed; node1 and node2 passed with others.
 * node3, the common end, is the only failure subject, the failures dated
 * from round 2; and node2's one 4 ms ping-pong pair (with node0, its other
 * live peer at 6.6 us) names that pair, not node2 (the old verdict named
 * node1 and node2, each for a pair with node3, and node2 as a node). */
static void test_link_down_after_first_round(void **state)
{
	(void)state;
	cluster_t c;
	static failures_t f;
	memset(&f, 0, sizeof(f));
	cluster_init(&c, 4, 1);
	fail_pair(&c, &f, 2, 3, 0, "latency: timeout after 30.0 s waiting for pong");
	fail_pair(&c, &f, 1, 3, 0, "bandwidth a->b: timeout after 30.0 s");
	failures_attach(&c, &f);
	efab_scan_verdict_t v;
	verdict_is(&c, &limits, &v, "node node3: failed");
	const efab_scan_flag_t *g = &v.flags[0];
	assert_int_equal(g->subject, EFAB_SCAN_SUBJ_NODE);
	assert_int_equal(g->first_round, 2);
	assert_int_equal(g->peers, 3);
	assert_int_equal(g->nev, 3); /* rounds 1 (passed), 2, 3 (failed) */
	assert_int_equal(g->ev[0].round, 1);
	assert_int_equal(g->ev[0].failed, 0);
	assert_int_equal(g->ev[1].b, 2);
	assert_int_equal(g->ev[1].failed, 1);
	assert_non_null(strstr(g->evidence, "2 of its 3 pairs failed, each failure involves it; the "
					    "failures began in round 2: with node2 NIC nic0 in round 2 "
					    "(latency: timeout"));
	assert_non_null(strstr(g->evidence, "passed: with node0 NIC nic0 in round 1 (before the failures)"));
	efab_scan_verdict_free(&v);
	/* the same with the 4 ms ping-pong pair (node0-node2, round 3) */
	c.lat[idx(&c, 0, 2, 0)] = c.lat[idx(&c, 2, 0, 0)] = 4003;
	verdict_is(&c, &limits, &v, "node node3: failed\npair node0 NIC nic0 - node2 NIC nic0: slow latency");
	g = &v.flags[1];
	assert_int_equal(g->subject, EFAB_SCAN_SUBJ_PAIR);
	assert_int_equal(g->node, 0);
	assert_int_equal(g->peer, 2);
	assert_non_null(strstr(g->evidence, "latency 4003 us = "));
	assert_non_null(strstr(g->evidence, "in round 3; with their other peers node0 latency"));
	assert_non_null(strstr(g->evidence, "(median over 2), node2 latency"));
	assert_non_null(strstr(g->evidence, "(median over 1): one pair, not an end"));
	efab_scan_verdict_free(&v);
	cluster_free(&c);
}

/* A node that dies between rounds: 8 nodes x 2 NICs, node5 passes its
 * first 2 rounds and fails every pair after, on both NICs: node5 alone, as
 * a node, failures from round 3; its 2 passed rounds before them. */
static void test_node_dies_between_rounds(void **state)
{
	(void)state;
	cluster_t c;
	static failures_t f;
	memset(&f, 0, sizeof(f));
	cluster_init(&c, 8, 2);
	for (int r = 2; r < efab_scan_rounds(8); r++) {
		int b = efab_scan_partner(8, r, 5);
		for (int i = 0; i < 2; i++)
			fail_pair(&c, &f, 5, b, i, "latency: timeout");
	}
	failures_attach(&c, &f);
	efab_scan_verdict_t v;
	verdict_is(&c, &limits, &v, "node node5: failed");
	const efab_scan_flag_t *g = &v.flags[0];
	assert_int_equal(g->first_round, 3);
	assert_int_equal(g->peers, 14);
	assert_non_null(strstr(g->evidence, "10 of its 14 NIC pairs failed, each failure involves it "
					    "(2 of 2 NICs); the failures began in round 3"));
	assert_non_null(strstr(g->evidence, "its 4 other pairs passed (4 before the failures began, 0 after)"));
	efab_scan_verdict_free(&v);
	/* only NIC 1 died: that NIC, not the node */
	memset(&f, 0, sizeof(f));
	cluster_free(&c);
	cluster_init(&c, 8, 2);
	for (int r = 2; r < efab_scan_rounds(8); r++)
		fail_pair(&c, &f, 5, efab_scan_partner(8, r, 5), 1, "latency: timeout");
	failures_attach(&c, &f);
	verdict_is(&c, &limits, &v, "node node5 NIC nic1: failed");
	assert_non_null(strstr(v.flags[0].evidence, "5 of its 7 pairs failed"));
	efab_scan_verdict_free(&v);
	/* two nodes die: each is a common end (their pair with each other
	 * failed too), nobody else is named */
	memset(&f, 0, sizeof(f));
	cluster_free(&c);
	cluster_init(&c, 8, 1);
	for (int b = 0; b < 8; b++) {
		if (b != 2)
			fail_pair(&c, &f, 2, b, 0, "latency: timeout");
		if (b != 6 && b != 2)
			fail_pair(&c, &f, 6, b, 0, "latency: timeout");
	}
	failures_attach(&c, &f);
	verdict_is(&c, &limits, &v, "node node2: failed\nnode node6: failed");
	efab_scan_verdict_free(&v);
	/* a dead node and one failed pair elsewhere: the node, and that pair */
	fail_pair(&c, &f, 0, 1, 0, "bandwidth a->b: error");
	verdict_is(&c, &limits, &v,
		   "node node2: failed\nnode node6: failed\npair node0 NIC nic0 - node1 NIC nic0: failed");
	efab_scan_verdict_free(&v);
	cluster_free(&c);
}

/* One outlier pair between two healthy nodes: its bandwidth (both ways)
 * and its latency are findings of the pair; neither end is flagged, at 3
 * nodes (each end's median over 2 peers is off, but one peer is) as at 4
 * and 8 (where the old verdict flagged nothing, or the ends). */
static void test_outlier_pair(void **state)
{
	(void)state;
	int sizes[] = {3, 4, 8};
	for (size_t s = 0; s < EFAB_ARRAY_SIZE(sizes); s++) {
		cluster_t c;
		cluster_init(&c, sizes[s], 1);
		c.bw[idx(&c, 0, 2, 0)] *= 0.1;
		c.bw[idx(&c, 2, 0, 0)] *= 0.1;
		c.lat[idx(&c, 0, 2, 0)] = c.lat[idx(&c, 2, 0, 0)] = 200;
		efab_scan_verdict_t v;
		verdict_is(&c, &limits, &v,
			   "pair node0 NIC nic0 - node2 NIC nic0: slow latency\n"
			   "pair node0 NIC nic0 - node2 NIC nic0: slow bandwidth");
		assert_int_equal(v.flags[1].both, 1);
		assert_non_null(strstr(v.flags[1].evidence, "both ways in round"));
		efab_scan_verdict_free(&v);
		/* one direction only: node2 writes slowly to node0 */
		c.bw[idx(&c, 0, 2, 0)] *= 10;
		c.lat[idx(&c, 0, 2, 0)] = c.lat[idx(&c, 2, 0, 0)] = 20;
		verdict_is(&c, &limits, &v, "pair node2 NIC nic0 -> node0 NIC nic0: slow bandwidth");
		assert_int_equal(v.flags[0].node, 2);
		assert_int_equal(v.flags[0].peer, 0);
		assert_int_equal(v.flags[0].both, 0);
		assert_non_null(strstr(v.flags[0].evidence, "node2 writes to node0 at "));
		efab_scan_verdict_free(&v);
		/* a pair at 0.7x (below 0.8, above 0.8 squared): one figure that no
		 * other confirms, not flagged */
		c.bw[idx(&c, 2, 0, 0)] *= 7;
		verdict_is(&c, &limits, &v, "");
		efab_scan_verdict_free(&v);
		/* slow in the median over passes but not in its best pass (a
		 * passing slowdown, as a shared core's): no pair finding */
		double *best = malloc((size_t)(sizes[s] * sizes[s]) * sizeof(double));
		assert_non_null(best);
		memcpy(best, c.lat, (size_t)(sizes[s] * sizes[s]) * sizeof(double));
		c.lat[idx(&c, 0, 2, 0)] = c.lat[idx(&c, 2, 0, 0)] = 1000;
		c.d.lat_best = best;
		verdict_is(&c, &limits, &v, "");
		efab_scan_verdict_free(&v);
		c.d.lat_best = NULL;
		verdict_is(&c, &limits, &v, "pair node0 NIC nic0 - node2 NIC nic0: slow latency");
		efab_scan_verdict_free(&v);
		free(best);
		cluster_free(&c);
	}
}

/* A slow NIC among healthy ones, with a failed pair of its node's other
 * NIC leaving it fewer peers: the NIC alone, its figures saying how many
 * peers they rest on, and the failed pair as a pair. */
/* A whole round slow (the test cluster's shared cores: every pair of one
 * round at 4 ms, its other rounds at 7 us): the machine at that time, no
 * pair named, round_note says which round; one pair of the round fast
 * again: the slow ones are pairs again. */
static void test_round_off(void **state)
{
	(void)state;
	int sizes[] = {4, 8};
	for (size_t s = 0; s < EFAB_ARRAY_SIZE(sizes); s++) {
		int n = sizes[s];
		cluster_t c;
		cluster_init(&c, n, 1);
		int r = efab_scan_round_of(n, 0, 1), slow = 0, keep = -1;
		for (int x = 0; x < n; x++) {
			int y = efab_scan_partner(n, r, x);
			if (y > x) {
				c.lat[idx(&c, x, y, 0)] = c.lat[idx(&c, y, x, 0)] = 4000;
				slow++;
				keep = x;
			}
		}
		assert_int_equal(slow, n / 2);
		efab_scan_verdict_t v;
		verdict_is(&c, &limits, &v, "");
		char want[32];
		snprintf(want, sizeof(want), "round %d: every pair", r + 1);
		assert_non_null(strstr(v.round_note, want));
		efab_scan_verdict_free(&v);
		/* the round's last pair measured at 7 us: the others are pair findings */
		int y = efab_scan_partner(n, r, keep);
		c.lat[idx(&c, keep, y, 0)] = c.lat[idx(&c, y, keep, 0)] = c.lat[idx(&c, 0, n - 1, 0)];
		assert_int_equal(efab_scan_verdict(&c.d, &limits, &v), EFAB_OK);
		assert_int_equal(v.nflags, (size_t)(n / 2 - 1));
		for (size_t f = 0; f < v.nflags; f++) {
			assert_int_equal(v.flags[f].subject, EFAB_SCAN_SUBJ_PAIR);
			assert_int_equal(v.flags[f].kind, EFAB_SCAN_KIND_SLOW_LAT);
		}
		assert_string_equal(v.round_note, "");
		efab_scan_verdict_free(&v);
		cluster_free(&c);
	}
}

static void test_slow_nic_few_peers(void **state)
{
	(void)state;
	cluster_t c;
	static failures_t f;
	memset(&f, 0, sizeof(f));
	cluster_init(&c, 4, 2);
	for (int b = 0; b < 4; b++)
		if (b != 1) {
			c.bw[idx(&c, 1, b, 1)] *= 0.2;
			c.bw[idx(&c, b, 1, 1)] *= 0.2;
		}
	fail_pair(&c, &f, 1, 3, 1, "bandwidth b->a: timeout");
	failures_attach(&c, &f);
	efab_scan_verdict_t v;
	verdict_is(&c, &limits, &v,
		   "pair node1 NIC nic1 - node3 NIC nic1: failed\n"
		   "node node1 NIC nic1: slow bandwidth\nnode node1 NIC nic1: slow bandwidth");
	for (size_t k = 1; k < 3; k++) {
		assert_int_equal(v.flags[k].peers, 2);
		assert_non_null(strstr(v.flags[k].evidence, "median over its 2 peers (node0 "));
		assert_non_null(strstr(v.flags[k].evidence, "; 1 peer left out"));
	}
	efab_scan_verdict_free(&v);
	cluster_free(&c);
}

/* Issue 59: a NIC-index effect. NIC index 1 is slow on every node (its pair
 * figures at 0.4x bandwidth, 1.8x latency: a rank far from its NIC, e.g. a
 * cross-socket DMA under Slurm's default distribution, on every node alike).
 * The old verdict named NIC 1 of every node, up to once per figure (3 or 4
 * nodes x send, receive, latency), or -- with 2 NICs a node, its noise the
 * spread of all pair figures, NIC 0's and NIC 1's pooled -- nothing at all.
 * Now: one finding per kind with the index as its subject, no node and no
 * NIC named; then node3's NIC 1 slow against NIC 1 of the other nodes (a
 * real slow NIC, 0.2x of its index) is named, and only it. */
static void index_effect(cluster_t *c, int i, double bw, double lat)
{
	for (int a = 0; a < c->nodes; a++)
		for (int b = 0; b < c->nodes; b++)
			if (a != b) {
				c->bw[idx(c, a, b, i)] *= bw;
				c->lat[idx(c, a, b, i)] *= lat;
			}
}

static void test_nic_index_effect(void **state)
{
	(void)state;
	const int shapes[][2] = {{3, 4}, {4, 4}, {8, 4}, {4, 2}, {8, 16}};
	for (size_t s = 0; s < EFAB_ARRAY_SIZE(shapes); s++) {
		int n = shapes[s][0], k = shapes[s][1];
		cluster_t c;
		cluster_init(&c, n, k);
		index_effect(&c, 1, 0.4, 1.8);
		efab_scan_verdict_t v;
		verdict_is(&c, &limits, &v, "NIC index 1: slow bandwidth\nNIC index 1: slow latency");
		for (size_t f = 0; f < v.nflags; f++) {
			assert_int_equal(v.flags[f].subject, EFAB_SCAN_SUBJ_INDEX);
			assert_int_equal(v.flags[f].nic, 1);
			assert_int_equal(v.flags[f].peers, n); /* every node shows it */
		}
		char want[256];
		snprintf(want, sizeof(want), "beyond the limits on %d of the %d nodes (every node)", n, n);
		assert_non_null(strstr(v.flags[0].evidence, want));
		assert_true(fabs(v.flags[0].ratio - 0.4 * 1000 / v.ref[EFAB_SCAN_SEND]) < 0.05);
		efab_scan_verdict_free(&v);
		/* and a real slow NIC within the index: node(n-1)'s NIC 1 at 0.2x of
		 * its index's bandwidth, both ways; the index stays one finding */
		int x = n - 1;
		for (int b = 0; b < n; b++)
			if (b != x) {
				c.bw[idx(&c, x, b, 1)] *= 0.2;
				c.bw[idx(&c, b, x, 1)] *= 0.2;
			}
		snprintf(want, sizeof(want),
			 "node node%d NIC nic1: slow bandwidth\nnode node%d NIC nic1: slow bandwidth\n"
			 "NIC index 1: slow bandwidth\nNIC index 1: slow latency", x, x);
		verdict_is(&c, &limits, &v, want);
		for (size_t f = 0; f < 2; f++) {
			assert_int_equal(v.flags[f].vs_index, 1);
			/* against its index (0.2x; 0.33x at 3 nodes, where the others'
			 * medians over 2 peers include it), not the cluster (0.08x) */
			assert_true(v.flags[f].ratio > 0.15 && v.flags[f].ratio < 0.35);
			assert_non_null(strstr(v.flags[f].evidence, "the median of NIC index 1 on the other nodes"));
		}
		efab_scan_verdict_free(&v);
		cluster_free(&c);
	}
	/* one NIC a node: index 0 is the cluster, no index effect (a slow node
	 * stays a node, test_slow_node); 2 nodes: pairs, as before */
	cluster_t c;
	cluster_init(&c, 2, 4);
	index_effect(&c, 1, 0.1, 1);
	efab_scan_verdict_t v;
	verdict_is(&c, &limits, &v, "pair node0 NIC nic1 - node1 NIC nic1: slow bandwidth");
	efab_scan_verdict_free(&v);
	cluster_free(&c);
}

/* Issue 59: under load a slowdown that is not the NIC's -- a core other
 * work took during 2 of 3 passes -- moves the median over the passes; a
 * fault is slow in every pass. A unit is flagged only when its best passes'
 * figures are beyond the limits too: node2's sends at 0.4x in the median
 * but at full speed in its best pass are not flagged; at 0.4x in every pass
 * they are. */
static void test_unit_needs_every_pass(void **state)
{
	(void)state;
	cluster_t c;
	cluster_init(&c, 4, 1);
	size_t cells = (size_t)(4 * 4);
	double *best = malloc(cells * sizeof(double));
	assert_non_null(best);
	memcpy(best, c.bw, cells * sizeof(double));
	slow_sender(&c, 2, 0.4);
	c.d.bw_best = best;
	efab_scan_verdict_t v;
	verdict_is(&c, &limits, &v, "");
	efab_scan_verdict_free(&v);
	memcpy(best, c.bw, cells * sizeof(double));
	verdict_is(&c, &limits, &v, "node node2: slow bandwidth");
	efab_scan_verdict_free(&v);
	free(best);
	cluster_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_schedule),   cmocka_unit_test(test_median),
		cmocka_unit_test(test_no_fault),   cmocka_unit_test(test_slow_node),
		cmocka_unit_test(test_slow_nic),   cmocka_unit_test(test_thresholds),
		cmocka_unit_test(test_noise),
		cmocka_unit_test(test_noise_ci_slow_node),
		cmocka_unit_test(test_unreachable_node), cmocka_unit_test(test_unreachable_two_nodes),
		cmocka_unit_test(test_one_failed_pair), cmocka_unit_test(test_nic_counters),
		cmocka_unit_test(test_link_down_after_first_round),
		cmocka_unit_test(test_node_dies_between_rounds), cmocka_unit_test(test_outlier_pair), cmocka_unit_test(test_round_off),
		cmocka_unit_test(test_slow_nic_few_peers), cmocka_unit_test(test_trouble_rule),
		cmocka_unit_test(test_nic_index_effect), cmocka_unit_test(test_unit_needs_every_pass),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
