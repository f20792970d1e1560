/* efab_scan's drive: the passes and rounds (scan.c runs each round), every
 * rank's figures gathered on rank 0, the CSV rows as they come, the header,
 * the node x node matrices, the per-NIC table and the verdict (lib/scan.c);
 * and the scan family's table. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "efab_clock.h"
#include "efab_result.h"
#include "efab_scan.h"
#include "rma.h"
#include "scan_int.h"

#define CSV_HEADER                                                                                 \
	"schema,run_id,timestamp,bench,provider,fabric,libfabric_version,provider_version,pass,"   \
	"round,node_a,node_b,nic_index,nic_a,nic_b,lat_size_bytes,lat_iters,lat_us_p50,"           \
	"lat_us_p99,bw_size_bytes,window,bw_MBps,bw_rev_MBps,errors,status,error,nic_a_counters,"  \
	"nic_b_counters"

static void fmt_num(char *buf, size_t len, double v, const char *fmt)
{
	if (isfinite(v))
		snprintf(buf, len, fmt, v);
	else
		buf[0] = '\0';
}

/* One row per pair and NIC, from the lower node (lib/result.c quotes a
 * name that holds a comma or quote). */
static int csv_rows(efab_ctx_t *c, efab_csv_t *csv, int pass, int round, const scan_report_t *all,
		    const double *lat99)
{
	scan_state_t *scan = c->priv;
	for (int a = 0; a < scan->nodes; a++)
		for (int i = 0; i < scan->nics; i++) {
			const scan_report_t *ra = &all[scan->rank_of[a * scan->nics + i]];
			int bn = ra->partner;
			if (bn < a) /* one row per pair, from the lower node; skips sitting out */
				continue;
			const scan_report_t *rb = &all[scan->rank_of[bn * scan->nics + i]];
			char l50[32], l99[32], bw[32], bwr[32];
			fmt_num(l50, sizeof(l50), ra->lat_p50, "%.3f");
			fmt_num(l99, sizeof(l99), lat99[at(scan, a, bn, i)], "%.3f");
			fmt_num(bw, sizeof(bw), ra->bw_sent, "%.3f");
			fmt_num(bwr, sizeof(bwr), rb->bw_sent, "%.3f");
			char pass_s[16], round_s[16], nic_s[16], lsize[24], liters[24], bsize[24],
				window[24], errors[32];
			snprintf(pass_s, sizeof(pass_s), "%d", pass + 1);
			snprintf(round_s, sizeof(round_s), "%d", round + 1);
			snprintf(nic_s, sizeof(nic_s), "%d", i);
			snprintf(lsize, sizeof(lsize), "%llu", (unsigned long long)c->o.lat_size);
			snprintf(liters, sizeof(liters), "%llu",
				 (unsigned long long)efab_pingpong_iters(c, c->o.lat_size));
			snprintf(bsize, sizeof(bsize), "%llu", (unsigned long long)c->o.bw_size);
			snprintf(window, sizeof(window), "%llu", (unsigned long long)c->o.window);
			snprintf(errors, sizeof(errors), "%.0f", ra->errors + rb->errors);
			int failed = ra->failed || rb->failed;
			const char *why = !failed ? "" : ra->why[0] ? ra->why : rb->why;
			const char *cells[] = {
				/* the order of CSV_HEADER */
				"1",
				c->ri.run_id,
				c->ri.timestamp,
				"scan",
				c->ri.provider,
				c->ri.fabric,
				c->ri.libfabric_version,
				c->ri.provider_version,
				pass_s,
				round_s,
				scan->node_names[a],
				scan->node_names[bn],
				nic_s,
				scan->nic_names[a * scan->nics + i],
				scan->nic_names[bn * scan->nics + i],
				lsize,
				liters,
				l50,
				l99,
				bsize,
				window,
				bw,
				bwr,
				errors,
				failed ? "failed" : "ok",
				why,
				ra->hw,
				rb->hw,
			};
			if (efab_csv_write_cells(csv, cells, EFAB_ARRAY_SIZE(cells)))
				return EFAB_ERR;
		}
	return EFAB_OK;
}

