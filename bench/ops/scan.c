/* efab_scan: which node or NIC of a cluster is slow.
 *
 * One rank per NIC and node (K ranks per node for K NICs: NIC i of a node is
 * the i-th domain the fabric lists there), each bound near its NIC (hwloc,
 * bind_near_nic) before its buffers are allocated. Nodes meet in a round-robin
 * tournament (lib/scan.c): N-1 rounds of N/2 disjoint node pairs (N odd: N
 * rounds, one node sits out each), and in a round NIC i of node a works with
 * NIC i of node b, every NIC and pair at once. Per pair and NIC, the same
 * measurements as the benchmarks with the same code (bench/ops/rma_lat.c,
 * bench/ops/rma_bw.c):
 *   latency   = half the round trip of a write ping-pong (efab_put_lat), p50,
 *               one NIC at a time (the pair's other ranks wait asleep);
 *   bandwidth = bytes / elapsed time of the timed loop (efab_put_bw's bw_MBps),
 *               every NIC at once, each direction in turn: a->b, then b->a,
 *               each for --time (a deadline: a slow NIC moves what it moves
 *               in the time).
 * Each pair measures on endpoints of its own, opened for the pair and closed
 * after it, and the patterns run tolerant (c->tolerate): a pair that makes no
 * progress within --timeout, or gets an error completion, is a failed pair --
 * recorded with its phase and error, its endpoints and what they left in
 * flight closed -- and the scan goes on; only a dead process ends the job.
 * Rank 0 gathers every round's figures, writes them as CSV rows as they come,
 * and at the end prints the node x node matrices, the per-NIC table and the
 * verdict (lib/scan.c): exit 0 when nothing is flagged, 1 otherwise.
 *
 * This file: the placement (a rank per NIC, bound near it), the plan and
 * set-up, a pair's endpoints and measurements, one round; scan_drive.c:
 * the passes, the figures, the CSV rows, the report and the verdict. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "efab_clock.h"
#include "efab_hwc.h"
#include "efab_ops.h"
#include "efab_result.h"
#include "efab_scan.h"
#include "efab_select.h"
#include "efab_topo.h"
#include "mpi_rt.h"
#include "rma.h"
#include "scan_int.h"

/* NIC i of this node: the i-th distinct domain of the fabric(s) that match
 * -p/-f here, in fi_getinfo's order; busids[i] its PCI address where the
 * provider gives one (nic->bus_attr), else "". */
static int list_nics(const efab_fabric_req_t *req, char (*names)[NIC_LEN], char (*busids)[16],
		     int most)
{
	struct fi_info *hints = efab_hints_build(req), *list = NULL;
	if (!hints) {
		efab_log_error("out of memory building fi_getinfo hints");
		return -1;
	}
	int ret = fi_getinfo(EFAB_FI_VERSION, NULL, NULL, 0, hints, &list);
	fi_freeinfo(hints);
	if (ret && ret != -FI_ENODATA) {
		efab_log_error("fi_getinfo: %s", fi_strerror(-ret));
		return -1;
	}
	int n = 0;
	for (const struct fi_info *i = ret ? NULL : list; i && n < most; i = i->next) {
		efab_fabric_req_t one = *req;
		one.domain = i->domain_attr->name;
		if (efab_info_match(i, &one) != i)
			continue;
		/* the loopback interface is no NIC between nodes (tcp lists it) */
		if (!strcmp(i->domain_attr->name, "lo") && !(req->fabric && *req->fabric))
			continue;
		int seen = 0;
		for (int k = 0; k < n; k++)
			seen |= !strcmp(names[k], i->domain_attr->name);
		if (seen)
			continue;
		busids[n][0] = 0;
		if (i->nic && i->nic->bus_attr && i->nic->bus_attr->bus_type == FI_BUS_PCI) {
			const struct fi_pci_attr *a = &i->nic->bus_attr->attr.pci;
			snprintf(busids[n], sizeof(busids[n]), "%04x:%02x:%02x.%x", a->domain_id, a->bus_id,
				 a->device_id, a->function_id);
		}
		snprintf(names[n++], NIC_LEN, "%s", i->domain_attr->name);
	}
	fi_freeinfo(list);
	return n;
}

