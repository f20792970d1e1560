/* efab_connect: what a new peer costs before the first byte moves.
 *
 * With N ranks, rank 0 is the initiator and ranks 1..N-1 its peers. For each
 * peer count p = 1, 2, 4, ... and N-1, and each of -n rounds (default 5),
 * every rank involved opens a new endpoint (CQ, AV, endpoint on its domain:
 * nothing cached from an earlier round), the names are exchanged, and rank 0
 *   - times fi_av_insert of the p peers' addresses in one call (av_insert_us),
 *   - then, peer after peer, the first operation (an 8 B write, or -o read,
 *     of -m's smallest size) to its completion at rank 0: first contact, where
 *     efa runs its handshake and tcp connects (lat_us_* over rounds x peers),
 *   - and right after it a second one to the same peer (second_us_p50).
 * The peers insert rank 0's new address (untimed) and drive progress on their
 * new endpoint until rank 0 is done. Writes land in the peers' registered
 * region (domain-level MRs; FI_MR_ENDPOINT fabrics exit 77). */
#include <stdlib.h>
#include <string.h>

#include "efab_endpoint.h"
#include "efab_ops.h"
#include "efab_select.h"
#include "family.h"
#include "mpi_rt.h"

enum { X_PEERS, X_AV, X_AV_PER, X_SECOND, X_EPOPEN, X_N };
/* the row's extra columns, in the order of rows.c */

typedef struct slot {
	size_t len;
	char name[EFAB_ADDR_MAX];
} slot_t;

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_d);
	return efab_quantile_sorted(v, n, 0.5);
}

static size_t connect_region(const efab_ctx_t *c, uint64_t max_size)
{
	(void)max_size;
	return c->o.sizes_given && c->o.sizes.min > 4096 ? c->o.sizes.min : 4096;
}

static int connect_setup(efab_ctx_t *c)
{
	if (c->fab.info->domain_attr->mr_mode & FI_MR_ENDPOINT) {
		if (c->rt->rank == 0)
			efab_log_error("%s binds MRs to an endpoint (FI_MR_ENDPOINT): new endpoints "
				       "cannot reach the registered region", c->ri.fabric);
		return EFAB_SKIP;
	}
	return EFAB_OK;
}

/* The timed calls (the single-shot pattern times them). */
struct ep_call {
	efab_ctx_t *c;
	size_t npeers;
	efab_fabric_t *ne;
	slot_t *mine;
};

static int ep_open_call(void *arg)
{
	struct ep_call *a = arg;
	return efab_ep_open(&a->c->fab, a->npeers, a->ne, a->mine->name, &a->mine->len);
}

struct av_call {
	efab_fabric_t *ne;
	const char *names;
	size_t n;
	fi_addr_t *addrs;
	int ret;
};

static int av_insert_call(void *arg)
{
	struct av_call *a = arg;
	a->ret = fi_av_insert(a->ne->av, a->names, a->n, a->addrs, 0, NULL);
	return EFAB_OK;
}

/* One operation to peer j on the new endpoint, to its completion. */
struct op_call {
	efab_ctx_t *c;
	efab_fabric_t *ne;
	int j;
	uint64_t size;
	efab_waitfor_t *w;
};

static int op_call(void *arg)
{
	struct op_call *a = arg;
	efab_ctx_t *c = a->c;
	int j = a->j, rc;
	if (c->op == EFAB_OP_READ)
		rc = efab_post_read(a->ne, j, efab_local(c, 0), a->size, c->ldesc,
				    efab_raddr(c, j, 0), c->rkeys[j].key, a->w);
	else
		rc = efab_post_write(a->ne, j, efab_local(c, 0), a->size, c->ldesc,
				     efab_raddr(c, j, 0), c->rkeys[j].key, 0, 0, a->w);
	return rc ? rc : efab_wait_tx(a->ne, a->ne->tx_posted, a->w);
}

/* The new endpoints' names are known: rank 0 inserts its p peers' in one
 * timed fi_av_insert (*av_us), each peer inserts rank 0's. */