/* How many ranks are bound near their NIC (bind_near_nic); *first: the
 * first that is not, or -1. */
static int ranks_bound(const scan_state_t *scan, int *first)
{
	int bound = 0;
	*first = -1;
	for (int r = 0; r < scan->world_size; r++) {
		bound += scan->ranks[r].bound;
		if (!scan->ranks[r].bound && *first < 0)
			*first = r;
	}
	return bound;
}

/* Groups of node pairs a round runs one after the other (--concurrent);
 * *per: pairs per group. */
static int round_groups(const efab_ctx_t *c, int *per)
{
	const scan_state_t *scan = c->priv;
	*per = c->o.concurrent ? (int)c->o.concurrent : scan->nodes / 2;
	return (scan->nodes / 2 + *per - 1) / *per;
}

/* The scan's time with --time (seconds): about (a round trip of 20 us) and
 * at most (1 ms: ranks that share a core wait for it; a slow NIC adds up to
 * 2 windows per direction); *pp: a pair's ping-pongs, NIC after NIC
 * (warmup, the timed ones and the batch). */
static void scan_estimate(const efab_ctx_t *c, int rounds, int groups, double *pp, double *about,
			  double *most)
{
	const scan_state_t *scan = c->priv;
	*pp = (double)scan->nics * (double)(50 + 2 * efab_pingpong_iters(c, c->o.lat_size));
	double steps = (double)c->o.passes * rounds * groups;
	*about = steps * (*pp * 20e-6 + 2 * c->o.time_s * 1.1 + 0.1);
	*most = steps * (*pp * 1e-3 + 2 * c->o.time_s * 1.5 + 1.0);
}

/* Where the ranks run against their NICs (bind_near_nic): how many are
 * bound near theirs, the first reason of those that are not, and with -v
 * every rank's. */
static void print_placement(const efab_ctx_t *c)
{
	const scan_state_t *scan = c->priv;
	int first, bound = ranks_bound(scan, &first);
	printf("# placement: each rank bound near its NIC (hwloc: the cores of the NIC's NUMA node, "
	       "buffers placed there by first touch): %d of %d ranks bound",
	       bound, scan->world_size);
	if (first >= 0)
		printf("; %d not (e.g. %s NIC %s: %s)", scan->world_size - bound,
		       scan->ranks[first].host, scan->ranks[first].nic, scan->ranks[first].bind);
	printf("\n");
	for (int r = 0; c->o.verbose && r < scan->world_size; r++)
		printf("#   rank %d: %s NIC %s: %s\n", r, scan->ranks[r].host, scan->ranks[r].nic,
		       scan->ranks[r].bind);
}

