#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "efab.h"
#include "efab_scan.h"

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

static double unit_value(const efab_scan_data_t *d, const unsigned char *flagged, int m, int a,
			 int i, double *tmp)
{
	size_t k = 0;
	for (int b = 0; b < d->nodes; b++)
		if (b != a && !excluded_peer(flagged, d->nics, m, b, i) &&
		    isfinite(pair_value(d, m, a, b, i)))
			tmp[k++] = pair_value(d, m, a, b, i);
	if (k)
		return efab_scan_median(tmp, k);
	/* every peer is flagged (2 nodes, or a limit every unit misses): its own
	 * figures are all there is, and either end may be at fault */
	for (int b = 0; b < d->nodes; b++)
		if (b != a)
			tmp[k++] = pair_value(d, m, a, b, i);
	return efab_scan_median(tmp, k);
}

static double ratio_of(int m, double value, double ref)
{
	if (!isfinite(value) || !isfinite(ref) || ref <= 0 || value <= 0)
		return NAN;
	return m == EFAB_SCAN_LAT ? ref / value : value / ref;
}

/* Measurement noise for unit (a, i)'s figure: the robust standard deviation
 * (1.4826 x MAD) of the pair figures of metric m that involve neither node a
 * nor a flagged end (leave-one-out: a slow node must not widen its own
 * yardstick), scaled to a median of k of them (1.2533 / sqrt(k)). NAN when
 * fewer than 3 such figures exist (2 nodes): then the ratio alone decides. */
static double unit_noise(const efab_scan_data_t *d, const unsigned char *flagged, int m, int a,
			 int k, double *tmp)
{
	size_t n = 0;
	for (int x = 0; x < d->nodes; x++)
		for (int i = 0; i < d->nics; i++) {
			if (x == a || flagged[(x * d->nics + i) * EFAB_SCAN_NMETRIC + m])
				continue;
			for (int b = 0; b < d->nodes; b++) {
				if (b == x || b == a || excluded_peer(flagged, d->nics, m, b, i))
					continue;
				double v = pair_value(d, m, x, b, i);
				if (isfinite(v))
					tmp[n++] = v;
			}
		}
	if (n < 3 || k < 1)
		return NAN;
	double med = efab_scan_median(tmp, n);
	for (size_t j = 0; j < n; j++)
		tmp[j] = fabs(tmp[j] - med);
	return 1.4826 * efab_scan_median(tmp, n) * 1.2533 / sqrt((double)k);
}

static int violates(const efab_scan_limits_t *lim, int m, double value, double ratio, double ref,
		    double noise)
{
	if (!isfinite(value))
		return 0;
	if (isfinite(ratio) && ratio < lim->rel &&
	    (!isfinite(noise) || fabs(value - ref) > EFAB_SCAN_SIGMAS * noise))
		return 1;
	if (m == EFAB_SCAN_LAT)
		return lim->max_lat > 0 && value > lim->max_lat;
	return lim->min_bw > 0 && value < lim->min_bw;
}

/* How many figures unit (a, i)'s median is over. */
static int unit_count(const efab_scan_data_t *d, const unsigned char *flagged, int m, int a, int i)
{
	int k = 0;
	for (int b = 0; b < d->nodes; b++)
		k += b != a && !excluded_peer(flagged, d->nics, m, b, i) &&
		     isfinite(pair_value(d, m, a, b, i));
	return k ? k : d->nodes - 1;
}

static const char *unit_of(int m)
{
	return m == EFAB_SCAN_LAT ? "us" : "MB/s";
}