static int insert_addresses(efab_ctx_t *c, efab_fabric_t *ne, int p, const slot_t *all,
			    double *av_us)
{
	if (c->rt->rank) {
		if (fi_av_insert(ne->av, all[0].name, 1, &ne->peers[0], 0, NULL) == 1)
			return EFAB_OK;
		efab_log_error("fi_av_insert of rank 0's new endpoint failed");
		return EFAB_ERR;
	}
	fi_addr_t *addrs = calloc((size_t)p, sizeof(*addrs));
	char *names = calloc((size_t)p, EFAB_ADDR_MAX);
	int rc = EFAB_OK;
	if (!addrs || !names) {
		efab_log_error("out of memory");
		rc = EFAB_ERR;
		goto out;
	}
	/* the p names back to back, as fi_av_insert takes them */
	size_t len = all[1].len;
	for (int j = 1; j <= p; j++)
		memcpy(names + (size_t)(j - 1) * len, all[j].name, len);
	struct av_call a = {ne, names, (size_t)p, addrs, 0};
	efab_time_once(av_insert_call, &a, av_us);
	if (a.ret != p) {
		efab_log_fi("fi_av_insert", a.ret < 0 ? a.ret : -FI_EINVAL);
		rc = EFAB_ERR;
	}
	for (int j = 1; j <= p; j++)
		ne->peers[j] = addrs[j - 1];
out:
	free(addrs);
	free(names);
	return rc;
}

/* Rank 0: the first and second operation to each peer, each timed; the
 * peers drive progress on their new endpoint until rank 0 is done, ranks
 * outside this round wait without one. */
static void first_contacts(efab_ctx_t *c, efab_fabric_t *ne, int p, uint64_t size, double *first,
			   double *second)
{
	efab_waitfor_t w = {"first operation", efab_op_name(c->op), size, 0, 0};
	int rc = EFAB_OK;
	if (c->rt->rank == 0) {
		for (int j = 1; j <= p && !rc; j++) {
			w.peer = j;
			struct op_call a = {c, ne, j, size, &w};
			for (int k = 0; k < 2 && !rc; k++)
				rc = efab_time_once(op_call, &a, &(k ? second : first)[j - 1]);
		}
		if (rc)
			efab_fail(c);
	}
	w.what = "rank 0 to finish its first operations";
	if (c->rt->rank <= p) {
		if (efab_barrier_progress(ne, &w))
			efab_fail(c);
	} else if (efab_mpi_idle_barrier(c->rt, c->o.timeout_s)) { /* an Ibarrier, like theirs */
		efab_log_error("timeout waiting for rank 0's first operations");
		efab_fail(c);
	}
}

/* One round with p peers: fills first[0..p), second[0..p), *av_us, *open_us
 * (rank 0). Collective over every rank. */
static int round_once(efab_ctx_t *c, int p, uint64_t size, double *first, double *second,
		      double *av_us, double *open_us)
{
	efab_rt_t *rt = c->rt;
	int me = rt->rank, in = me <= p;
	efab_fabric_t ne;
	slot_t mine, *all = calloc((size_t)rt->size, sizeof(*all));
	int rc = EFAB_OK;
	memset(&ne, 0, sizeof(ne));
	memset(&mine, 0, sizeof(mine));
	if (!all) {
		efab_log_error("out of memory");
		rc = EFAB_ERR;
	}
	if (!rc && in) {
		struct ep_call a = {c, me == 0 ? (size_t)p : 1, &ne, &mine};
		double us;
		mine.len = EFAB_ADDR_MAX;
		rc = efab_time_once(ep_open_call, &a, &us);
		if (me == 0)
			*open_us = us;
	}
	if (efab_rt_agree(rt, rc) || rt->allgather(rt, &mine, all, sizeof(mine))) {
		rc = EFAB_ERR;
		goto out;
	}
	if (in)
		rc = insert_addresses(c, &ne, p, all, av_us);
	if (efab_rt_agree(rt, rc)) {
		rc = EFAB_ERR;
		goto out;
	}
	first_contacts(c, &ne, p, size, first, second);
out:
	if (in)
		efab_ep_close(&ne);
	free(all);
	return rc;
}