/* Nodes from hostnames (in order of their first rank), this rank's NIC
 * index among its node's ranks, and its domain. */
/* Nodes in order of their first rank, this rank's node and NIC index, and
 * every node's rank count (the same everywhere: one rank per NIC). */
static int layout_nodes(efab_ctx_t *c)
{
	scan_state_t *scan = c->priv;
	efab_rt_t *rt = c->rt;
	int *first = calloc((size_t)rt->size, sizeof(int)), *count = calloc((size_t)rt->size, sizeof(int));
	int rc = EFAB_OK;
	if (!first || !count) {
		efab_log_error("out of memory");
		rc = EFAB_ERR;
		goto out;
	}
	for (int r = 0; r < rt->size; r++) {
		int n = 0;
		while (n < scan->nodes && strcmp(scan->ranks[first[n]].host, scan->ranks[r].host))
			n++;
		if (n == scan->nodes)
			first[scan->nodes++] = r;
		if (r == rt->rank) {
			scan->node = n;
			scan->nic = count[n];
		}
		count[n]++;
	}
	scan->nics = count[0];
	for (int n = 1; n < scan->nodes && !rc; n++)
		if (count[n] != scan->nics) {
			if (rt->rank == 0)
				efab_log_error("every node needs the same number of ranks (one per NIC): "
					       "%s has %d, %s has %d", scan->ranks[first[0]].host, scan->nics,
					       scan->ranks[first[n]].host, count[n]);
			rc = EFAB_EUSAGE;
		}
	if (!rc && scan->nodes < 2) {
		if (rt->rank == 0)
			efab_log_error("all %d ranks run on %s: a scan needs at least 2 nodes", rt->size,
				       scan->ranks[0].host);
		rc = EFAB_EUSAGE;
	}
out:
	free(first);
	free(count);
	return rc;
}

/* Binds this rank near its NIC (hwloc): to the cores of the NIC's nearest
 * non-I/O ancestor -- its NUMA node, or its package -- so that the rank's
 * polling, and its buffers (allocated after this, placed by first touch),
 * sit on the NIC's side of the machine. One rank per NIC takes NIC i by its
 * order among the ranks of its node, not by where the launcher put it:
 * without this a rank may drive its NIC across the socket link (Slurm's
 * default distribution, mpirun's --bind-to), and that NIC's index then
 * looks slow on every node (issue 59). The NIC is found in the topology by
 * its PCI address (fi_info nic->bus_attr), else by its OS name at the
 * start of the domain name (efab_info_is_nic's rule). A rank that cannot be
 * bound (no NIC in the topology: tcp's eth0; an XML test topology, which
 * hwloc does not bind to) runs where it was and says why in *why. */
static int bind_near_nic(const char *busid, const char *domain, char *why, size_t len)
{
	efab_topo_t t;
	int verbose = efab_log_verbose(), rc = 0;
	efab_log_set_verbose(-1); /* the reason goes to the header, once for all ranks */
	if (efab_topo_load(NULL, &t)) {
		snprintf(why, len, "not bound: hwloc could not load the topology");
		efab_log_set_verbose(verbose);
		return 0;
	}
	int k = -1;
	for (int j = 0; j < t.nnics && k < 0; j++) {
		size_t n = strlen(t.nics[j].name);
		if ((busid[0] && !strcasecmp(t.nics[j].busid, busid)) ||
		    (!busid[0] && n && !strncmp(domain, t.nics[j].name, n) &&
		     (domain[n] == '\0' || domain[n] == '-')))
			k = j;
	}
	if (k < 0) {
		snprintf(why, len, "not bound: NIC %s%s%s%s not in the hwloc topology", domain,
			 busid[0] ? " (" : "", busid, busid[0] ? ")" : "");
	} else if (!t.nics[k].cpuset[0]) {
		snprintf(why, len, "not bound: no cpuset near NIC %s in the topology", t.nics[k].name);
	} else {
		efab_pairing_t p;
		memset(&p, 0, sizeof(p));
		p.gpu = -1;
		p.nic = k;
		p.numa = t.nics[k].numa;
		snprintf(p.cpuset, sizeof(p.cpuset), "%s", t.nics[k].cpuset);
		if (efab_topo_bind(&t, &p)) {
			snprintf(why, len, "not bound to cpus %s (NUMA node %d, NIC %s's): hwloc refused%s",
				 p.cpuset, p.numa, t.nics[k].name,
				 getenv("HWLOC_XMLFILE") ? " (an XML topology)" : "");
		} else {
			snprintf(why, len, "cpus %s (NUMA node %d, NIC %s's)", p.cpuset, p.numa,
				 t.nics[k].name);
			rc = 1;
		}
	}
	efab_topo_free(&t);
	efab_log_set_verbose(verbose);
	return rc;
}

