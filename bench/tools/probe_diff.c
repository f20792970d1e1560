/* efab_probe --diff: two probe outputs compared (no MPI, no libfabric calls);
 * probe_diff_load.c reads them.
 *
 * efab_probe --diff A B [--json]: A and B are --json outputs or --csv long
 * format files, told apart by their content. Columns are matched by
 * provider/fabric/domain; a column left over is matched to the column at the
 * same position among the other side's columns of its provider/fabric when
 * the two domains differ only in the NIC name (another node's rdmap names),
 * and the output says so. Every property is compared except those in diff_ignored[];
 * atomic_<op> rows are compared as sets of datatypes. Exit 0 identical, 1
 * different, 2 bad input (one line: the file and what is wrong). This is the
 * one definition of a capability difference: efab_plot runs it. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "efab_json.h"
#include "probe_diff.h"
#include "probe_int.h"

/* Not compared: the verdict is a sentence made of rows that are compared
 * (fabric, rma_*, atomic_*, mr_FI_MR_LOCAL, remote_cq_data, hmem, progress),
 * and its wording may change between efabench versions. */
static const char *const diff_ignored[] = {"verdict"};

static const char diff_usage[] =
	"Usage: efab_probe --diff A B [--json]\n"
	"Compare two efab_probe outputs (--json output or --csv long format, told apart by their\n"
	"content), e.g. before and after an EFA installer upgrade, or two nodes. Columns are\n"
	"matched by provider/fabric/domain; where the domain names differ only in the NIC name\n"
	"(two nodes with different rdmap names) by position within the provider/fabric, and the\n"
	"output says so. One line per change: column, property, A value -> B value; fabrics that\n"
	"vanished or appeared; for atomic_<op> rows the datatypes that appeared or vanished.\n"
	"Not compared: the verdict (made of the rows that are). No MPI, no libfabric calls.\n"
	"  --json    print the differences as JSON\n"
	"Exit status: 0 identical, 1 something differs, 2 bad usage or an unreadable file.\n";

/* -- matching and comparing -- */

/* The domain name with its NIC name cut out (malloc'd), or NULL when the NIC
 * name is unknown or not part of it. */
static char *domain_template(const dcol_t *c)
{
	const char *nic = dcol_get(c, "nic_name"), *dom = c->key[2], *hit;
	if (!nic || !nic[0] || !strcmp(nic, "-") || !(hit = strstr(dom, nic)))
		return NULL;
	size_t pre = (size_t)(hit - dom), nl = strlen(nic);
	char *t = malloc(strlen(dom) - nl + 2);
	if (t) {
		memcpy(t, dom, pre);
		t[pre] = '\x01';
		strcpy(t + pre + 1, hit + nl);
	}
	return t;
}

static void diff_match(dside_t *A, dside_t *B)
{
	for (size_t i = 0; i < A->n; i++)
		for (size_t j = 0; j < B->n; j++)
			if (B->c[j].peer < 0 && !strcmp(A->c[i].key[0], B->c[j].key[0]) &&
			    !strcmp(A->c[i].key[1], B->c[j].key[1]) &&
			    !strcmp(A->c[i].key[2], B->c[j].key[2])) {
				A->c[i].peer = (long)j;
				B->c[j].peer = (long)i;
				break;
			}
	/* left over: the column at the same position among the other side's
	 * columns of this provider/fabric, when its domain is the same apart
	 * from the NIC name */
	for (size_t i = 0; i < A->n; i++) {
		char *ta = A->c[i].peer < 0 ? domain_template(&A->c[i]) : NULL;
		size_t pos = 0, posb = 0;
		for (size_t k = 0; ta && k < i; k++)
			pos += !strcmp(A->c[k].key[0], A->c[i].key[0]) &&
			       !strcmp(A->c[k].key[1], A->c[i].key[1]);
		for (size_t j = 0; ta && j < B->n; j++) {
			if (strcmp(A->c[i].key[0], B->c[j].key[0]) ||
			    strcmp(A->c[i].key[1], B->c[j].key[1]))
				continue;
			if (posb++ != pos)
				continue;
			if (B->c[j].peer >= 0)
				break;
			char *tb = domain_template(&B->c[j]);
			int same = tb && !strcmp(ta, tb);
			free(tb);
			if (same) {
				A->c[i].peer = (long)j;
				B->c[j].peer = (long)i;
				A->c[i].by_position = B->c[j].by_position = 1;
			}
			break;
		}
		free(ta);
	}
}

