#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "efab.h"
#include "efab_scan.h"

/* Counters that are trouble at any count: errors and events (lib/efab_hwc.h
 * names them as the efa driver does). */
static int always_trouble(int k)
{
	/* efab_hwc_is_trouble's counters, less the three judged against the
	 * NIC's traffic (retransmissions, drops) */
	return efab_hwc_is_trouble(k) && k != EFAB_HWC_rx_drops && k != EFAB_HWC_retrans_bytes &&
	       k != EFAB_HWC_retrans_pkts;
}

static int have(const efab_hwc_snap_t *d, int k)
{
	return (d->have & (1u << k)) != 0;
}

/* count (with the counters named by names, "a;b") against its traffic
 * counter per: trouble when count > max x per, or per is 0 or unread. */
static size_t relative(const efab_hwc_snap_t *d, int count, int per, const int *names, int nn,
		       double max, char *buf, size_t len, size_t n)
{
	if (!have(d, count) || !d->v[count])
		return n;
	double c = (double)d->v[count], p = have(d, per) ? (double)d->v[per] : 0;
	if (have(d, per) && p > 0 && c <= max * p)
		return n;
	for (int k = 0; k < nn && n + 1 < len; k++)
		if (have(d, names[k]) && d->v[names[k]])
			n += (size_t)snprintf(buf + n, len - n, "%s%s=%llu", n ? ";" : "",
					      efab_hwc_names[names[k]], (unsigned long long)d->v[names[k]]);
	if (n + 1 >= len)
		return n;
	if (!have(d, per))
		n += (size_t)snprintf(buf + n, len - n, " (%s not read)", efab_hwc_names[per]);
	else if (p <= 0)
		n += (size_t)snprintf(buf + n, len - n, " (0 %s)", efab_hwc_names[per]);
	else
		n += (size_t)snprintf(buf + n, len - n, " (%.2f%% of %llu %s)", 100.0 * c / p,
				      (unsigned long long)d->v[per], efab_hwc_names[per]);
	return n < len ? n : len - 1;
}

/* The rule (docs/scan.md, "NIC counters"): SRD resends what was lost below
 * the provider and counts it at the sender, at some background rate on a
 * healthy fabric under load; a NIC's retransmissions are trouble when
 * retrans_pkts > max_retrans x tx_pkts of the round, its rx_drops (packets
 * the NIC discarded on receive, which SRD's sender then resends) when
 * rx_drops > max_retrans x rx_pkts. Errors and events are trouble at any
 * count; so is a counter that went backwards or became unreadable. */
void efab_scan_nic_trouble(const efab_hwc_snap_t *d, const char *note, double max_retrans,
			   char *buf, size_t len)
{
	static const int drops[] = {EFAB_HWC_rx_drops};
	static const int retrans[] = {EFAB_HWC_retrans_bytes, EFAB_HWC_retrans_pkts};
	size_t n = 0;
	if (!len)
		return;
	buf[0] = 0;
	n = relative(d, EFAB_HWC_rx_drops, EFAB_HWC_rx_pkts, drops, 1, max_retrans, buf, len, n);
	n = relative(d, EFAB_HWC_retrans_pkts, EFAB_HWC_tx_pkts, retrans, 2, max_retrans, buf, len, n);
	for (int k = 0; k < EFAB_HWC_N && n + 1 < len; k++)
		if (always_trouble(k) && have(d, k) && d->v[k])
			n += (size_t)snprintf(buf + n, len - n, "%s%s=%llu", n ? ";" : "",
					      efab_hwc_names[k], (unsigned long long)d->v[k]);
	if (note && note[0] && n + 1 < len)
		snprintf(buf + n, len - n, "%s%s", n ? ";" : "", note);
}

int efab_scan_rounds(int nodes)
{
	if (nodes < 2)
		return 0;
	return nodes % 2 ? nodes : nodes - 1;
}

/* Circle method over M = nodes rounded up to even (the extra one is "sits
 * out"): node 0 stays at position 0, the others rotate by one position per
 * round, position k meets position M-1-k. */
int efab_scan_partner(int nodes, int round, int node)
{
	if (nodes < 2 || node < 0 || node >= nodes)
		return -1;
	int m = nodes + nodes % 2, ring = m - 1;
	round %= ring;
	int pos = node == 0 ? 0 : 1 + ((node - 1 - round) % ring + ring) % ring;
	int ppos = m - 1 - pos;
	int partner = ppos == 0 ? 0 : 1 + (ppos - 1 + round) % ring;
	return partner < nodes ? partner : -1;
}

