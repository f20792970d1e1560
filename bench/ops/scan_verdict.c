/* The scan's verdict (efab_scan.h): which nodes, NICs, pairs and NIC indexes
 * a scan's figures flag, and why (the figures: scan_figures.c; the
 * schedule and names: scan_schedule.c; the report: scan_report.c). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "efab.h"
#include "efab_scan.h"
#include "scan_internal.h"

static int kind_of_metric(int m)
{
	return m == EFAB_SCAN_LAT ? EFAB_SCAN_KIND_SLOW_LAT : EFAB_SCAN_KIND_SLOW_BW;
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
	double ratio = scan_ratio_of(m, value, ref);
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
double scan_shown_ratio(int m, double ratio)
{
	return m == EFAB_SCAN_LAT && isfinite(ratio) && ratio > 0 ? 1 / ratio : ratio;
}

/* snprintf that appends at *n and never runs past len. */
void EFAB_PRINTF(4, 5) scan_put(char *buf, size_t len, size_t *n, const char *fmt, ...)
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
	return d->failed && (d->failed[scan_at(d, a, b, i)] || d->failed[scan_at(d, b, a, i)]);
}

static int cell_measured(const efab_scan_data_t *d, int a, int b, int i)
{
	return !cell_failed(d, a, b, i) &&
	       (isfinite(d->bw[scan_at(d, a, b, i)]) || isfinite(d->bw[scan_at(d, b, a, i)]) ||
		isfinite(d->lat[scan_at(d, a, b, i)]));
}

const char *scan_why_of(const efab_scan_data_t *d, int a, int b, int i)
{
	const char *w = d->why ? d->why[scan_at(d, a, b, i)] : NULL;
	if ((!w || !*w) && d->why)
		w = d->why[scan_at(d, b, a, i)];
	return w && *w ? w : "no detail";
}

const char *scan_trouble(const efab_scan_data_t *d, int a, int b, int i)
{
	const char *t = d->hw_trouble ? d->hw_trouble[scan_at(d, a, b, i)] : NULL;
	return t && *t ? t : NULL;
}

