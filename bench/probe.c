/* efab_probe: the capability and requirements matrix of every RDM fabric on
 * this host, and (--live, under mpirun -np 2) what each operation really does
 * there. The static part needs no MPI: MPI is initialised only for --live.
 *
 * Data first (a list of columns, each a list of property/value pairs), then
 * three writers: the table (120 columns, wrapped by fabric), CSV (long
 * format) and JSON. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "efab_atomic.h"
#include "harness.h"

#define MAX_COLS 64
#define MAX_PROPS 80
#define LABEL_W 22
#define COL_W 24

typedef struct prop {
	char name[32];
	char value[256];
} prop_t;

typedef struct column {
	struct fi_info *info; /* dup */
	prop_t props[MAX_PROPS];
	size_t nprops;
	char verdict[512];
} column_t;

static void add(column_t *c, const char *name, const char *fmt, ...) EFAB_PRINTF(3, 4);
static void add(column_t *c, const char *name, const char *fmt, ...)
{
	if (c->nprops >= MAX_PROPS)
		return;
	prop_t *p = &c->props[c->nprops++];
	snprintf(p->name, sizeof(p->name), "%s", name);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->value, sizeof(p->value), fmt, ap);
	va_end(ap);
}

static const char *yesno(int b)
{
	return b ? "yes" : "no";
}

static const char *const aops[] = {"add", "fadd", "cswap", "swap", "min",
				   "max", "bor", "band", "bxor"};
static const int dtypes[] = {EFAB_DT_U64, EFAB_DT_U32, EFAB_DT_I64, EFAB_DT_I32, EFAB_DT_F64,
			     EFAB_DT_F32};

/* Atomics supported per op: the datatypes fi_query_atomic accepts. Needs a
 * domain; returns the number of ops with at least one datatype. */
static int probe_atomics(column_t *col, const struct fi_info *info)
{
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	int nops = 0;
	if (!info) {
		for (size_t a = 0; a < EFAB_ARRAY_SIZE(aops); a++) {
			char n[32];
			snprintf(n, sizeof(n), "atomic_%s", aops[a]);
			add(col, n, "-");
		}
		return 0;
	}
	int ret = fi_fabric(info->fabric_attr, &fabric, NULL);
	if (!ret) {
		ret = fi_domain(fabric, (struct fi_info *)info, &domain, NULL);
		if (ret)
			fi_close(&fabric->fid);
	}
	if (ret) { /* keep the rows aligned: every column has every property */
		for (size_t a = 0; a < EFAB_ARRAY_SIZE(aops); a++) {
			char n[32];
			snprintf(n, sizeof(n), "atomic_%s", aops[a]);
			add(col, n, "? (%s)", fi_strerror(-ret));
		}
		return 0;
	}
	for (size_t a = 0; a < EFAB_ARRAY_SIZE(aops); a++) {
		char n[32], v[128] = "";
		size_t len = 0;
		int kind;
		enum fi_op op;
		efab_aop_map((int)a, &kind, &op);
		for (size_t d = 0; d < EFAB_ARRAY_SIZE(dtypes); d++) {
			size_t count;
			if (efab_atomic_query(domain, kind, efab_fi_dtype(dtypes[d]), op, &count) == 0)
				len += (size_t)snprintf(v + len, sizeof(v) - len, "%s%s", len ? " " : "",
							efab_dtype_name(dtypes[d]));
		}
		snprintf(n, sizeof(n), "atomic_%s", aops[a]);
		add(col, n, "%s", len ? v : "-");
		nops += len > 0;
	}
	fi_close(&domain->fid);
	fi_close(&fabric->fid);
	return nops;
}

static void order_str(uint64_t o, char *buf, size_t len)
{
	static const struct {
		uint64_t bit;
		const char *name;
	} bits[] = {{FI_ORDER_RAR, "RAR"}, {FI_ORDER_RAW, "RAW"}, {FI_ORDER_WAR, "WAR"},
		    {FI_ORDER_WAW, "WAW"}, {FI_ORDER_SAW, "SAW"}, {FI_ORDER_SAS, "SAS"}};
	size_t n = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < EFAB_ARRAY_SIZE(bits); i++)
		if (o & bits[i].bit)
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? " " : "", bits[i].name);
	if (!n)
		snprintf(buf, len, "none");
}