const char *efab_scan_metric_name(int metric)
{
	switch (metric) {
	case EFAB_SCAN_SEND: return "send bandwidth";
	case EFAB_SCAN_RECV: return "receive bandwidth";
	case EFAB_SCAN_LAT: return "latency";
	case EFAB_SCAN_UNREACHABLE: return "reachability";
	case EFAB_SCAN_PAIR_FAILED: return "failed pair";
	case EFAB_SCAN_NIC_COUNTERS: return "NIC counters";
	default: return "?";
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

double efab_scan_median(const double *v, size_t n)
{
	double *t = malloc((n ? n : 1) * sizeof(*t));
	size_t k = 0;
	if (!t)
		return NAN;
	for (size_t i = 0; i < n; i++)
		if (isfinite(v[i]))
			t[k++] = v[i];
	double med = NAN;
	if (k) {
		qsort(t, k, sizeof(*t), cmp_double);
		med = k % 2 ? t[k / 2] : (t[k / 2 - 1] + t[k / 2]) / 2;
	}
	free(t);
	return med;
}

static size_t at(const efab_scan_data_t *d, int a, int b, int i)
{
	return ((size_t)a * (size_t)d->nodes + (size_t)b) * (size_t)d->nics + (size_t)i;
}

/* The figure of metric m between unit (a, i) and peer b. */
static double pair_value(const efab_scan_data_t *d, int m, int a, int b, int i)
{
	switch (m) {
	case EFAB_SCAN_SEND: return d->bw[at(d, a, b, i)];
	case EFAB_SCAN_RECV: return d->bw[at(d, b, a, i)];
	default: return d->lat[at(d, a, b, i)];
	}
}

/* A flagged unit's figures no longer count for its peers: a slow sender
 * explains its receivers' low receive figures, and the reverse. */
static int excluded_peer(const unsigned char *flagged, int nics, int m, int b, int i)
{
	int u = b * nics + i;
	switch (m) {
	case EFAB_SCAN_SEND: return flagged[u * EFAB_SCAN_NMETRIC + EFAB_SCAN_RECV];
	case EFAB_SCAN_RECV: return flagged[u * EFAB_SCAN_NMETRIC + EFAB_SCAN_SEND];
	default: return flagged[u * EFAB_SCAN_NMETRIC + EFAB_SCAN_LAT];
	}
}

int efab_scan_round_of(int nodes, int a, int b)
{
	for (int r = 0; a != b && r < efab_scan_rounds(nodes); r++)
		if (efab_scan_partner(nodes, r, a) == b)
			return r;
	return -1;
}

const char *efab_scan_subject_name(int subject)
{
	switch (subject) {
	case EFAB_SCAN_SUBJ_NODE: return "node";
	case EFAB_SCAN_SUBJ_NIC: return "nic";
	case EFAB_SCAN_SUBJ_PAIR: return "pair";
	case EFAB_SCAN_SUBJ_INDEX: return "index";
	default: return "?";
	}
}

const char *efab_scan_kind_name(int kind)
{
	switch (kind) {
	case EFAB_SCAN_KIND_FAILED: return "failed";
	case EFAB_SCAN_KIND_SLOW_BW: return "slow bandwidth";
	case EFAB_SCAN_KIND_SLOW_LAT: return "slow latency";
	case EFAB_SCAN_KIND_COUNTERS: return "counters";
	default: return "?";
	}
}

static int kind_of_metric(int m)
{
	return m == EFAB_SCAN_LAT ? EFAB_SCAN_KIND_SLOW_LAT : EFAB_SCAN_KIND_SLOW_BW;
}

/* The peer figures unit (a, i)'s median for metric m is over: the finite
 * ones of peers not flagged for the opposite figure; when every peer is
 * (2 nodes, or a limit every unit misses) all of its own, as either end may
 * be at fault. vals[k] and peers[k] (may be NULL); returns k. */
static int peer_figures(const efab_scan_data_t *d, const unsigned char *flagged, int m, int a,
			int i, double *vals, int *peers)
{
	int k = 0;
	for (int pass = 0; pass < 2 && !k; pass++)
		for (int b = 0; b < d->nodes; b++) {
			if (b == a || (!pass && excluded_peer(flagged, d->nics, m, b, i)))
				continue;
			double v = pair_value(d, m, a, b, i);
			if (!isfinite(v))
				continue;
			if (peers)
				peers[k] = b;
			vals[k++] = v;
		}
	return k;
}

static double unit_value(const efab_scan_data_t *d, const unsigned char *flagged, int m, int a,
			 int i, double *tmp)
{
	int k = peer_figures(d, flagged, m, a, i, tmp, NULL);
	return k ? efab_scan_median(tmp, (size_t)k) : NAN;
}

static double ratio_of(int m, double value, double ref)
{
	if (!isfinite(value) || !isfinite(ref) || ref <= 0 || value <= 0)
		return NAN;
	return m == EFAB_SCAN_LAT ? ref / value : value / ref;
}

static double robust_sd(double *v, size_t n)
{
	if (n < 3)
		return NAN;
	double med = efab_scan_median(v, n);
	for (size_t j = 0; j < n; j++)
		v[j] = fabs(v[j] - med);
	return 1.4826 * efab_scan_median(v, n);
}

/* Logarithms tmp[n0..*n) of one NIC index's figures as residuals from their
 * median, scaled by sqrt(k / (k - 1)) for the degree of freedom the centring
 * takes (k distinct figures: latency's are stored both ways, counted once);
 * fewer than 2 distinct figures say nothing about noise and are dropped. */
static void center_index(double *tmp, size_t n0, size_t *n, int m)
{
	size_t cnt = *n - n0, k = m == EFAB_SCAN_LAT ? cnt / 2 : cnt;
	if (k < 2) {
		*n = n0;
		return;
	}
	double med = efab_scan_median(tmp + n0, cnt), c = sqrt((double)k / (double)(k - 1));
	for (size_t j = n0; j < *n; j++)
		tmp[j] = (tmp[j] - med) * c;
}

/* Measurement noise for unit (a, i)'s figure, on a log scale: the robust
 * standard deviation (1.4826 x MAD) of the logarithms of the pair figures
 * of metric m that involve neither node a nor a flagged end (leave-one-out:
 * a slow node must not widen its own yardstick), each NIC index's centred on
 * its own median (a NIC-index effect -- every node's NIC 1 at 0.5x -- is a
 * difference between indices, not noise: pooled, it would hide itself and
 * every slow NIC, as with 2 NICs per node), scaled to a median of k of them
 * (1.2533 / sqrt(k)). A ratio, as pair_noise's: bandwidth is bounded by 0,
 * and an additive spread above a third of the median (tcp between nodes
 * sharing 2 cores: 478 to 1039 MB/s) could never be passed, not even by a
 * sender at 0.03x (CI, 2026-12-02). NAN when fewer than 3 such figures exist
 * (2 nodes): then the ratio alone decides. */
static double unit_noise_sd(const efab_scan_data_t *d, const unsigned char *flagged, int m, int a,
			    double *tmp)
{
	size_t n = 0;
	for (int i = 0; i < d->nics; i++) {
		size_t n0 = n;
		for (int x = 0; x < d->nodes; x++) {
			if (x == a || flagged[(x * d->nics + i) * EFAB_SCAN_NMETRIC + m])
				continue;
			for (int b = 0; b < d->nodes; b++) {
				if (b == x || b == a || excluded_peer(flagged, d->nics, m, b, i))
					continue;
				double v = pair_value(d, m, x, b, i);
				if (isfinite(v) && v > 0)
					tmp[n++] = log(v);
			}
		}
		center_index(tmp, n0, &n, m);
	}
	return robust_sd(tmp, n);
}

/* unit_noise_sd scaled to a median of k figures. cache (NULL: none): per
 * (node, metric) [a * F + m] the unscaled spread, which depends on neither
 * the NIC nor k, so that a verdict over 64 nodes x 16 NICs computes it 64
 * times per metric and step instead of 1024 (NAN: not yet; the caller
 * clears it whenever a unit is flagged). */
static double unit_noise_c(const efab_scan_data_t *d, const unsigned char *flagged, int m, int a,
			   int k, double *tmp, double *cache)
{
	if (k < 1)
		return NAN;
	double sd;
	if (cache && a >= 0 && !isnan(cache[a * EFAB_SCAN_NMETRIC + m]))
		sd = cache[a * EFAB_SCAN_NMETRIC + m];
	else {
		sd = unit_noise_sd(d, flagged, m, a, tmp);
		if (cache && a >= 0)
			cache[a * EFAB_SCAN_NMETRIC + m] = isnan(sd) ? INFINITY : sd;
	}
	if (isinf(sd))
		sd = NAN;
	return sd * 1.2533 / sqrt((double)k);
}

static double unit_noise(const efab_scan_data_t *d, const unsigned char *flagged, int m, int a,
			 int k, double *tmp)
{
	return unit_noise_c(d, flagged, m, a, k, tmp, NULL);
}

/* The noise of one pair figure (a, b, i) of metric m (SEND: a writes to b;
 * LAT): the robust spread of the logarithms of every other pair figure of m
 * (the pair's own left out, as a unit's node is for units) that no flagged
 * end explains, each NIC index's centred on its own median (unit_noise). */
static double pair_noise_n(const efab_scan_data_t *d, const unsigned char *flagged, int m, int a,
			   int b, double *tmp, size_t *count)
{
	size_t n = 0;
	for (int i = 0; i < d->nics; i++) {
		size_t n0 = n;
		for (int x = 0; x < d->nodes; x++)
			for (int y = 0; y < d->nodes; y++) {
				if (x == y || (x == a && y == b) || (m == EFAB_SCAN_LAT && x == b && y == a))
					continue;
				int fx = flagged[(x * d->nics + i) * EFAB_SCAN_NMETRIC + m];
				if (fx || excluded_peer(flagged, d->nics, m, y, i))
					continue;
				double v = pair_value(d, m, x, y, i);
				if (isfinite(v) && v > 0)
					tmp[n++] = log(v);
			}
		center_index(tmp, n0, &n, m);
	}
	*count = n;
	return robust_sd(tmp, n);
}

/* pair_noise over many figures: leaving one pair out of more than
 * PAIR_NOISE_ALL of them moves the spread by well under 1 %, and computing
 * it once per pair made the pairs' step O(pairs^2) (minutes at 64 nodes x
 * 16 NICs); there the spread of all of them is used, computed once per
 * metric and verdict (flagged no longer changes then). */
#define PAIR_NOISE_ALL 256

/* cache: per metric, NAN not yet, -1 too few figures (leave-one-out), else
 * the spread of all; valid while flagged does not change (pair_flags) */
static double pair_noise(const efab_scan_data_t *d, const unsigned char *flagged, int m, int a,
			 int b, double *tmp, double *cache)
{
	size_t n;
	if (cache && !isnan(cache[m]) && cache[m] >= 0)
		return cache[m];
	if (cache && isnan(cache[m])) {
		double all = pair_noise_n(d, flagged, m, -1, -1, tmp, &n);
		cache[m] = n > PAIR_NOISE_ALL && isfinite(all) ? all : -1;
		if (cache[m] >= 0)
			return cache[m];
	}
	return pair_noise_n(d, flagged, m, a, b, tmp, &n);
}

/* A figure beyond the limits: below rel of the cluster median ref (a
 * unit's; a pair's rel is squared by the caller) and further from it than
 * EFAB_SCAN_SIGMAS x its log-scale noise (unit_noise for a unit's median,
 * pair_noise for one pair figure), or past an absolute limit. */
static int violates(const efab_scan_limits_t *lim, int m, double value, double ref,
		    double log_noise)
{
	if (!isfinite(value))
		return 0;
	double ratio = ratio_of(m, value, ref);
	if (isfinite(ratio) && ratio > 0 && ratio < lim->rel &&
	    (!isfinite(log_noise) || -log(ratio) > EFAB_SCAN_SIGMAS * log_noise))
		return 1;
	if (m == EFAB_SCAN_LAT)
		return lim->max_lat > 0 && value > lim->max_lat;
	return lim->min_bw > 0 && value < lim->min_bw;
}

static const char *unit_of(int m)
{
	return m == EFAB_SCAN_LAT ? "us" : "MB/s";
}

/* "x-fold" of a ratio as printed: latency's is inverted (higher is worse). */
static double shown_ratio(int m, double ratio)
{
	return m == EFAB_SCAN_LAT && isfinite(ratio) && ratio > 0 ? 1 / ratio : ratio;
}

/* snprintf that appends at *n and never runs past len. */
static void EFAB_PRINTF(4, 5) put(char *buf, size_t len, size_t *n, const char *fmt, ...)
{
	if (*n + 1 >= len)
		return;
	va_list ap;
	va_start(ap, fmt);
	int w = vsnprintf(buf + *n, len - *n, fmt, ap);
	va_end(ap);
	if (w > 0)
		*n = *n + (size_t)w < len ? *n + (size_t)w : len - 1;
}

static int cell_failed(const efab_scan_data_t *d, int a, int b, int i)
{
	return d->failed && (d->failed[at(d, a, b, i)] || d->failed[at(d, b, a, i)]);
}

static int cell_measured(const efab_scan_data_t *d, int a, int b, int i)
{
	return !cell_failed(d, a, b, i) &&
	       (isfinite(d->bw[at(d, a, b, i)]) || isfinite(d->bw[at(d, b, a, i)]) ||
		isfinite(d->lat[at(d, a, b, i)]));
}

static const char *why_of(const efab_scan_data_t *d, int a, int b, int i)
{
	const char *w = d->why ? d->why[at(d, a, b, i)] : NULL;
	if ((!w || !*w) && d->why)
		w = d->why[at(d, b, a, i)];
	return w && *w ? w : "no detail";
}

static const char *trouble(const efab_scan_data_t *d, int a, int b, int i)
{
	const char *t = d->hw_trouble ? d->hw_trouble[at(d, a, b, i)] : NULL;
	return t && *t ? t : NULL;
}

static const char *nic_name(const efab_scan_data_t *d, int a, int i)
{
	return d->nic_names[a * d->nics + i];
}

static int round1(const efab_scan_data_t *d, int a, int b)
{
	return efab_scan_round_of(d->nodes, a, b) + 1;
}

/* The findings as they are built: a growable list whose flags own their
 * evidence arrays. */
typedef struct flag_list {
	efab_scan_flag_t *f;
	size_t n, cap;
	int oom;
} flag_list_t;

static efab_scan_flag_t *flag_new(flag_list_t *l, int subject, int kind, int node, int nic,
				  int peer, int metric)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		efab_scan_flag_t *g = realloc(l->f, cap * sizeof(*g));
		if (!g) {
			l->oom = 1;
			return NULL;
		}
		l->f = g;
		l->cap = cap;
	}
	efab_scan_flag_t *f = &l->f[l->n++];
	memset(f, 0, sizeof(*f));
	*f = (efab_scan_flag_t){.subject = subject, .kind = kind, .node = node, .nic = nic,
				.peer = peer, .metric = metric, .value = NAN, .ref = NAN, .ratio = NAN};
	return f;
}

