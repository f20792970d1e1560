/* Every rank's facts (host, libfabric, EFA installer, rdma-core, EFA driver,
 * kernel, topology), gathered once per job before any fabric opens: the
 * header lists the nodes and says what differs between the ranks (two ranks of
 * one node on two libfabric builds count: an installer roll-out half done, or
 * an LD_LIBRARY_PATH given to some ranks only); --nodes-json writes them;
 * --strict-versions refuses to run on a difference. Then, once each rank has
 * selected its fabric and before any address crosses, the provider each chose
 * (name, fabric, version): ranks on different providers cannot talk (libfabric
 * 1.17 answers -p tcp with tcp;ofi_rxm, 2.x with tcp) and would only time out. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "efab_abi.h"
#include "efab_json.h"
#include "provenance.h"

typedef struct node_facts {
	char host[64];
	char libfabric[16]; /* running: fi_version() */
	char path[256];     /* the libfabric.so loaded */
	char installer[32]; /* EFA installer of that library's install */
	char rdma_core[32]; /* the libibverbs loaded: its rdma-core release */
	char efa_driver[32]; /* /sys/module/efa/version */
	char kernel[64];
	char topology[192]; /* the first rank of each node fills it */
} node_facts_t;

static void facts_of_this_rank(const efab_ctx_t *c, int want_topo, node_facts_t *me)
{
	struct utsname u;
	uint32_t v = fi_version();
	memset(me, 0, sizeof(*me));
	gethostname(me->host, sizeof(me->host) - 1);
	snprintf(me->libfabric, sizeof(me->libfabric), "%u.%u", FI_MAJOR(v), FI_MINOR(v));
	efab_libfabric_path(me->path, sizeof(me->path));
	efab_efa_installer_of(me->path, me->installer, sizeof(me->installer));
	efab_rdma_core_version(me->rdma_core, sizeof(me->rdma_core), NULL, 0);
	efab_efa_driver_version(me->efa_driver, sizeof(me->efa_driver));
	if (!uname(&u))
		snprintf(me->kernel, sizeof(me->kernel), "%s", u.release);
	if (want_topo && c->rt->local_rank == 0)
		efab_topo_summary(me->topology, sizeof(me->topology));
}

/* "libfabric 2.6 (rank 0 on node0); 1.17 (ranks 1-3 on node0, rank 4 on
 * node1)": which ranks report which value of one fact (at the offset off of
 * stride-sized records); "" when all agree. */
static void differing(const void *recs, size_t stride, const char *(*host)(const void *), int n,
		      size_t off, const char *what, char *buf, size_t len)
{
#define VAL(r) ((const char *)recs + (size_t)(r) * stride + off)
#define HOST(r) host((const char *)recs + (size_t)(r) * stride)
	size_t k = 0;
	buf[0] = '\0';
	int same = 1;
	for (int a = 1; a < n; a++)
		same &= !strcmp(VAL(a), VAL(0));
	if (same)
		return;
	k += (size_t)snprintf(buf, len, "%s", what);
	for (int a = 0; a < n && k < len; a++) {
		int seen = 0;
		for (int b = 0; b < a; b++)
			seen |= !strcmp(VAL(b), VAL(a));
		if (seen)
			continue;
		k += (size_t)snprintf(buf + k, len - k, "%s %s (", a ? ";" : "", *VAL(a) ? VAL(a) : "none");
		/* runs of consecutive ranks on one host with this value */
		for (int b = a, first = 1; b < n && k < len; b++) {
			if (strcmp(VAL(b), VAL(a)))
				continue;
			int e = b;
			while (e + 1 < n && !strcmp(VAL(e + 1), VAL(a)) && !strcmp(HOST(e + 1), HOST(b)))
				e++;
			if (e > b)
				k += (size_t)snprintf(buf + k, len - k, "%sranks %d-%d on %s", first ? "" : ", ",
						      b, e, HOST(b));
			else
				k += (size_t)snprintf(buf + k, len - k, "%srank %d on %s", first ? "" : ", ",
						      b, HOST(b));
			first = 0;
			b = e;
		}
		if (k < len)
			k += (size_t)snprintf(buf + k, len - k, ")");
	}
	if (k >= len && len > 4)
		memcpy(buf + len - 4, "...", 4);
#undef VAL
#undef HOST
}