/* What fi_getinfo answers when efabench asks this provider/fabric/domain for
 * caps (with its usual mode and mr_mode): NULL when it cannot. The caps of
 * an unfiltered query understate some providers (tcp;ofi_rxm offers
 * atomics only when asked), so every capability row comes from such a query. */
static struct fi_info *query(const struct fi_info *col, uint64_t caps, int hmem, uint64_t mode_off,
			     uint64_t mr_mode_off, int rx_cq_data)
{
	efab_fabric_req_t req = {.provider = col->fabric_attr->prov_name,
				 .fabric = col->fabric_attr->name,
				 .domain = col->domain_attr->name,
				 .caps = caps,
				 .hmem = hmem,
				 .mode_off = mode_off,
				 .mr_mode_off = mr_mode_off,
				 .rx_cq_data = rx_cq_data};
	struct fi_info *hints = efab_hints_build(&req), *list = NULL, *out = NULL;
	if (hints && fi_getinfo(EFAB_FI_VERSION, NULL, NULL, 0, hints, &list) == 0) {
		const struct fi_info *m = efab_info_match(list, &req);
		if (m)
			out = fi_dupinfo(m);
	}
	fi_freeinfo(list);
	fi_freeinfo(hints);
	return out;
}

/* As efab_fabric_select asks: without FI_RX_CQ_DATA, then with it. */
static struct fi_info *query_caps(const struct fi_info *col, uint64_t caps, int hmem)
{
	struct fi_info *i = query(col, caps, hmem, 0, 0, 0);
	return i ? i : query(col, caps, hmem, 0, 0, 1);
}

/* Whether the fabric requires a mode or mr_mode bit efabench offers: asked
 * without it (everything else as efabench asks for RMA), it drops out. What
 * a provider echoes when offered a bit is no requirement (efa returns
 * FI_MR_LOCAL when asked for it, but does not need it). */
static const char *required(const struct fi_info *col, uint64_t caps, uint64_t mode_off,
			    uint64_t mr_mode_off)
{
	struct fi_info *with = query_caps(col, caps, 0);
	if (!with)
		return "-"; /* not offered for RMA at all */
	struct fi_info *without = query(col, caps, 0, mode_off, mr_mode_off, 0);
	if (!without)
		without = query(col, caps, 0, mode_off, mr_mode_off, 1);
	const char *r = without ? "no" : "yes";
	fi_freeinfo(with);
	fi_freeinfo(without);
	return r;
}

/* FI_RX_CQ_DATA is required when a remote-CQ-data request is refused without it. */
static const char *rx_cq_data_required(const struct fi_info *col, uint64_t caps)
{
	struct fi_info *without = query(col, caps | FI_MSG, 0, 0, 0, 0);
	struct fi_info *with = without ? NULL : query(col, caps | FI_MSG, 0, 0, 0, 1);
	const char *r = without ? "no" : with ? "yes" : "-";
	fi_freeinfo(without);
	fi_freeinfo(with);
	return r;
}

#define RMA_CAPS (FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)