static void ev_add(const efab_scan_data_t *d, flag_list_t *l, efab_scan_flag_t *f, int a, int b,
		   int i, int failed, int metric, double value, int off)
{
	efab_scan_evidence_t *g = realloc(f->ev, (f->nev + 1) * sizeof(*g));
	if (!g) {
		l->oom = 1;
		return;
	}
	f->ev = g;
	f->ev[f->nev++] = (efab_scan_evidence_t){a, b, i, round1(d, a, b), failed,
						 metric, value, off};
}

/* Unit (b, i) passed with some node other than a. */
static int passed_elsewhere(const efab_scan_data_t *d, int b, int i, int a)
{
	for (int x = 0; x < d->nodes; x++)
		if (x != a && x != b && cell_measured(d, b, x, i))
			return 1;
	return 0;
}

/* The evidence of unit (a, i) as a common end of failures: its pairs in
 * round order, failed or passed; the failures' first round. */
static void unit_failure_ev(const efab_scan_data_t *d, flag_list_t *l, efab_scan_flag_t *f,
			    int a, int i, int *first, int *fails, int *tried)
{
	for (int r = 0; r < efab_scan_rounds(d->nodes); r++) {
		int b = efab_scan_partner(d->nodes, r, a);
		if (b < 0)
			continue;
		int failed = cell_failed(d, a, b, i);
		if (!failed && !cell_measured(d, a, b, i))
			continue;
		*tried += 1;
		if (failed) {
			*fails += 1;
			if (!*first || r + 1 < *first)
				*first = r + 1;
		}
		ev_add(d, l, f, a, b, i, failed, failed ? -1 : EFAB_SCAN_LAT,
		       failed ? NAN : d->lat[at(d, a, b, i)], failed);
	}
}

/* Text of a common end's pairs: "[NIC x ]with nodeB NIC y in round R (why)". */
static void failure_text(const efab_scan_data_t *d, efab_scan_flag_t *f, int first,
			 int fails, int tried, int nics_hit)
{
	char *buf = f->evidence;
	size_t len = sizeof(f->evidence), n = 0;
	int node = f->subject == EFAB_SCAN_SUBJ_NODE && d->nics > 1;
	if (fails == tried)
		put(buf, len, &n, "all %d of its %spairs failed (no progress with any peer)", tried,
		    node ? "NIC " : "");
	else
		put(buf, len, &n, "%d of its %d %spairs failed, each failure involves it", fails, tried,
		    node ? "NIC " : "");
	if (node)
		put(buf, len, &n, " (%d of %d NICs)", nics_hit, d->nics);
	put(buf, len, &n, "; the failures began in round %d: ", first);
	int k = 0;
	for (size_t e = 0; e < f->nev; e++) {
		const efab_scan_evidence_t *g = &f->ev[e];
		if (!g->failed)
			continue;
		put(buf, len, &n, "%s%s%s%swith %s NIC %s in round %d (%s)", k++ ? "; " : "",
		    node ? "NIC " : "", node ? nic_name(d, g->a, g->nic) : "", node ? " " : "",
		    d->node_names[g->b], nic_name(d, g->b, g->nic), g->round, why_of(d, g->a, g->b, g->nic));
	}
	if (d->nodes > 2)
		put(buf, len, &n, "; each of those peers passed with another node%s",
		    f->subject == EFAB_SCAN_SUBJ_NIC || d->nics == 1 ? "" : " (or failed as a common end too)");
	int passed = tried - fails, before = 0;
	for (size_t e = 0; e < f->nev; e++)
		before += !f->ev[e].failed && f->ev[e].round < first;
	if (!passed)
		return;
	if (passed > 3) {
		put(buf, len, &n, "; its %d other pairs passed (%d before the failures began, %d after)",
		    passed, before, passed - before);
		return;
	}
	put(buf, len, &n, "; passed: ");
	k = 0;
	for (size_t e = 0; e < f->nev; e++) {
		const efab_scan_evidence_t *g = &f->ev[e];
		if (g->failed)
			continue;
		put(buf, len, &n, "%s%s%s%swith %s NIC %s in round %d (%s)", k++ ? "; " : "",
		    node ? "NIC " : "", node ? nic_name(d, g->a, g->nic) : "", node ? " " : "",
		    d->node_names[g->b], nic_name(d, g->b, g->nic), g->round,
		    g->round < first ? "before the failures" : "after the failures began");
	}
}

/* The failures' findings (efab_scan.h, 1.): common ends, then the pairs no
 * common end explains. end[u] marks the common ends. */
static void failure_flags(const efab_scan_data_t *d, flag_list_t *l, unsigned char *end)
{
	int units = d->nodes * d->nics;
	if (!d->failed || units <= 0)
		return;
	/* evidence from more than one peer: at least 2 failed pairs whose
	 * other end passed with another node */
	for (int u = 0; u < units; u++) {
		int a = u / d->nics, i = u % d->nics, strong = 0;
		for (int b = 0; b < d->nodes; b++)
			strong += b != a && cell_failed(d, a, b, i) && passed_elsewhere(d, b, i, a);
		end[u] = d->nodes > 2 && strong >= 2;
	}
	/* and no failed peer left unexplained: it passed elsewhere or is a
	 * common end itself (two dead nodes failed with each other too) */
	for (int changed = 1; changed;) {
		changed = 0;
		for (int u = 0; u < units; u++) {
			int a = u / d->nics, i = u % d->nics;
			for (int b = 0; end[u] && b < d->nodes; b++)
				if (b != a && cell_failed(d, a, b, i) && !passed_elsewhere(d, b, i, a) &&
				    !end[b * d->nics + i])
					end[u] = 0, changed = 1;
		}
	}
	for (int a = 0; a < d->nodes && !l->oom; a++) {
		int count = 0;
		for (int i = 0; i < d->nics; i++)
			count += end[a * d->nics + i];
		if (!count)
			continue;
		int as_node = count * 2 > d->nics;
		for (int i = 0; i < (as_node ? 1 : d->nics) && !l->oom; i++) {
			if (!as_node && !end[a * d->nics + i])
				continue;
			efab_scan_flag_t *f = flag_new(l, as_node ? EFAB_SCAN_SUBJ_NODE : EFAB_SCAN_SUBJ_NIC,
						       EFAB_SCAN_KIND_FAILED, a, as_node ? -1 : i, -1,
						       EFAB_SCAN_UNREACHABLE);
			if (!f)
				return;
			int first = 0, fails = 0, tried = 0;
			for (int j = as_node ? 0 : i; j < (as_node ? d->nics : i + 1); j++)
				if (end[a * d->nics + j])
					unit_failure_ev(d, l, f, a, j, &first, &fails, &tried);
			f->first_round = first;
			f->peers = tried;
			failure_text(d, f, first, fails, tried, count);
		}
	}
	/* failed pairs that no common end explains, once each (lower node) */
	for (int a = 0; a < d->nodes; a++)
		for (int b = a + 1; b < d->nodes; b++)
			for (int i = 0; i < d->nics && !l->oom; i++) {
				if (!cell_failed(d, a, b, i) || end[a * d->nics + i] || end[b * d->nics + i])
					continue;
				efab_scan_flag_t *f = flag_new(l, EFAB_SCAN_SUBJ_PAIR, EFAB_SCAN_KIND_FAILED, a,
							       i, b, EFAB_SCAN_PAIR_FAILED);
				if (!f)
					return;
				ev_add(d, l, f, a, b, i, 1, -1, NAN, 1);
				f->first_round = round1(d, a, b);
				f->peers = 1;
				int ea = passed_elsewhere(d, a, i, b), eb = passed_elsewhere(d, b, i, a);
				snprintf(f->evidence, sizeof(f->evidence), "the pair failed in round %d (%s); %s",
					 f->first_round, why_of(d, a, b, i),
					 d->nodes == 2 ? "2 nodes: nothing tells its ends apart"
					 : ea && eb ? "both ends passed with other nodes: no common end"
					 : ea || eb ? "one end passed with other nodes, the other failed with fewer than 2 peers that passed elsewhere: no common end"
						    : "neither end passed with another node: no end can be told");
			}
}