/* This rank's NIC: the nic-th of the fabric's, with one rank per NIC; the
 * rank is then bound near it. */
static int pick_nic(efab_ctx_t *c, efab_fabric_req_t *req, const char *host)
{
	scan_state_t *scan = c->priv;
	char names[64][NIC_LEN], busids[64][16];
	int have = list_nics(req, names, busids, 64), per_node = scan->nics;
	int want = c->o.nics ? (int)c->o.nics : have;
	if (have < 0)
		return EFAB_ERR;
	if (have == 0) {
		efab_log_error("%s: no NIC of %s%s%s offers RMA", host,
			       req->provider && *req->provider ? req->provider : "any provider",
			       req->fabric && *req->fabric ? " fabric " : "",
			       req->fabric && *req->fabric ? req->fabric : "");
		return EFAB_SKIP;
	}
	if (want > have) {
		efab_log_error("--nics %d: %s lists only %d NIC%s for this fabric", want, host, have,
			       have == 1 ? "" : "s");
		return EFAB_EUSAGE;
	}
	if (per_node != want) {
		if (c->rt->rank == 0)
			efab_log_error("%d NIC%s per node to scan but %d rank%s per node: run one rank "
				       "per NIC (mpirun --map-by ppr:%d:node, srun "
				       "--ntasks-per-node=%d)%s",
				       want, want == 1 ? "" : "s", per_node, per_node == 1 ? "" : "s", want,
				       want, c->o.nics ? "" : ", or --nics K");
		return EFAB_EUSAGE;
	}
	snprintf(scan->domain, sizeof(scan->domain), "%s", names[scan->nic]);
	req->domain = scan->domain;
	/* --domain auto's placement (the harness's) paired the rank with a NIC
	 * by hwloc's bus order, which need not be this one: the domain asked
	 * for is this NIC, and so is the binding */
	req->nic_busid = NULL;
	req->nic_name = NULL;
	scan->bound = bind_near_nic(busids[scan->nic], scan->domain, scan->bind, sizeof(scan->bind));
	return EFAB_OK;
}

/* Collective, before selection: every rank's host, the node layout, this
 * rank's NIC; the sizes cover the ping-pong and the windows. */
int scan_plan(efab_ctx_t *c, efab_fabric_req_t *req)
{
	scan_state_t *scan = c->priv;
	efab_rt_t *rt = c->rt;
	scan_rank_t me;
	memset(&me, 0, sizeof(me));
	gethostname(me.host, sizeof(me.host) - 1);
	scan->ranks = calloc((size_t)rt->size, sizeof(*scan->ranks));
	if (!scan->ranks) {
		efab_log_error("out of memory");
		return EFAB_ERR;
	}
	if (rt->allgather(rt, &me, scan->ranks, sizeof(me)))
		return EFAB_ERR;
	int rc = layout_nodes(c);
	if (rc || (rc = pick_nic(c, req, me.host)))
		return rc;
	/* buffers: the ping-pong's 4 slots and a window's 2 at the larger size */
	uint64_t lo = c->o.lat_size < c->o.bw_size ? c->o.lat_size : c->o.bw_size;
	uint64_t hi = c->o.lat_size < c->o.bw_size ? c->o.bw_size : c->o.lat_size;
	c->o.sizes = (efab_sizes_t){lo, hi, hi / lo > 1 ? hi / lo : 2};
	if (!c->o.time_s && !c->o.iters)
		c->o.time_s = 0.5;
	return EFAB_OK;
}

