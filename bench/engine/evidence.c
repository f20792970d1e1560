/* Proof of path (pattern.h): what the NIC did during a row's timed phase
 * (hardware counter deltas, and the path they show) and what the provider's
 * software cost per operation on the initiating CPU.
 *
 * Snapshots: every rank reads its NIC's counters (lib/hwc.c) after the
 * warmup and after the timed phase, each time between barriers, and settled:
 * progress driven for longer than the kernel's cache can be served
 * (lifespan + 1 jiffy, efab_hwc_wait_ms) before each read, until two reads
 * agree. A payload that had to cross a NIC but shows as "none" is read
 * again later and otherwise labelled "stale", never "none". Untimed work inside the phase: the stream's
 * end flag (8 B per initiating rank, efab_put_bw/get_bw's confirm), and where
 * MPI itself runs over the NIC (Open MPI's ofi MTL on EFA), the messages of
 * the closing barrier. The deltas of every rank are gathered; a NIC used by
 * several ranks (one host, one device) is counted once. */
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "efab_clock.h"
#include "context.h"
#include "evidence.h"

enum { EV_PATH, EV_RATIO, EV_PAYLOAD, EV_NICS, EV_NOTE, EV_POST, EV_POLL, EV_N_FIXED };
static const char *const ev_fixed[EV_N_FIXED] = {"path",    "path_ratio", "payload_bytes", "hw_nics",
						 "hw_note", "post_ns",    "poll_ns"};
static char ev_side_names[2][EFAB_HWC_N][40];
static const char *const side_prefix[2] = {"nic_init_", "nic_tgt_"};

void efab_evidence_columns(efab_run_info_t *ri)
{
	for (int i = 0; i < EV_N_FIXED && ri->n_extra < EFAB_MAX_EXTRA; i++)
		ri->extra_cols[ri->n_extra++] = ev_fixed[i];
	for (int s = 0; s < 2; s++)
		for (int k = 0; k < EFAB_HWC_N && ri->n_extra < EFAB_MAX_EXTRA; k++) {
			snprintf(ev_side_names[s][k], sizeof(ev_side_names[s][k]), "%s%s", side_prefix[s],
				 efab_hwc_names[k]);
			ri->extra_cols[ri->n_extra++] = ev_side_names[s][k];
		}
}

int efab_evidence_setup(efab_ctx_t *c)
{
	struct efab_evidence *e = &c->ev;
	const struct fi_info *info = c->fab.info;
	const char *dev = info && info->nic && info->nic->device_attr ? info->nic->device_attr->name : NULL;
	const char *off = getenv("EFAB_NIC_COUNTERS");
	memset(e, 0, sizeof(*e));
	if (!(off && !strcmp(off, "0")) && dev && efab_hwc_open(dev, &e->h) == EFAB_OK)
		e->have = 1;
	double mine = e->have, any = 0;
	if (c->rt->allreduce(c->rt, &mine, &any, 1, EFAB_RT_MAX))
		return EFAB_ERR;
	e->on = any > 0 && !c->tolerate; /* efab_scan (tolerant) reads them per round itself */
	if (c->rt->rank == 0 && c->row->pattern != EFAB_PATTERN_NONE)
		efab_note(c, "post_ns = ns per operation inside the post calls (fi_write/fi_read/fi_atomic, "
			     "-FI_EAGAIN retries and the progress they drive included); poll_ns = ns per "
			     "completion inside the fi_cq_read calls of the completion waits that returned "
			     "some; medians over the sampled iterations (each post timed) or measured "
			     "windows (the window's post phase timed whole), cycle counter, never in the "
			     "batch; initiating ranks");
	if (e->on && c->rt->rank == 0) {
		if (e->have)
			efab_note(c, "NIC counters: %s (%d counter files, %s; lifespan %u ms), read on every "
				     "rank before and after each size's timed phase, settled (the kernel "
				     "serves a cache up to lifespan + 1 jiffy old: progress driven for %.0f ms "
				     "before each read, until two reads agree); nic_init_*/nic_tgt_*: "
				     "deltas summed over the distinct NICs of the initiating/target ranks",
				  e->h.dev, e->h.nfiles, e->h.dir, e->h.lifespan_ms, efab_hwc_wait_ms(&e->h));
		else
			efab_note(c, "NIC counters: none on rank 0's NIC; other ranks' are read");
		efab_note(
			c,
			"path: which counter carried the payload (payload_bytes) over every NIC: "
			"rdma_write_bytes -> device-write, rdma_read_bytes -> device-read, "
			"send_bytes -> emulated-send (>= 0.9 of it; several or a split: mixed; "
			"less than 0.9 in all three: none, the payload did not cross a NIC; "
			"stale: it had to cross one -- efa-direct, or ranks on different hosts -- "
			"and the counters, read again, still did not count it); "
			"path_ratio = those bytes / payload%s",
			c->o.signal_send
				? "; --signal-send: send_bytes left out where the RDMA "
				  "counters carried the payload (the sends are the signals "
				  "and credits)"
				: "");
	}
	return EFAB_OK;
}