static void describe(column_t *col)
{
	struct fi_info *rma = query_caps(col->info, RMA_CAPS, 0);
	struct fi_info *atom = query_caps(col->info, FI_ATOMIC | FI_READ | FI_WRITE, 0);
	struct fi_info *hmem = query_caps(col->info, RMA_CAPS, 1);
	/* requirements as they stand when efabench asks for RMA */
	const struct fi_info *i = rma ? rma : col->info;
	uint32_t v = fi_version(), pv = i->fabric_attr->prov_version;
	char buf[256];

	add(col, "provider", "%s", i->fabric_attr->prov_name);
	add(col, "fabric", "%s", i->fabric_attr->name);
	add(col, "domain", "%s", i->domain_attr->name);
	add(col, "provider_version", "%u.%u", FI_MAJOR(pv), FI_MINOR(pv));
	add(col, "api_version", "%u.%u", FI_MAJOR(v), FI_MINOR(v));
	add(col, "simulated", "%s", efab_info_simulated(i) ? "yes (efasim: not EFA hardware)" : "no");
	/* requirements: "yes" = the fabric drops out when asked without the bit */
	add(col, "mode_FI_CONTEXT", "%s", required(col->info, RMA_CAPS, FI_CONTEXT, 0));
	add(col, "mode_FI_CONTEXT2", "%s", required(col->info, RMA_CAPS, FI_CONTEXT2, 0));
	add(col, "mode_FI_RX_CQ_DATA", "%s", rx_cq_data_required(col->info, RMA_CAPS));
	static const struct {
		uint64_t bit;
		const char *row;
	} mr_rows[] = {{FI_MR_LOCAL, "mr_FI_MR_LOCAL"},		{FI_MR_PROV_KEY, "mr_FI_MR_PROV_KEY"},
		       {FI_MR_VIRT_ADDR, "mr_FI_MR_VIRT_ADDR"}, {FI_MR_ALLOCATED, "mr_FI_MR_ALLOCATED"},
		       {FI_MR_ENDPOINT, "mr_FI_MR_ENDPOINT"},   {FI_MR_HMEM, "mr_FI_MR_HMEM"},
		       {FI_MR_RAW, "mr_FI_MR_RAW"}};
	for (size_t k = 0; k < EFAB_ARRAY_SIZE(mr_rows); k++)
		add(col, mr_rows[k].row, "%s", required(col->info, RMA_CAPS, 0, mr_rows[k].bit));
	int need_mr_local = !strcmp(required(col->info, RMA_CAPS, 0, FI_MR_LOCAL), "yes");
	add(col, "rma_read", "%s", yesno(rma && (rma->caps & FI_READ)));
	add(col, "rma_write", "%s", yesno(rma && (rma->caps & FI_WRITE)));
	if (i->domain_attr->cq_data_size)
		add(col, "remote_cq_data", "yes (%zu B)", i->domain_attr->cq_data_size);
	else
		add(col, "remote_cq_data", "no");
	add(col, "atomic", "%s", yesno(atom != NULL));
	add(col, "hmem", "%s", yesno(hmem != NULL));
	add(col, "msg", "%s", yesno((col->info->caps | i->caps) & FI_MSG));
	add(col, "tagged", "%s", yesno((col->info->caps | i->caps) & FI_TAGGED));
	add(col, "inject_size", "%zu", i->tx_attr->inject_size);
	add(col, "max_msg_size", "%zu", i->ep_attr->max_msg_size);
	/* the endpoint's own RMA limits (FI_OPT_*_RMA_SIZE, libfabric >= 2.0):
	 * efa-direct injects no RMA at all although its inject_size is not 0 */
	efab_limit_t inj, mx;
	efab_info_rma_limits(i, &inj, &mx);
	if (inj.from_ep)
		add(col, "inject_rma_size", "%zu", inj.value);
	else
		add(col, "inject_rma_size", "%s", "= inject_size");
	if (mx.from_ep)
		add(col, "max_rma_size", "%zu", mx.value);
	else
		add(col, "max_rma_size", "%s", "= max_msg_size");
	add(col, "tx_size", "%zu", i->tx_attr->size);
	add(col, "rx_size", "%zu", i->rx_attr->size);
	add(col, "progress", "%s", efab_progress_name(efab_info_progress(i)));
	order_str(i->tx_attr->msg_order, buf, sizeof(buf));
	add(col, "msg_order", "%s", buf);
	double gbps = efab_info_link_gbps(i);
	if (gbps > 0)
		add(col, "link_Gbps", "%.1f", gbps);
	else
		add(col, "link_Gbps", "-");
	if (i->nic && i->nic->device_attr && i->nic->device_attr->name)
		add(col, "nic_name", "%s", i->nic->device_attr->name);
	else
		add(col, "nic_name", "-");
	if (i->nic && i->nic->bus_attr && i->nic->bus_attr->bus_type == FI_BUS_PCI) {
		const struct fi_pci_attr *p = &i->nic->bus_attr->attr.pci;
		add(col, "pci_bus_id", "%04x:%02x:%02x.%x", p->domain_id, p->bus_id, p->device_id,
		    p->function_id);
	} else {
		add(col, "pci_bus_id", "-");
	}
	int nops = probe_atomics(col, atom);

	/* The verdict: what efabench (and an application) can do here. */
	int rma_ok = rma && (rma->caps & FI_READ) && (rma->caps & FI_WRITE);
	size_t n = (size_t)snprintf(col->verdict, sizeof(col->verdict), "%s: RMA %s, atomics %s",
				    i->fabric_attr->name, yesno(rma_ok),
				    nops > 0 ? "yes" : "no");
	if (nops > 0)
		n += (size_t)snprintf(col->verdict + n, sizeof(col->verdict) - n, " (%d ops)", nops);
	n += (size_t)snprintf(col->verdict + n, sizeof(col->verdict) - n, ", %s",
			      need_mr_local
				      ? "every local buffer must be registered (FI_MR_LOCAL)"
				      : "unregistered local buffers accepted");
	n += (size_t)snprintf(col->verdict + n, sizeof(col->verdict) - n,
			      ", remote CQ data %s, GPU memory %s, %s progress",
			      yesno(i->domain_attr->cq_data_size >= 4), yesno(hmem != NULL),
			      efab_progress_name(efab_info_progress(i)));
	add(col, "verdict", "%s", col->verdict);
	fi_freeinfo(rma);
	fi_freeinfo(atom);
	fi_freeinfo(hmem);
}