int scan_setup(efab_ctx_t *c)
{
	scan_state_t *scan = c->priv;
	efab_rt_t *rt = c->rt;
	size_t units = (size_t)scan->nodes * (size_t)scan->nics;
	scan->rank_of = malloc(units * sizeof(int));
	scan->node_names = calloc((size_t)scan->nodes, sizeof(char *));
	scan->nic_names = calloc(units, sizeof(char *));
	scan_rank_t me;
	memset(&me, 0, sizeof(me));
	gethostname(me.host, sizeof(me.host) - 1);
	snprintf(me.nic, sizeof(me.nic), "%s", c->fab.info->domain_attr->name);
	snprintf(me.bind, sizeof(me.bind), "%s", scan->bind);
	me.bound = scan->bound;
	if (!scan->rank_of || !scan->node_names || !scan->nic_names ||
	    rt->allgather(rt, &me, scan->ranks, sizeof(me))) {
		efab_log_error("out of memory");
		return EFAB_ERR;
	}
	/* the same walk as scan_plan: ranks in order, nodes by first appearance */
	int *seen = calloc(units + 1, sizeof(int));
	if (!seen)
		return EFAB_ERR;
	for (int r = 0, nodes = 0; r < rt->size; r++) {
		int n = 0;
		while (n < nodes && strcmp(scan->node_names[n], scan->ranks[r].host))
			n++;
		if (n == nodes)
			scan->node_names[nodes++] = scan->ranks[r].host;
		int i = seen[n]++;
		scan->rank_of[n * scan->nics + i] = r;
		scan->nic_names[n * scan->nics + i] = scan->ranks[r].nic;
	}
	free(seen);
	scan->world_size = rt->size;
	c->npairs = scan->nodes / 2 * scan->nics;
	return efab_rma_stream_setup(c);
}

/* The scan's state lives in c->priv from the first callback to teardown. */
/* A window of the bandwidth phase when -W is not given: 4 x --bw-size (4 MiB
 * in flight, about 8x the bandwidth-delay product of a 200 Gb/s EFA NIC at a
 * 20 us round trip) keeps the NIC busy, and bounds what a slow NIC adds to a
 * direction, whose --time is a deadline: its first window and one measured,
 * 2 x 4 MiB, fit in the default 0.5 s down to 17 MB/s. */
#define SCAN_WINDOW 4

int scan_check_opts(efab_ctx_t *c)
{
	c->priv = calloc(1, sizeof(scan_state_t));
	if (!c->priv) {
		efab_log_error("out of memory");
		return EFAB_ERR;
	}
	c->tolerate = 1; /* a failed pair is a finding, not the end of the scan */
	c->budget = 1;   /* --time per direction is a deadline */
	if (!c->o.window_given)
		c->o.window = SCAN_WINDOW;
	return EFAB_OK;
}

void scan_teardown(efab_ctx_t *c)
{
	scan_state_t *scan = c->priv;
	if (!scan)
		return;
	free(scan->rank_of);
	free(scan->ranks);
	free(scan->node_names);
	free(scan->nic_names);
	free(scan);
	c->priv = NULL;
}

/* A write's local completion need not mean its data is in the target's
 * memory (tcp: handed to the socket). Within one pair that is harmless, the
 * connection is ordered; across rounds it is not: late bandwidth data from
 * the last partner could overwrite the next partner's ping-pong tag. Where
 * reads are ordered after writes (FI_ORDER_RAW), the writer reads one byte
 * back once its windows are done, which returns only after every earlier
 * write landed. Without that order (EFA's SRD) a write completes when the
 * target acknowledged it, so nothing is in flight. */
