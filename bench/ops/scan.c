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
 * verdict (lib/scan.c): exit 0 when nothing is flagged, 1 otherwise. */
#include <errno.h>
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

#define HOST_LEN 64
#define NIC_LEN 64

#define BIND_LEN 112

typedef struct scan_rank {
	char host[HOST_LEN];
	char nic[NIC_LEN];
	/* where the rank runs against its NIC (bind_near_nic): "cpus 0-47 (NUMA
	 * node 0, the NIC's)" or "not bound: why" */
	char bind[BIND_LEN];
	int bound;
} scan_rank_t;

#define WHY_LEN 200
#define HW_LEN 160

/* What a rank reports after a round. */
typedef struct scan_report {
	int partner;   /* node, -1: sat out */
	double lat_p50, lat_p99; /* as the ping-pong's initiator (the lower node), else NAN */
	double bw_sent;           /* its own bandwidth as the writer, 10^6 B/s, NAN if none */
	double errors;
	int failed;        /* this rank's NIC pair failed (either end) */
	char why[WHY_LEN]; /* "phase: error" of the first failure this rank saw, "" */
	/* its NIC's counters that were trouble in the round (efab_scan_nic_trouble), "name=delta;..."
	 * ("" none rose, "-" no counters, lib/efab_hwc.h) */
	char hw[HW_LEN];
} scan_report_t;

typedef struct scan_state {
	efab_rma_state_t rma; /* first: the RMA callbacks the scan measures with read it (rma.h) */
	int nodes, nics;
	int node, nic;       /* this rank's */
	char bind[BIND_LEN]; /* this rank's placement (bind_near_nic) */
	int bound;
	int *rank_of;        /* [node * nics + nic] */
	scan_rank_t *ranks;  /* by rank */
	char domain[NIC_LEN];
	char **node_names;   /* nodes */
	char **nic_names;    /* nodes * nics */
	int world_size;
} scan_state_t;


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
static int scan_plan(efab_ctx_t *c, efab_fabric_req_t *req)
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

static int scan_setup(efab_ctx_t *c)
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

static int scan_check_opts(efab_ctx_t *c)
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

static void scan_teardown(efab_ctx_t *c)
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

static size_t at(const scan_state_t *scan, int a, int b, int i)
{
	return ((size_t)a * (size_t)scan->nodes + (size_t)b) * (size_t)scan->nics + (size_t)i;
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
static int scan_round(efab_ctx_t *c, int round, scan_report_t *rep)
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

#define CSV_HEADER                                                                         \
	"schema,run_id,timestamp,bench,provider,fabric,libfabric_version,provider_version,pass," \
	"round,node_a,node_b,nic_index,nic_a,nic_b,lat_size_bytes,lat_iters,lat_us_p50,"        \
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
static int csv_rows(efab_ctx_t *c, efab_csv_t *csv, int pass, int round,
		    const scan_report_t *all, const double *lat99)
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
			const char *cells[] = { /* the order of CSV_HEADER */
				"1", c->ri.run_id, c->ri.timestamp, "scan", c->ri.provider,
				c->ri.fabric, c->ri.libfabric_version, c->ri.provider_version, pass_s,
				round_s, scan->node_names[a], scan->node_names[bn], nic_s,
				scan->nic_names[a * scan->nics + i], scan->nic_names[bn * scan->nics + i],
				lsize, liters, l50, l99, bsize, window, bw, bwr, errors,
				failed ? "failed" : "ok", why, ra->hw, rb->hw,
			};
			if (efab_csv_write_cells(csv, cells, EFAB_ARRAY_SIZE(cells)))
				return EFAB_ERR;
		}
	return EFAB_OK;
}

/* Where the ranks run against their NICs (bind_near_nic): how many are
 * bound near theirs, the first reason of those that are not, and with -v
 * every rank's. */