static const char *metric_verb(int m)
{
	return m == EFAB_SCAN_SEND ? "sends" : m == EFAB_SCAN_RECV ? "receives" : "latency";
}

/* A flagged unit's finding: its figure, the peers it rests on. ref: what it
 * was judged against -- the cluster median, or (vs_index) the median of the
 * same NIC index on the other nodes, where that index is a NIC-index effect;
 * cluster: the cluster median then. */
static void unit_flag(const efab_scan_data_t *d, const efab_scan_limits_t *lim,
		      const unsigned char *flagged, flag_list_t *l, int m, int a, int i,
		      double value, double ref, double noise, int vs_index, double cluster,
		      double *vals, int *peers)
{
	efab_scan_flag_t *f = flag_new(l, EFAB_SCAN_SUBJ_NIC, kind_of_metric(m), a, i, -1, m);
	if (!f)
		return;
	int k = peer_figures(d, flagged, m, a, i, vals, peers);
	f->value = value;
	f->ref = ref;
	f->ratio = ratio_of(m, value, ref);
	f->peers = k;
	f->vs_index = vs_index;
	size_t n = 0, len = sizeof(f->evidence);
	put(f->evidence, len, &n, "%s %.4g %s, median over its %d peer%s (", efab_scan_metric_name(m),
	    value, unit_of(m), k, k == 1 ? "" : "s");
	for (int j = 0; j < k; j++) {
		int off = violates(lim, m, vals[j], ref, noise);
		if (m == EFAB_SCAN_RECV)
			ev_add(d, l, f, peers[j], a, i, 0, EFAB_SCAN_SEND, vals[j], off);
		else
			ev_add(d, l, f, a, peers[j], i, 0, m, vals[j], off);
		put(f->evidence, len, &n, "%s%s %.4g", j ? ", " : "", d->node_names[peers[j]], vals[j]);
	}
	if (vs_index)
		put(f->evidence, len, &n, ") = %.2fx the median of NIC index %d on the other nodes %.4g %s%s "
					  "(index %d is itself a NIC-index effect; this NIC is %.2fx the "
					  "cluster median %.4g %s)",
		    shown_ratio(m, f->ratio), i, ref, unit_of(m),
		    m == EFAB_SCAN_LAT ? " (higher is worse)" : "", i,
		    shown_ratio(m, ratio_of(m, value, cluster)), cluster, unit_of(m));
	else
		put(f->evidence, len, &n, ") = %.2fx the cluster median %.4g %s%s",
		    shown_ratio(m, f->ratio), ref, unit_of(m), m == EFAB_SCAN_LAT ? " (higher is worse)" : "");
	if (k < d->nodes - 1)
		put(f->evidence, len, &n, "; %d peer%s left out (failed pairs, or ends flagged for the "
					  "opposite figure)", d->nodes - 1 - k, d->nodes - 1 - k == 1 ? "" : "s");
}

/* Unit (a, i)'s figure m judged against ref: the median over its peers
 * (*val) beyond the limits (the ratio, and further than EFAB_SCAN_SIGMAS x
 * its noise *noise, or an absolute limit), so is the pair figure of more
 * than one of those peers, and -- where the passes' best figures are known
 * -- so is the median of its best passes' figures: a fault is slow in every
 * pass, a core that other work took now and then is not (the median over 3
 * passes follows a slowdown in 2 of them). */
static int unit_off(const efab_scan_data_t *d, const efab_scan_limits_t *lim,
		    const unsigned char *flagged, int m, int a, int i, double ref, double *vals,
		    double *tmp, double *cache, double *val, double *noise)
{
	int k = peer_figures(d, flagged, m, a, i, vals, NULL);
	*val = k ? efab_scan_median(vals, (size_t)k) : NAN;
	*noise = unit_noise_c(d, flagged, m, a, k ? k : d->nodes - 1, tmp, cache);
	if (!violates(lim, m, *val, ref, *noise))
		return 0;
	int off = 0;
	for (int j = 0; j < k; j++)
		off += violates(lim, m, vals[j], ref, *noise);
	/* too few peers left once flagged ends are left out (an absolute limit
	 * every unit misses): its pairs with those ends count as agreeing when
	 * they too are beyond it */
	for (int b = 0; k < 2 && off < 2 && b < d->nodes; b++) {
		double pv = pair_value(d, m, a, b, i);
		off += b != a && excluded_peer(flagged, d->nics, m, b, i) && violates(lim, m, pv, ref, *noise);
	}
	if (off < 2)
		return 0; /* one outlier pair: the pairs' step names it */
	const double *best = m == EFAB_SCAN_LAT ? d->lat_best : d->bw_best;
	if (!best)
		return 1;
	efab_scan_data_t bd = *d;
	bd.bw = d->bw_best ? d->bw_best : d->bw;
	bd.lat = d->lat_best ? d->lat_best : d->lat;
	int kb = peer_figures(&bd, flagged, m, a, i, vals, NULL);
	return kb && violates(lim, m, efab_scan_median(vals, (size_t)kb), ref, *noise);
}

/* NIC-index effects (docs/scan.md, "Verdict rules"): index i is one for
 * metric m when, with 3 or more nodes, more than half of the nodes' NIC i are
 * beyond the limits against the cluster median (unit_off): the same NIC
 * slow on most nodes is where the rank sits against its NIC (a cross-socket
 * DMA under Slurm's default distribution) or the NIC's PCIe path, not N
 * slow NICs. Marks idx_eff[i * F + m] (bandwidth: send and receive together,
 * within an index they are the same pair figures), sets iref[(a * nics + i)
 * * F + m] to the median of the other nodes' NIC i (what each of them is
 * judged against from here) and pref[i * F + m] to the index's median (the
 * pairs' reference), and adds one finding per index and kind. */