/* Rank 0: a difference between the ranks' stacks, said once on stderr and in
 * the header; with --strict-versions the one line of a usage error. */
static int ranks_differ(efab_ctx_t *c, const char *what)
{
	if (c->o.strict_versions) {
		efab_log_error("the ranks differ (--strict-versions): %s", what);
		return EFAB_EUSAGE;
	}
	efab_note(c, "WARNING: the ranks differ: %s", what);
	fprintf(stderr, "%s: warning: the ranks differ: %s\n", c->row->name, what);
	return EFAB_OK;
}

static const char *facts_host(const void *f)
{
	return ((const node_facts_t *)f)->host;
}

static void write_nodes_json(const char *path, const node_facts_t *nodes, int n,
			     const node_facts_t *all, int nranks, const char *mismatch)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		efab_log_error("--nodes-json: cannot write '%s': %s", path, strerror(errno));
		return;
	}
	fprintf(f, "{\"nodes\": [");
	for (int a = 0; a < n; a++) {
		const node_facts_t *x = &nodes[a];
		efab_json_kv(f, a ? ",\n  {" : "\n  {", "hostname", x->host);
		fprintf(f, ", \"ranks\": [");
		for (int r = 0, first = 1; r < nranks; r++)
			if (!strcmp(all[r].host, x->host)) {
				fprintf(f, "%s%d", first ? "" : ", ", r);
				first = 0;
			}
		/* (sweep_record.c's libfabric_installs has this shape, other members) */
		efab_json_kv(f, "], ", "libfabric_version", x->libfabric);
		efab_json_kv(f, ", ", "libfabric_path", x->path);
		efab_json_kv(f, ", ", "efa_installer", x->installer);
		efab_json_kv(f, ", ", "rdma_core", x->rdma_core);
		efab_json_kv(f, ", ", "efa_driver", x->efa_driver);
		efab_json_kv(f, ", ", "kernel", x->kernel);
		efab_json_kv(f, ", ", "topology", x->topology);
		fprintf(f, "}");
	}
	efab_json_kv(f, "\n],\n", "mismatch", mismatch);
	fprintf(f, "}\n");
	fclose(f);
}

/* Collective: every rank's host, libfabric, installer, rdma-core and driver;
 * rank 0 lists the nodes in the header and says what differs between the
 * ranks (a rank on another libfabric or installer is the first suspect of a
 * multi-node surprise); with --strict-versions that is a usage error (2). */
int efab_node_provenance(efab_ctx_t *c)
{
	efab_rt_t *rt = c->rt;
	node_facts_t me, *all = calloc((size_t)rt->size, sizeof(*all));
	node_facts_t *nodes = calloc((size_t)rt->size, sizeof(*nodes));
	int rc = EFAB_OK;
	if (!all || !nodes) {
		efab_log_error("out of memory");
		rc = EFAB_ERR;
		goto out;
	}
	facts_of_this_rank(c, c->o.nodes_json[0] != '\0', &me);
	if (rt->allgather(rt, &me, all, sizeof(me))) {
		rc = EFAB_ERR;
		goto out;
	}
	if (rt->rank)
		goto out;
	int n = 0;
	for (int r = 0; r < rt->size; r++) {
		int a = 0;
		while (a < n && strcmp(nodes[a].host, all[r].host))
			a++;
		if (a == n)
			nodes[n++] = all[r];
		else if (!nodes[a].topology[0])
			memcpy(nodes[a].topology, all[r].topology, sizeof(nodes[a].topology));
	}
	c->nnodes = n;
	size_t k = (size_t)snprintf(c->nodes_summary, sizeof(c->nodes_summary), "%d node%s:", n,
				    n == 1 ? "" : "s");
	for (int a = 0; a < n && k < sizeof(c->nodes_summary); a++)
		k += (size_t)snprintf(c->nodes_summary + k, sizeof(c->nodes_summary) - k, "%s%s",
				      a ? ", " : " ", nodes[a].host);
	/* every rank against every other, not one rank per node: two ranks of
	 * one node can run two libfabric builds */
	static const struct {
		size_t off;
		const char *what;
	} facts[] = {
		{offsetof(node_facts_t, libfabric), "libfabric"},
		{offsetof(node_facts_t, path), "libfabric library"},
		{offsetof(node_facts_t, installer), "EFA installer"},
		{offsetof(node_facts_t, rdma_core), "rdma-core"},
		{offsetof(node_facts_t, efa_driver), "EFA driver"},
	};
	size_t m = 0;
	c->nodes_mismatch[0] = '\0';
	for (size_t i = 0; i < EFAB_ARRAY_SIZE(facts); i++) {
		char d[256];
		differing(all, sizeof(*all), facts_host, rt->size, facts[i].off, facts[i].what, d,
			  sizeof(d));
		if (*d && m < sizeof(c->nodes_mismatch))
			m += (size_t)snprintf(c->nodes_mismatch + m, sizeof(c->nodes_mismatch) - m, "%s%s",
					      m ? "; " : "", d);
	}
	if (n > 1)
		efab_note(c, "%s", c->nodes_summary);
	if (c->nodes_mismatch[0])
		rc = ranks_differ(c, c->nodes_mismatch);
	if (c->o.nodes_json[0])
		write_nodes_json(c->o.nodes_json, nodes, n, all, rt->size, c->nodes_mismatch);
out:
	free(all);
	free(nodes);
	return rc;
}