/* ---- --live ---- */

enum { LIVE_PUT, LIVE_PUT_UNREG, LIVE_WRITEDATA, LIVE_READ, LIVE_ATOMIC, LIVE_N };
static const char *const live_names[] = {"live_put_registered", "live_put_unregistered",
					 "live_writedata", "live_read", "live_atomic_fadd_u64"};

/* One operation from rank 0 to rank 1 on a fresh endpoint; the result is
 * "OK" or the first error, word for word. Every rank reaches the same
 * verdict before the next step, so a failure never leaves a rank waiting. */
static void live_one(efab_rt_t *rt, const struct fi_info *col, int which, double timeout,
		     char *result, size_t rlen)
{
	efab_fabric_req_t req = {
		.provider = col->fabric_attr->prov_name,
		.fabric = col->fabric_attr->name,
		.domain = col->domain_attr->name,
		.caps = FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE,
		.cq_data = which == LIVE_WRITEDATA,
	};
	if (which == LIVE_ATOMIC)
		req.caps = FI_ATOMIC | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
	char err[400], skipped[200] = "", refused[400] = "";
	struct fi_info *info = NULL;
	efab_fabric_t fab;
	efab_mr_t mr;
	efab_rkey_t rk[2];
	uint64_t *buf = NULL;
	int rc, stage = 0;
	double ok = 1, all_ok = 0;
	efab_waitfor_t w = {"live test completion", live_names[which], 64, 1, 0};

	memset(&fab, 0, sizeof(fab));
	memset(&mr, 0, sizeof(mr));
	efab_log_capture(err, sizeof(err));
	/* The unregistered put asks without FI_MR_LOCAL, as an application with an
	 * unregistered buffer would; a fabric that requires it (efa-direct) drops
	 * out, and then the put runs with it in force, to record what the provider
	 * says to a missing descriptor. */
	if (which == LIVE_PUT_UNREG) {
		req.mr_mode_off = FI_MR_LOCAL;
		rc = efab_fabric_select(&req, &info);
		if (rc == EFAB_SKIP) {
			req.mr_mode_off = 0;
			err[0] = '\0';
			rc = efab_fabric_select(&req, &info);
		}
	} else {
		rc = efab_fabric_select(&req, &info);
	}
	if (!rc) {
		stage = 1;
		rc = efab_fabric_open(info, rt, timeout, &fab);
		info = NULL;
	}
	/* Collective steps only while every rank is still fine. */
	ok = rc == 0;
	rt->allreduce(rt, &ok, &all_ok, 1, EFAB_RT_MIN);
	if (!all_ok)
		goto out;
	stage = 2;
	buf = aligned_alloc(4096, 4096);
	memset(buf, 0, 4096);
	rc = efab_mr_reg(&fab, buf, 4096, FI_HMEM_SYSTEM, 0,
			 FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE, &mr);
	ok = rc == 0;
	rt->allreduce(rt, &ok, &all_ok, 1, EFAB_RT_MIN);
	if (!all_ok || efab_mr_exchange(&fab, &mr, rk))
		goto out;
	stage = 3;
	/* layout: [0,64) source, [64,128) destination, [128,136) atomic word, [256,264) result */
	uint8_t *b = (uint8_t *)buf;
	for (int k = 0; k < 64; k++)
		b[k] = (uint8_t)(rt->rank == 1 ? 0xa0 + k : 0x10 + k);
	/* libfabric < 2.4's efa-direct dereferences a NULL descriptor (an assert
	 * compiled out in release builds, efa_rma.c) instead of refusing it */
	if (which == LIVE_PUT_UNREG && efab_prov_matches("efa", col->fabric_attr->prov_name) &&
	    (fab.info->domain_attr->mr_mode & FI_MR_LOCAL) && fi_version() < FI_VERSION(2, 4)) {
		snprintf(skipped, sizeof(skipped),
			 "skipped: libfabric %u.%u's efa provider dereferences the NULL "
			 "descriptor of an unregistered source under FI_MR_LOCAL (checked from 2.4 on)",
			 FI_MAJOR(fi_version()), FI_MINOR(fi_version()));
		goto out;
	}
	if (rt->rank == 0) {
		rc = EFAB_OK;
		/* the provider's own words for a refused post (warn level) */
		efab_provider_log_capture(1, "FI_MR_LOCAL", NULL, 0);
		switch (which) {
		case LIVE_PUT:
		case LIVE_PUT_UNREG:
		case LIVE_WRITEDATA:
			rc = efab_post_write(&fab, 1, b, 64, which == LIVE_PUT_UNREG ? NULL : mr.desc,
					     rk[1].base + 64, rk[1].key, 7,
					     which == LIVE_WRITEDATA ? FI_REMOTE_CQ_DATA : 0, &w);
			break;
		case LIVE_READ:
			rc = efab_post_read(&fab, 1, b + 64, 64, mr.desc, rk[1].base, rk[1].key, &w);
			break;
		default: {
			uint64_t one = 1;
			memcpy(b, &one, 8);
			rc = efab_post_atomic(&fab, 1, EFAB_ATOMIC_FETCH, b, 1, mr.desc, NULL, NULL,
					      b + 256, mr.desc, rk[1].base + 128, rk[1].key, FI_UINT64,
					      FI_SUM, &w);
		}
		}
		char said[400];
		efab_provider_log_capture(0, NULL, said, sizeof(said));
		if (rc) { /* the post's own words: what follows (the peer's wait) must not replace them */
			snprintf(refused, sizeof(refused), "%s%s%s", err, said[0] ? " | provider: " : "", said);
		} else {
			rc = efab_wait_tx(&fab, fab.tx_posted, &w);
		}
		ok = rc == 0;
	}
	/* The target waits for the data itself: a local completion at the
	 * initiator may only mean "sent" (tcp), not "placed". */
	if (rt->rank == 1 && (which == LIVE_PUT || which == LIVE_PUT_UNREG)) {
		w.what = "the written data";
		if (efab_wait_byte(&fab, b + 64 + 63, (uint8_t)(0x10 + 63), &w))
			ok = 0;
	} else if (rt->rank == 1 && which == LIVE_WRITEDATA) {
		w.what = "the remote CQ data";
		if (efab_wait_rxdata(&fab, 1, &w))
			ok = 0;
	}
	w.what = "the other rank";
	if (efab_barrier_progress(&fab, &w))
		ok = 0;
	/* Check the data where it landed. */
	if (ok && rt->rank == 1 && which <= LIVE_WRITEDATA)
		for (int k = 0; k < 64; k++)
			if (b[64 + k] != (uint8_t)(0x10 + k)) {
				snprintf(err, sizeof(err), "completed, but the data at the target differ");
				ok = 0;
				break;
			}
	if (ok && rt->rank == 1 && which == LIVE_WRITEDATA && fab.rx_data_count != 1) {
		snprintf(err, sizeof(err), "completed, but no remote CQ data arrived");
		ok = 0;
	}
	if (ok && rt->rank == 0 && which == LIVE_READ)
		for (int k = 0; k < 64; k++)
			if (b[64 + k] != (uint8_t)(0xa0 + k)) {
				snprintf(err, sizeof(err), "completed, but the data read differ");
				ok = 0;
				break;
			}
	if (ok && rt->rank == 1 && which == LIVE_ATOMIC && buf[16] != 1) {
		snprintf(err, sizeof(err), "completed, but the target word is %llu, not 1",
			 (unsigned long long)buf[16]);
		ok = 0;
	}
	rt->allreduce(rt, &ok, &all_ok, 1, EFAB_RT_MIN);
	stage = 4;
out:
	efab_log_capture(NULL, 0);
	/* Rank 0 reports; if only rank 1 saw the failure, its words travel. */
	struct {
		double ok; /* this rank's own verdict */
		char err[400];
	} mine, both[2];
	mine.ok = ok;
	snprintf(mine.err, sizeof(mine.err), "%s", err[0] ? err : "failed without a message");
	rt->allgather(rt, &mine, both, sizeof(mine));
	if (skipped[0])
		snprintf(result, rlen, "%s", skipped);
	else if (refused[0]) /* rank 0's post was refused: rank 1 only timed out waiting for it */
		snprintf(result, rlen, "%s", refused);
	else if (both[0].ok && both[1].ok && (stage < 4 || all_ok))
		snprintf(result, rlen, stage == 4 ? "OK" : "failed during setup");
	else if (!both[0].ok)
		snprintf(result, rlen, "%s", both[0].err);
	else
		snprintf(result, rlen, "rank 1: %s", both[1].err);
	if (stage >= 3)
		efab_rkeys_release(&fab, rk, 2);
	efab_mr_dereg(&mr);
	if (fab.ep)
		efab_fabric_close(&fab);
	fi_freeinfo(info);
	free(buf);
}