/* -v: every note (the header before issue 61) */
static void print_header_full(efab_ctx_t *c, int rounds)
{
	scan_state_t *scan = c->priv;
	printf("# efabench %s: scan\n", EFAB_VERSION);
	printf("# provider %s, fabric %s; libfabric %s, provider version %s\n", c->ri.provider,
	       c->ri.fabric, c->ri.libfabric_version, c->ri.provider_version);
	if (strstr(c->ri.provider_version, "simulated"))
		printf("# SIMULATED EFA device (efasim): these figures measure the simulator, never "
		       "EFA hardware\n");
	if (c->nodes_mismatch[0])
		printf("# WARNING: the nodes differ: %s\n", c->nodes_mismatch);
	printf("# %d nodes x %d NIC%s (one rank each); %d rounds of disjoint node pairs "
	       "(round-robin), NIC i meets NIC i%s\n",
	       scan->nodes, scan->nics, scan->nics == 1 ? "" : "s", rounds,
	       c->o.passes > 1 ? "; every figure is the median over the passes" : "");
	if (c->o.passes > 1)
		printf("# --passes %llu: the whole round-robin %llu times\n",
		       (unsigned long long)c->o.passes, (unsigned long long)c->o.passes);
	printf("# latency = half the round trip of a %llu-byte write ping-pong (efab_put_lat), p50, "
	       "microseconds, one NIC at a time; bandwidth = %llu-byte writes, windows of %llu, bytes / elapsed "
	       "time of the timed loop (efab_put_bw's bw_MBps), 10^6 B/s, every NIC at once, each direction in turn%s\n",
	       (unsigned long long)c->o.lat_size, (unsigned long long)c->o.bw_size,
	       (unsigned long long)c->o.window,
	       c->o.time_s > 0
		       ? ", for --time per direction (a deadline: what a slow NIC moves in it "
			 "is its figure)"
		       : "");
	if (c->ev.have)
		printf("# NIC counters: every rank's NIC hw_counters are read (settled) before and after "
		       "each round; a NIC whose error, retransmit-timeout or unresponsive/impaired-remote "
		       "counters rose, whose retrans_pkts exceed %g x its tx_pkts in the round or whose "
		       "rx_drops exceed %g x its rx_pkts (--max-retrans), is named in the verdict, "
		       "whatever its figures (CSV nic_a_counters, nic_b_counters)\n",
		       c->o.max_retrans, c->o.max_retrans);
	else
		printf("# NIC counters: none on rank 0's NIC (nic_a_counters/nic_b_counters say - where a "
		       "NIC has none)\n");
	print_placement(c);
	printf("# a pair with no progress within --timeout (%.0f s) or with an error completion is "
	       "a failed pair: recorded (phase, error), its endpoints closed, the scan goes on\n",
	       c->o.timeout_s);
	printf("# verdict: a NIC is flagged when the median over its peers is below %.2f x the "
	       "cluster median (bandwidth) or above median / %.2f (latency) and further from it "
	       "than %.0f x its noise (robust spread of the logarithms of the pair figures without that "
	       "node, for a median of as many)%s%s, and so are the figures of more than one of its peers; a "
	       "node when more than half its NICs are; the median over its peers of its best passes' figures must be "
	       "beyond the limits too (a repeatable effect); a NIC index beyond them on more than half the nodes (3 "
	       "or more) is one finding, a NIC-index effect, and its NICs are judged against the same index on the "
	       "other nodes; a pair beyond the limits (threshold squared) that no flagged end "
	       "explains is a finding of the pair; failed pairs name their common end (at least 2 "
	       "failed peers that passed with others), else the pair\n",
	       c->o.threshold, c->o.threshold, EFAB_SCAN_SIGMAS,
	       c->o.min_bw > 0 ? ", or below --min-bw" : "",
	       c->o.max_lat > 0 ? ", or above --max-lat" : "");
	int per, groups = round_groups(c, &per);
	if (groups > 1)
		printf("# --concurrent %d: %d groups of node pairs per round, one after the other\n",
		       per, groups);
	double window_MB = (double)c->o.window * (double)c->o.bw_size / 1e6;
	double pp, about, most;
	scan_estimate(c, rounds, groups, &pp, &about, &most);
	if (c->o.time_s > 0)
		printf("# estimate: %llu x %d rounds x %d group%s x (%.0f ping-pongs + 2 x %.2f s of "
		       "bandwidth) = about %.0f s, at most %.0f s while a ping-pong's round trip takes "
		       "at most 1 ms and every NIC moves a window "
		       "(%.1f MB) in %.2f s (%.0f MB/s; a slower NIC adds up to 2 windows at its rate "
		       "per direction); each pair that stalls adds up to --timeout per phase (latency, "
		       "each bandwidth direction)\n",
		       (unsigned long long)c->o.passes, rounds, groups, groups == 1 ? "" : "s", pp,
		       c->o.time_s, about, most, window_MB, c->o.time_s / 4,
		       window_MB / (c->o.time_s / 4));
	else
		printf("# estimate: %llu x %d rounds x %d group%s x (%llu ping-pongs + 2 x %llu "
		       "windows); the first round's time gives the rest\n",
		       (unsigned long long)c->o.passes, rounds, groups, groups == 1 ? "" : "s",
		       (unsigned long long)efab_pingpong_iters(c, c->o.lat_size),
		       (unsigned long long)c->o.iters);
	fflush(stdout);
}

/* At default verbosity at most 8 lines of at most 120 characters: what
 * runs, on what, the metrics, the verdict's limits, placement, how long. */