/* What a rank selected: the provider, fabric and version it will talk with. */
typedef struct chosen {
	char host[64];
	char provider[64];
	char fabric[128];
	char version[32];
} chosen_t;

static const char *chosen_host(const void *f)
{
	return ((const chosen_t *)f)->host;
}

int efab_provider_agree(efab_ctx_t *c, const struct fi_info *info)
{
	efab_rt_t *rt = c->rt;
	chosen_t me, *all = calloc((size_t)rt->size, sizeof(*all));
	int rc = EFAB_OK;
	if (!all) {
		efab_log_error("out of memory");
		return EFAB_ERR;
	}
	memset(&me, 0, sizeof(me));
	gethostname(me.host, sizeof(me.host) - 1);
	uint32_t pv = info->fabric_attr->prov_version;
	snprintf(me.provider, sizeof(me.provider), "%s", info->fabric_attr->prov_name);
	snprintf(me.fabric, sizeof(me.fabric), "%s", info->fabric_attr->name);
	snprintf(me.version, sizeof(me.version), "%u.%u", FI_MAJOR(pv), FI_MINOR(pv));
	if (rt->allgather(rt, &me, all, sizeof(me))) {
		free(all);
		return EFAB_ERR;
	}
	char dp[256], df[256], dv[256], m[800];
	differing(all, sizeof(*all), chosen_host, rt->size, offsetof(chosen_t, provider), "provider",
		  dp, sizeof(dp));
	differing(all, sizeof(*all), chosen_host, rt->size, offsetof(chosen_t, fabric), "fabric", df,
		  sizeof(df));
	differing(all, sizeof(*all), chosen_host, rt->size, offsetof(chosen_t, version),
		  "provider version", dv, sizeof(dv));
	snprintf(m, sizeof(m), "%s%s%s%s%s", dp, *dp && *df ? "; " : "", df, (*dp || *df) && *dv ? "; " : "",
		 dv);
	if (*dp || *df) {
		/* no two providers speak one wire protocol: a certain timeout */
		if (rt->rank == 0)
			efab_log_error("the ranks selected different providers or fabrics, which cannot talk to "
				       "each other: %s", m);
		rc = EFAB_ERR;
	} else if (*dv) {
		size_t k = strlen(c->nodes_mismatch);
		if (k < sizeof(c->nodes_mismatch))
			snprintf(c->nodes_mismatch + k, sizeof(c->nodes_mismatch) - k, "%s%s",
				 k ? "; " : "", dv);
		if (rt->rank == 0)
			rc = ranks_differ(c, dv);
		else if (c->o.strict_versions)
			rc = EFAB_EUSAGE;
	}
	free(all);
	return rc;
}