/* Drive progress for ms (the kernel's counter cache to expire), sleeping
 * 100 us between polls: nothing is timed here, and the cores stay free for
 * whatever else must run (on a shared machine, the peer's progress). */
static int drive_for(void *arg, double ms)
{
	efab_ctx_t *c = arg;
	efab_deadline_t d = efab_deadline_in(ms / 1000.0);
	const struct timespec nap = {0, 100000};
	while (!efab_deadline_passed(d)) {
		if (efab_progress(&c->fab) < 0)
			return EFAB_ERR;
		nanosleep(&nap, NULL);
	}
	return EFAB_OK;
}

static int snapshot(efab_ctx_t *c, efab_hwc_snap_t *s)
{
	int settled = 1;
	if (c->ev.have && efab_hwc_settle(&c->ev.h, 5, drive_for, c, s, &settled))
		return EFAB_ERR;
	c->ev.settled &= settled;
	return EFAB_OK;
}

int efab_evidence_begin(efab_ctx_t *c, efab_waitfor_t *w)
{
	const char *what = w->what;
	if (!c->ev.on || c->tolerate)
		return EFAB_OK;
	c->ev.settled = 1;
	c->ev.note[0] = 0;
	w->what = "the other ranks before the NIC counter snapshot";
	if (efab_barrier_progress(&c->fab, w) || snapshot(c, &c->ev.before))
		return EFAB_ERR;
	w->what = "the other ranks after the NIC counter snapshot";
	int rc = efab_barrier_progress(&c->fab, w);
	w->what = what;
	return rc;
}

int efab_evidence_end(efab_ctx_t *c, efab_waitfor_t *w)
{
	efab_hwc_snap_t after;
	const char *what = w->what;
	if (!c->ev.on || c->tolerate)
		return EFAB_OK;
	if (snapshot(c, &after))
		return EFAB_ERR;
	if (c->ev.have)
		efab_hwc_delta(&c->ev.before, &after, &c->ev.delta, c->ev.note, sizeof(c->ev.note));
	/* nobody's after-work (checks, the next size) before every snapshot is taken */
	w->what = "the other ranks after the NIC counter snapshot";
	int rc = efab_barrier_progress(&c->fab, w);
	w->what = what;
	return rc;
}

typedef struct ev_share {
	char key[640]; /* host:counter directory ("" without counters) */
	char host[128];
	char note[64];
	efab_hwc_snap_t d;
	double payload;
	double post_ns, post_ops, poll_ns, poll_n; /* this rank's medians (n: 1 if it has one) */
	int initiator, settled, peer;
} ev_share_t;

static void set_u64(const efab_ctx_t *c, efab_row_t *row, const char *name, uint64_t v)
{
	efab_row_set(c, row, name, "%llu", (unsigned long long)v);
}

/* The payload had to cross a NIC: efa-direct has no other path, and between
 * hosts no fabric has one (the efa fabric's shm serves ranks of one host). */