static void print_placement(const efab_ctx_t *c)
{
	const scan_state_t *scan = c->priv;
	int bound = 0, first = -1;
	for (int r = 0; r < scan->world_size; r++) {
		bound += scan->ranks[r].bound;
		if (!scan->ranks[r].bound && first < 0)
			first = r;
	}
	printf("# placement: each rank bound near its NIC (hwloc: the cores of the NIC's NUMA node, "
	       "buffers placed there by first touch): %d of %d ranks bound", bound, scan->world_size);
	if (first >= 0)
		printf("; %d not (e.g. %s NIC %s: %s)", scan->world_size - bound, scan->ranks[first].host,
		       scan->ranks[first].nic, scan->ranks[first].bind);
	printf("\n");
	for (int r = 0; c->o.verbose && r < scan->world_size; r++)
		printf("#   rank %d: %s NIC %s: %s\n", r, scan->ranks[r].host, scan->ranks[r].nic,
		       scan->ranks[r].bind);
}

static void print_header(efab_ctx_t *c, int rounds)
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
	       c->o.time_s > 0 ? ", for --time per direction (a deadline: what a slow NIC moves in it "
				 "is its figure)" : "");
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
	int per = c->o.concurrent ? (int)c->o.concurrent : scan->nodes / 2;
	int groups = (scan->nodes / 2 + per - 1) / per;
	if (groups > 1)
		printf("# --concurrent %d: %d groups of node pairs per round, one after the other\n",
		       per, groups);
	double window_MB = (double)c->o.window * (double)c->o.bw_size / 1e6;
	/* the ping-pongs of a pair: warmup, the timed ones and the batch, NIC
	 * after NIC, at 20 us a round trip (about) and 1 ms (at most: ranks
	 * that share a core wait for it) */
	double pp = (double)scan->nics * (double)(50 + 2 * efab_pingpong_iters(c, c->o.lat_size));
	double steps = (double)c->o.passes * rounds * groups;
	if (c->o.time_s > 0)
		printf("# estimate: %llu x %d rounds x %d group%s x (%.0f ping-pongs + 2 x %.2f s of "
		       "bandwidth) = about %.0f s, at most %.0f s while a ping-pong's round trip takes "
		       "at most 1 ms and every NIC moves a window "
		       "(%.1f MB) in %.2f s (%.0f MB/s; a slower NIC adds up to 2 windows at its rate "
		       "per direction); each pair that stalls adds up to --timeout per phase (latency, "
		       "each bandwidth direction)\n",
		       (unsigned long long)c->o.passes, rounds, groups, groups == 1 ? "" : "s", pp,
		       c->o.time_s, steps * (pp * 20e-6 + 2 * c->o.time_s * 1.1 + 0.1),
		       steps * (pp * 1e-3 + 2 * c->o.time_s * 1.5 + 1.0), window_MB, c->o.time_s / 4,
		       window_MB / (c->o.time_s / 4));
	else
		printf("# estimate: %llu x %d rounds x %d group%s x (%llu ping-pongs + 2 x %llu "
		       "windows); the first round's time gives the rest\n",
		       (unsigned long long)c->o.passes, rounds, groups, groups == 1 ? "" : "s",
		       (unsigned long long)efab_pingpong_iters(c, c->o.lat_size),
		       (unsigned long long)c->o.iters);
	fflush(stdout);
}