static void unit_evidence(const efab_scan_data_t *d, int m, int a, int i, double value,
			  double ref, double ratio, char *buf, size_t len)
{
	size_t n = 0;
	n += (size_t)snprintf(buf + n, len - n, "%s %.4g %s, median over its peers (", efab_scan_metric_name(m),
			      value, unit_of(m));
	for (int b = 0, first = 1; b < d->nodes && n < len; b++) {
		if (b == a)
			continue;
		double v = pair_value(d, m, a, b, i);
		n += (size_t)snprintf(buf + n, len - n, "%s%s %.4g", first ? "" : ", ",
				      d->node_names[b], v);
		first = 0;
	}
	if (n < len)
		n += (size_t)snprintf(buf + n, len - n, ") = %.2fx the cluster median %.4g %s%s",
				      m == EFAB_SCAN_LAT && isfinite(ratio) ? 1 / ratio : ratio,
				      ref, unit_of(m), m == EFAB_SCAN_LAT ? " (higher is worse)" : "");
}

static int cmp_flag(const void *a, const void *b)
{
	const efab_scan_flag_t *x = a, *y = b;
	if ((x->nic < 0) != (y->nic < 0))
		return x->nic < 0 ? -1 : 1;
	double rx = isfinite(x->ratio) ? x->ratio : 0, ry = isfinite(y->ratio) ? y->ratio : 0;
	return rx < ry ? -1 : rx > ry;
}