static void print_header(efab_ctx_t *c, int rounds)
{
	scan_state_t *scan = c->priv;
	if (c->o.verbose) {
		print_header_full(c, rounds);
		return;
	}
	char line[1024], sz[32], bsz[32];
	int per, groups = round_groups(c, &per);
	char grp[64] = "";
	if (groups > 1)
		snprintf(grp, sizeof(grp), " (%d groups each: --concurrent %d)", groups, per);
	char passes[64] = "";
	if (c->o.passes > 1)
		snprintf(passes, sizeof(passes), ", %llu passes (medians)",
			 (unsigned long long)c->o.passes);
	snprintf(line, sizeof(line),
		 "efabench %s: scan, %d nodes x %d NIC%s, %d rounds of node pairs%s%s",
		 EFAB_VERSION, scan->nodes, scan->nics, scan->nics == 1 ? "" : "s", rounds, grp,
		 passes);
	efab_header_line(stdout, line);
	snprintf(line, sizeof(line), "provider %s, fabric %s; libfabric %s (provider %s)",
		 c->ri.provider, c->ri.fabric, c->ri.libfabric_version, c->ri.provider_version);
	efab_header_line(stdout, line);
	if (strstr(c->ri.provider_version, "simulated"))
		efab_header_line(stdout, EFAB_SIMULATED_NOTE);
	if (c->nodes_mismatch[0]) {
		snprintf(line, sizeof(line), "WARNING: the nodes differ: %s", c->nodes_mismatch);
		efab_header_line(stdout, line);
	}
	efab_size_str(c->o.lat_size, sz, sizeof(sz));
	efab_size_str(c->o.bw_size, bsz, sizeof(bsz));
	snprintf(
		line, sizeof(line),
		"latency = half a write ping-pong's round trip (%s B), p50, us; bandwidth = %s B writes, "
		"%llu in flight, 10^6 B/s",
		sz, bsz, (unsigned long long)c->o.window);
	efab_header_line(stdout, line);
	snprintf(
		line, sizeof(line),
		"flagged: a NIC below %.2fx the cluster median (bandwidth) or above it / %.2f (latency), "
		"beyond %.0fx the noise",
		c->o.threshold, c->o.threshold, EFAB_SCAN_SIGMAS);
	efab_header_line(stdout, line);
	int first, bound = ranks_bound(scan, &first);
	int n = snprintf(line, sizeof(line),
			 "placement: %d of %d ranks bound near their NIC (hwloc)", bound,
			 scan->world_size);
	if (first >= 0 && n > 0 && (size_t)n < sizeof(line)) { /* the first reason, in one line */
		snprintf(line + n, sizeof(line) - (size_t)n, "; %s %s: %s", scan->ranks[first].host,
			 scan->ranks[first].nic, scan->ranks[first].bind);
		if (strlen(line) > 118) /* cut, and said so (-v: every rank's whole) */
			snprintf(line + 117, sizeof(line) - 117, "~");
	}
	efab_header_line(stdout, line);
	double pp, about, most;
	scan_estimate(c, rounds, groups, &pp, &about, &most);
	if (c->o.time_s > 0)
		snprintf(
			line, sizeof(line),
			"estimate: about %.0f s, at most %.0f s; more: -v (the whole verdict rule, "
			"counters, placement), --csv",
			about, most);
	else
		snprintf(
			line, sizeof(line),
			"estimate: the first round's time gives the rest; more: -v (the whole verdict "
			"rule, counters, placement), --csv");
	efab_header_line(stdout, line);
	fflush(stdout);
}

/* A node x node matrix in blocks of 8 columns (lines of at most 118
 * characters; a block per 8 nodes of a larger scan). */