static void index_flags(const efab_scan_data_t *d, const efab_scan_limits_t *lim,
			const efab_scan_verdict_t *out, unsigned char *idx_eff, double *iref,
			double *pref, flag_list_t *l, double *vals, double *tmp)
{
	const int F = EFAB_SCAN_NMETRIC;
	int units = d->nodes * d->nics;
	unsigned char *flagged = calloc((size_t)units * F, 1); /* none yet */
	double *col = malloc(((size_t)d->nodes + 1) * sizeof(double));
	double *cache = malloc(((size_t)d->nodes + 1) * F * sizeof(double));
	if (!flagged || !col || !cache) {
		l->oom = 1;
		goto out;
	}
	for (int k = 0; k < d->nodes * F; k++)
		cache[k] = NAN;
	for (int u = 0; u < units; u++)
		for (int m = 0; m < F; m++)
			iref[u * F + m] = out->ref[m];
	for (int i = 0; i < d->nics; i++)
		for (int m = 0; m < F; m++)
			pref[i * F + m] = out->ref[m];
	/* one NIC a node: its index is the cluster (more than half of the units
	 * below 0.8 x their own median cannot be) */
	if (d->nodes < 3 || d->nics < 2)
		goto out;
	/* the relative rule only: an absolute limit (--min-bw, --max-lat) that
	 * an index misses everywhere names its NICs, as the user asked */
	efab_scan_limits_t rel = {lim->rel, 0, 0};
	for (int i = 0; i < d->nics; i++) {
		int count[EFAB_SCAN_NMETRIC] = {0};
		for (int m = 0; m < F; m++)
			for (int a = 0; a < d->nodes; a++) {
				double val, noise;
				count[m] += unit_off(d, &rel, flagged, m, a, i, out->ref[m], vals, tmp, cache,
						     &val, &noise);
			}
		int bw = count[EFAB_SCAN_SEND] * 2 > d->nodes || count[EFAB_SCAN_RECV] * 2 > d->nodes;
		idx_eff[i * F + EFAB_SCAN_SEND] = idx_eff[i * F + EFAB_SCAN_RECV] = (unsigned char)bw;
		idx_eff[i * F + EFAB_SCAN_LAT] = count[EFAB_SCAN_LAT] * 2 > d->nodes;
		for (int m = 0; m < F; m++) {
			if (!idx_eff[i * F + m])
				continue;
			for (int a = 0; a < d->nodes; a++)
				col[a] = out->unit[(a * d->nics + i) * F + m];
			pref[i * F + m] = efab_scan_median(col, (size_t)d->nodes);
			for (int a = 0; a < d->nodes; a++) { /* leave-one-out: the others' */
				double own = col[a];
				col[a] = NAN;
				iref[(a * d->nics + i) * F + m] = efab_scan_median(col, (size_t)d->nodes);
				col[a] = own;
			}
		}
		/* one finding per kind: bandwidth (send, with receive in its text), latency */
		for (int m = 0; m < F && !l->oom; m++) {
			if (!idx_eff[i * F + m] || m == EFAB_SCAN_RECV)
				continue;
			efab_scan_flag_t *f = flag_new(l, EFAB_SCAN_SUBJ_INDEX, kind_of_metric(m), 0, i, -1, m);
			if (!f)
				break;
			int shown = 0;
			f->value = pref[i * F + m];
			f->ref = out->ref[m];
			f->ratio = ratio_of(m, f->value, f->ref);
			size_t n = 0, len = sizeof(f->evidence);
			put(f->evidence, len, &n, "%s %.4g %s, the median of NIC %d over the %d nodes (",
			    efab_scan_metric_name(m), f->value, unit_of(m), i, d->nodes);
			for (int a = 0; a < d->nodes; a++) {
				double v = out->unit[(a * d->nics + i) * F + m];
				if (shown < 8 || a == d->nodes - 1)
					put(f->evidence, len, &n, "%s%s %s %.4g", shown ? ", " : "",
					    d->node_names[a], nic_name(d, a, i), v);
				else if (shown == 8)
					put(f->evidence, len, &n, ", ...");
				shown++;
				/* the evidence: every pair figure of the index, once */
				for (int b = 0; b < d->nodes; b++) {
					if (b == a || (m == EFAB_SCAN_LAT && b < a))
						continue;
					double pv = pair_value(d, m, a, b, i);
					if (isfinite(pv))
						ev_add(d, l, f, a, b, i, 0, m, pv,
						       violates(lim, m, pv, out->ref[m], NAN));
				}
			}
			put(f->evidence, len, &n, ") = %.2fx the cluster median %.4g %s%s", shown_ratio(m, f->ratio),
			    f->ref, unit_of(m), m == EFAB_SCAN_LAT ? " (higher is worse)" : "");
			if (m == EFAB_SCAN_SEND)
				put(f->evidence, len, &n, ", receive %.4g MB/s = %.2fx (within one index the "
							  "same pairs: sending and receiving are not told apart)",
				    pref[i * F + EFAB_SCAN_RECV],
				    ratio_of(EFAB_SCAN_RECV, pref[i * F + EFAB_SCAN_RECV], out->ref[EFAB_SCAN_RECV]));
			int c = m == EFAB_SCAN_LAT ? count[m]
				: count[EFAB_SCAN_SEND] > count[EFAB_SCAN_RECV] ? count[EFAB_SCAN_SEND]
										 : count[EFAB_SCAN_RECV];
			f->peers = c;
			put(f->evidence, len, &n, "; NIC %d is beyond the limits on %d of the %d nodes%s: a "
						  "NIC-index effect (where a rank sits against its NIC, e.g. a "
						  "cross-socket DMA, or the NIC's PCIe path), not %d slow NICs; each "
						  "node's NIC %d is judged against NIC %d of the other nodes, and "
						  "only one off against those is named",
			    i, c, d->nodes, c == d->nodes ? " (every node)" : "", c, i, i);
		}
	}
out:
	free(flagged);
	free(col);
	free(cache);
}

static int cmp_flag(const void *a, const void *b)
{
	const efab_scan_flag_t *x = a, *y = b;
	if (x->subject != y->subject)
		return x->subject < y->subject ? -1 : 1;
	double rx = isfinite(x->ratio) ? x->ratio : 0, ry = isfinite(y->ratio) ? y->ratio : 0;
	return rx < ry ? -1 : rx > ry;
}

/* A node with more than half of its NICs flagged for m is one finding, the
 * NICs' findings folded into it (flags [from, l->n)). */
static void fold_nodes(const efab_scan_data_t *d, flag_list_t *l, size_t from)
{
	size_t end = l->n;
	for (int a = 0; a < d->nodes && !l->oom; a++)
		for (int m = 0; m < EFAB_SCAN_NMETRIC && !l->oom; m++) {
			int count = 0;
			for (size_t f = from; f < end; f++)
				count += l->f[f].subject == EFAB_SCAN_SUBJ_NIC && l->f[f].node == a &&
					 l->f[f].metric == m;
			if (count * 2 <= d->nics)
				continue;
			efab_scan_flag_t *nf = flag_new(l, EFAB_SCAN_SUBJ_NODE, kind_of_metric(m), a, -1, -1, m);
			if (!nf)
				return;
			double vals[1024];
			int nv = 0, most = 0;
			size_t n = 0, len = sizeof(nf->evidence);
			put(nf->evidence, len, &n, "%d of %d NICs: ", count, d->nics);
			for (size_t f = from; f < end; f++) {
				efab_scan_flag_t *g = &l->f[f];
				if (g->subject != EFAB_SCAN_SUBJ_NIC || g->node != a || g->metric != m)
					continue;
				if (nv < (int)EFAB_ARRAY_SIZE(vals))
					vals[nv++] = g->value;
				most = g->peers > most ? g->peers : most;
				put(nf->evidence, len, &n, "%s%s %.4g %s over %d peer%s", nv > 1 ? ", " : "",
				    nic_name(d, a, g->nic), g->value, unit_of(m), g->peers, g->peers == 1 ? "" : "s");
				for (size_t e = 0; e < g->nev; e++)
					ev_add(d, l, nf, g->ev[e].a, g->ev[e].b, g->ev[e].nic, 0, g->ev[e].metric,
					       g->ev[e].value, g->ev[e].off);
				g->subject = -1; /* folded into the node's finding */
			}
			nf->value = efab_scan_median(vals, (size_t)nv);
			nf->ref = l->f[from].ref;
			for (size_t f = from; f < end; f++)
				if (l->f[f].metric == m)
					nf->ref = l->f[f].ref;
			nf->ratio = ratio_of(m, nf->value, nf->ref);
			nf->peers = most;
			put(nf->evidence, len, &n, "; %s median %.4g %s = %.2fx the cluster median %.4g %s",
			    efab_scan_metric_name(m), nf->value, unit_of(m), shown_ratio(m, nf->ratio),
			    nf->ref, unit_of(m));
		}
	size_t w = from;
	for (size_t f = from; f < l->n; f++) {
		if (l->f[f].subject < 0) {
			free(l->f[f].ev);
			continue;
		}
		l->f[w++] = l->f[f];
	}
	l->n = w;
	if (l->n > from) /* (an empty list has no array: qsort's base must not be NULL) */
		qsort(l->f + from, l->n - from, sizeof(*l->f), cmp_flag);
}

/* Median of unit (a, i)'s figure m over its peers other than b and the
 * flagged ends; *k how many. */
static double others_median(const efab_scan_data_t *d, const unsigned char *flagged, int m, int a,
			    int i, int b, double *tmp, int *k)
{
	int n = 0;
	for (int x = 0; x < d->nodes; x++) {
		if (x == a || x == b || excluded_peer(flagged, d->nics, m, x, i))
			continue;
		double v = pair_value(d, m, a, x, i);
		if (isfinite(v))
			tmp[n++] = v;
	}
	*k = n;
	return n ? efab_scan_median(tmp, (size_t)n) : NAN;
}

/* "nodeA's to its 2 other peers: median 7.1 us" and the same for b; or that
 * nothing tells the ends apart. */
static void pair_context(const efab_scan_data_t *d, const unsigned char *flagged, int ma, int mb,
			 int a, int b, int i, double *tmp, char *buf, size_t len, size_t *n)
{
	int ka, kb;
	double va = others_median(d, flagged, ma, a, i, b, tmp, &ka);
	double vb = others_median(d, flagged, mb, b, i, a, tmp, &kb);
	if (!ka && !kb) {
		put(buf, len, n, "; %s", d->nodes == 2 ? "2 nodes: nothing tells its ends apart"
						       : "neither end has other peers measured: no end can be told");
		return;
	}
	put(buf, len, n, "; with their other peers %s %s", d->node_names[a], metric_verb(ma));
	if (ka)
		put(buf, len, n, " %.4g %s (median over %d)", va, unit_of(ma), ka);
	else
		put(buf, len, n, " nothing measured");
	put(buf, len, n, ", %s %s", d->node_names[b], metric_verb(mb));
	if (kb)
		put(buf, len, n, " %.4g %s (median over %d)", vb, unit_of(mb), kb);
	else
		put(buf, len, n, " nothing measured");
	put(buf, len, n, ": one pair, not an end");
}

/* What a figure of NIC index i, metric m, is compared with: "the cluster
 * median", or where index i is a NIC-index effect for m (idx_eff) "the median
 * of NIC index i". */