static int flush_writes(efab_ctx_t *c)
{
	uint64_t raw = FI_ORDER_RAW;
#ifdef FI_ORDER_RMA_RAW
	raw |= FI_ORDER_RMA_RAW;
#endif
	size_t off = 4 * c->o.sizes.max - 1; /* the last byte of the send area, never written remotely */
	efab_waitfor_t w = {"the read that flushes the windows' writes", "read", 1, c->peer, 0};
	if (!c->failed && c->initiator && (c->fab.info->tx_attr->msg_order & raw) &&
	    (efab_post_read(&c->fab, c->peer, efab_local(c, off), 1, c->ldesc,
			    efab_raddr(c, c->peer, off), c->rkeys[c->peer].key, &w) ||
	     efab_wait_tx(&c->fab, c->fab.tx_posted, &w)))
		c->failed = 1;
	w.what = "the pair after the flush";
	/* every rank of the pair arrives here, failed or not (tolerant barrier) */
	return efab_barrier_settle(&c->fab, &w, &c->failed) ? EFAB_ERR : EFAB_OK;
}

/* Record this rank's first failure: the phase and the error it logged. */
static void note_failure(efab_ctx_t *c, scan_report_t *rep, const char *phase)
{
	if (!c->failed)
		return;
	if (!rep->failed)
		snprintf(rep->why, sizeof(rep->why), "%s: %s", phase, efab_log_last_error());
	rep->failed = 1;
}

/* The ping-pong, one NIC at a time: NIC i's two ranks on their own
 * sub-runtime while the pair's other ranks wait asleep, so that a latency
 * figure never includes the node's other NICs' traffic (or, on nodes that
 * share cores, their spinning). A NIC pair whose ping-pong failed is failed
 * at both ends (the row says so) and measures no bandwidth. */
static int measure_latency(efab_ctx_t *c, scan_report_t *rep)
{
	scan_state_t *scan = c->priv;
	efab_rt_t *pair_rt = c->rt, nic_rt;
	int rc = EFAB_OK;
	if (efab_mpi_rt_sub(pair_rt, scan->nic, &nic_rt))
		return EFAB_ERR;
	c->initiator = scan->node < rep->partner;
	for (int i = 0; i < scan->nics && !rc; i++) {
		if (i == scan->nic) {
			efab_row_t row;
			memset(&row, 0, sizeof(row));
			c->rt = c->fab.rt = &nic_rt;
			rc = efab_pingpong(c, &efab_put_pingpong, c->o.lat_size, &row);
			c->rt = c->fab.rt = pair_rt;
			note_failure(c, rep, "latency");
			if (row.failed && !rep->failed) {
				snprintf(rep->why, sizeof(rep->why), "latency: the peer's end failed");
				rep->failed = 1;
			}
			if (c->initiator && !rep->failed) {
				rep->lat_p50 = row.lat.p50;
				rep->lat_p99 = row.lat.p99;
			}
			rep->errors += (double)row.errors;
		}
		if (!rc && scan->nics > 1 && efab_mpi_idle_barrier(pair_rt, 600 + 100 * c->o.timeout_s))
			rc = EFAB_ERR;
	}
	efab_mpi_rt_sub_free(&nic_rt);
	return rc;
}

/* The pair's own endpoint (same domain, MRs and keys), with only the partner
 * in its AV: what a failed pair leaves in flight is closed with it, and the
 * next pair starts clean. Collective over the pair's ranks (c->rt). The
 * main endpoint is kept in *saved and comes back with pair_ep_close.
 * Providers that bind MRs to endpoints (FI_MR_ENDPOINT) keep the main one. */
typedef struct pair_addr {
	int world;
	size_t len;
	char name[EFAB_ADDR_MAX];
} pair_addr_t;

