#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "efab.h"
#include "efab_clock.h"
#include "efab_opts.h"
#include "efab_result.h"

static const char *const base_cols[] = {
	"schema", "run_id", "timestamp", "bench", "op", "provider", "fabric", "domain",
	"libfabric_version", "provider_version", "mem_local", "mem_remote", "ranks", "pairs",
	"window", "size_bytes", "iters", "lat_us_min", "lat_us_p50", "lat_us_mean", "lat_us_p99",
	"lat_us_p999", "lat_us_max", "lat_us_stdev", "bw_MBps", "msg_rate_Mops", "errors",
	/* request and library identity (added after the first schema-1 files:
	 * readers fall back to provider/fabric where these are missing) */
	"provider_req", "fabric_req", "libfabric_built", "libfabric_path", "efa_installer",
};

void efab_run_info_request(efab_run_info_t *ri, const char *provider, const char *fabric)
{
	snprintf(ri->provider_req, sizeof(ri->provider_req), "%s", provider ? provider : "");
	snprintf(ri->fabric_req, sizeof(ri->fabric_req), "%s", fabric ? fabric : "");
}

void efab_run_info_begin(efab_run_info_t *ri, const char *bench, int ranks)
{
	snprintf(ri->bench, sizeof(ri->bench), "%s", bench);
	ri->ranks = ranks;
	efab_run_info_stamp(ri);
}

