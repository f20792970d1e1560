/* A scan verdict as text: one line per flag, and the JSON document
 * (efab_scan.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "efab.h"
#include "efab_scan.h"
#include "scan_internal.h"

void efab_scan_flag_line(const efab_scan_data_t *d, const efab_scan_flag_t *f, char *buf,
			 size_t len)
{
	size_t n = 0;
	if (!len)
		return;
	buf[0] = 0;
	switch (f->subject) {
	case EFAB_SCAN_SUBJ_NODE: scan_put(buf, len, &n, "node %s", d->node_names[f->node]); break;
	case EFAB_SCAN_SUBJ_NIC:
		scan_put(buf, len, &n, "node %s NIC %s", d->node_names[f->node], scan_nic_name(d, f->node, f->nic));
		break;
	case EFAB_SCAN_SUBJ_INDEX: scan_put(buf, len, &n, "NIC index %d", f->nic); break;
	default:
		scan_put(buf, len, &n, "pair %s NIC %s %s %s NIC %s", d->node_names[f->node],
		    scan_nic_name(d, f->node, f->nic),
		    f->kind == EFAB_SCAN_KIND_SLOW_BW && !f->both ? "->" : "-", d->node_names[f->peer],
		    scan_nic_name(d, f->peer, f->nic));
	}
	scan_put(buf, len, &n, ": %s: %s", efab_scan_kind_name(f->kind), f->evidence);
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
			json_str(fp, scan_nic_name(d, f->node, f->nic));
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
			json_str(fp, scan_nic_name(d, f->peer, f->nic));
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
		json_num(fp, f->metric < EFAB_SCAN_NMETRIC ? scan_shown_ratio(f->metric, f->ratio) : NAN);
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
			json_str(fp, scan_nic_name(d, g->a, g->nic));
			fputs(", \"node_b\": ", fp);
			json_str(fp, d->node_names[g->b]);
			fputs(", \"nic_b\": ", fp);
			json_str(fp, scan_nic_name(d, g->b, g->nic));
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
				json_str(fp, scan_why_of(d, g->a, g->b, g->nic));
			}
			if (g->metric == EFAB_SCAN_NIC_COUNTERS) {
				fputs(", \"counters_a\": ", fp);
				json_str(fp, scan_trouble(d, g->a, g->b, g->nic));
				fputs(", \"counters_b\": ", fp);
				json_str(fp, scan_trouble(d, g->b, g->a, g->nic));
			}
			fputc('}', fp);
		}
		fputs(f->nev ? "\n     ]}" : "]}", fp);
	}
	fputs(v->nflags ? "\n  ]\n}\n" : "]\n}\n", fp);
	return ferror(fp) ? EFAB_ERR : EFAB_OK;
}