const char *scan_nic_name(const efab_scan_data_t *d, int a, int i)
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
		       failed ? NAN : d->lat[scan_at(d, a, b, i)], failed);
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
		scan_put(buf, len, &n, "all %d of its %spairs failed (no progress with any peer)", tried,
		    node ? "NIC " : "");
	else
		scan_put(buf, len, &n, "%d of its %d %spairs failed, each failure involves it", fails, tried,
		    node ? "NIC " : "");
	if (node)
		scan_put(buf, len, &n, " (%d of %d NICs)", nics_hit, d->nics);
	scan_put(buf, len, &n, "; the failures began in round %d: ", first);
	int k = 0;
	for (size_t e = 0; e < f->nev; e++) {
		const efab_scan_evidence_t *g = &f->ev[e];
		if (!g->failed)
			continue;
		scan_put(buf, len, &n, "%s%s%s%swith %s NIC %s in round %d (%s)", k++ ? "; " : "",
		    node ? "NIC " : "", node ? scan_nic_name(d, g->a, g->nic) : "", node ? " " : "",
		    d->node_names[g->b], scan_nic_name(d, g->b, g->nic), g->round, scan_why_of(d, g->a, g->b, g->nic));
	}
	if (d->nodes > 2)
		scan_put(buf, len, &n, "; each of those peers passed with another node%s",
		    f->subject == EFAB_SCAN_SUBJ_NIC || d->nics == 1 ? "" : " (or failed as a common end too)");
	int passed = tried - fails, before = 0;
	for (size_t e = 0; e < f->nev; e++)
		before += !f->ev[e].failed && f->ev[e].round < first;
	if (!passed)
		return;
	if (passed > 3) {
		scan_put(buf, len, &n, "; its %d other pairs passed (%d before the failures began, %d after)",
		    passed, before, passed - before);
		return;
	}
	scan_put(buf, len, &n, "; passed: ");
	k = 0;
	for (size_t e = 0; e < f->nev; e++) {
		const efab_scan_evidence_t *g = &f->ev[e];
		if (g->failed)
			continue;
		scan_put(buf, len, &n, "%s%s%s%swith %s NIC %s in round %d (%s)", k++ ? "; " : "",
		    node ? "NIC " : "", node ? scan_nic_name(d, g->a, g->nic) : "", node ? " " : "",
		    d->node_names[g->b], scan_nic_name(d, g->b, g->nic), g->round,
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
					 f->first_round, scan_why_of(d, a, b, i),
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
	int k = scan_peer_figures(d, flagged, m, a, i, vals, peers);
	f->value = value;
	f->ref = ref;
	f->ratio = scan_ratio_of(m, value, ref);
	f->peers = k;
	f->vs_index = vs_index;
	size_t n = 0, len = sizeof(f->evidence);
	scan_put(f->evidence, len, &n, "%s %.4g %s, median over its %d peer%s (", efab_scan_metric_name(m),
	    value, unit_of(m), k, k == 1 ? "" : "s");
	for (int j = 0; j < k; j++) {
		int off = violates(lim, m, vals[j], ref, noise);
		if (m == EFAB_SCAN_RECV)
			ev_add(d, l, f, peers[j], a, i, 0, EFAB_SCAN_SEND, vals[j], off);
		else
			ev_add(d, l, f, a, peers[j], i, 0, m, vals[j], off);
		scan_put(f->evidence, len, &n, "%s%s %.4g", j ? ", " : "", d->node_names[peers[j]], vals[j]);
	}
	if (vs_index)
		scan_put(f->evidence, len, &n, ") = %.2fx the median of NIC index %d on the other nodes %.4g %s%s "
					  "(index %d is itself a NIC-index effect; this NIC is %.2fx the "
					  "cluster median %.4g %s)",
		    scan_shown_ratio(m, f->ratio), i, ref, unit_of(m),
		    m == EFAB_SCAN_LAT ? " (higher is worse)" : "", i,
		    scan_shown_ratio(m, scan_ratio_of(m, value, cluster)), cluster, unit_of(m));
	else
		scan_put(f->evidence, len, &n, ") = %.2fx the cluster median %.4g %s%s",
		    scan_shown_ratio(m, f->ratio), ref, unit_of(m), m == EFAB_SCAN_LAT ? " (higher is worse)" : "");
	if (k < d->nodes - 1)
		scan_put(f->evidence, len, &n, "; %d peer%s left out (failed pairs, or ends flagged for the "
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
	int k = scan_peer_figures(d, flagged, m, a, i, vals, NULL);
	*val = k ? efab_scan_median(vals, (size_t)k) : NAN;
	*noise = scan_unit_noise_c(d, flagged, m, a, k ? k : d->nodes - 1, tmp, cache);
	if (!violates(lim, m, *val, ref, *noise))
		return 0;
	int off = 0;
	for (int j = 0; j < k; j++)
		off += violates(lim, m, vals[j], ref, *noise);
	/* too few peers left once flagged ends are left out (an absolute limit
	 * every unit misses): its pairs with those ends count as agreeing when
	 * they too are beyond it */
	for (int b = 0; k < 2 && off < 2 && b < d->nodes; b++) {
		double pv = scan_pair_value(d, m, a, b, i);
		off += b != a && scan_excluded_peer(flagged, d->nics, m, b, i) && violates(lim, m, pv, ref, *noise);
	}
	if (off < 2)
		return 0; /* one outlier pair: the pairs' step names it */
	const double *best = m == EFAB_SCAN_LAT ? d->lat_best : d->bw_best;
	if (!best)
		return 1;
	efab_scan_data_t bd = *d;
	bd.bw = d->bw_best ? d->bw_best : d->bw;
	bd.lat = d->lat_best ? d->lat_best : d->lat;
	int kb = scan_peer_figures(&bd, flagged, m, a, i, vals, NULL);
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
			f->ratio = scan_ratio_of(m, f->value, f->ref);
			size_t n = 0, len = sizeof(f->evidence);
			scan_put(f->evidence, len, &n, "%s %.4g %s, the median of NIC %d over the %d nodes (",
			    efab_scan_metric_name(m), f->value, unit_of(m), i, d->nodes);
			for (int a = 0; a < d->nodes; a++) {
				double v = out->unit[(a * d->nics + i) * F + m];
				if (shown < 8 || a == d->nodes - 1)
					scan_put(f->evidence, len, &n, "%s%s %s %.4g", shown ? ", " : "",
					    d->node_names[a], scan_nic_name(d, a, i), v);
				else if (shown == 8)
					scan_put(f->evidence, len, &n, ", ...");
				shown++;
				/* the evidence: every pair figure of the index, once */
				for (int b = 0; b < d->nodes; b++) {
					if (b == a || (m == EFAB_SCAN_LAT && b < a))
						continue;
					double pv = scan_pair_value(d, m, a, b, i);
					if (isfinite(pv))
						ev_add(d, l, f, a, b, i, 0, m, pv,
						       violates(lim, m, pv, out->ref[m], NAN));
				}
			}
			scan_put(f->evidence, len, &n, ") = %.2fx the cluster median %.4g %s%s", scan_shown_ratio(m, f->ratio),
			    f->ref, unit_of(m), m == EFAB_SCAN_LAT ? " (higher is worse)" : "");
			if (m == EFAB_SCAN_SEND)
				scan_put(f->evidence, len, &n, ", receive %.4g MB/s = %.2fx (within one index the "
							  "same pairs: sending and receiving are not told apart)",
				    pref[i * F + EFAB_SCAN_RECV],
				    scan_ratio_of(EFAB_SCAN_RECV, pref[i * F + EFAB_SCAN_RECV], out->ref[EFAB_SCAN_RECV]));
			int c = m == EFAB_SCAN_LAT ? count[m]
				: count[EFAB_SCAN_SEND] > count[EFAB_SCAN_RECV] ? count[EFAB_SCAN_SEND]
										 : count[EFAB_SCAN_RECV];
			f->peers = c;
			scan_put(f->evidence, len, &n, "; NIC %d is beyond the limits on %d of the %d nodes%s: a "
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
			scan_put(nf->evidence, len, &n, "%d of %d NICs: ", count, d->nics);
			for (size_t f = from; f < end; f++) {
				efab_scan_flag_t *g = &l->f[f];
				if (g->subject != EFAB_SCAN_SUBJ_NIC || g->node != a || g->metric != m)
					continue;
				if (nv < (int)EFAB_ARRAY_SIZE(vals))
					vals[nv++] = g->value;
				most = g->peers > most ? g->peers : most;
				scan_put(nf->evidence, len, &n, "%s%s %.4g %s over %d peer%s", nv > 1 ? ", " : "",
				    scan_nic_name(d, a, g->nic), g->value, unit_of(m), g->peers, g->peers == 1 ? "" : "s");
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
			nf->ratio = scan_ratio_of(m, nf->value, nf->ref);
			nf->peers = most;
			scan_put(nf->evidence, len, &n, "; %s median %.4g %s = %.2fx the cluster median %.4g %s",
			    efab_scan_metric_name(m), nf->value, unit_of(m), scan_shown_ratio(m, nf->ratio),
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
		if (x == a || x == b || scan_excluded_peer(flagged, d->nics, m, x, i))
			continue;
		double v = scan_pair_value(d, m, a, x, i);
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
		scan_put(buf, len, n, "; %s", d->nodes == 2 ? "2 nodes: nothing tells its ends apart"
						       : "neither end has other peers measured: no end can be told");
		return;
	}
	scan_put(buf, len, n, "; with their other peers %s %s", d->node_names[a], metric_verb(ma));
	if (ka)
		scan_put(buf, len, n, " %.4g %s (median over %d)", va, unit_of(ma), ka);
	else
		scan_put(buf, len, n, " nothing measured");
	scan_put(buf, len, n, ", %s %s", d->node_names[b], metric_verb(mb));
	if (kb)
		scan_put(buf, len, n, " %.4g %s (median over %d)", vb, unit_of(mb), kb);
	else
		scan_put(buf, len, n, " nothing measured");
	scan_put(buf, len, n, ": one pair, not an end");
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
	double v = d->lat[scan_at(d, a, b, i)];
	double best = d->lat_best ? d->lat_best[scan_at(d, a, b, i)] : v;
	if (!isfinite(v) || cell_failed(d, a, b, i) || flagged[(a * d->nics + i) * F + EFAB_SCAN_LAT] ||
	    flagged[(b * d->nics + i) * F + EFAB_SCAN_LAT])
		return -1;
	double noise = scan_pair_noise(d, flagged, EFAB_SCAN_LAT, a, b, tmp, pn);
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
				double v = d->lat[scan_at(d, a, b, i)];
				double best = d->lat_best ? d->lat_best[scan_at(d, a, b, i)] : v;
				if (isfinite(v) && !cell_failed(d, a, b, i) && !flagged[ua * F + EFAB_SCAN_LAT] &&
				    !flagged[ub * F + EFAB_SCAN_LAT]) {
					double r = scan_ratio_of(EFAB_SCAN_LAT, v, ref[i * F + EFAB_SCAN_LAT]);
					double noise = scan_pair_noise(d, flagged, EFAB_SCAN_LAT, a, b, tmp, pn);
					int off = violates(lim, EFAB_SCAN_LAT, v, ref[i * F + EFAB_SCAN_LAT], noise) &&
						  violates(lim, EFAB_SCAN_LAT, best, ref[i * F + EFAB_SCAN_LAT], noise);
					int rd = efab_scan_round_of(d->nodes, a, b);
					if (off && round_all_off(d, lim, flagged, ref, rd, i, tmp, pn)) {
						if (!said[rd * d->nics + i]++) /* once per round and NIC index */
							scan_put(round_note, note_len, &nn,
							    "%sround %d%s%s: every pair's latency beyond the limits "
							    "(e.g. %s-%s %.4g us, %.2fx %s): the "
							    "machine or the fabric at that time, no node, NIC or "
							    "pair named",
							    nn ? "; " : "", rd + 1, d->nics > 1 ? " NIC " : "",
							    d->nics > 1 ? scan_nic_name(d, a, i) : "", d->node_names[a],
							    d->node_names[b], v, scan_shown_ratio(EFAB_SCAN_LAT, r),
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
						scan_put(f->evidence, sizeof(f->evidence), &n,
						    "latency %.4g us = %.2fx %s %.4g us (higher is "
						    "worse) in round %d", v, scan_shown_ratio(EFAB_SCAN_LAT, r),
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
					bv[dir] = d->bw[scan_at(d, x, y, i)];
					br[dir] = scan_ratio_of(EFAB_SCAN_SEND, bv[dir], ref[i * F + EFAB_SCAN_SEND]);
					if (!isfinite(bv[dir]) || cell_failed(d, a, b, i) ||
					    flagged[(x * d->nics + i) * F + EFAB_SCAN_SEND] ||
					    flagged[(y * d->nics + i) * F + EFAB_SCAN_RECV])
						continue;
					double noise = scan_pair_noise(d, flagged, EFAB_SCAN_SEND, x, y, tmp, pn);
					double best = d->bw_best ? d->bw_best[scan_at(d, x, y, i)] : bv[dir];
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
				f->ratio = scan_ratio_of(EFAB_SCAN_SEND, f->value, f->ref);
				f->peers = 1;
				ev_add(d, l, f, x, y, i, 0, EFAB_SCAN_SEND, bv[w], 1);
				ev_add(d, l, f, y, x, i, 0, EFAB_SCAN_SEND, bv[!w], off[!w]);
				size_t n = 0, len = sizeof(f->evidence);
				if (f->both)
					scan_put(f->evidence, len, &n,
					    "both ways in round %d: %s -> %s %.4g MB/s (%.2fx), %s -> %s %.4g MB/s "
					    "(%.2fx) of %s %.4g MB/s", round1(d, a, b),
					    d->node_names[a], d->node_names[b], bv[0], br[0], d->node_names[b],
					    d->node_names[a], bv[1], br[1],
					    ref_what(d, i, EFAB_SCAN_SEND, idx_eff, what, sizeof(what)), f->ref);
				else
					scan_put(f->evidence, len, &n,
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
					scan_trouble(d, a, b, i) || scan_trouble(d, b, a, i)))
				continue;
			met++;
			bad += scan_trouble(d, a, b, i) || scan_trouble(d, b, a, i);
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
		scan_put(f->evidence, len, &n, "NIC counters rose in its round with every peer%s:",
		    figs ? " (its figures are flagged too)" : " (its bandwidth and latency passed)");
		for (int b = 0; b < d->nodes; b++) {
			const char *here = b == a ? NULL : scan_trouble(d, a, b, i);
			const char *there = b == a ? NULL : scan_trouble(d, b, a, i);
			if (!here && !there)
				continue;
			f->peers++;
			ev_add(d, l, f, a, b, i, cell_failed(d, a, b, i), EFAB_SCAN_NIC_COUNTERS, NAN, 1);
			scan_put(f->evidence, len, &n, " with %s: %s%s%s%s%s;", d->node_names[b],
			    here ? "here " : "", here ? here : "", here && there ? ", " : "",
			    there ? "at the peer " : "", there ? there : "");
		}
	}
	/* troubled rounds that no common end explains: the pair, once */
	for (int a = 0; a < d->nodes; a++)
		for (int b = a + 1; b < d->nodes; b++)
			for (int i = 0; i < d->nics && !l->oom; i++) {
				const char *ta = scan_trouble(d, a, b, i), *tb = scan_trouble(d, b, a, i);
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
				scan_put(f->evidence, len, &n, "NIC counters rose in their round (round %d) only:",
				    round1(d, a, b));
				if (ta)
					scan_put(f->evidence, len, &n, " at %s NIC %s %s;", d->node_names[a],
					    scan_nic_name(d, a, i), ta);
				if (tb)
					scan_put(f->evidence, len, &n, " at %s NIC %s %s;", d->node_names[b],
					    scan_nic_name(d, b, i), tb);
				scan_put(f->evidence, len, &n, " neither end's rounds with other peers had trouble "
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
				scan_unit_value(d, flagged, m, u / d->nics, u % d->nics, tmp);
		for (int u = 0; u < units; u++)
			tmp[u] = out->unit[u * EFAB_SCAN_NMETRIC + m];
		out->ref[m] = efab_scan_median(tmp, (size_t)units);
		out->spread[m] = scan_unit_noise(d, flagged, m, -1, 1, tmp);
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
				double r = scan_ratio_of(m, val, r0);
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
