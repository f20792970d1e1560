/* Every node's facts (host, libfabric, EFA installer, kernel, topology),
 * gathered once per job: the header lists the nodes and says what differs
 * between them; --nodes-json writes them. */
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
	if (!uname(&u))
		snprintf(me->kernel, sizeof(me->kernel), "%s", u.release);
	if (want_topo && c->rt->local_rank == 0)
		efab_topo_summary(me->topology, sizeof(me->topology));
}

/* "libfabric 2.6 (node1), 1.17 (node0, node2)": which nodes report which
 * value of one fact; "" when all agree. */
static void differing(const node_facts_t *nodes, int n, size_t off, const char *what, char *buf,
		      size_t len)
{
	size_t k = 0;
	buf[0] = '\0';
	int same = 1;
	for (int a = 1; a < n; a++)
		same &= !strcmp((const char *)&nodes[a] + off, (const char *)&nodes[0] + off);
	if (same)
		return;
	k += (size_t)snprintf(buf, len, "%s", what);
	for (int a = 0; a < n && k < len; a++) {
		const char *val = (const char *)&nodes[a] + off;
		int seen = 0;
		for (int b = 0; b < a; b++)
			seen |= !strcmp((const char *)&nodes[b] + off, val);
		if (seen)
			continue;
		k += (size_t)snprintf(buf + k, len - k, "%s %s (", a ? ";" : "", *val ? val : "none");
		for (int b = a, first = 1; b < n && k < len; b++)
			if (!strcmp((const char *)&nodes[b] + off, val)) {
				k += (size_t)snprintf(buf + k, len - k, "%s%s", first ? "" : ", ",
						      nodes[b].host);
				first = 0;
			}
		if (k < len)
			k += (size_t)snprintf(buf + k, len - k, ")");
	}
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
		efab_json_kv(f, "], ", "libfabric_version", x->libfabric);
		efab_json_kv(f, ", ", "libfabric_path", x->path);
		efab_json_kv(f, ", ", "efa_installer", x->installer);
		efab_json_kv(f, ", ", "kernel", x->kernel);
		efab_json_kv(f, ", ", "topology", x->topology);
		fprintf(f, "}");
	}
	efab_json_kv(f, "\n],\n", "mismatch", mismatch);
	fprintf(f, "}\n");
	fclose(f);
}

/* Collective: every rank's host, libfabric and installer; rank 0 lists the
 * nodes in the header and says what differs between them (a node on another
 * libfabric or installer is the first suspect of a multi-node surprise). */
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
	char d1[256], d2[256], d3[256];
	differing(nodes, n, offsetof(node_facts_t, libfabric), "libfabric", d1, sizeof(d1));
	differing(nodes, n, offsetof(node_facts_t, path), "libfabric library", d2, sizeof(d2));
	differing(nodes, n, offsetof(node_facts_t, installer), "EFA installer", d3, sizeof(d3));
	snprintf(c->nodes_mismatch, sizeof(c->nodes_mismatch), "%s%s%s%s%s", d1,
		 *d1 && (*d2 || *d3) ? "; " : "", d2, *d2 && *d3 ? "; " : "", d3);
	if (n > 1)
		efab_note(c, "%s", c->nodes_summary);
	if (c->nodes_mismatch[0]) {
		efab_note(c, "WARNING: the nodes differ: %s", c->nodes_mismatch);
		fprintf(stderr, "%s: warning: the nodes differ: %s\n", c->row->name, c->nodes_mismatch);
	}
	if (c->o.nodes_json[0])
		write_nodes_json(c->o.nodes_json, nodes, n, all, rt->size, c->nodes_mismatch);
out:
	free(all);
	free(nodes);
	return rc;
}

