/* The scan's schedule and names: the round-robin tournament of node pairs,
 * the NIC counters that are trouble, the metric, subject and kind names and
 * the median (efab_scan.h). The verdict is scan_verdict.c. */
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