static int pair_ep_open(efab_ctx_t *c, efab_fabric_t *saved, int *own)
{
	scan_state_t *scan = c->priv;
	*own = 0;
	if (c->fab.info->domain_attr->mr_mode & FI_MR_ENDPOINT)
		return EFAB_OK;
	pair_addr_t mine, *all = calloc((size_t)c->rt->size, sizeof(*all));
	efab_fabric_t e;
	int rc = EFAB_OK, ret;
	memset(&mine, 0, sizeof(mine));
	mine.world = scan->rank_of[scan->node * scan->nics + scan->nic];
	mine.len = sizeof(mine.name);
	if (!all)
		rc = EFAB_ERR;
	else if (efab_ep_open(&c->fab, 1, &e, mine.name, &mine.len))
		rc = EFAB_ERR;
	else {
		free(e.peers); /* indexed by world rank, as the main endpoint's */
		e.peers = calloc((size_t)scan->world_size, sizeof(*e.peers));
		if (!e.peers)
			rc = EFAB_ERR;
	}
	/* the exchange is collective: a rank that failed above still joins it */
	if (rc)
		mine.len = 0;
	if (c->rt->allgather(c->rt, &mine, all, sizeof(mine)))
		rc = EFAB_ERR;
	for (int r = 0; !rc && r < c->rt->size; r++) {
		if (all[r].world != c->peer)
			continue;
		if (!all[r].len) {
			efab_log_error("the partner's pair endpoint did not open");
			rc = EFAB_ERR;
		} else if ((ret = fi_av_insert(e.av, all[r].name, 1, &e.peers[c->peer], 0, NULL)) != 1) {
			efab_log_fi("fi_av_insert (the pair's partner)", ret < 0 ? ret : -FI_EINVAL);
			rc = EFAB_ERR;
		}
	}
	free(all);
	if (rc) {
		if (e.ep)
			efab_ep_close(&e);
		return rc;
	}
	*saved = c->fab;
	c->fab = e;
	c->fab.rt = saved->rt;
	*own = 1;
	return EFAB_OK;
}

static void pair_ep_close(efab_ctx_t *c, efab_fabric_t *saved, int own)
{
	if (!own)
		return;
	efab_ep_close(&c->fab);
	c->fab = *saved;
}

/* This rank's pair measurement, in two phases among the ranks of the two
 * nodes only (c->rt is their sub-runtime), on the pair's own endpoints:
 * pair_latency (the endpoints, then latency one NIC at a time) and, once
 * every pair of the group is done with it, pair_bandwidth (both directions,
 * every NIC at once, then the endpoints closed): no latency figure includes
 * another pair's bandwidth traffic. A fabric failure fails the NIC pair, not
 * the scan. */
typedef struct pair_eps {
	efab_fabric_t saved;
	int own;
} pair_eps_t;

static int pair_latency(efab_ctx_t *c, int partner, scan_report_t *rep, pair_eps_t *pe)
{
	scan_state_t *scan = c->priv;
	rep->partner = partner;
	c->peer = scan->rank_of[partner * scan->nics + scan->nic];
	c->failed = 0;
	pe->own = 0;
	/* the ping-pong detects arrival by a non-zero tag in its receive slots:
	 * clear what earlier partners left there before the partner may write */
	memset(efab_local(c, 0), 0, 2 * c->o.sizes.max);
	if (c->rt->barrier(c->rt) || pair_ep_open(c, &pe->saved, &pe->own))
		return EFAB_ERR;
	return measure_latency(c, rep);
}

static int pair_bandwidth(efab_ctx_t *c, int partner, scan_report_t *rep, pair_eps_t *pe)
{
	static const char *const dirs[2] = {"bandwidth a->b", "bandwidth b->a"};
	scan_state_t *scan = c->priv;
	efab_row_t row;
	int rc = EFAB_OK;
	for (int dir = 0; dir < 2; dir++) {
		memset(&row, 0, sizeof(row));
		c->initiator = dir == 0 ? scan->node < partner : scan->node > partner;
		c->failed = rep->failed; /* a failed NIC pair posts nothing */
		if (efab_stream(c, &efab_rma_stream, c->o.bw_size, &row) || flush_writes(c)) {
			rc = EFAB_ERR;
			break;
		}
		if (!rep->failed)
			note_failure(c, rep, dirs[dir]);
		if (c->initiator && !rep->failed)
			rep->bw_sent = c->own_bw_MBps;
		rep->errors += (double)row.errors;
	}
	pair_ep_close(c, &pe->saved, pe->own);
	c->failed = 0;
	return rc;
}

/* The NIC's counters around a round (c->ev: evidence.c found them at
 * setup): settled reads, sleeping while the kernel's cache expires (no
 * traffic is in flight between rounds). */