static int payload_crossed(const efab_ctx_t *c, const ev_share_t *all)
{
	const struct fi_info *info = c->fab.info;
	if (info && info->fabric_attr && info->fabric_attr->name &&
	    !strcmp(info->fabric_attr->name, "efa-direct"))
		return 1;
	for (int r = 0; r < c->rt->size; r++)
		if (all[r].initiator && all[r].peer >= 0 && all[r].peer < c->rt->size &&
		    strcmp(all[r].host, all[all[r].peer].host))
			return 1;
	return 0;
}

/* This rank's share of the row, gathered into all (rt->size entries). */
static int gather(efab_ctx_t *c, double payload, ev_share_t *all)
{
	ev_share_t mine;
	memset(&mine, 0, sizeof(mine));
	mine.payload = payload;
	mine.initiator = c->initiator;
	mine.peer = c->peer;
	mine.settled = c->ev.settled;
	gethostname(mine.host, sizeof(mine.host) - 1);
	if (c->ncost_post) {
		efab_stats_t st;
		efab_stats_compute(c->cost_post, c->ncost_post, &st);
		mine.post_ns = st.p50;
		mine.post_ops = 1;
	}
	if (c->ncost_poll) {
		efab_stats_t st;
		efab_stats_compute(c->cost_poll, c->ncost_poll, &st);
		mine.poll_ns = st.p50;
		mine.poll_n = 1;
	}
	if (c->ev.on && c->ev.have && !c->tolerate) {
		snprintf(mine.key, sizeof(mine.key), "%s:%s", mine.host, c->ev.h.dir);
		mine.d = c->ev.delta;
		snprintf(mine.note, sizeof(mine.note), "%s", c->ev.note);
	}
	if (c->rt->allgather(c->rt, &mine, all, sizeof(mine))) {
		efab_log_error("gathering the NIC counters failed");
		return EFAB_ERR;
	}
	return EFAB_OK;
}

/* The deltas of the distinct NICs, by side (0 initiators, 1 targets) and in
 * all; the NICs counted, the first note, whether every snapshot settled. */
typedef struct ev_sum {
	efab_hwc_snap_t side[2], total;
	int nics, nside[2], settled;
	const char *note;
} ev_sum_t;

static void sum_nics(const efab_ctx_t *c, const ev_share_t *all, ev_sum_t *m)
{
	memset(m, 0, sizeof(*m));
	m->settled = 1;
	m->side[0].have = m->side[1].have = m->total.have = (1u << EFAB_HWC_N) - 1;
	for (int r = 0; r < c->rt->size; r++) {
		const ev_share_t *a = &all[r];
		if (!a->key[0])
			continue;
		int seen = 0;
		for (int q = 0; q < r && !seen; q++)
			seen = !strcmp(all[q].key, a->key);
		if (seen)
			continue;
		int s = a->initiator ? 0 : 1;
		m->nics++;
		m->nside[s]++;
		m->settled &= a->settled;
		if (!m->note && a->note[0])
			m->note = a->note;
		m->side[s].have &= a->d.have;
		m->total.have &= a->d.have;
		for (int k = 0; k < EFAB_HWC_N; k++) {
			m->side[s].v[k] += a->d.v[k];
			m->total.v[k] += a->d.v[k];
		}
	}
}

/* The after-snapshot again, later: a payload that crossed a NIC and left
 * (nearly) nothing in its counters was read from a cache older than the
 * kernel's rule allows for (a lifespan changed under the run, a driver that
 * caches longer), so wait EFAB_HWC_REREAD times the settle wait and read
 * again, on every rank (each decides from the same gathered figures). */
#define EFAB_HWC_REREAD 8