/* A datatype list of an atomic_<op> row ("u64 u32 ..."; "-" = none)? */
static int dt_list(const char *name, const char *v)
{
	if (strncmp(name, "atomic_", 7))
		return 0;
	if (!strcmp(v, "-"))
		return 1;
	for (const char *p = v; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != ' ')
			return 0;
	return v[0] != '\0';
}

static int dt_has(const char *list, const char *tok, size_t tl)
{
	for (const char *p = list; *p;) {
		p += strspn(p, " ");
		size_t l = strcspn(p, " ");
		if (l == tl && !strncmp(p, tok, tl))
			return 1;
		p += l;
	}
	return 0;
}

/* The datatypes of x that y lacks, space-separated. */
static void dt_minus(const char *x, const char *y, char *out, size_t len)
{
	size_t n = 0;
	out[0] = '\0';
	for (const char *p = x; *p;) {
		p += strspn(p, " ");
		size_t l = strcspn(p, " ");
		if (l && strncmp(p, "-", l) && !dt_has(y, p, l) && n + l + 2 < len) {
			n += (size_t)snprintf(out + n, len - n, "%s%.*s", n ? " " : "", (int)l, p);
		}
		p += l;
	}
}

typedef struct dchange {
	const dcol_t *a, *b;               /* NULL: the column is absent on that side */
	const char *prop;                  /* NULL: the column itself vanished or appeared */
	const char *va, *vb;               /* NULL: the property is absent on that side */
	char appeared[160], vanished[160]; /* atomic_<op>: the datatypes */
	int dt;                            /* both values are datatype lists */
} dchange_t;

static int diff_ignored_prop(const char *name)
{
	for (size_t k = 0; k < EFAB_ARRAY_SIZE(diff_ignored); k++)
		if (!strcmp(diff_ignored[k], name))
			return 1;
	return 0;
}

static dchange_t *change_add(dchange_t **ch, size_t *n, size_t *cap, const dcol_t *a,
			     const dcol_t *b, const char *prop, const char *va, const char *vb)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		dchange_t *p = realloc(*ch, nc * sizeof(*p));
		if (!p)
			return NULL;
		*ch = p;
		*cap = nc;
	}
	dchange_t *c = &(*ch)[(*n)++];
	memset(c, 0, sizeof(*c));
	c->a = a;
	c->b = b;
	c->prop = prop;
	c->va = va;
	c->vb = vb;
	return c;
}

static int diff_compare(const dside_t *A, const dside_t *B, dchange_t **ch, size_t *n)
{
	size_t cap = 0;
	*ch = NULL;
	*n = 0;
	for (size_t i = 0; i < A->n; i++) {
		const dcol_t *a = &A->c[i], *b = a->peer >= 0 ? &B->c[a->peer] : NULL;
		if (!b) {
			if (!change_add(ch, n, &cap, a, NULL, NULL, NULL, NULL))
				return -1;
			continue;
		}
		for (size_t k = 0; k < a->n; k++) {
			const char *name = a->p[k].name, *va = a->p[k].value,
				   *vb = dcol_get(b, name);
			if (diff_ignored_prop(name) || (vb && !strcmp(va, vb)))
				continue;
			char app[160] = "", van[160] = "";
			int dt = vb && dt_list(name, va) && dt_list(name, vb);
			if (dt) {
				dt_minus(vb, va, app, sizeof(app));
				dt_minus(va, vb, van, sizeof(van));
				if (!app[0] && !van[0])
					continue; /* the same datatypes in another order */
			}
			dchange_t *c = change_add(ch, n, &cap, a, b, name, va, vb);
			if (!c)
				return -1;
			c->dt = dt;
			memcpy(c->appeared, app, sizeof(app));
			memcpy(c->vanished, van, sizeof(van));
		}
		for (size_t k = 0; k < b->n; k++)
			if (!diff_ignored_prop(b->p[k].name) && !dcol_get(a, b->p[k].name) &&
			    !change_add(ch, n, &cap, a, b, b->p[k].name, NULL, b->p[k].value))
				return -1;
	}
	for (size_t j = 0; j < B->n; j++)
		if (B->c[j].peer < 0 && !change_add(ch, n, &cap, NULL, &B->c[j], NULL, NULL, NULL))
			return -1;
	return 0;
}