static int nap(void *arg, double ms)
{
	(void)arg;
	struct timespec ts = {(time_t)(ms / 1000), (long)(fmod(ms, 1000.0) * 1e6)};
	nanosleep(&ts, NULL);
	return 0;
}

static int nic_snapshot(efab_ctx_t *c, efab_hwc_snap_t *s)
{
	int settled;
	memset(s, 0, sizeof(*s));
	return c->ev.have ? efab_hwc_settle(&c->ev.h, 3, nap, NULL, s, &settled) : EFAB_OK;
}

/* rep->hw: the trouble of the NIC's counters since hw0 (efab_scan_nic_trouble,
 * "name=delta;..."). */
static int nic_trouble(efab_ctx_t *c, const efab_hwc_snap_t *hw0, scan_report_t *rep)
{
	efab_hwc_snap_t hw1, d;
	char note[64];
	if (!c->ev.have) {
		snprintf(rep->hw, sizeof(rep->hw), "-");
		return EFAB_OK;
	}
	if (nic_snapshot(c, &hw1))
		return EFAB_ERR;
	efab_hwc_delta(hw0, &hw1, &d, note, sizeof(note));
	efab_scan_nic_trouble(&d, note, c->o.max_retrans, rep->hw, sizeof(rep->hw));
	return EFAB_OK;
}

/* One round: its node pairs in groups of --concurrent (default all at once),
 * each pair on its own sub-runtime so that pairs never wait for each other;
 * ranks without a pair in a group wait asleep. */
int scan_round(efab_ctx_t *c, int round, scan_report_t *rep)
{
	scan_state_t *scan = c->priv;
	efab_rt_t *world = c->rt;
	int partner = efab_scan_partner(scan->nodes, round, scan->node);
	int npairs = scan->nodes / 2, per = c->o.concurrent ? (int)c->o.concurrent : npairs;
	int my_pair = -1; /* index of this node's pair among the round's, by lower node */
	for (int a = 0, k = 0; a < scan->nodes; a++) {
		int b = efab_scan_partner(scan->nodes, round, a);
		if (b > a) {
			if (a == scan->node || b == scan->node)
				my_pair = k;
			k++;
		}
	}
	memset(rep, 0, sizeof(*rep));
	rep->partner = -1;
	rep->lat_p50 = rep->lat_p99 = rep->bw_sent = NAN;
	efab_hwc_snap_t hw0;
	if (nic_snapshot(c, &hw0))
		return EFAB_ERR;
	for (int g = 0; g * per < npairs; g++) {
		int active = my_pair >= g * per && my_pair < (g + 1) * per;
		efab_rt_t sub;
		if (efab_mpi_rt_sub(world, active ? my_pair : -1, &sub))
			return EFAB_ERR;
		int rc = EFAB_OK;
		pair_eps_t pe = {.own = 0};
		for (int phase = 0; phase < 2 && !rc; phase++) {
			efab_stopwatch_t sw = efab_stopwatch_start();
			if (active) {
				c->rt = c->fab.rt = &sub;
				rc = phase ? pair_bandwidth(c, partner, rep, &pe)
					   : pair_latency(c, partner, rep, &pe);
				c->rt = c->fab.rt = world;
			}
			/* the group's latencies end before any of its bandwidth starts */
			if (!rc && efab_mpi_idle_barrier(world, 600 + 100 * c->o.timeout_s))
				rc = EFAB_ERR;
			if (world->rank == 0)
				efab_log_debug("round %d group %d: %s phase %.3f s", round + 1, g + 1,
					       phase ? "bandwidth" : "latency", efab_stopwatch_elapsed_s(sw));
		}
		efab_mpi_rt_sub_free(&sub);
		if (rc)
			return rc;
	}
	if (nic_trouble(c, &hw0, rep))
		return EFAB_ERR;
	/* the same message numbers everywhere from here on */
	double s = (double)c->seq, most = 0;
	if (world->allreduce(world, &s, &most, 1, EFAB_RT_MAX))
		return EFAB_ERR;
	c->seq = (uint64_t)most + 2;
	return EFAB_OK;
}