static int reread(efab_ctx_t *c)
{
	if (!c->ev.have)
		return EFAB_OK;
	efab_hwc_snap_t after;
	int settled = 0;
	if (drive_for(c, efab_hwc_wait_ms(&c->ev.h) * EFAB_HWC_REREAD) ||
	    efab_hwc_settle(&c->ev.h, 5, drive_for, c, &after, &settled))
		return EFAB_ERR;
	c->ev.settled = settled;
	efab_hwc_delta(&c->ev.before, &after, &c->ev.delta, c->ev.note, sizeof(c->ev.note));
	return EFAB_OK;
}

/* The path of the NICs' totals; --signal-send's messages (its signals and
 * credits, every one a send) are no payload: the path is judged on the RDMA
 * counters alone (the nic_* columns keep send_bytes). */
static const char *path_of(const efab_ctx_t *c, const efab_hwc_snap_t *total, double P,
			   double *ratio)
{
	efab_hwc_snap_t t = *total;
	if (!c->o.signal_send)
		return efab_hwc_path(total, P, ratio);
	t.have &= ~(1u << EFAB_HWC_send_bytes);
	const char *p = efab_hwc_path(&t, P, ratio);
	/* the RDMA counters did not carry it (the efa fabric's emulated
	 * writedata are sends too): the whole judgement, signals included */
	if (!strcmp(p, "none"))
		p = efab_hwc_path(total, P, ratio);
	return p;
}

int efab_evidence_report(efab_ctx_t *c, double payload, efab_row_t *row)
{
	ev_share_t *all = calloc((size_t)c->rt->size, sizeof(*all));
	if (!all) {
		efab_log_error("gathering the NIC counters failed: out of memory");
		return EFAB_ERR;
	}
	if (gather(c, payload, all)) {
		free(all);
		return EFAB_ERR;
	}
	double P = 0, post = 0, post_ops = 0, poll = 0, poll_n = 0;
	for (int r = 0; r < c->rt->size; r++) {
		P += all[r].payload;
		post += all[r].post_ns;
		post_ops += all[r].post_ops;
		poll += all[r].poll_ns;
		poll_n += all[r].poll_n;
	}
	ev_sum_t m;
	sum_nics(c, all, &m);
	efab_row_set(c, row, "payload_bytes", "%.0f", P);
	if (post_ops > 0)
		efab_row_set(c, row, "post_ns", "%.1f", post / post_ops);
	if (poll_n > 0)
		efab_row_set(c, row, "poll_ns", "%.1f", poll / poll_n);
	if (!m.nics) {
		efab_row_set(c, row, "path", "-");
		free(all);
		return EFAB_OK;
	}
	double ratio = 0;
	const char *path = path_of(c, &m.total, P, &ratio);
	const char *stale = NULL;
	if (!strcmp(path, "none") && payload_crossed(c, all)) {
		/* never "did not cross a NIC" for a payload that had to */
		if (reread(c) || gather(c, payload, all)) {
			free(all);
			return EFAB_ERR;
		}
		sum_nics(c, all, &m);
		path = path_of(c, &m.total, P, &ratio);
		if (!strcmp(path, "none")) {
			path = "stale";
			stale = "counters stale: the payload crossed a NIC but they did not count it, "
				"also when read again";
		} else {
			stale = "counters read again: the settled snapshot was stale";
		}
	}
	efab_row_set(c, row, "path", "%s", path);
	if (strcmp(path, "-"))
		efab_row_set(c, row, "path_ratio", "%.6f", ratio);
	efab_row_set(c, row, "hw_nics", "%d", m.nics);
	if (m.note)
		efab_row_set(c, row, "hw_note", "%s", m.note);
	else if (stale)
		efab_row_set(c, row, "hw_note", "%s", stale);
	else if (!m.settled)
		efab_row_set(c, row, "hw_note", "counters still moving at a snapshot");
	for (int s = 0; s < 2; s++) {
		if (!m.nside[s])
			continue;
		for (int k = 0; k < EFAB_HWC_N; k++)
			if (m.side[s].have & (1u << k))
				set_u64(c, row, ev_side_names[s][k], m.side[s].v[k]);
	}
	free(all);
	return EFAB_OK;
}