void efab_run_info_stamp(efab_run_info_t *ri)
{
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(ri->timestamp, sizeof(ri->timestamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
	const char *id = getenv("EFAB_RUN_ID");
	if (id && *id) {
		snprintf(ri->run_id, sizeof(ri->run_id), "%s", id);
	} else {
		char host[64] = "host", ts[32];
		gethostname(host, sizeof(host) - 1);
		host[sizeof(host) - 1] = '\0';
		strftime(ts, sizeof(ts), "%Y%m%d-%H%M%S", &tm);
		snprintf(ri->run_id, sizeof(ri->run_id), "%s-%s-%d", ts, host, (int)getpid());
	}
}

void efab_csv_header(const efab_run_info_t *ri, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < EFAB_ARRAY_SIZE(base_cols) && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? "," : "", base_cols[i]);
	for (size_t i = 0; i < ri->n_extra && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, ",%s", ri->extra_cols[i]);
}

/* The one quoting rule of every CSV we write: a cell holding a comma, a
 * quote or a line break is put in quotes with its quotes doubled (RFC 4180,
 * what Python's csv module reads), and line breaks become spaces so that a
 * row stays one line. Like snprintf: writes at most len bytes (terminated
 * when len > 0) and returns the length the cell needs, so a caller detects
 * a row that did not fit. */
static size_t csv_cell(char *buf, size_t len, const char *s)
{
	size_t n = 0;
	int quote = strpbrk(s, ",\"\n\r") != NULL;
#define PUT(ch)                           \
	do {                              \
		if (n + 1 < len)          \
			buf[n] = (ch);    \
		n++;                      \
	} while (0)
	if (quote)
		PUT('"');
	for (const char *p = s; *p; p++) {
		if (*p == '"')
			PUT('"');
		PUT(*p == '\n' || *p == '\r' ? ' ' : *p);
	}
	if (quote)
		PUT('"');
#undef PUT
	if (len)
		buf[n < len ? n : len - 1] = '\0';
	return n;
}

#define APPEND(...)                                                                  \
	do {                                                                         \
		int k_ = snprintf(buf + n, n < len ? len - n : 0, __VA_ARGS__);      \
		if (k_ < 0)                                                          \
			return -1;                                                   \
		n += (size_t)k_;                                                     \
	} while (0)
#define APPEND_TEXT(s)                                                               \
	do {                                                                         \
		APPEND(",");                                                         \
		n += csv_cell(n < len ? buf + n : NULL, n < len ? len - n : 0, (s)); \
	} while (0)

int efab_csv_format(const efab_run_info_t *ri, const efab_row_t *r, char *buf, size_t len)
{
	size_t n = 0;
	APPEND("%d", EFAB_CSV_SCHEMA);
	APPEND_TEXT(ri->run_id);
	APPEND_TEXT(ri->timestamp);
	APPEND_TEXT(ri->bench);
	APPEND_TEXT(r->op);
	APPEND_TEXT(ri->provider);
	APPEND_TEXT(ri->fabric);
	APPEND_TEXT(ri->domain);
	APPEND_TEXT(ri->libfabric_version);
	APPEND_TEXT(ri->provider_version);
	APPEND_TEXT(ri->mem_local);
	APPEND_TEXT(ri->mem_remote);
	APPEND(",%d,%d,%llu,%llu,%llu", ri->ranks, r->pairs, (unsigned long long)r->window,
	       (unsigned long long)r->size, (unsigned long long)r->iters);
	if (r->has_lat)
		APPEND(",%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f", r->lat.min, r->lat.p50, r->lat.mean,
		       r->lat.p99, r->lat.p999, r->lat.max, r->lat.stdev);
	else
		APPEND(",,,,,,,");
	if (r->has_bw)
		APPEND(",%.3f,%.6f", r->bw_MBps, r->msg_rate_Mops);
	else
		APPEND(",,");
	APPEND(",%llu", (unsigned long long)r->errors);
	APPEND_TEXT(ri->provider_req);
	APPEND_TEXT(ri->fabric_req);
	APPEND_TEXT(ri->libfabric_built);
	APPEND_TEXT(ri->libfabric_path);
	APPEND_TEXT(ri->efa_installer);
	for (size_t i = 0; i < ri->n_extra; i++)
		APPEND_TEXT(r->extra[i]);
	APPEND("\n");
	return n < len ? (int)n : -1;
}

int efab_csv_format_cells(const char *const *cells, size_t ncells, char *buf, size_t len)
{
	size_t n = 0;
	for (size_t i = 0; i < ncells; i++) {
		if (i)
			APPEND(",");
		n += csv_cell(n < len ? buf + n : NULL, n < len ? len - n : 0, cells[i]);
	}
	APPEND("\n");
	return n < len ? (int)n : -1;
}

/* Schemas 1 and 2 share their headers (2 numbers the column set 1 grew
 * to), so the header alone cannot keep a file to one schema: the first
 * row's schema cell must be ours too. */
static int rows_of_other_schema(int fd, size_t header_len, char *cell, size_t len)
{
	ssize_t n = pread(fd, cell, len - 1, (off_t)header_len + 1);
	if (n <= 0)
		return 0; /* no row yet */
	cell[n] = '\0';
	cell[strcspn(cell, ",\n")] = '\0';
	char ours[16];
	snprintf(ours, sizeof(ours), "%d", EFAB_CSV_SCHEMA);
	return strcmp(cell, ours) != 0;
}

int efab_csv_open(const char *path, const efab_run_info_t *ri, efab_csv_t *out)
{
	char header[4096], cell[16];
	efab_csv_header(ri, header, sizeof(header));
	int rc = efab_csv_open_with_header(path, header, out);
	if (rc == EFAB_OK && rows_of_other_schema(out->fd, strlen(header), cell, sizeof(cell))) {
		efab_log_error("CSV file '%s' holds schema-%s rows, this efabench writes schema %d "
			       "(docs/csv.md); use a new file",
			       path, cell, EFAB_CSV_SCHEMA);
		efab_csv_close(out);
		return EFAB_EUSAGE;
	}
	return rc;
}

int efab_csv_open_with_header(const char *path, const char *header, efab_csv_t *out)
{
	char existing[4096], line[4096];
	int fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0) {
		efab_log_error("cannot open CSV file '%s': %s", path, strerror(errno));
		return EFAB_EUSAGE;
	}
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		efab_log_error("CSV path '%s' is not a regular file", path);
		goto close_fd;
	}
	if (st.st_size > 0) {
		ssize_t n = pread(fd, existing, sizeof(existing) - 1, 0);
		if (n < 0) {
			efab_log_error("cannot read CSV file '%s': %s", path, strerror(errno));
			goto close_fd;
		}
		existing[n] = '\0';
		char *nl = strchr(existing, '\n');
		if (nl)
			*nl = '\0';
		if (strcmp(existing, header) != 0) {
			efab_log_error("CSV file '%s' already holds other columns (another benchmark or "
				       "schema); use a new file", path);
			goto close_fd;
		}
	} else {
		/* header and newline in one write(2), like every row */
		int hl = snprintf(line, sizeof(line), "%s\n", header);
		if (hl < 0 || (size_t)hl >= sizeof(line) || write(fd, line, (size_t)hl) != hl) {
			efab_log_error("cannot write CSV header to '%s': %s", path,
				       hl < 0 || (size_t)hl >= sizeof(line) ? "header too long"
									   : strerror(errno));
			goto close_fd;
		}
	}
	out->fd = fd;
	snprintf(out->path, sizeof(out->path), "%s", path);
	return EFAB_OK;