static const char *ref_what(const efab_scan_data_t *d, int i, int m, const unsigned char *idx_eff,
			    char *buf, size_t len)
{
	if (!idx_eff || !idx_eff[i * EFAB_SCAN_NMETRIC + m])
		return "the cluster median";
	snprintf(buf, len, "the median of NIC index %d (a NIC-index effect)", i);
	(void)d;
	return buf;
}

/* Latency pair (a, b) of NIC index i beyond the pair limits lim (the best
 * pass's figure too), its ends not flagged: 1, 0; -1 when not measured. */
static int lat_pair_off(const efab_scan_data_t *d, const efab_scan_limits_t *lim, const unsigned char *flagged,
			const double *ref, int a, int b, int i, double *tmp, double *pn)
{
	const int F = EFAB_SCAN_NMETRIC; /* ref: per NIC index, [i * F + m] (pair_flags) */
	double v = d->lat[at(d, a, b, i)];
	double best = d->lat_best ? d->lat_best[at(d, a, b, i)] : v;
	if (!isfinite(v) || cell_failed(d, a, b, i) || flagged[(a * d->nics + i) * F + EFAB_SCAN_LAT] ||
	    flagged[(b * d->nics + i) * F + EFAB_SCAN_LAT])
		return -1;
	double noise = pair_noise(d, flagged, EFAB_SCAN_LAT, a, b, tmp, pn);
	return violates(lim, EFAB_SCAN_LAT, v, ref[i * F + EFAB_SCAN_LAT], noise) &&
	       violates(lim, EFAB_SCAN_LAT, best, ref[i * F + EFAB_SCAN_LAT], noise);
}

/* Every measured latency pair of round r and NIC index i off, at least 2
 * of them: the round is off, not a pair (efab_scan.h, 2., last). */
static int round_all_off(const efab_scan_data_t *d, const efab_scan_limits_t *lim, const unsigned char *flagged,
			 const double *ref, int r, int i, double *tmp, double *pn)
{
	int measured = 0;
	for (int x = 0; x < d->nodes; x++) {
		int y = efab_scan_partner(d->nodes, r, x);
		if (y <= x)
			continue;
		int off = lat_pair_off(d, lim, flagged, ref, x, y, i, tmp, pn);
		if (off == 0)
			return 0;
		measured += off > 0;
	}
	return measured >= 2;
}

/* Pair figures beyond the limits that no flagged end explains (efab_scan.h,
 * 2., last): the pair is the subject; a round whose every pair is off goes
 * into round_note instead. */
static void pair_flags(const efab_scan_data_t *d, const efab_scan_limits_t *unit_lim,
		       const unsigned char *flagged, const double *ref, const unsigned char *idx_eff,
		       flag_list_t *l, double *tmp, char *round_note, size_t note_len, unsigned char *said)
{
	/* ref: per NIC index [i * F + m], the cluster median, or the index's own
	 * where it is a NIC-index effect (idx_eff): one pair of such an index is
	 * off when it is off against its index, not against the cluster */
	char what[96];
	size_t nn = 0;
	double pn[EFAB_SCAN_NMETRIC]; /* flagged stays as it is from here: one spread per metric */
	for (int m = 0; m < EFAB_SCAN_NMETRIC; m++)
		pn[m] = NAN;
	round_note[0] = 0;
	const int F = EFAB_SCAN_NMETRIC;
	/* one figure that no other pair confirms must be further off: rel
	 * squared (0.64 at the default 0.8); the absolute limits as they are */
	efab_scan_limits_t pl = *unit_lim;
	const efab_scan_limits_t *lim = &pl;
	pl.rel = unit_lim->rel * unit_lim->rel;
	for (int a = 0; a < d->nodes; a++)
		for (int b = a + 1; b < d->nodes; b++)
			for (int i = 0; i < d->nics && !l->oom; i++) {
				int ua = a * d->nics + i, ub = b * d->nics + i;
				/* latency, symmetric; the best pass's must be off too */
				double v = d->lat[at(d, a, b, i)];
				double best = d->lat_best ? d->lat_best[at(d, a, b, i)] : v;
				if (isfinite(v) && !cell_failed(d, a, b, i) && !flagged[ua * F + EFAB_SCAN_LAT] &&
				    !flagged[ub * F + EFAB_SCAN_LAT]) {
					double r = ratio_of(EFAB_SCAN_LAT, v, ref[i * F + EFAB_SCAN_LAT]);
					double noise = pair_noise(d, flagged, EFAB_SCAN_LAT, a, b, tmp, pn);
					int off = violates(lim, EFAB_SCAN_LAT, v, ref[i * F + EFAB_SCAN_LAT], noise) &&
						  violates(lim, EFAB_SCAN_LAT, best, ref[i * F + EFAB_SCAN_LAT], noise);
					int rd = efab_scan_round_of(d->nodes, a, b);
					if (off && round_all_off(d, lim, flagged, ref, rd, i, tmp, pn)) {
						if (!said[rd * d->nics + i]++) /* once per round and NIC index */
							put(round_note, note_len, &nn,
							    "%sround %d%s%s: every pair's latency beyond the limits "
							    "(e.g. %s-%s %.4g us, %.2fx %s): the "
							    "machine or the fabric at that time, no node, NIC or "
							    "pair named",
							    nn ? "; " : "", rd + 1, d->nics > 1 ? " NIC " : "",
							    d->nics > 1 ? nic_name(d, a, i) : "", d->node_names[a],
							    d->node_names[b], v, shown_ratio(EFAB_SCAN_LAT, r),
							    ref_what(d, i, EFAB_SCAN_LAT, idx_eff, what, sizeof(what)));
						off = 0;
					}
					if (off) {
						efab_scan_flag_t *f = flag_new(l, EFAB_SCAN_SUBJ_PAIR,
									       EFAB_SCAN_KIND_SLOW_LAT, a, i, b,
									       EFAB_SCAN_LAT);
						if (!f)
							return;
						f->value = v;
						f->ref = ref[i * F + EFAB_SCAN_LAT];
						f->ratio = r;
						f->peers = 1;
						ev_add(d, l, f, a, b, i, 0, EFAB_SCAN_LAT, v, 1);
						size_t n = 0;
						put(f->evidence, sizeof(f->evidence), &n,
						    "latency %.4g us = %.2fx %s %.4g us (higher is "
						    "worse) in round %d", v, shown_ratio(EFAB_SCAN_LAT, r),
						    ref_what(d, i, EFAB_SCAN_LAT, idx_eff, what, sizeof(what)), f->ref,
						    round1(d, a, b));
						pair_context(d, flagged, EFAB_SCAN_LAT, EFAB_SCAN_LAT, a, b, i, tmp,
							     f->evidence, sizeof(f->evidence), &n);
					}
				}
				/* bandwidth, each direction */
				int off[2] = {0, 0};
				double bv[2], br[2];
				for (int dir = 0; dir < 2; dir++) {
					int x = dir ? b : a, y = dir ? a : b;
					bv[dir] = d->bw[at(d, x, y, i)];
					br[dir] = ratio_of(EFAB_SCAN_SEND, bv[dir], ref[i * F + EFAB_SCAN_SEND]);
					if (!isfinite(bv[dir]) || cell_failed(d, a, b, i) ||
					    flagged[(x * d->nics + i) * F + EFAB_SCAN_SEND] ||
					    flagged[(y * d->nics + i) * F + EFAB_SCAN_RECV])
						continue;
					double noise = pair_noise(d, flagged, EFAB_SCAN_SEND, x, y, tmp, pn);
					double best = d->bw_best ? d->bw_best[at(d, x, y, i)] : bv[dir];
					off[dir] = violates(lim, EFAB_SCAN_SEND, bv[dir], ref[i * F + EFAB_SCAN_SEND], noise) &&
						   violates(lim, EFAB_SCAN_SEND, best, ref[i * F + EFAB_SCAN_SEND], noise);
				}
				if (!off[0] && !off[1])
					continue;
				int w = off[0] ? 0 : 1, x = w ? b : a, y = w ? a : b;
				efab_scan_flag_t *f = flag_new(l, EFAB_SCAN_SUBJ_PAIR, EFAB_SCAN_KIND_SLOW_BW, x, i,
							       y, EFAB_SCAN_SEND);
				if (!f)
					return;
				f->both = off[0] && off[1];
				f->value = f->both ? fmin(bv[0], bv[1]) : bv[w];
				f->ref = ref[i * F + EFAB_SCAN_SEND];
				f->ratio = ratio_of(EFAB_SCAN_SEND, f->value, f->ref);
				f->peers = 1;
				ev_add(d, l, f, x, y, i, 0, EFAB_SCAN_SEND, bv[w], 1);
				ev_add(d, l, f, y, x, i, 0, EFAB_SCAN_SEND, bv[!w], off[!w]);
				size_t n = 0, len = sizeof(f->evidence);
				if (f->both)
					put(f->evidence, len, &n,
					    "both ways in round %d: %s -> %s %.4g MB/s (%.2fx), %s -> %s %.4g MB/s "
					    "(%.2fx) of %s %.4g MB/s", round1(d, a, b),
					    d->node_names[a], d->node_names[b], bv[0], br[0], d->node_names[b],
					    d->node_names[a], bv[1], br[1],
					    ref_what(d, i, EFAB_SCAN_SEND, idx_eff, what, sizeof(what)), f->ref);
				else
					put(f->evidence, len, &n,
					    "%s writes to %s at %.4g MB/s = %.2fx %s %.4g MB/s in "
					    "round %d (the other way %.4g MB/s)", d->node_names[x],
					    d->node_names[y], bv[w], br[w],
					    ref_what(d, i, EFAB_SCAN_SEND, idx_eff, what, sizeof(what)), f->ref,
					    round1(d, a, b), bv[!w]);
				pair_context(d, flagged, EFAB_SCAN_SEND, EFAB_SCAN_RECV, x, y, i, tmp,
					     f->evidence, len, &n);
			}
}