static void json_dt_array(FILE *f, const char *list)
{
	fputc('[', f);
	int first = 1;
	for (const char *p = list; *p;) {
		p += strspn(p, " ");
		size_t l = strcspn(p, " ");
		if (l) {
			fprintf(f, "%s\"%.*s\"", first ? "" : ", ", (int)l, p);
			first = 0;
		}
		p += l;
	}
	fputc(']', f);
}

/* efab_json_kv, with null for a NULL value (what one side lacks) */
static void json_kv_or_null(FILE *f, const char *sep, const char *key, const char *value)
{
	if (value) {
		efab_json_kv(f, sep, key, value);
		return;
	}
	fputs(sep, f);
	efab_json_str(f, key);
	fputs(": null", f);
}

/* The members that name a column of the diff: provider and fabric (the same
 * on both sides), then each side's domain, null on a side without it. */
static void json_col_ids(const dcol_t *any, const dcol_t *a, const dcol_t *b)
{
	efab_json_kv(stdout, "", "provider", any->key[0]);
	efab_json_kv(stdout, ", ", "fabric", any->key[1]);
	json_kv_or_null(stdout, ", ", "a_domain", a ? a->key[2] : NULL);
	json_kv_or_null(stdout, ", ", "b_domain", b ? b->key[2] : NULL);
}

static void diff_print_json(const dside_t *A, const dside_t *B, const dchange_t *ch, size_t n)
{
	const dside_t *sides[2] = {A, B};
	printf("{");
	for (int k = 0; k < 2; k++) {
		printf("%s\"%s\": {", k ? ",\n " : "", k ? "b" : "a");
		efab_json_kv(stdout, "", "file", sides[k]->path);
		printf(", \"format\": \"%s\", \"columns\": %zu}", sides[k]->format, sides[k]->n);
	}
	printf(",\n \"identical\": %s,\n \"differences\": %zu,\n \"matched_by_position\": [",
	       n ? "false" : "true", n);
	int first = 1;
	for (size_t i = 0; i < A->n; i++) {
		const dcol_t *a = &A->c[i];
		if (!a->by_position)
			continue;
		const dcol_t *b = &B->c[a->peer];
		printf("%s\n  {", first ? "" : ",");
		json_col_ids(a, a, b);
		json_kv_or_null(stdout, ", ", "a_nic", dcol_get(a, "nic_name"));
		json_kv_or_null(stdout, ", ", "b_nic", dcol_get(b, "nic_name"));
		printf("}");
		first = 0;
	}
	printf("%s],\n \"changes\": [", first ? "" : "\n ");
	for (size_t i = 0; i < n; i++) {
		const dchange_t *c = &ch[i];
		const dcol_t *any = c->a ? c->a : c->b;
		const char *kind = !c->prop ? (c->a ? "column_vanished" : "column_appeared")
				   : !c->vb ? "property_vanished"
				   : !c->va ? "property_appeared"
					    : "changed";
		printf("%s\n  {", i ? "," : "");
		json_col_ids(any, c->a, c->b);
		efab_json_kv(stdout, ", ", "kind", kind);
		json_kv_or_null(stdout, ", ", "property", c->prop);
		json_kv_or_null(stdout, ", ", "a", c->prop ? c->va : c->a ? "present" : NULL);
		json_kv_or_null(stdout, ", ", "b", c->prop ? c->vb : c->b ? "present" : NULL);
		if (c->dt) {
			printf(", \"datatypes_appeared\": ");
			json_dt_array(stdout, c->appeared);
			printf(", \"datatypes_vanished\": ");
			json_dt_array(stdout, c->vanished);
		}
		printf("}");
	}
	printf("%s]}\n", n ? "\n " : "");
}

