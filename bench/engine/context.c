/* The context's own operations (context.h): notes, row cells and extra
 * rows, the payload pattern's fill and checks, the end of the job. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>

#include "context.h"

static void note_v(efab_ctx_t *c, int brief, const char *fmt, va_list ap)
{
	if (c->nnotes >= EFAB_MAX_NOTES)
		return;
	vsnprintf(c->notes[c->nnotes], sizeof(c->notes[0]), fmt, ap);
	c->note_brief[c->nnotes++] = (unsigned char)brief;
}

void efab_note(efab_ctx_t *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	note_v(c, 0, fmt, ap);
	va_end(ap);
}

void efab_note_brief(efab_ctx_t *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	note_v(c, 1, fmt, ap);
	va_end(ap);
}

void efab_row_vset(const efab_run_info_t *ri, efab_row_t *row, const char *name, const char *fmt,
		   va_list ap)
{
	for (size_t i = 0; i < ri->n_extra; i++)
		if (!strcmp(ri->extra_cols[i], name)) {
			vsnprintf(row->extra[i], sizeof(row->extra[0]), fmt, ap);
			return;
		}
}

void efab_row_set(const efab_ctx_t *c, efab_row_t *row, const char *name, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	efab_row_vset(&c->ri, row, name, fmt, ap);
	va_end(ap);
}

/* ---- the terminal table ---- */

int efab_table_columns(efab_ctx_t *c, char *err, size_t errlen)
{
	const efab_bench_row_t *b = c->row;
	const struct fi_info *fi = c->fab.info;
	char dflt[256], skip[256];
	const char *spec = efab_table_spec(&c->o);
	const char *cols = b->table_cols ? b->table_cols : "size,iters,errors";
	const char *pair = c->o.per_pair ? "pair," : "";
	/* --per-pair: pair right after the first column (its rows differ in it) */
	const char *rest = strchr(cols, ',');
	snprintf(dflt, sizeof(dflt), "%.*s,%s%s%s", rest ? (int)(rest - cols) : (int)strlen(cols),
		 cols, pair, rest ? rest + 1 : "", c->ev.on ? ",path" : "");
	int mtu = fi && fi->nic && fi->nic->link_attr && fi->nic->link_attr->mtu;
	snprintf(skip, sizeof(skip), "%s%s%s",
		 c->o.initiator != EFAB_INITIATOR_GPU ? "initiator,gpu_post_ns,gpu_threads," : "",
		 fi && c->op == EFAB_OP_WRITE && !mtu ? "lat_lower_bound," : "",
		 !c->o.check ? "late_msgs,late_bytes" : "");
	return efab_table_pick(&c->table, &c->ri, b->show_lat, b->show_bw, spec, dflt, skip, err,
			       errlen);
}

/* At default verbosity: what ran, on what, the metric in one line, any
 * warning; -v prints every note instead (efab_table_notes). */
static void print_brief(const efab_ctx_t *c, const char *op)
{
	const efab_run_info_t *ri = &c->ri;
	efab_table_brief_head(stdout, ri, op,
			      c->row->pattern != EFAB_PATTERN_NONE ? c->npairs : -1);
	if (c->nnodes > 1)
		efab_header_line(stdout, c->nodes_summary);
	if (strstr(ri->provider_version, "simulated"))
		efab_header_line(stdout, EFAB_SIMULATED_NOTE);
	if (c->row->brief)
		efab_header_line(stdout, c->row->brief);
	for (size_t i = 0; i < c->nnotes; i++)
		if (c->note_brief[i] || !strncmp(c->notes[i], "WARNING", 7))
			efab_header_line(stdout, c->notes[i]);
	efab_header_line(stdout, EFAB_MORE_NOTE);
}

void efab_table_header(efab_ctx_t *c, const char *op, const char *const *notes, size_t nnotes)
{
	char err[2048];
	if (efab_table_columns(c, err, sizeof(err))) /* checked before: cannot fail here */
		efab_log_error("%s", err);
	if (c->o.verbose)
		efab_table_notes(stdout, &c->ri, notes, nnotes);
	else
		print_brief(c, op);
	efab_table_head(stdout, &c->table, &c->ri);
}

int efab_more_row(efab_ctx_t *c, const efab_row_t *row)
{
	efab_row_t *r = realloc(c->more_rows, (c->n_more_rows + 1) * sizeof(*r));
	if (!r) {
		efab_log_error("out of memory for result rows");
		return EFAB_ERR;
	}
	r[c->n_more_rows++] = *row;
	c->more_rows = r;
	return EFAB_OK;
}

void efab_fail(efab_ctx_t *c)
{
	c->rt->abort(c->rt, EFAB_ERR);
}

/* ---- the payload ---- */

int efab_fill(efab_ctx_t *c, size_t off, size_t len, uint64_t seq)
{
	int host = efab_mem_host_accessible(c->mem.kind);
	uint8_t *p = host ? efab_local(c, off) : c->bounce;
	for (size_t j = 0; j + 1 < len; j++)
		p[j] = efab_pattern(seq, j);
	p[len - 1] = efab_tag(seq);
	return host ? EFAB_OK : efab_mem_write(&c->mem, off, c->bounce, len);
}

/* One comparison of [off, off+len) with message seq; corrupt flips a byte of
 * the copy first (the EFAB_FAULT_CORRUPT test hook). */
static uint64_t verify_once(efab_ctx_t *c, size_t off, size_t len, uint64_t seq, int corrupt)
{
	uint8_t *p;
	uint64_t bad = 0;
	if (efab_mem_host_accessible(c->mem.kind) && !corrupt) {
		p = efab_local(c, off);
	} else { /* a snapshot: other (identical) writes of the window may still land */
		if (efab_mem_read(&c->mem, off, c->bounce, len))
			return len;
		p = c->bounce;
	}
	if (corrupt)
		p[len / 2] ^= 0x01;
	for (size_t j = 0; j + 1 < len; j++)
		bad += p[j] != efab_pattern(seq, j);
	bad += p[len - 1] != efab_tag(seq);
	return bad;
}

/* EFAB_FAULT_CORRUPT=N flips one received byte of every Nth checked message
 * so the tests can prove that -c catches damage; that damage is persistent. */
static int fault_now(efab_ctx_t *c)
{
	return c->faults.corrupt_every && ++c->nverified % c->faults.corrupt_every == 0;
}

static uint64_t report(uint64_t bad, size_t len, uint64_t seq)
{
	if (bad && efab_log_verbose())
		efab_log_error("payload check: %llu of %zu bytes differ (message %llu)",
			       (unsigned long long)bad, len, (unsigned long long)seq);
	return bad ? 1 : 0;
}

uint64_t efab_verify(efab_ctx_t *c, size_t off, size_t len, uint64_t seq)
{
	return report(verify_once(c, off, len, seq, fault_now(c)), len, seq);
}

uint64_t efab_verify_settled(efab_ctx_t *c, size_t off, size_t len, uint64_t seq)
{
	int corrupt = fault_now(c);
	uint64_t bad = verify_once(c, off, len, seq, corrupt), first = bad;
	/* The tag byte can become visible before the bytes copied with it
	 * (x86 string copies do not store in address order): give the rest a
	 * moment to land, driving progress, before calling it an error. */
	for (int t = 0; bad && !corrupt && t < 2000; t++) {
		if (efab_progress(&c->fab) < 0)
			break;
		bad = verify_once(c, off, len, seq, 0);
		if (!bad) {
			c->late++;
			c->late_bytes += first;
		}
	}
	return report(bad, len, seq);
}
