/* The figures a scan verdict reads (scan_internal.h): a unit's figure as the
 * median over its peers, ratios, and the noise of a unit and of a pair. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "efab.h"
#include "efab_scan.h"
#include "scan_internal.h"

/* pair_noise over many figures: leaving one pair out of more than
 * PAIR_NOISE_ALL of them moves the spread by well under 1 %, and computing
 * it once per pair made the pairs' step O(pairs^2) (minutes at 64 nodes x
 * 16 NICs); there the spread of all of them is used, computed once per
 * metric and verdict (flagged no longer changes then). */
#define PAIR_NOISE_ALL 256

/* The figure of metric m between unit (a, i) and peer b. */
double scan_pair_value(const efab_scan_data_t *d, int m, int a, int b, int i)
{
	switch (m) {
	case EFAB_SCAN_SEND: return d->bw[scan_at(d, a, b, i)];
	case EFAB_SCAN_RECV: return d->bw[scan_at(d, b, a, i)];
	default: return d->lat[scan_at(d, a, b, i)];
	}
}

/* A flagged unit's figures no longer count for its peers: a slow sender
 * explains its receivers' low receive figures, and the reverse. */
int scan_excluded_peer(const unsigned char *flagged, int nics, int m, int b, int i)
{
	int u = b * nics + i;
	switch (m) {
	case EFAB_SCAN_SEND: return flagged[u * EFAB_SCAN_NMETRIC + EFAB_SCAN_RECV];
	case EFAB_SCAN_RECV: return flagged[u * EFAB_SCAN_NMETRIC + EFAB_SCAN_SEND];
	default: return flagged[u * EFAB_SCAN_NMETRIC + EFAB_SCAN_LAT];
	}
}

/* The peer figures unit (a, i)'s median for metric m is over: the finite
 * ones of peers not flagged for the opposite figure; when every peer is
 * (2 nodes, or a limit every unit misses) all of its own, as either end may
 * be at fault. vals[k] and peers[k] (may be NULL); returns k. */
int scan_peer_figures(const efab_scan_data_t *d, const unsigned char *flagged, int m, int a,
			int i, double *vals, int *peers)
{
	int k = 0;
	for (int pass = 0; pass < 2 && !k; pass++)
		for (int b = 0; b < d->nodes; b++) {
			if (b == a || (!pass && scan_excluded_peer(flagged, d->nics, m, b, i)))
				continue;
			double v = scan_pair_value(d, m, a, b, i);
			if (!isfinite(v))
				continue;
			if (peers)
				peers[k] = b;
			vals[k++] = v;
		}
	return k;
}

double scan_unit_value(const efab_scan_data_t *d, const unsigned char *flagged, int m, int a,
			 int i, double *tmp)
{
	int k = scan_peer_figures(d, flagged, m, a, i, tmp, NULL);
	return k ? efab_scan_median(tmp, (size_t)k) : NAN;
}

double scan_ratio_of(int m, double value, double ref)
{
	if (!isfinite(value) || !isfinite(ref) || ref <= 0 || value <= 0)
		return NAN;
	return m == EFAB_SCAN_LAT ? ref / value : value / ref;
}

static double scan_robust_sd(double *v, size_t n)
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
static void scan_center_index(double *tmp, size_t n0, size_t *n, int m)
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
static double scan_unit_noise_sd(const efab_scan_data_t *d, const unsigned char *flagged, int m, int a,
			    double *tmp)
{
	size_t n = 0;
	for (int i = 0; i < d->nics; i++) {
		size_t n0 = n;
		for (int x = 0; x < d->nodes; x++) {
			if (x == a || flagged[(x * d->nics + i) * EFAB_SCAN_NMETRIC + m])
				continue;
			for (int b = 0; b < d->nodes; b++) {
				if (b == x || b == a || scan_excluded_peer(flagged, d->nics, m, b, i))
					continue;
				double v = scan_pair_value(d, m, x, b, i);
				if (isfinite(v) && v > 0)
					tmp[n++] = log(v);
			}
		}
		scan_center_index(tmp, n0, &n, m);
	}
	return scan_robust_sd(tmp, n);
}

/* unit_noise_sd scaled to a median of k figures. cache (NULL: none): per
 * (node, metric) [a * F + m] the unscaled spread, which depends on neither
 * the NIC nor k, so that a verdict over 64 nodes x 16 NICs computes it 64
 * times per metric and step instead of 1024 (NAN: not yet; the caller
 * clears it whenever a unit is flagged). */
double scan_unit_noise_c(const efab_scan_data_t *d, const unsigned char *flagged, int m, int a,
			   int k, double *tmp, double *cache)
{
	if (k < 1)
		return NAN;
	double sd;
	if (cache && a >= 0 && !isnan(cache[a * EFAB_SCAN_NMETRIC + m]))
		sd = cache[a * EFAB_SCAN_NMETRIC + m];
	else {
		sd = scan_unit_noise_sd(d, flagged, m, a, tmp);
		if (cache && a >= 0)
			cache[a * EFAB_SCAN_NMETRIC + m] = isnan(sd) ? INFINITY : sd;
	}
	if (isinf(sd))
		sd = NAN;
	return sd * 1.2533 / sqrt((double)k);
}

double scan_unit_noise(const efab_scan_data_t *d, const unsigned char *flagged, int m, int a,
			 int k, double *tmp)
{
	return scan_unit_noise_c(d, flagged, m, a, k, tmp, NULL);
}

/* The noise of one pair figure (a, b, i) of metric m (SEND: a writes to b;
 * LAT): the robust spread of the logarithms of every other pair figure of m
 * (the pair's own left out, as a unit's node is for units) that no flagged
 * end explains, each NIC index's centred on its own median (unit_noise). */
static double scan_pair_noise_n(const efab_scan_data_t *d, const unsigned char *flagged, int m, int a,
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
				if (fx || scan_excluded_peer(flagged, d->nics, m, y, i))
					continue;
				double v = scan_pair_value(d, m, x, y, i);
				if (isfinite(v) && v > 0)
					tmp[n++] = log(v);
			}
		scan_center_index(tmp, n0, &n, m);
	}
	*count = n;
	return scan_robust_sd(tmp, n);
}

/* cache: per metric, NAN not yet, -1 too few figures (leave-one-out), else
 * the spread of all; valid while flagged does not change (pair_flags) */
double scan_pair_noise(const efab_scan_data_t *d, const unsigned char *flagged, int m, int a,
			 int b, double *tmp, double *cache)
{
	size_t n;
	if (cache && !isnan(cache[m]) && cache[m] >= 0)
		return cache[m];
	if (cache && isnan(cache[m])) {
		double all = scan_pair_noise_n(d, flagged, m, -1, -1, tmp, &n);
		cache[m] = n > PAIR_NOISE_ALL && isfinite(all) ? all : -1;
		if (cache[m] >= 0)
			return cache[m];
	}
	return scan_pair_noise_n(d, flagged, m, a, b, tmp, &n);
}