static void diff_print_table(const dside_t *A, const dside_t *B, const dchange_t *ch, size_t n)
{
	printf("efab_probe --diff: A = %s (%s, %zu columns), B = %s (%s, %zu columns)\n", A->path,
	       A->format, A->n, B->path, B->format, B->n);
	for (size_t i = 0; i < A->n; i++) {
		const dcol_t *a = &A->c[i];
		if (!a->by_position)
			continue;
		const dcol_t *b = &B->c[a->peer];
		const char *na = dcol_get(a, "nic_name"), *nb = dcol_get(b, "nic_name");
		printf("note: %s/%s: domain %s of A matched to %s of B by position (the domain names "
		       "differ only in the NIC name, %s -> %s)\n",
		       a->key[0], a->key[1], a->key[2], b->key[2], na ? na : "?", nb ? nb : "?");
	}
	int kw = 8, pw = 8;
	for (size_t i = 0; i < n; i++) {
		int l = (int)strlen(dcol_key(ch[i].a ? ch[i].a : ch[i].b));
		kw = l > kw ? (l < 44 ? l : 44) : kw;
		l = ch[i].prop ? (int)strlen(ch[i].prop) : 8;
		pw = l > pw ? (l < 24 ? l : 24) : pw;
	}
	size_t gone = 0, came = 0;
	for (size_t i = 0; i < n; i++) {
		const dchange_t *c = &ch[i];
		printf("%-*s  %-*s  ", kw, dcol_key(c->a ? c->a : c->b), pw,
		       c->prop ? c->prop : "(column)");
		if (!c->prop) {
			printf(c->a ? "present -> absent (vanished in B)\n"
				    : "absent -> present (appeared in B)\n");
			gone += c->a != NULL;
			came += c->a == NULL;
			continue;
		}
		printf("%s -> %s", c->va ? c->va : "(absent)", c->vb ? c->vb : "(absent)");
		if (c->appeared[0] || c->vanished[0])
			printf(" (%s%s%s%s%s)", c->appeared[0] ? "appeared: " : "", c->appeared,
			       c->appeared[0] && c->vanished[0] ? "; " : "",
			       c->vanished[0] ? "vanished: " : "", c->vanished);
		printf("\n");
	}
	if (!n)
		printf("no differences\n");
	else
		printf("%zu difference%s: %zu column%s vanished, %zu appeared, %zu propert%s changed\n",
		       n, n == 1 ? "" : "s", gone, gone == 1 ? "" : "s", came, n - gone - came,
		       n - gone - came == 1 ? "y" : "ies");
}

int probe_diff_main(int argc, char **argv)
{
	const char *files[2] = {NULL, NULL};
	int nfiles = 0, json = 0;
	efab_log_set_prefix("efab_probe");
	for (int k = 1; k < argc; k++) {
		const char *a = argv[k];
		if (!strcmp(a, "--diff"))
			continue;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(diff_usage, stdout);
			return EFAB_OK;
		}
		if (!strcmp(a, "--json")) {
			json = 1;
		} else if (a[0] == '-' && a[1]) {
			efab_log_error(
				"--diff: '%s' is not an option of --diff (usage: efab_probe --diff A B "
				"[--json])",
				a);
			return EFAB_EUSAGE;
		} else if (nfiles < 2) {
			files[nfiles++] = a;
		} else {
			nfiles++;
		}
	}
	if (nfiles != 2) {
		efab_log_error(
			"--diff needs two files, got %d (usage: efab_probe --diff A B [--json])",
			nfiles);
		return EFAB_EUSAGE;
	}
	static dside_t A, B;
	memset(&A, 0, sizeof(A));
	memset(&B, 0, sizeof(B));
	A.path = files[0];
	B.path = files[1];
	int rc = EFAB_EUSAGE;
	dchange_t *ch = NULL;
	size_t n = 0;
	if (probe_diff_load(&A)) {
		efab_log_error("%s", A.err);
	} else if (probe_diff_load(&B)) {
		efab_log_error("%s", B.err);
	} else {
		diff_match(&A, &B);
		if (diff_compare(&A, &B, &ch, &n)) {
			efab_log_error("--diff: out of memory");
			rc = EFAB_ERR;
		} else {
			if (json)
				diff_print_json(&A, &B, ch, n);
			else
				diff_print_table(&A, &B, ch, n);
			rc = n ? EFAB_ERR : EFAB_OK;
		}
	}
	free(ch);
	probe_dside_free(&A);
	probe_dside_free(&B);
	return rc;
}