static void print_header(efab_ctx_t *c, int npeers, uint64_t rounds, uint64_t size)
{
	char mrm[256], line1[512], def[512];
	efab_mr_mode_str(c->fab.info->domain_attr->mr_mode, mrm, sizeof(mrm));
	snprintf(line1, sizeof(line1), "mr_mode %s; progress %s; av_type %s; %d peers", mrm,
		 efab_progress_name(efab_info_progress(c->fab.info)),
		 c->fab.info->domain_attr->av_type == FI_AV_MAP ? "FI_AV_MAP" : "FI_AV_TABLE", npeers);
	snprintf(def, sizeof(def),
		 "per peer count p and each of %llu rounds, on new endpoints: av_insert_us = "
		 "one fi_av_insert of p addresses at rank 0 (p50 over rounds); lat_us_* = the "
		 "first %s of %llu B to each peer, to its completion at rank 0 (first contact: "
		 "efa's handshake, tcp's connect), over rounds x peers; second_us_p50 = the next "
		 "one to the same peer; ep_open_us_p50 = CQ+AV+endpoint bring-up; microseconds",
		 (unsigned long long)rounds, efab_op_name(c->op), (unsigned long long)size);
	const char *notes[] = {line1, def};
	efab_table_header(c, efab_op_name(c->op), notes, 2);
}

/* One peer count's figures: first and second contacts over rounds x peers
 * (nf of them), AV insert and endpoint bring-up per round. */
typedef struct peer_figures {
	double *first, *second, *av, *op;
	size_t nf;
} peer_figures_t;

/* Rank 0: the row of peer count p, to the table and the CSV. */
static int peer_row(efab_ctx_t *c, efab_csv_t *csv, int p, uint64_t rounds, uint64_t size,
		    const peer_figures_t *f)
{
	efab_row_t row;
	memset(&row, 0, sizeof(row));
	snprintf(row.op, sizeof(row.op), "%s", efab_op_name(c->op));
	row.pairs = p;
	row.size = size;
	row.iters = rounds;
	row.has_lat = 1;
	efab_stats_compute(f->first, f->nf, &row.lat);
	double avm = median(f->av, rounds);
	snprintf(row.extra[X_PEERS], sizeof(row.extra[0]), "%d", p);
	snprintf(row.extra[X_AV], sizeof(row.extra[0]), "%.3f", avm);
	snprintf(row.extra[X_AV_PER], sizeof(row.extra[0]), "%.3f", avm / p);
	snprintf(row.extra[X_SECOND], sizeof(row.extra[0]), "%.3f", median(f->second, f->nf));
	snprintf(row.extra[X_EPOPEN], sizeof(row.extra[0]), "%.3f", median(f->op, rounds));
	efab_table_line(stdout, &c->table, &c->ri, &row);
	return csv->fd >= 0 && efab_csv_write(csv, &c->ri, &row) ? EFAB_ERR : EFAB_OK;
}

/* Peer counts 1, 2, 4, ... and N-1, -n rounds each (default 5). */
static int connect_drive(efab_ctx_t *c)
{
	efab_rt_t *rt = c->rt;
	int npeers = rt->size - 1, rc = EFAB_OK;
	uint64_t rounds = c->o.iters ? c->o.iters : 5, size = c->o.sizes_given ? c->o.sizes.min : 8;
	efab_csv_t csv = {.fd = -1};
	/* one block: the figures over rounds x peers, then one round's first
	 * and second contacts */
	size_t rp = rounds * (size_t)npeers;
	double *block = calloc(2 * rp + 2 * rounds + 2 * (size_t)npeers, sizeof(double));
	peer_figures_t f = {block, block + rp, block + 2 * rp, block + 2 * rp + rounds, 0};
	double *one_f = f.op + rounds, *one_s = one_f + npeers;
	if (!block) {
		efab_log_error("out of memory");
		rc = EFAB_ERR;
	} else if (rt->rank == 0 && c->o.csv[0]) {
		rc = efab_csv_open(c->o.csv, &c->ri, &csv);
	}
	if ((rc = efab_rt_agree(rt, rc)))
		goto out;
	if (rt->rank == 0)
		print_header(c, npeers, rounds, size);
	for (int p = 1; p <= npeers && !rc; p = p * 2 > npeers && p < npeers ? npeers : p * 2) {
		f.nf = 0;
		for (uint64_t r = 0; r < rounds && !rc; r++) {
			rc = round_once(c, p, size, one_f, one_s, &f.av[r], &f.op[r]);
			for (int j = 0; j < p; j++) {
				f.first[f.nf] = one_f[j];
				f.second[f.nf++] = one_s[j];
			}
		}
		if (!rc && rt->rank == 0)
			rc = peer_row(c, &csv, p, rounds, size, &f);
	}
out:
	efab_csv_close(&csv);
	free(block);
	return rc;
}

const efab_family_t efab_family_connect = {
	.region = connect_region, .setup = connect_setup, .drive = connect_drive,
};