static void print_matrix(const scan_state_t *scan, const char *title, const double *m, int lat)
{
	enum { PER = 8 };
	printf("\n%s\n", title);
	double v[1024];
	for (int b0 = 0; b0 < scan->nodes; b0 += PER) {
		int b1 = b0 + PER < scan->nodes ? b0 + PER : scan->nodes;
		if (b0)
			printf("\n");
		printf("%-14s", lat ? "node \\ node" : "from \\ to");
		for (int b = b0; b < b1; b++)
			printf(" %12.12s", scan->node_names[b]);
		printf("\n");
		for (int a = 0; a < scan->nodes; a++) {
			printf("%-14.14s", scan->node_names[a]);
			for (int b = b0; b < b1; b++) {
				int n = 0;
				for (int i = 0; i < scan->nics && n < 1024; i++)
					v[n++] = m[at(scan, a, b, i)];
				double med = efab_scan_median(v, (size_t)n);
				if (isfinite(med))
					printf(" %12.*f", lat ? 2 : 1, med);
				else
					printf(" %12s", "-");
			}
			printf("\n");
		}
	}
}

/* A line of the verdict: "  " + prefix + text, folded at spaces into lines of
 * at most 120 characters, each continuation indented by 4 (whole: one line,
 * -v). The --verdict-json records hold each finding's text whole. */
static void verdict_line(int whole, const char *prefix, const char *text)
{
	char buf[4096];
	snprintf(buf, sizeof(buf), "%s%s", prefix, text);
	efab_fold(stdout, "  ", "    ", whole ? INT_MAX : 120, buf);
}

static void print_report(const efab_ctx_t *c, const efab_scan_data_t *d, const double *bw,
			 const double *lat, const efab_scan_verdict_t *v)
{
	const scan_state_t *scan = c->priv;
	print_matrix(scan, "bandwidth, 10^6 B/s (median over NICs; row writes to column)", bw, 0);
	print_matrix(scan, "latency p50, microseconds (median over NICs)", lat, 1);
	printf("\nper NIC (median over its peers; ratio to the cluster median)\n");
	printf("%-14s %-16s %12s %6s %12s %6s %10s %6s\n", "node", "nic", "send_MBps", "x",
	       "recv_MBps", "x", "lat_us", "x");
	for (int a = 0; a < scan->nodes; a++)
		for (int i = 0; i < scan->nics; i++) {
			const double *u =
				&v->unit[(size_t)(a * scan->nics + i) * EFAB_SCAN_NMETRIC];
			char cell[6][24];
			const double vals[6] = {
				u[EFAB_SCAN_SEND], u[EFAB_SCAN_SEND] / v->ref[EFAB_SCAN_SEND],
				u[EFAB_SCAN_RECV], u[EFAB_SCAN_RECV] / v->ref[EFAB_SCAN_RECV],
				u[EFAB_SCAN_LAT],  u[EFAB_SCAN_LAT] / v->ref[EFAB_SCAN_LAT]};
			for (int k = 0; k < 6; k++) /* nothing measured (failed pairs): "-" */
				if (isfinite(vals[k]))
					snprintf(cell[k], sizeof(cell[k]),
						 k == 4  ? "%.2f"
						 : k % 2 ? "%.2f"
							 : "%.1f",
						 vals[k]);
				else
					snprintf(cell[k], sizeof(cell[k]), "-");
			printf("%-14.14s %-16.16s %12s %6s %12s %6s %10s %6s\n",
			       scan->node_names[a], scan->nic_names[a * scan->nics + i], cell[0],
			       cell[1], cell[2], cell[3], cell[4], cell[5]);
		}
	printf("\ncluster median: send %.1f MB/s, receive %.1f MB/s, latency %.2f us\n",
	       v->ref[EFAB_SCAN_SEND], v->ref[EFAB_SCAN_RECV], v->ref[EFAB_SCAN_LAT]);
	printf("\nverdict: %s\n", v->nflags ? "FLAGGED" : "no node or NIC flagged");
	char line[sizeof(v->flags->evidence) + 512];
	int whole = c->o.verbose;
	for (size_t f = 0; f < v->nflags; f++) {
		efab_scan_flag_line(d, &v->flags[f], line, sizeof(line));
		verdict_line(whole, "", line);
	}
	if (v->round_note[0])
		verdict_line(whole, "note: ", v->round_note);
	if (scan->nodes == 2 && v->nflags)
		verdict_line(
			whole, "",
			"(2 nodes: a slow direction or a failure cannot be told from its other "
			"end, the pair is the subject; scan 3 or more nodes to attribute it)");
	if (scan->nodes == 3 && v->nflags)
		verdict_line(whole, "",
			     "(3 nodes: each NIC has 2 peers, the medians are means; 4 or more "
			     "attribute better)");
	fflush(stdout);
}