close_fd:
	close(fd);
	return EFAB_EUSAGE;
}

/* A formatted row (n < 0: it did not fit) in one write(2). */
static int csv_append(efab_csv_t *csv, const char *line, int n)
{
	if (n < 0) {
		efab_log_error("CSV row too long");
		return EFAB_ERR;
	}
	if (write(csv->fd, line, (size_t)n) != n) {
		efab_log_error("cannot append to CSV file '%s': %s", csv->path, strerror(errno));
		return EFAB_ERR;
	}
	return EFAB_OK;
}

int efab_csv_write(efab_csv_t *csv, const efab_run_info_t *ri, const efab_row_t *row)
{
	char line[8192];
	return csv_append(csv, line, efab_csv_format(ri, row, line, sizeof(line)));
}

int efab_csv_write_cells(efab_csv_t *csv, const char *const *cells, size_t ncells)
{
	char line[8192];
	return csv_append(csv, line, efab_csv_format_cells(cells, ncells, line, sizeof(line)));
}

void efab_csv_close(efab_csv_t *csv)
{
	if (csv->fd > 0)
		close(csv->fd);
	csv->fd = -1;
}

/* The human table leaves out the proof-of-path detail (the CSV has every
 * column): per-counter deltas and the bookkeeping beside the path. */
static int table_shows(const char *col)
{
	return strncmp(col, "nic_", 4) && strcmp(col, "hw_note") && strcmp(col, "payload_bytes") &&
	       strcmp(col, "hw_nics");
}

/* pct_of_link (bandwidth rows) is bw_MBps over link_Gbps, the port speed
 * libfabric reports (fi_info->nic->link_attr->speed). Payload cannot outrun
 * its port, so a figure above EFAB_PCT_OF_LINK_MAX is no share of the link:
 * the reported speed is below the port's (EFA drivers before Linux's "RDMA/efa:
 * Report link speed according to device attributes" report 100 Gb/s for every
 * port, a p5en port is 200 Gb/s). The table prints such a cell as ">100?",
 * defined by a header line; the CSV keeps the figure (docs/csv.md). */
static const char *table_cell(const efab_run_info_t *ri, const efab_row_t *r, size_t i)
{
	if (!r->extra[i][0])
		return "-";
	if (!strcmp(ri->extra_cols[i], "pct_of_link") &&
	    strtod(r->extra[i], NULL) > EFAB_PCT_OF_LINK_MAX)
		return ">100?";
	return r->extra[i];
}

static int has_col(const efab_run_info_t *ri, const char *col)
{
	for (size_t i = 0; i < ri->n_extra; i++)
		if (!strcmp(ri->extra_cols[i], col))
			return 1;
	return 0;
}