/* A node with more than half of its NICs flagged for m is one finding. */
static void fold_nodes(const efab_scan_data_t *d, efab_scan_verdict_t *v)
{
	size_t w = 0;
	for (int a = 0; a < d->nodes; a++) {
		for (int m = 0; m < EFAB_SCAN_NMETRIC; m++) {
			int count = 0;
			for (size_t f = 0; f < v->nflags; f++)
				count += v->flags[f].nic >= 0 && v->flags[f].node == a &&
					 v->flags[f].metric == m;
			if (count * 2 <= d->nics)
				continue;
			efab_scan_flag_t nf = {.node = a, .nic = -1, .metric = m};
			double vals[1024];
			int nv = 0;
			size_t n = 0;
			n += (size_t)snprintf(nf.evidence, sizeof(nf.evidence), "%d of %d NICs: ",
					      count, d->nics);
			for (size_t f = 0; f < v->nflags; f++) {
				efab_scan_flag_t *g = &v->flags[f];
				if (g->nic < 0 || g->node != a || g->metric != m)
					continue;
				if (nv < (int)EFAB_ARRAY_SIZE(vals))
					vals[nv++] = g->value;
				if (n < sizeof(nf.evidence))
					n += (size_t)snprintf(nf.evidence + n, sizeof(nf.evidence) - n,
							      "%s%s %.4g %s", nv > 1 ? ", " : "",
							      d->nic_names[a * d->nics + g->nic],
							      g->value, unit_of(m));
				g->node = -1; /* folded into the node's finding */
			}
			nf.value = efab_scan_median(vals, (size_t)nv);
			nf.ref = v->ref[m];
			nf.ratio = ratio_of(m, nf.value, nf.ref);
			if (n < sizeof(nf.evidence))
				snprintf(nf.evidence + n, sizeof(nf.evidence) - n,
					 "; %s median %.4g %s = %.2fx the cluster median %.4g %s",
					 efab_scan_metric_name(m), nf.value, unit_of(m),
					 m == EFAB_SCAN_LAT && isfinite(nf.ratio) ? 1 / nf.ratio : nf.ratio,
					 nf.ref, unit_of(m));
			/* room: flags only shrink when folding, plus at most one per (node, m) */
			efab_scan_flag_t *grown = realloc(v->flags, (v->nflags + 1) * sizeof(*grown));
			if (!grown)
				continue;
			v->flags = grown;
			v->flags[v->nflags++] = nf;
		}
	}
	for (size_t f = 0; f < v->nflags; f++)
		if (v->flags[f].node >= 0)
			v->flags[w++] = v->flags[f];
	v->nflags = w;
	qsort(v->flags, v->nflags, sizeof(*v->flags), cmp_flag);
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

static int add_flag(efab_scan_verdict_t *v, const efab_scan_flag_t *f)
{
	efab_scan_flag_t *grown = realloc(v->flags, (v->nflags + 1) * sizeof(*grown));
	if (!grown)
		return EFAB_ERR;
	v->flags = grown;
	v->flags[v->nflags++] = *f;
	return EFAB_OK;
}

/* Evidence of unit (a, i)'s failed pairs: "with nodeB (why), ...". */
static size_t failed_evidence(const efab_scan_data_t *d, int a, int i, char *buf, size_t len)
{
	size_t n = 0;
	for (int b = 0, first = 1; b < d->nodes && n < len; b++) {
		if (b == a || !cell_failed(d, a, b, i))
			continue;
		n += (size_t)snprintf(buf + n, len - n, "%swith %s NIC %s (%s)", first ? "" : "; ",
				      d->node_names[b], d->nic_names[b * d->nics + i], why_of(d, a, b, i));
		first = 0;
	}
	return n < len ? n : len - 1;
}

/* The failures' findings (efab_scan_verdict's first step); unreach[u] marks
 * the unreachable units. */
static int failure_flags(const efab_scan_data_t *d, efab_scan_verdict_t *v, unsigned char *unreach)
{
	int units = d->nodes * d->nics;
	if (!d->failed || units <= 0)
		return EFAB_OK;
	/* candidates: units whose every pair (at least one) failed */
	for (int u = 0; u < units; u++) {
		int a = u / d->nics, i = u % d->nics, tried = 0, fails = 0;
		for (int b = 0; b < d->nodes; b++) {
			if (b == a)
				continue;
			fails += cell_failed(d, a, b, i);
			tried += cell_failed(d, a, b, i) || cell_measured(d, a, b, i);
		}
		unreach[u] = tried > 0 && fails == tried;
	}
	/* confirmed when every peer it failed with succeeded elsewhere (or is a
	 * candidate itself: then both are); with 2 nodes, both ends */
	unsigned char *confirmed = calloc((size_t)units, 1);
	if (!confirmed)
		return EFAB_ERR;
	for (int u = 0; u < units; u++) {
		int a = u / d->nics, i = u % d->nics, ok = unreach[u];
		for (int b = 0; ok && b < d->nodes && d->nodes > 2; b++) {
			if (b == a || !cell_failed(d, a, b, i) || unreach[b * d->nics + i])
				continue;
			int elsewhere = 0;
			for (int x = 0; x < d->nodes; x++)
				elsewhere |= x != b && x != a && cell_measured(d, b, x, i);
			ok = elsewhere;
		}
		confirmed[u] = (unsigned char)ok;
	}
	memcpy(unreach, confirmed, (size_t)units);
	free(confirmed);
	for (int a = 0; a < d->nodes; a++) {
		int count = 0;
		for (int i = 0; i < d->nics; i++)
			count += unreach[a * d->nics + i];
		if (!count)
			continue;
		if (count * 2 > d->nics) { /* the node as a whole */
			efab_scan_flag_t f = {.node = a, .nic = -1, .metric = EFAB_SCAN_UNREACHABLE,
					      .value = NAN, .ref = NAN, .ratio = 0};
			size_t n = (size_t)snprintf(f.evidence, sizeof(f.evidence),
						    "no progress with any peer (%d of %d NICs)%s: ", count,
						    d->nics, d->nodes == 2 ? ", or its only peer's fault" : "");
			for (int i = 0; i < d->nics && n < sizeof(f.evidence); i++)
				if (unreach[a * d->nics + i])
					n += failed_evidence(d, a, i, f.evidence + n, sizeof(f.evidence) - n);
			if (add_flag(v, &f))
				return EFAB_ERR;
			continue;
		}
		for (int i = 0; i < d->nics; i++) {
			if (!unreach[a * d->nics + i])
				continue;
			efab_scan_flag_t f = {.node = a, .nic = i, .metric = EFAB_SCAN_UNREACHABLE,
					      .value = NAN, .ref = NAN, .ratio = 0};
			size_t n = (size_t)snprintf(f.evidence, sizeof(f.evidence),
						    "no progress with any peer%s: ",
						    d->nodes == 2 ? ", or its only peer's fault" : "");
			failed_evidence(d, a, i, f.evidence + n, sizeof(f.evidence) - n);
			if (add_flag(v, &f))
				return EFAB_ERR;
		}
	}
	/* failed pairs that no unreachable unit explains, once each (lower node) */
	for (int a = 0; a < d->nodes; a++)
		for (int b = a + 1; b < d->nodes; b++)
			for (int i = 0; i < d->nics; i++) {
				if (!cell_failed(d, a, b, i) || unreach[a * d->nics + i] ||
				    unreach[b * d->nics + i])
					continue;
				efab_scan_flag_t f = {.node = a, .nic = i, .metric = EFAB_SCAN_PAIR_FAILED,
						      .value = NAN, .ref = NAN, .ratio = 0};
				snprintf(f.evidence, sizeof(f.evidence), "the pair with %s NIC %s failed (%s)",
					 d->node_names[b], d->nic_names[b * d->nics + i], why_of(d, a, b, i));
				if (add_flag(v, &f))
					return EFAB_ERR;
			}
	return EFAB_OK;
}

static const char *trouble(const efab_scan_data_t *d, int a, int b, int i)
{
	const char *t = d->hw_trouble[at(d, a, b, i)];
	return t && *t ? t : NULL;
}

/* The NIC-counter findings (efab_scan.h). */
static int nic_counter_flags(const efab_scan_data_t *d, const unsigned char *flagged,
			     efab_scan_verdict_t *v)
{
	int units = d->nodes * d->nics;
	unsigned char *common = calloc((size_t)units, 1);
	if (!common)
		return EFAB_ERR;
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
	int rc = EFAB_OK;
	for (int u = 0; u < units && !rc; u++) {
		int a = u / d->nics, i = u % d->nics, figs = 0;
		for (int m = 0; m < EFAB_SCAN_NMETRIC; m++)
			figs |= flagged[u * EFAB_SCAN_NMETRIC + m];
		const char *passed = figs ? " (its figures are flagged too)"
					  : " (its bandwidth and latency passed)";
		efab_scan_flag_t f = {.node = a, .nic = i, .metric = EFAB_SCAN_NIC_COUNTERS,
				      .value = NAN, .ref = NAN, .ratio = 0};
		size_t n = 0, len = sizeof(f.evidence);
		if (common[u]) {
			n += (size_t)snprintf(f.evidence, len, "NIC counters rose in its round with every "
								"peer%s:", passed);
			for (int b = 0; b < d->nodes && n < len; b++) {
				const char *here = b == a ? NULL : trouble(d, a, b, i);
				const char *there = b == a ? NULL : trouble(d, b, a, i);
				if (here || there)
					n += (size_t)snprintf(f.evidence + n, len - n, " with %s: %s%s%s%s%s;",
							      d->node_names[b], here ? "here " : "",
							      here ? here : "", here && there ? ", " : "",
							      there ? "at the peer " : "", there ? there : "");
			}
			rc = add_flag(v, &f);
			continue;
		}
		/* this unit's own troubled rounds that no common end explains */
		for (int b = 0; b < d->nodes && !rc; b++) {
			const char *here = b == a ? NULL : trouble(d, a, b, i);
			if (!here || common[b * d->nics + i])
				continue;
			snprintf(f.evidence, len, "NIC counters rose in its round with %s NIC %s: %s%s",
				 d->node_names[b], d->nic_names[b * d->nics + i], here, passed);
			rc = add_flag(v, &f);
		}
	}
	free(common);
	return rc;
}

int efab_scan_verdict(const efab_scan_data_t *d, const efab_scan_limits_t *lim,
		      efab_scan_verdict_t *out)
{
	int units = d->nodes * d->nics;
	memset(out, 0, sizeof(*out));
	out->unit = calloc((size_t)units * EFAB_SCAN_NMETRIC, sizeof(double));
	unsigned char *flagged = calloc((size_t)units * EFAB_SCAN_NMETRIC, 1);
	double *tmp = malloc((size_t)units * (size_t)d->nodes * sizeof(double) + 8);
	out->flags = malloc(((size_t)units * EFAB_SCAN_NMETRIC + 1) * sizeof(*out->flags));
	if (!out->unit || !flagged || !tmp || !out->flags) {
		free(flagged);
		free(tmp);
		efab_scan_verdict_free(out);
		return EFAB_ERR;
	}
	for (int m = 0; m < EFAB_SCAN_NMETRIC; m++) {
		for (int u = 0; u < units; u++)
			out->unit[u * EFAB_SCAN_NMETRIC + m] =
				unit_value(d, flagged, m, u / d->nics, u % d->nics, tmp);
		for (int u = 0; u < units; u++)
			tmp[u] = out->unit[u * EFAB_SCAN_NMETRIC + m];
		out->ref[m] = efab_scan_median(tmp, (size_t)units);
		out->spread[m] = unit_noise(d, flagged, m, -1, 1, tmp);
	}
	/* Worst first: flag one unit, recompute its peers without it, repeat. */
	for (;;) {
		int worst_u = -1, worst_m = 0;
		double worst_r = INFINITY;
		for (int m = 0; m < EFAB_SCAN_NMETRIC; m++)
			for (int u = 0; u < units; u++) {
				if (flagged[u * EFAB_SCAN_NMETRIC + m])
					continue;
				double val = unit_value(d, flagged, m, u / d->nics, u % d->nics, tmp);
				out->unit[u * EFAB_SCAN_NMETRIC + m] = val;
				double r = ratio_of(m, val, out->ref[m]);
				double noise = unit_noise(d, flagged, m, u / d->nics,
							  unit_count(d, flagged, m, u / d->nics, u % d->nics), tmp);
				if (!violates(lim, m, val, r, out->ref[m], noise))
					continue;
				double key = isfinite(r) ? r : 0;
				if (key < worst_r) {
					worst_r = key;
					worst_u = u;
					worst_m = m;
				}
			}
		if (worst_u < 0)
			break;
		flagged[worst_u * EFAB_SCAN_NMETRIC + worst_m] = 1;
		efab_scan_flag_t *f = &out->flags[out->nflags++];
		memset(f, 0, sizeof(*f));
		f->node = worst_u / d->nics;
		f->nic = worst_u % d->nics;
		f->metric = worst_m;
		f->value = out->unit[worst_u * EFAB_SCAN_NMETRIC + worst_m];
		f->ref = out->ref[worst_m];
		f->ratio = ratio_of(worst_m, f->value, f->ref);
		unit_evidence(d, worst_m, f->node, f->nic, f->value, f->ref, f->ratio, f->evidence,
			      sizeof(f->evidence));
	}
	free(tmp);
	fold_nodes(d, out);
	if (d->hw_trouble && nic_counter_flags(d, flagged, out)) {
		free(flagged);
		efab_scan_verdict_free(out);
		return EFAB_ERR;
	}
	free(flagged);
	/* the failures come first: they are the worst news */
	efab_scan_verdict_t fails = {0};
	unsigned char *unreach = calloc((size_t)units, 1);
	if (!unreach || failure_flags(d, &fails, unreach)) {
		free(unreach);
		free(fails.flags);
		efab_scan_verdict_free(out);
		return EFAB_ERR;
	}
	free(unreach);
	if (fails.nflags) {
		efab_scan_flag_t *all = realloc(fails.flags, (fails.nflags + out->nflags + 1) * sizeof(*all));
		if (!all) {
			free(fails.flags);
			efab_scan_verdict_free(out);
			return EFAB_ERR;
		}
		if (out->nflags)
			memcpy(all + fails.nflags, out->flags, out->nflags * sizeof(*all));
		free(out->flags);
		out->flags = all;
		out->nflags += fails.nflags;
	} else {
		free(fails.flags);
	}
	return EFAB_OK;
}

void efab_scan_verdict_free(efab_scan_verdict_t *v)
{
	free(v->unit);
	free(v->flags);
	memset(v, 0, sizeof(*v));
}