/* Rank 0's figures: per pass [pass * cells + at(scan, a, b, i)] bandwidth
 * and latency; p99 latency; the medians over passes the verdict gets. */
typedef struct figures {
	size_t cells, pcells;
	int passes;
	double *block, *bw_p, *lat_p, *lat99, *bw, *lat;
	double *bw_best,
		*lat_best; /* [cell]: the best pass's (pair findings need every pass off) */
	double errors;
	unsigned char *failed; /* [cell]: the pair failed in some pass (symmetric) */
	char (*why)[WHY_LEN];  /* [cell]: the first failure's phase and error */
	const char **whyp;     /* [cell] -> why, for the verdict */
	size_t nfailed;        /* failed pairs and NICs over all passes */
	char (*hw)
		[HW_LEN]; /* [cell]: a's NIC's trouble counters in its round with b (first pass seen) */
	const char **hwp; /* [cell] -> hw, for the verdict */
	int any_hw;       /* some NIC had counters */
} figures_t;

static int figures_alloc(const scan_state_t *scan, int passes, figures_t *f)
{
	memset(f, 0, sizeof(*f));
	f->passes = passes;
	f->cells = (size_t)scan->nodes * (size_t)scan->nodes * (size_t)scan->nics;
	f->pcells = f->cells * (size_t)passes;
	f->block = malloc((2 * f->pcells + 5 * f->cells) * sizeof(double));
	if (!f->block)
		return EFAB_ERR;
	f->bw_p = f->block;
	f->lat_p = f->bw_p + f->pcells;
	f->lat99 = f->lat_p + f->pcells;
	f->bw = f->lat99 + f->cells;
	f->lat = f->bw + f->cells;
	f->bw_best = f->lat + f->cells;
	f->lat_best = f->bw_best + f->cells;
	for (size_t k = 0; k < f->pcells; k++)
		f->bw_p[k] = f->lat_p[k] = NAN;
	f->failed = calloc(f->cells, 1);
	f->why = calloc(f->cells, sizeof(*f->why));
	f->whyp = calloc(f->cells, sizeof(*f->whyp));
	f->hw = calloc(f->cells, sizeof(*f->hw));
	f->hwp = calloc(f->cells, sizeof(*f->hwp));
	if (!f->failed || !f->why || !f->whyp || !f->hw || !f->hwp)
		return EFAB_ERR;
	for (size_t k = 0; k < f->cells; k++)
		f->hwp[k] = f->hw[k];
	for (size_t k = 0; k < f->cells; k++)
		f->whyp[k] = f->why[k];
	return EFAB_OK;
}

static void figures_free(figures_t *f)
{
	free(f->block);
	free(f->failed);
	free(f->why);
	free(f->whyp);
	free(f->hw);
	free(f->hwp);
}

/* Every rank's report of pass p into the matrices (rank 0). */
static void record_round(const scan_state_t *scan, figures_t *f, int p, int round,
			 const scan_report_t *all, int nranks)
{
	double *bwp = f->bw_p + (size_t)p * f->cells, *latp = f->lat_p + (size_t)p * f->cells;
	for (int q = 0; q < nranks; q++) {
		const scan_report_t *s = &all[q];
		int a = -1, i = 0;
		for (int k = 0; k < scan->nodes * scan->nics && a < 0; k++)
			if (scan->rank_of[k] == q)
				a = k / scan->nics, i = k % scan->nics;
		if (s->partner < 0 || a < 0)
			continue;
		f->any_hw |= strcmp(s->hw, "-") != 0;
		char *t = f->hw[at(scan, a, s->partner, i)];
		if (s->hw[0] && strcmp(s->hw, "-") && !t[0]) /* the first pass it rose in */
			snprintf(t, sizeof(f->hw[0]), "%s (round %d)", s->hw, round + 1);
		f->errors += s->errors;
		if (s->failed) {
			size_t k = at(scan, a, s->partner, i), k2 = at(scan, s->partner, a, i);
			f->nfailed += !f->failed[k];
			f->failed[k] = f->failed[k2] = 1;
			if (!f->why[k][0] && s->why[0])
				snprintf(f->why[k], WHY_LEN, "%s", s->why);
			continue;
		}
		bwp[at(scan, a, s->partner, i)] = s->bw_sent;
		if (isfinite(s->lat_p50)) {
			latp[at(scan, a, s->partner, i)] = latp[at(scan, s->partner, a, i)] =
				s->lat_p50;
			f->lat99[at(scan, a, s->partner, i)] =
				f->lat99[at(scan, s->partner, a, i)] = s->lat_p99;
		}
	}
}