static void print_matrix(const scan_state_t *scan, const char *title, const double *m, int lat)
{
	printf("\n%s\n%-14s", title, lat ? "node \\ node" : "from \\ to");
	for (int b = 0; b < scan->nodes; b++)
		printf(" %12.12s", scan->node_names[b]);
	printf("\n");
	double v[1024];
	for (int a = 0; a < scan->nodes; a++) {
		printf("%-14.14s", scan->node_names[a]);
		for (int b = 0; b < scan->nodes; b++) {
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
			const double *u = &v->unit[(size_t)(a * scan->nics + i) * EFAB_SCAN_NMETRIC];
			char cell[6][24];
			const double vals[6] = {u[EFAB_SCAN_SEND], u[EFAB_SCAN_SEND] / v->ref[EFAB_SCAN_SEND],
						u[EFAB_SCAN_RECV], u[EFAB_SCAN_RECV] / v->ref[EFAB_SCAN_RECV],
						u[EFAB_SCAN_LAT], u[EFAB_SCAN_LAT] / v->ref[EFAB_SCAN_LAT]};
			for (int k = 0; k < 6; k++) /* nothing measured (failed pairs): "-" */
				if (isfinite(vals[k]))
					snprintf(cell[k], sizeof(cell[k]), k == 4 ? "%.2f" : k % 2 ? "%.2f" : "%.1f",
						 vals[k]);
				else
					snprintf(cell[k], sizeof(cell[k]), "-");
			printf("%-14.14s %-16.16s %12s %6s %12s %6s %10s %6s\n", scan->node_names[a],
			       scan->nic_names[a * scan->nics + i], cell[0], cell[1], cell[2], cell[3],
			       cell[4], cell[5]);
		}
	printf("cluster median: send %.1f MB/s, receive %.1f MB/s, latency %.2f us\n",
	       v->ref[EFAB_SCAN_SEND], v->ref[EFAB_SCAN_RECV], v->ref[EFAB_SCAN_LAT]);
	printf("\nverdict: %s\n", v->nflags ? "FLAGGED" : "no node or NIC flagged");
	char line[sizeof(v->flags->evidence) + 512];
	for (size_t f = 0; f < v->nflags; f++) {
		efab_scan_flag_line(d, &v->flags[f], line, sizeof(line));
		printf("  %s\n", line);
	}
	if (v->round_note[0])
		printf("  note: %s\n", v->round_note);
	if (scan->nodes == 2 && v->nflags)
		printf("  (2 nodes: a slow direction or a failure cannot be told from its other end, "
		       "the pair is the subject; scan 3 or more nodes to attribute it)\n");
	if (scan->nodes == 3 && v->nflags)
		printf("  (3 nodes: each NIC has 2 peers, the medians are means; 4 or more attribute "
		       "better)\n");
	(void)c;
	fflush(stdout);
}

/* Rank 0's figures: per pass [pass * cells + at(scan, a, b, i)] bandwidth
 * and latency; p99 latency; the medians over passes the verdict gets. */
typedef struct figures {
	size_t cells, pcells;
	int passes;
	double *block, *bw_p, *lat_p, *lat99, *bw, *lat;
	double *bw_best, *lat_best; /* [cell]: the best pass's (pair findings need every pass off) */
	double errors;
	unsigned char *failed; /* [cell]: the pair failed in some pass (symmetric) */
	char (*why)[WHY_LEN];  /* [cell]: the first failure's phase and error */
	const char **whyp;     /* [cell] -> why, for the verdict */
	size_t nfailed;        /* failed pairs and NICs over all passes */
	char (*hw)[HW_LEN];    /* [cell]: a's NIC's trouble counters in its round with b (first pass seen) */
	const char **hwp;      /* [cell] -> hw, for the verdict */
	int any_hw;            /* some NIC had counters */
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
			latp[at(scan, a, s->partner, i)] = latp[at(scan, s->partner, a, i)] = s->lat_p50;
			f->lat99[at(scan, a, s->partner, i)] = f->lat99[at(scan, s->partner, a, i)] =
				s->lat_p99;
		}
	}
}

static void progress(int p, int passes, int r, int rounds, double secs, double left, int nfail)
{
	char failed[64] = "";
	if (nfail)
		snprintf(failed, sizeof(failed), ", %d NIC pair%s failed", nfail, nfail == 1 ? "" : "s");
	if (passes > 1)
		fprintf(stderr, "efab_scan: pass %d/%d round %d/%d done in %.1f s (about %.0f s "
				"left%s)\n", p + 1, passes, r + 1, rounds, secs, left, failed);
	else
		fprintf(stderr, "efab_scan: round %d/%d done in %.1f s (about %.0f s left%s)\n", r + 1,
			rounds, secs, left, failed);
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
	efab_scan_data_t d = {scan->nodes, scan->nics, (const char *const *)scan->node_names,
			      (const char *const *)scan->nic_names, f->bw, f->lat, f->failed,
			      (const char *const *)f->whyp, f->any_hw ? (const char *const *)f->hwp : NULL,
			      f->bw_best, f->lat_best};
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
		fprintf(stderr, "efab_scan: started: %d nodes x %d NIC%s, %d pass%s of %d round%s\n",
			scan->nodes, scan->nics, scan->nics == 1 ? "" : "s", passes, passes == 1 ? "" : "es",
			rounds, rounds == 1 ? "" : "s");
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
			 efab_stopwatch_elapsed_s(scan_sw) / (step + 1) * (passes * rounds - step - 1),
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
	.check_opts = scan_check_opts, .plan = scan_plan, .setup = scan_setup, .drive = scan_drive,
	.teardown = scan_teardown,
};