void efab_table_notes(FILE *f, const efab_run_info_t *ri, const char *const *notes, size_t nnotes)
{
	fprintf(f, "# efabench %s: %s\n", EFAB_VERSION, ri->bench);
	fprintf(f, "# provider %s, fabric %s, domain %s\n", ri->provider, ri->fabric, ri->domain);
	fprintf(f, "# libfabric %s, provider version %s\n", ri->libfabric_version,
		ri->provider_version);
	if (ri->libfabric_built[0])
		fprintf(f, "# libfabric running %s (%s%s%s), built against %s headers, API %s asked\n",
			ri->libfabric_version, ri->libfabric_path[0] ? ri->libfabric_path : "path unknown",
			ri->efa_installer[0] ? ", EFA installer " : "", ri->efa_installer,
			ri->libfabric_built, ri->libfabric_api);
	if (ri->provider_req[0] || ri->fabric_req[0])
		fprintf(f, "# asked for provider %s, fabric %s\n",
			ri->provider_req[0] ? ri->provider_req : "(any)",
			ri->fabric_req[0] ? ri->fabric_req : "(any)");
	if (strstr(ri->provider_version, "simulated"))
		fprintf(f, "# %s\n", EFAB_SIMULATED_NOTE);
	fprintf(f, "# memory: local %s, remote %s; ranks %d\n", ri->mem_local, ri->mem_remote,
		ri->ranks);
	char clk[400];
	efab_clock_init(); /* idempotent: the benchmarks calibrate before they measure */
	efab_clock_describe(clk, sizeof(clk));
	fprintf(f, "# %s\n", clk);
	for (size_t i = 0; i < nnotes; i++)
		if (notes[i])
			fprintf(f, "# %s\n", notes[i]);
	if (has_col(ri, "pct_of_link"))
		fprintf(f, "# link_Gbps = the port speed libfabric reports (fi_info nic link_attr speed), "
			   "summed over the NICs in use; pct_of_link = bw_MBps*8/1000 / link_Gbps: above "
			   "100 %% it is printed as >100? (the CSV keeps the figure): the payload outran the "
			   "reported speed, so that speed is wrong (an EFA driver that reports 100 Gb/s for "
			   "a 200 Gb/s port), not a share of the link\n");
}

void efab_fold(FILE *f, const char *first, const char *more, int width, const char *text)
{
	const char *p = text, *pre = first;
	while ((int)(strlen(pre) + strlen(p)) > width) {
		const char *cut = p + (width - (int)strlen(pre));
		while (cut > p && *cut != ' ')
			cut--;
		if (cut == p) /* one word longer than the line: left whole */
			break;
		fprintf(f, "%s%.*s\n", pre, (int)(cut - p), p);
		p = cut + 1;
		pre = more;
	}
	fprintf(f, "%s%s\n", pre, p);
}

/* A header line of at most 120 characters; a longer one is folded at
 * spaces (a warning is never cut). */
void efab_header_line(FILE *f, const char *text)
{
	efab_fold(f, "# ", "# ", 120, text);
}

void efab_table_brief_head(FILE *f, const efab_run_info_t *ri, const char *op, int pairs)
{
	char line[700];
	snprintf(line, sizeof(line), "efabench %s: %s%s%s", EFAB_VERSION, ri->bench,
		 op ? ", op " : "", op ? op : "");
	efab_header_line(f, line);
	snprintf(line, sizeof(line),
		 "provider %s, fabric %s, domain %s; libfabric %s (provider %s)", ri->provider,
		 ri->fabric, ri->domain, ri->libfabric_version, ri->provider_version);
	efab_header_line(f, line);
	int n = snprintf(line, sizeof(line), "memory: local %s, remote %s; ranks %d", ri->mem_local,
			 ri->mem_remote, ri->ranks);
	if (pairs >= 0 && n > 0 && (size_t)n < sizeof(line))
		snprintf(line + n, sizeof(line) - (size_t)n, ", pairs %d", pairs);
	efab_header_line(f, line);
}

void efab_table_brief(FILE *f, const efab_run_info_t *ri, const char *const *lines, size_t n)
{
	efab_table_brief_head(f, ri, NULL, -1);
	if (strstr(ri->provider_version, "simulated"))
		efab_header_line(f, EFAB_SIMULATED_NOTE);
	for (size_t i = 0; i < n; i++)
		if (lines[i] && lines[i][0])
			efab_header_line(f, lines[i]);
	efab_header_line(f, EFAB_MORE_NOTE);
}

/* ---- the engine's table: chosen columns in fixed widths ---- */

