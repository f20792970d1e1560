/* Private to the scan's verdict (scan_verdict.c, scan_figures.c,
 * scan_report.c): the figures a verdict reads and the text helpers the
 * report shares. Not an interface: efab_scan.h is. */
#ifndef EFAB_SCAN_INTERNAL_H
#define EFAB_SCAN_INTERNAL_H

#include <stddef.h>

#include "efab.h"
#include "efab_scan.h"

/* The cell of pair (a -> b) on NIC index i in d's node x node x NIC arrays. */
static inline size_t scan_at(const efab_scan_data_t *d, int a, int b, int i)
{
	return ((size_t)a * (size_t)d->nodes + (size_t)b) * (size_t)d->nics + (size_t)i;
}

/* scan_figures.c: a unit's and a pair's figures and their noise */
double scan_pair_value(const efab_scan_data_t *d, int m, int a, int b, int i);
int scan_excluded_peer(const unsigned char *flagged, int nics, int m, int b, int i);
int scan_peer_figures(const efab_scan_data_t *d, const unsigned char *flagged, int m, int a, int i,
		      double *vals, int *peers);
double scan_unit_value(const efab_scan_data_t *d, const unsigned char *flagged, int m, int a, int i,
		       double *tmp);
double scan_ratio_of(int m, double value, double ref);
double scan_unit_noise_c(const efab_scan_data_t *d, const unsigned char *flagged, int m, int a,
			 int k, double *tmp, double *cache);
double scan_unit_noise(const efab_scan_data_t *d, const unsigned char *flagged, int m, int a, int k,
		       double *tmp);
double scan_pair_noise(const efab_scan_data_t *d, const unsigned char *flagged, int m, int a, int b,
		       double *tmp, double *cache);

/* scan_verdict.c: appends printf-style at buf + *n; a NIC's name */
const char *scan_nic_name(const efab_scan_data_t *d, int a, int i);
/* a ratio as the report shows it; why cell (a -> b, NIC i) failed; its NIC trouble */
double scan_shown_ratio(int m, double ratio);
const char *scan_why_of(const efab_scan_data_t *d, int a, int b, int i);
const char *scan_trouble(const efab_scan_data_t *d, int a, int b, int i);
void EFAB_PRINTF(4, 5) scan_put(char *buf, size_t len, size_t *n, const char *fmt, ...);

#endif