/* ---- writers ---- */

static void print_table(column_t *cols, size_t n)
{
	size_t per = (120 - LABEL_W) / COL_W;
	for (size_t start = 0; start < n; start += per) {
		size_t end = start + per < n ? start + per : n;
		for (size_t p = 0; p < cols[start].nprops; p++) {
			const char *name = cols[start].props[p].name;
			if (!strcmp(name, "verdict"))
				continue;
			printf("%-*s", LABEL_W, name);
			for (size_t c = start; c < end; c++) {
				const char *v = p < cols[c].nprops ? cols[c].props[p].value : "";
				if (!strncmp(name, "live_", 5) && strcmp(v, "OK"))
					v = "FAILED (below)";
				printf(" %-*.*s", COL_W - 1, COL_W - 1, v);
			}
			printf("\n");
		}
		printf("\n");
	}
	for (size_t c = 0; c < n; c++)
		printf("verdict (provider %s, domain %s) %s\n", cols[c].info->fabric_attr->prov_name,
		       cols[c].info->domain_attr->name, cols[c].verdict);
	for (size_t c = 0; c < n; c++)
		for (size_t p = 0; p < cols[c].nprops; p++)
			if (!strncmp(cols[c].props[p].name, "live_", 5) &&
			    strcmp(cols[c].props[p].value, "OK"))
				printf("%s %s/%s: %s\n", cols[c].props[p].name,
				       cols[c].info->fabric_attr->prov_name,
				       cols[c].info->fabric_attr->name, cols[c].props[p].value);
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void print_json(FILE *f, column_t *cols, size_t n)
{
	fprintf(f, "{\"efabench\": \"%s\", \"fabrics\": [", EFAB_VERSION);
	for (size_t c = 0; c < n; c++) {
		fprintf(f, "%s\n  {", c ? "," : "");
		for (size_t p = 0; p < cols[c].nprops; p++) {
			fprintf(f, "%s", p ? ", " : "");
			json_str(f, cols[c].props[p].name);
			fprintf(f, ": ");
			json_str(f, cols[c].props[p].value);
		}
		fprintf(f, "}");
	}
	fprintf(f, "\n]}\n");
}

static int write_csv(const char *path, column_t *cols, size_t n)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		efab_log_error("cannot open CSV file '%s': %m", path);
		return EFAB_EUSAGE;
	}
	fprintf(f, "provider,fabric,domain,property,value\n");
	for (size_t c = 0; c < n; c++)
		for (size_t p = 0; p < cols[c].nprops; p++) {
			const struct fi_info *i = cols[c].info;
			const char *fields[] = {i->fabric_attr->prov_name, i->fabric_attr->name,
						i->domain_attr->name, cols[c].props[p].name,
						cols[c].props[p].value};
			for (size_t k = 0; k < 5; k++) {
				const char *s = fields[k];
				if (strpbrk(s, ",\"\n")) {
					fputc('"', f);
					for (; *s; s++) {
						if (*s == '"')
							fputc('"', f);
						fputc(*s, f);
					}
					fputc('"', f);
				} else {
					fputs(s, f);
				}
				fputc(k < 4 ? ',' : '\n', f);
			}
		}
	if (fclose(f)) {
		efab_log_error("cannot write CSV file '%s'", path);
		return EFAB_ERR;
	}
	return EFAB_OK;
}