enum { TC_LAT = 1, TC_BW = 2 };
enum {
	TC_SIZE,
	TC_OP,
	TC_ITERS,
	TC_MIN,
	TC_P50,
	TC_MEAN,
	TC_P99,
	TC_P999,
	TC_MAX,
	TC_STDEV,
	TC_BW_,
	TC_RATE,
	TC_ERRORS,
	TC_N
};
static const struct {
	const char *name, *csv; /* the header's name (with its unit), the CSV's */
	int width, needs;
} tcols[TC_N] = {
	[TC_SIZE] = {"size", "size_bytes", 8, 0},
	[TC_OP] = {"op", NULL, 10, 0},
	[TC_ITERS] = {"iters", NULL, 8, 0},
	[TC_MIN] = {"min_us", "lat_us_min", 9, TC_LAT},
	[TC_P50] = {"p50_us", "lat_us_p50", 9, TC_LAT},
	[TC_MEAN] = {"mean_us", "lat_us_mean", 9, TC_LAT},
	[TC_P99] = {"p99_us", "lat_us_p99", 9, TC_LAT},
	[TC_P999] = {"p99.9_us", "lat_us_p999", 9, TC_LAT},
	[TC_MAX] = {"max_us", "lat_us_max", 9, TC_LAT},
	[TC_STDEV] = {"stdev_us", "lat_us_stdev", 9, TC_LAT},
	[TC_BW_] = {"MB/s", "bw_MBps", 12, TC_BW},
	[TC_RATE] = {"Mops/s", "msg_rate_Mops", 10, TC_BW},
	[TC_ERRORS] = {"errors", NULL, 6, 0},
};

/* An extra column's width: its name's, at least 9, or its widest value's
 * where that is a known word (path, end_confirm, tclass). */
static int extra_width(const char *name)
{
	static const struct {
		const char *name;
		int width;
	} known[] = {{"path", 13}, {"end_confirm", 16}, {"tclass", 17}, {"hw_note", 24}};
	int w = (int)strlen(name);
	for (size_t i = 0; i < EFAB_ARRAY_SIZE(known); i++)
		if (!strcmp(known[i].name, name) && known[i].width > w)
			w = known[i].width;
	return w < 9 ? 9 : w;
}

/* Is name an element of the comma list (NULL: empty)? */
static int in_list(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; p && *p;) {
		const char *e = strchr(p, ',');
		size_t k = e ? (size_t)(e - p) : strlen(p);
		if (k == n && !strncmp(p, name, n))
			return 1;
		p = e ? e + 1 : p + k;
	}
	return 0;
}

static int tcol_applies(int i, int show_lat, int show_bw)
{
	return !tcols[i].needs || (tcols[i].needs == TC_LAT && show_lat) ||
	       (tcols[i].needs == TC_BW && show_bw);
}

/* The column called name (the table's or the CSV's name), or 0 if none. */
static int table_find(const efab_run_info_t *ri, int show_lat, int show_bw, const char *name,
		      int *col, int *width)
{
	for (int i = 0; i < TC_N; i++)
		if (tcol_applies(i, show_lat, show_bw) &&
		    (!strcmp(tcols[i].name, name) ||
		     (tcols[i].csv && !strcmp(tcols[i].csv, name)))) {
			*col = i;
			*width = tcols[i].width;
			return 1;
		}
	for (size_t i = 0; i < ri->n_extra; i++)
		if (!strcmp(ri->extra_cols[i], name)) {
			*col = -(int)i - 1;
			*width = extra_width(name);
			return 1;
		}
	return 0;
}

static void table_add(efab_table_t *t, int col, int width)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->col[i] == col)
			return;
	if (t->n < EFAB_TABLE_MAX) {
		t->col[t->n] = col;
		t->width[t->n++] = width;
	}
}

int efab_table_pick(efab_table_t *t, const efab_run_info_t *ri, int show_lat, int show_bw,
		    const char *spec, const char *dflt, const char *skip, char *err, size_t errlen)
{
	int col, width;
	t->n = 0;
	if (spec && !strcmp(spec, "all")) {
		for (int i = 0; i < TC_N; i++)
			if (tcol_applies(i, show_lat, show_bw))
				table_add(t, i, tcols[i].width);
		for (size_t i = 0; i < ri->n_extra; i++)
			if (table_shows(ri->extra_cols[i]) && !in_list(skip, ri->extra_cols[i]))
				table_add(t, -(int)i - 1, extra_width(ri->extra_cols[i]));
		return EFAB_OK;
	}
	int given = spec && *spec;
	const char *list = given ? spec : dflt;
	char name[64];
	for (const char *p = list; p && *p;) {
		const char *e = strchr(p, ',');
		size_t k = e ? (size_t)(e - p) : strlen(p);
		snprintf(name, sizeof(name), "%.*s", (int)(k < sizeof(name) ? k : sizeof(name) - 1),
			 p);
		p = e ? e + 1 : p + k;
		if (table_find(ri, show_lat, show_bw, name, &col, &width)) {
			table_add(t, col, width);
			continue;
		}
		if (!given)
			continue;
		size_t n = (size_t)snprintf(err, errlen,
					    "--columns: %s has no column '%s'; columns: all",
					    ri->bench, name);
		for (int i = 0; i < TC_N && n < errlen; i++)
			if (tcol_applies(i, show_lat, show_bw))
				n += (size_t)snprintf(err + n, errlen - n, ", %s", tcols[i].name);
		for (size_t i = 0; i < ri->n_extra && n < errlen; i++)
			if (table_shows(ri->extra_cols[i]))
				n += (size_t)snprintf(err + n, errlen - n, ", %s",
						      ri->extra_cols[i]);
		int nic = 0;
		for (size_t i = 0; i < ri->n_extra; i++)
			nic |= !strncmp(ri->extra_cols[i], "nic_", 4);
		if (n < errlen && nic)
			snprintf(err + n, errlen - n, " (and the CSV's nic_* counters)");
		return EFAB_EUSAGE;
	}
	if (!t->n) {
		snprintf(err, errlen, "--columns: no column named");
		return EFAB_EUSAGE;
	}
	return EFAB_OK;
}