static void progress(int p, int passes, int r, int rounds, double secs, double left, int nfail)
{
	char failed[64] = "";
	if (nfail)
		snprintf(failed, sizeof(failed), ", %d NIC pair%s failed", nfail,
			 nfail == 1 ? "" : "s");
	if (passes > 1)
		fprintf(stderr,
			"efab_scan: pass %d/%d round %d/%d done in %.1f s (about %.0f s "
			"left%s)\n",
			p + 1, passes, r + 1, rounds, secs, left, failed);
	else
		fprintf(stderr, "efab_scan: round %d/%d done in %.1f s (about %.0f s left%s)\n",
			r + 1, rounds, secs, left, failed);
}

/* --verdict-json: the verdict's findings, the same list the text prints. */
static int write_verdict_json(const char *path, const efab_scan_data_t *d,
			      const efab_scan_verdict_t *v)
{
	FILE *fp = fopen(path, "w");
	if (!fp) {
		efab_log_error("--verdict-json: cannot write '%s': %s", path, strerror(errno));
		return EFAB_ERR;
	}
	int rc = efab_scan_verdict_json(fp, d, v);
	if (fclose(fp) || rc) {
		efab_log_error("--verdict-json: writing '%s' failed", path);
		return EFAB_ERR;
	}
	return EFAB_OK;
}

/* Rank 0: each figure the median over the passes, the report, the verdict;
 * EFAB_ERR when a node or NIC is flagged or data did not validate. */
static int conclude(efab_ctx_t *c, figures_t *f, efab_stopwatch_t sw)
{
	const scan_state_t *scan = c->priv;
	int rc = EFAB_OK;
	for (size_t k = 0; k < f->cells; k++) {
		double vb[1000], vl[1000];
		for (int p = 0; p < f->passes; p++) {
			vb[p] = f->bw_p[(size_t)p * f->cells + k];
			vl[p] = f->lat_p[(size_t)p * f->cells + k];
		}
		f->bw[k] = efab_scan_median(vb, (size_t)f->passes);
		f->lat[k] = efab_scan_median(vl, (size_t)f->passes);
		f->bw_best[k] = f->lat_best[k] = NAN;
		for (int p = 0; p < f->passes; p++) {
			if (isfinite(vb[p]) && !(vb[p] <= f->bw_best[k]))
				f->bw_best[k] = vb[p];
			if (isfinite(vl[p]) && !(vl[p] >= f->lat_best[k]))
				f->lat_best[k] = vl[p];
		}
	}
	efab_scan_data_t d = {scan->nodes,
			      scan->nics,
			      (const char *const *)scan->node_names,
			      (const char *const *)scan->nic_names,
			      f->bw,
			      f->lat,
			      f->failed,
			      (const char *const *)f->whyp,
			      f->any_hw ? (const char *const *)f->hwp : NULL,
			      f->bw_best,
			      f->lat_best};
	efab_scan_limits_t lim = {c->o.threshold, c->o.min_bw, c->o.max_lat};
	efab_scan_verdict_t v;
	if (efab_scan_verdict(&d, &lim, &v)) {
		efab_log_error("out of memory for the verdict");
		rc = EFAB_ERR;
	} else {
		print_report(c, &d, f->bw, f->lat, &v);
		if (c->o.verdict_json[0] && write_verdict_json(c->o.verdict_json, &d, &v))
			rc = EFAB_ERR;
		printf("scan wall time %.1f s\n", efab_stopwatch_elapsed_s(sw));
		if (v.nflags)
			rc = EFAB_ERR;
		efab_scan_verdict_free(&v);
	}
	if (f->errors) {
		efab_log_error("validation failed: %.0f errors (see the errors column)", f->errors);
		rc = EFAB_ERR;
	}
	return rc;
}