/* The NIC-counter findings (efab_scan.h, 3.). */
static void nic_counter_flags(const efab_scan_data_t *d, const unsigned char *flagged,
			      flag_list_t *l)
{
	int units = d->nodes * d->nics;
	unsigned char *common = calloc((size_t)units, 1);
	if (!common) {
		l->oom = 1;
		return;
	}
	for (int u = 0; u < units; u++) {
		int a = u / d->nics, i = u % d->nics, met = 0, bad = 0;
		for (int b = 0; b < d->nodes; b++) {
			if (b == a || !(cell_measured(d, a, b, i) || cell_failed(d, a, b, i) ||
					trouble(d, a, b, i) || trouble(d, b, a, i)))
				continue;
			met++;
			bad += trouble(d, a, b, i) || trouble(d, b, a, i);
		}
		common[u] = met >= 2 && bad == met;
	}
	for (int u = 0; u < units && !l->oom; u++) {
		int a = u / d->nics, i = u % d->nics, figs = 0;
		for (int m = 0; m < EFAB_SCAN_NMETRIC; m++)
			figs |= flagged[u * EFAB_SCAN_NMETRIC + m];
		if (!common[u])
			continue;
		efab_scan_flag_t *f = flag_new(l, EFAB_SCAN_SUBJ_NIC, EFAB_SCAN_KIND_COUNTERS, a, i, -1,
					       EFAB_SCAN_NIC_COUNTERS);
		if (!f)
			break;
		size_t n = 0, len = sizeof(f->evidence);
		put(f->evidence, len, &n, "NIC counters rose in its round with every peer%s:",
		    figs ? " (its figures are flagged too)" : " (its bandwidth and latency passed)");
		for (int b = 0; b < d->nodes; b++) {
			const char *here = b == a ? NULL : trouble(d, a, b, i);
			const char *there = b == a ? NULL : trouble(d, b, a, i);
			if (!here && !there)
				continue;
			f->peers++;
			ev_add(d, l, f, a, b, i, cell_failed(d, a, b, i), EFAB_SCAN_NIC_COUNTERS, NAN, 1);
			put(f->evidence, len, &n, " with %s: %s%s%s%s%s;", d->node_names[b],
			    here ? "here " : "", here ? here : "", here && there ? ", " : "",
			    there ? "at the peer " : "", there ? there : "");
		}
	}
	/* troubled rounds that no common end explains: the pair, once */
	for (int a = 0; a < d->nodes; a++)
		for (int b = a + 1; b < d->nodes; b++)
			for (int i = 0; i < d->nics && !l->oom; i++) {
				const char *ta = trouble(d, a, b, i), *tb = trouble(d, b, a, i);
				if ((!ta && !tb) || common[a * d->nics + i] || common[b * d->nics + i])
					continue;
				efab_scan_flag_t *f = flag_new(l, EFAB_SCAN_SUBJ_PAIR, EFAB_SCAN_KIND_COUNTERS,
							       ta ? a : b, i, ta ? b : a,
							       EFAB_SCAN_NIC_COUNTERS);
				if (!f)
					break;
				f->peers = 1;
				ev_add(d, l, f, f->node, f->peer, i, cell_failed(d, a, b, i),
				       EFAB_SCAN_NIC_COUNTERS, NAN, 1);
				size_t n = 0, len = sizeof(f->evidence);
				put(f->evidence, len, &n, "NIC counters rose in their round (round %d) only:",
				    round1(d, a, b));
				if (ta)
					put(f->evidence, len, &n, " at %s NIC %s %s;", d->node_names[a],
					    nic_name(d, a, i), ta);
				if (tb)
					put(f->evidence, len, &n, " at %s NIC %s %s;", d->node_names[b],
					    nic_name(d, b, i), tb);
				put(f->evidence, len, &n, " neither end's rounds with other peers had trouble "
							  "in all: no common end");
			}
	free(common);
}

int efab_scan_verdict(const efab_scan_data_t *d, const efab_scan_limits_t *lim,
		      efab_scan_verdict_t *out)
{
	int units = d->nodes * d->nics;
	flag_list_t l = {0};
	memset(out, 0, sizeof(*out));
	out->unit = calloc((size_t)units * EFAB_SCAN_NMETRIC, sizeof(double));
	unsigned char *flagged = calloc((size_t)units * EFAB_SCAN_NMETRIC, 1);
	unsigned char *end = calloc((size_t)units + 1, 1);
	double *tmp = malloc((size_t)units * (size_t)d->nodes * sizeof(double) + 8);
	double *vals = malloc(((size_t)d->nodes + 1) * sizeof(double));
	int *peers = malloc(((size_t)d->nodes + 1) * sizeof(int));
	/* NIC-index effects: per index and metric; each unit's reference (the
	 * cluster's, or its index's on the other nodes); each index's for pairs */
	unsigned char *idx_eff = calloc((size_t)d->nics * EFAB_SCAN_NMETRIC + 1, 1);
	double *iref = malloc(((size_t)units + 1) * EFAB_SCAN_NMETRIC * sizeof(double));
	double *pref = malloc(((size_t)d->nics + 1) * EFAB_SCAN_NMETRIC * sizeof(double));
	double *ncache = malloc(((size_t)d->nodes + 1) * EFAB_SCAN_NMETRIC * sizeof(double));
	if (!out->unit || !flagged || !end || !tmp || !vals || !peers || !idx_eff || !iref || !pref ||
	    !ncache) {
		l.oom = 1;
		goto out;
	}
	/* 1. the failures come first: they are the worst news */
	failure_flags(d, &l, end);
	for (int m = 0; m < EFAB_SCAN_NMETRIC; m++) {
		for (int u = 0; u < units; u++)
			out->unit[u * EFAB_SCAN_NMETRIC + m] =
				unit_value(d, flagged, m, u / d->nics, u % d->nics, tmp);
		for (int u = 0; u < units; u++)
			tmp[u] = out->unit[u * EFAB_SCAN_NMETRIC + m];
		out->ref[m] = efab_scan_median(tmp, (size_t)units);
		out->spread[m] = unit_noise(d, flagged, m, -1, 1, tmp);
	}
	/* 2. figures. First the NIC-index effects: an index beyond the limits on
	 * most nodes is one finding, and its NICs are judged against the same
	 * index on the other nodes from then on (iref), its pairs against the
	 * index's median (pref). */
	size_t figures_from = l.n;
	index_flags(d, lim, out, idx_eff, iref, pref, &l, vals, tmp);
	if (l.oom)
		goto out;
	/* Then worst first: flag one unit, recompute its peers without it,
	 * repeat. A unit needs more than one peer's figure beyond the limits
	 * too (with 3 or more peers its median implies that), and its best
	 * passes' figures (unit_off). */
	for (;;) {
		int worst_u = -1, worst_m = 0;
		double worst_r = INFINITY, worst_noise = NAN;
		for (int k = 0; k < d->nodes * EFAB_SCAN_NMETRIC; k++)
			ncache[k] = NAN; /* a unit was flagged: every spread anew */
		for (int m = 0; m < EFAB_SCAN_NMETRIC; m++)
			for (int u = 0; u < units; u++) {
				int a = u / d->nics, i = u % d->nics;
				if (flagged[u * EFAB_SCAN_NMETRIC + m])
					continue;
				double r0 = iref[u * EFAB_SCAN_NMETRIC + m], val, noise;
				int off = unit_off(d, lim, flagged, m, a, i, r0, vals, tmp, ncache, &val, &noise);
				out->unit[u * EFAB_SCAN_NMETRIC + m] = val;
				if (!off)
					continue;
				double r = ratio_of(m, val, r0);
				double key = isfinite(r) ? r : 0;
				if (key < worst_r) {
					worst_r = key;
					worst_u = u;
					worst_m = m;
					worst_noise = noise;
				}
			}
		if (worst_u < 0)
			break;
		int wi = worst_u % d->nics;
		unit_flag(d, lim, flagged, &l, worst_m, worst_u / d->nics, wi,
			  out->unit[worst_u * EFAB_SCAN_NMETRIC + worst_m],
			  iref[worst_u * EFAB_SCAN_NMETRIC + worst_m], worst_noise,
			  idx_eff[wi * EFAB_SCAN_NMETRIC + worst_m], out->ref[worst_m], vals, peers);
		flagged[worst_u * EFAB_SCAN_NMETRIC + worst_m] = 1;
		if (l.oom)
			goto out;
	}
	fold_nodes(d, &l, figures_from);
	/* which rounds (x NIC index) round_note names already */
	int rounds = efab_scan_rounds(d->nodes);
	unsigned char *said = calloc((size_t)(rounds > 0 ? rounds : 1) * (size_t)d->nics, 1);
	if (said)
		pair_flags(d, lim, flagged, pref, idx_eff, &l, tmp, out->round_note,
			   sizeof(out->round_note), said);
	else
		l.oom = 1;
	free(said);
	/* 3. NIC counters */
	if (d->hw_trouble && !l.oom)
		nic_counter_flags(d, flagged, &l);
out:
	free(flagged);
	free(end);
	free(tmp);
	free(vals);
	free(peers);
	free(idx_eff);
	free(iref);
	free(pref);
	free(ncache);
	out->flags = l.f;
	out->nflags = l.n;
	if (l.oom) {
		efab_scan_verdict_free(out);
		return EFAB_ERR;
	}
	return EFAB_OK;
}