const char *efab_table_spec(const efab_opts_t *o)
{
	return o->columns[0] ? o->columns : o->verbose ? "all" : "";
}

void efab_table_top(FILE *f, const efab_table_t *t, const efab_run_info_t *ri, int verbose,
		    const char *const *lines, size_t nlines, const char *const *notes,
		    size_t nnotes)
{
	if (verbose)
		efab_table_notes(f, ri, notes, nnotes);
	else
		efab_table_brief(f, ri, lines, nlines);
	efab_table_head(f, t, ri);
}

void efab_table_width(efab_table_t *t, const efab_run_info_t *ri, const char *name, int width)
{
	for (size_t i = 0; i < t->n; i++) {
		int c = t->col[i];
		if (!strcmp(c >= 0 ? tcols[c].name : ri->extra_cols[-c - 1], name) &&
		    width > t->width[i])
			t->width[i] = width;
	}
}

void efab_table_head(FILE *f, const efab_table_t *t, const efab_run_info_t *ri)
{
	for (size_t i = 0; i < t->n; i++)
		fprintf(f, "%s%*s", i ? " " : "", t->width[i],
			t->col[i] >= 0 ? tcols[t->col[i]].name : ri->extra_cols[-t->col[i] - 1]);
	fprintf(f, "\n");
	fflush(f);
}

void efab_table_line(FILE *f, const efab_table_t *t, const efab_run_info_t *ri, const efab_row_t *r)
{
	for (size_t i = 0; i < t->n; i++) {
		char cell[64];
		int c = t->col[i];
		const efab_stats_t *l = &r->lat;
		double lat[] = {[TC_MIN] = l->min,    [TC_P50] = l->p50,   [TC_MEAN] = l->mean,
				[TC_P99] = l->p99,    [TC_P999] = l->p999, [TC_MAX] = l->max,
				[TC_STDEV] = l->stdev};
		if (c < 0)
			snprintf(cell, sizeof(cell), "%s", table_cell(ri, r, (size_t)(-c - 1)));
		else if (c == TC_SIZE)
			efab_size_str(r->size, cell, sizeof(cell));
		else if (c == TC_OP)
			snprintf(cell, sizeof(cell), "%s", r->op);
		else if (c == TC_ITERS)
			snprintf(cell, sizeof(cell), "%llu", (unsigned long long)r->iters);
		else if (c == TC_ERRORS)
			snprintf(cell, sizeof(cell), "%llu", (unsigned long long)r->errors);
		else if (tcols[c].needs == TC_BW && !r->has_bw)
			snprintf(cell, sizeof(cell), "-");
		else if (c == TC_BW_)
			snprintf(cell, sizeof(cell), "%.2f", r->bw_MBps);
		else if (c == TC_RATE)
			snprintf(cell, sizeof(cell), "%.4f", r->msg_rate_Mops);
		else if (!r->has_lat)
			snprintf(cell, sizeof(cell), "-");
		else
			snprintf(cell, sizeof(cell), "%.2f", lat[c]);
		fprintf(f, "%s%*s", i ? " " : "", t->width[i], cell);
	}
	fprintf(f, "\n");
	fflush(f);
}