/* Every pass's rounds; rank 0 gathers the reports, writes the CSV rows and
 * the progress, then concludes. */
static int scan_drive(efab_ctx_t *c)
{
	scan_state_t *scan = c->priv;
	efab_rt_t *rt = c->rt;
	int rounds = efab_scan_rounds(scan->nodes), me = rt->rank == 0, rc = EFAB_OK;
	int passes = (int)c->o.passes;
	scan_report_t *all = calloc((size_t)rt->size, sizeof(*all));
	efab_csv_t csv = {.fd = -1};
	figures_t f;
	if (figures_alloc(scan, passes, &f) || !all) {
		efab_log_error("out of memory");
		rc = EFAB_ERR;
		goto out;
	}
	if (me && c->o.csv[0] && efab_csv_open_with_header(c->o.csv, CSV_HEADER, &csv))
		rc = EFAB_EUSAGE;
	if (me && !rc && c->o.verdict_json[0]) { /* a path that cannot be written fails now */
		FILE *fp = fopen(c->o.verdict_json, "w");
		if (!fp) {
			efab_log_error("--verdict-json: cannot write '%s': %s", c->o.verdict_json,
				       strerror(errno));
			rc = EFAB_EUSAGE;
		} else {
			fclose(fp);
		}
	}
	if ((rc = efab_rt_agree(rt, rc)))
		goto out;
	if (me) {
		print_header(c, rounds);
		/* every rank has listed its NICs and opened its CSV (the agreement
		 * above): the moment a harness times a fault from (tests/cluster/scan
		 * --down-after nodeI:0+SECS) */
		fprintf(stderr,
			"efab_scan: started: %d nodes x %d NIC%s, %d pass%s of %d round%s\n",
			scan->nodes, scan->nics, scan->nics == 1 ? "" : "s", passes,
			passes == 1 ? "" : "es", rounds, rounds == 1 ? "" : "s");
	}
	efab_stopwatch_t scan_sw = efab_stopwatch_start();
	for (int step = 0; step < passes * rounds; step++) {
		int p = step / rounds, r = step % rounds;
		efab_stopwatch_t round_sw = efab_stopwatch_start();
		int partner = efab_scan_partner(scan->nodes, r, scan->node);
		scan_report_t mine;
		if (scan_round(c, r, &mine)) {
			efab_log_error("round %d: measuring %s (NIC %s) with %s failed", r + 1,
				       scan->node_names[scan->node], scan->domain,
				       partner >= 0 ? scan->node_names[partner] : "nobody");
			efab_fail(c);
		}
		if (rt->allgather(rt, &mine, all, sizeof(mine))) {
			rc = EFAB_ERR;
			goto out;
		}
		if (!me)
			continue;
		size_t failed_before = f.nfailed;
		record_round(scan, &f, p, r, all, rt->size);
		int nfail = (int)(f.nfailed - failed_before);
		if (csv.fd >= 0 && csv_rows(c, &csv, p, r, all, f.lat99))
			efab_csv_close(&csv); /* said why; the scan goes on without its CSV */
		progress(p, passes, r, rounds, efab_stopwatch_elapsed_s(round_sw),
			 efab_stopwatch_elapsed_s(scan_sw) / (step + 1) *
				 (passes * rounds - step - 1),
			 nfail);
	}
	if (me)
		rc = conclude(c, &f, scan_sw);
	rc = efab_rt_agree(rt, rc);
out:
	efab_csv_close(&csv);
	free(all);
	figures_free(&f);
	return rc;
}

const efab_family_t efab_family_scan = {
	.check_opts = scan_check_opts,
	.plan = scan_plan,
	.setup = scan_setup,
	.drive = scan_drive,
	.teardown = scan_teardown,
};