void efab_scan_verdict_free(efab_scan_verdict_t *v)
{
	for (size_t f = 0; v->flags && f < v->nflags; f++)
		free(v->flags[f].ev);
	free(v->unit);
	free(v->flags);
	memset(v, 0, sizeof(*v));
}

void efab_scan_flag_line(const efab_scan_data_t *d, const efab_scan_flag_t *f, char *buf,
			 size_t len)
{
	size_t n = 0;
	if (!len)
		return;
	buf[0] = 0;
	switch (f->subject) {
	case EFAB_SCAN_SUBJ_NODE: put(buf, len, &n, "node %s", d->node_names[f->node]); break;
	case EFAB_SCAN_SUBJ_NIC:
		put(buf, len, &n, "node %s NIC %s", d->node_names[f->node], nic_name(d, f->node, f->nic));
		break;
	case EFAB_SCAN_SUBJ_INDEX: put(buf, len, &n, "NIC index %d", f->nic); break;
	default:
		put(buf, len, &n, "pair %s NIC %s %s %s NIC %s", d->node_names[f->node],
		    nic_name(d, f->node, f->nic),
		    f->kind == EFAB_SCAN_KIND_SLOW_BW && !f->both ? "->" : "-", d->node_names[f->peer],
		    nic_name(d, f->peer, f->nic));
	}
	put(buf, len, &n, ": %s: %s", efab_scan_kind_name(f->kind), f->evidence);
}

static void json_str(FILE *fp, const char *s)
{
	fputc('"', fp);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(fp, "\\%c", c);
		else if (c < 0x20)
			fprintf(fp, "\\u%04x", c);
		else
			fputc(c, fp);
	}
	fputc('"', fp);
}

static void json_num(FILE *fp, double v)
{
	if (isfinite(v))
		fprintf(fp, "%.6g", v);
	else
		fputs("null", fp);
}

int efab_scan_verdict_json(FILE *fp, const efab_scan_data_t *d, const efab_scan_verdict_t *v)
{
	char line[sizeof(v->flags->evidence) + 512];
	fprintf(fp, "{\n  \"schema\": 1,\n  \"verdict\": \"%s\",\n  \"nodes\": %d,\n  \"nics\": %d,\n"
		    "  \"rounds\": %d,\n  \"cluster_median\": {\"send_MBps\": ",
		v->nflags ? "flagged" : "clean", d->nodes, d->nics, efab_scan_rounds(d->nodes));
	json_num(fp, v->ref[EFAB_SCAN_SEND]);
	fputs(", \"recv_MBps\": ", fp);
	json_num(fp, v->ref[EFAB_SCAN_RECV]);
	fputs(", \"lat_us\": ", fp);
	json_num(fp, v->ref[EFAB_SCAN_LAT]);
	fputs("},\n  \"round_note\": ", fp);
	if (v->round_note[0])
		json_str(fp, v->round_note);
	else
		fputs("null", fp);
	fputs(",\n  \"findings\": [", fp);
	for (size_t k = 0; k < v->nflags; k++) {
		const efab_scan_flag_t *f = &v->flags[k];
		int index = f->subject == EFAB_SCAN_SUBJ_INDEX;
		fprintf(fp, "%s\n    {\"subject\": \"%s\", \"node\": ", k ? "," : "",
			efab_scan_subject_name(f->subject));
		if (index)
			fputs("null", fp);
		else
			json_str(fp, d->node_names[f->node]);
		fputs(", \"nic\": ", fp);
		if (f->nic >= 0 && !index)
			json_str(fp, nic_name(d, f->node, f->nic));
		else
			fputs("null", fp);
		fputs(", \"nic_index\": ", fp);
		if (f->nic >= 0)
			fprintf(fp, "%d", f->nic);
		else
			fputs("null", fp);
		fputs(", \"peer_node\": ", fp);
		if (f->peer >= 0)
			json_str(fp, d->node_names[f->peer]);
		else
			fputs("null", fp);
		fputs(", \"peer_nic\": ", fp);
		if (f->peer >= 0)
			json_str(fp, nic_name(d, f->peer, f->nic));
		else
			fputs("null", fp);
		fprintf(fp, ",\n     \"kind\": \"%s\", \"metric\": ", efab_scan_kind_name(f->kind));
		if (f->metric < EFAB_SCAN_NMETRIC)
			json_str(fp, efab_scan_metric_name(f->metric));
		else
			fputs("null", fp);
		fprintf(fp, ", \"direction\": %s, \"value\": ",
			f->subject == EFAB_SCAN_SUBJ_PAIR && f->kind == EFAB_SCAN_KIND_SLOW_BW
				? f->both ? "\"both\"" : "\"node->peer\"" : "null");
		json_num(fp, f->value);
		fprintf(fp, ", \"unit\": %s, \"cluster_median\": ",
			f->metric < EFAB_SCAN_NMETRIC ? f->metric == EFAB_SCAN_LAT ? "\"us\"" : "\"MB/s\""
						       : "null");
		/* a NIC of a NIC-index effect was judged against its index (ratio);
		 * the cluster median stays the cluster's */
		json_num(fp, f->vs_index ? v->ref[f->metric] : f->ref);
		fprintf(fp, ", \"reference\": \"%s\", \"index_median\": ", f->vs_index ? "index" : "cluster");
		json_num(fp, f->vs_index ? f->ref : NAN);
		fputs(", \"ratio\": ", fp);
		json_num(fp, f->metric < EFAB_SCAN_NMETRIC ? shown_ratio(f->metric, f->ratio) : NAN);
		fprintf(fp, ", \"peers\": %d, \"first_failed_round\": ", f->peers);
		if (f->first_round)
			fprintf(fp, "%d", f->first_round);
		else
			fputs("null", fp);
		fputs(",\n     \"text\": ", fp);
		efab_scan_flag_line(d, f, line, sizeof(line));
		json_str(fp, line);
		fputs(",\n     \"evidence\": [", fp);
		for (size_t e = 0; e < f->nev; e++) {
			const efab_scan_evidence_t *g = &f->ev[e];
			fprintf(fp, "%s\n       {\"node_a\": ", e ? "," : "");
			json_str(fp, d->node_names[g->a]);
			fputs(", \"nic_a\": ", fp);
			json_str(fp, nic_name(d, g->a, g->nic));
			fputs(", \"node_b\": ", fp);
			json_str(fp, d->node_names[g->b]);
			fputs(", \"nic_b\": ", fp);
			json_str(fp, nic_name(d, g->b, g->nic));
			fprintf(fp, ", \"round\": %d, \"status\": \"%s\", \"metric\": ", g->round,
				g->failed ? "failed" : "ok");
			if (g->metric >= 0 && g->metric < EFAB_SCAN_NMETRIC)
				json_str(fp, g->metric == EFAB_SCAN_SEND ? "bandwidth a->b"
								: efab_scan_metric_name(g->metric));
			else if (g->metric == EFAB_SCAN_NIC_COUNTERS)
				json_str(fp, "NIC counters");
			else
				fputs("null", fp);
			fputs(", \"value\": ", fp);
			json_num(fp, g->value);
			fprintf(fp, ", \"beyond_limits\": %s", g->off ? "true" : "false");
			if (g->failed) {
				fputs(", \"error\": ", fp);
				json_str(fp, why_of(d, g->a, g->b, g->nic));
			}
			if (g->metric == EFAB_SCAN_NIC_COUNTERS) {
				fputs(", \"counters_a\": ", fp);
				json_str(fp, trouble(d, g->a, g->b, g->nic));
				fputs(", \"counters_b\": ", fp);
				json_str(fp, trouble(d, g->b, g->a, g->nic));
			}
			fputc('}', fp);
		}
		fputs(f->nev ? "\n     ]}" : "]}", fp);
	}
	fputs(v->nflags ? "\n  ]\n}\n" : "]\n}\n", fp);
	return ferror(fp) ? EFAB_ERR : EFAB_OK;
}