static const char summary[] =
	"Capability and requirements matrix of every RDM fabric on this host (no MPI needed),\n"
	"one column per provider/fabric/domain, and a one-line verdict per fabric. With --live\n"
	"(mpirun -np 2) each fabric really runs a registered put, an unregistered put\n"
	"(desc = NULL), a writedata, a read and a fetch-add, recording OK or the exact error.";

int efab_probe_main(int argc, char **argv)
{
	efab_opts_t o;
	char err[512];
	struct fi_info *all = NULL;
	static column_t cols[MAX_COLS];
	size_t n = 0;
	int rc = EFAB_OK, mpi = 0;
	efab_rt_t rt;

	if ((rc = efab_opts_main(&o, EFAB_B_PROBE, "efab_probe", summary, argc, argv)) >= 0)
		return rc;
	rc = EFAB_OK;
	if (o.live) {
		if (MPI_Init(&argc, &argv) != MPI_SUCCESS || efab_mpi_rt_init(&rt)) {
			efab_log_error("MPI_Init failed");
			return EFAB_ERR;
		}
		mpi = 1;
		if (rt.size != 2) {
			if (rt.rank == 0)
				efab_log_error("--live needs exactly 2 ranks (mpirun -np 2), got %d",
					       rt.size);
			rc = EFAB_EUSAGE;
			goto finalize;
		}
	}
	int ret = efab_getinfo_all(&all);
	if (ret && ret != -FI_ENODATA) {
		efab_log_fi("fi_getinfo", ret);
		rc = EFAB_ERR;
		goto finalize;
	}
	efab_fabric_req_t filter = {.provider = o.provider, .fabric = o.fabric, .domain = o.domain};
	for (struct fi_info *i = all; i && n < MAX_COLS; i = i->next) {
		if (efab_info_match(i, &filter) != i)
			continue;
		int dup = 0;
		for (size_t c = 0; c < n; c++)
			dup |= !strcmp(cols[c].info->fabric_attr->prov_name, i->fabric_attr->prov_name) &&
			       !strcmp(cols[c].info->fabric_attr->name, i->fabric_attr->name) &&
			       !strcmp(cols[c].info->domain_attr->name, i->domain_attr->name);
		if (dup)
			continue;
		memset(&cols[n], 0, sizeof(cols[n]));
		cols[n].info = fi_dupinfo(i);
		if (!cols[n].info) {
			efab_log_error("fi_dupinfo: out of memory");
			rc = EFAB_ERR;
			goto free_cols;
		}
		n++;
	}
	if (n == 0) {
		efab_fabric_list(err, sizeof(err));
		if (!mpi || rt.rank == 0)
			efab_log_error("no RDM fabric matches provider '%s' fabric '%s' domain '%s'; "
				       "available here: %s", o.provider[0] ? o.provider : "*",
				       o.fabric[0] ? o.fabric : "*", o.domain[0] ? o.domain : "*", err);
		rc = EFAB_EUSAGE;
		goto free_cols;
	}
	for (size_t c = 0; c < n; c++)
		describe(&cols[c]);
	if (o.live) {
		for (size_t c = 0; c < n; c++)
			for (int k = 0; k < LIVE_N; k++) {
				char res[512];
				live_one(&rt, cols[c].info, k, o.timeout_s < 10 ? o.timeout_s : 10, res,
					 sizeof(res));
				add(&cols[c], live_names[k], "%s", res);
			}
	}
	if (!mpi || rt.rank == 0) {
		if (o.json)
			print_json(stdout, cols, n);
		else
			print_table(cols, n);
		if (o.csv[0])
			rc = write_csv(o.csv, cols, n);
	}
free_cols:
	for (size_t c = 0; c < n; c++)
		fi_freeinfo(cols[c].info);
	fi_freeinfo(all);
finalize:
	if (mpi)
		MPI_Finalize();
	return rc;
}
