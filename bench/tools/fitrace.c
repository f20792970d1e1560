/* libefab_fitrace.so: counts the memory registrations libfabric's domains
 * receive, below the library that makes them (efab_fitrace.h). Preloaded
 * (LD_PRELOAD), it defines the versioned libfabric entry points a library
 * built against libfabric links to -- fi_fabric@FABRIC_1.1 (every release
 * since 1.1) and fi_getinfo at every version from FABRIC_1.3 to FABRIC_1.10
 * (1.3, 1.7, 1.8, 1.9, 1.10: what libfabric 1.17 to 2.7.0a1 export; NVSHMEM
 * 3.4.5's transport links 1.3, 3.5+ 1.8) -- forwards each to the real one of
 * the same version (dlvsym RTLD_NEXT), and puts a copy of each fabric's and each
 * domain's operation table in place whose domain/domain2 and
 * reg/regv/regattr entries count, then call the provider's. fi_mr_regattr is
 * an inline call through domain->mr, so this is where a registration can be
 * seen without changing the caller.
 *
 * EFAB_FITRACE_CLEAR_NIC=1: fi_getinfo@FABRIC_1.3 is given the hints with
 * hints->nic cleared. NVSHMEM 3.4.5's libfabric transport sets hints->nic to
 * an all-zero struct fid_nic (no ops); libfabric >= 1.20's 1.3 compatibility
 * entry duplicates the hints with fi_dupinfo, which duplicates the nic
 * through fi_control(&nic->fid, FI_DUP), reading ops->control at offset 0x18
 * of a NULL table: SIGSEGV (libfabric 2.6 src/abi_1_0.c:714-734 ->
 * src/fabric.c:1541-1542). An all-zero nic constrains nothing, so clearing
 * it asks for the same NICs.
 *
 * EFAB_FITRACE_FABRIC=NAME: fi_getinfo (every interposed version) returns
 * only the entries of fabric NAME (-FI_ENODATA when none is). On EFA with
 * libfabric >= 2.1 a program that asks FI_MR_LOCAL gets efa-direct first;
 * with EFAB_FITRACE_FABRIC=efa it is given the efa fabric of the same NIC,
 * which honours FI_MR_LOCAL too: the same program on the other fabric,
 * without changing it. A caller linked to a version not interposed (1.0-1.2,
 * or one newer than 1.10) is not filtered: efab_fitrace_filter reports how
 * many calls were (efab_fitrace.h), so a run claims the filter only when it
 * was applied (efab_fitrace_claim), and the interposer says on stderr when
 * the loaded libfabric exports a newer fi_getinfo. An interposed version the
 * loaded libfabric lacks is refused (-FI_ENOSYS, said on stderr): no other
 * version fills that caller's fi_info.
 * Both are off by default: only what a user asks changes what the caller
 * sees. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>

#include "efab_fitrace.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_TABLES 16

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static efab_fitrace_dom_t doms[EFAB_FITRACE_MAX_DOMAINS];
static size_t ndoms;

/* One wrapped operation table per provider table (providers share a static
 * table among their objects): the original and the copy put in its place. */
struct fab_table {
	const struct fi_ops_fabric *orig;
	struct fi_ops_fabric mine;
};
struct mr_table {
	const struct fi_ops_mr *orig;
	struct fi_ops_mr mine;
};
static struct fab_table fabs[MAX_TABLES];
static __thread int opening; /* domain opens this thread is inside */
static struct mr_table mrs[MAX_TABLES];

/* <table>_of(tabs, o, &n), under lock: tabs[]'s table made for ops o, else
 * a free one (NULL: all MAX_TABLES taken). A free one (t->orig still NULL)
 * gets o's first n bytes (what o says it has, at most ours); the caller puts
 * its wrappers in and marks it o's. One function per table type. */
#define DEFINE_TABLE_OF(table, ops)                                                                \
	static struct table *table##_of(struct table *tabs, const struct ops *o, size_t *n)        \
	{                                                                                          \
		struct table *t = NULL;                                                            \
		*n = 0;                                                                            \
		for (int i = 0; o && i < MAX_TABLES && !t; i++)                                    \
			if (tabs[i].orig == o || !tabs[i].orig)                                    \
				t = &tabs[i];                                                      \
		if (t && !t->orig) {                                                               \
			*n = o->size < sizeof(t->mine) ? o->size : sizeof(t->mine);                \
			memcpy(&t->mine, o, *n);                                                   \
			t->mine.size = *n;                                                         \
		}                                                                                  \
		return t;                                                                          \
	}
DEFINE_TABLE_OF(fab_table, fi_ops_fabric)
DEFINE_TABLE_OF(mr_table, fi_ops_mr)

static void copy_str(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

/* The domain's record; NULL when it was not seen opened (too many). */
static efab_fitrace_dom_t *dom_of(const void *fid)
{
	for (size_t i = 0; i < ndoms && i < EFAB_FITRACE_MAX_DOMAINS; i++)
		if (doms[i].fid == fid)
			return &doms[i];
	return NULL;
}

/* The provider's mr table of a domain (the table we put in place maps back
 * to the original through mrs[]). */
static const struct fi_ops_mr *orig_mr(const struct fid *fid)
{
	const struct fid_domain *d = (const struct fid_domain *)fid;
	for (int i = 0; i < MAX_TABLES; i++)
		if (mrs[i].orig && d->mr == &mrs[i].mine)
			return mrs[i].orig;
	return d->mr;
}

static void count(const struct fid *fid, int attr, int rc)
{
	pthread_mutex_lock(&lock);
	efab_fitrace_dom_t *d = dom_of(fid);
	if (d) {
		d->regs++;
		d->regattr += attr != 0;
		d->failed += rc != 0;
	}
	pthread_mutex_unlock(&lock);
}

static int wrap_reg(struct fid *fid, const void *buf, size_t len, uint64_t access, uint64_t offset,
		    uint64_t requested_key, uint64_t flags, struct fid_mr **mr, void *context)
{
	int rc = orig_mr(fid)->reg(fid, buf, len, access, offset, requested_key, flags, mr, context);
	count(fid, 0, rc);
	return rc;
}

static int wrap_regv(struct fid *fid, const struct iovec *iov, size_t n, uint64_t access, uint64_t offset,
		     uint64_t requested_key, uint64_t flags, struct fid_mr **mr, void *context)
{
	int rc = orig_mr(fid)->regv(fid, iov, n, access, offset, requested_key, flags, mr, context);
	count(fid, 0, rc);
	return rc;
}

static int wrap_regattr(struct fid *fid, const struct fi_mr_attr *attr, uint64_t flags, struct fid_mr **mr)
{
	int rc = orig_mr(fid)->regattr(fid, attr, flags, mr);
	count(fid, 1, rc);
	return rc;
}

/* Record a domain just opened and put the counting mr table in its place. */
static void seen_domain(struct fid_domain *d, const struct fi_info *info)
{
	pthread_mutex_lock(&lock);
	if (ndoms < EFAB_FITRACE_MAX_DOMAINS) {
		efab_fitrace_dom_t *r = &doms[ndoms];
		memset(r, 0, sizeof(*r));
		r->fid = d;
		r->inner = opening > 0;
		if (info && info->fabric_attr) {
			copy_str(r->fabric, sizeof(r->fabric), info->fabric_attr->name);
			copy_str(r->prov, sizeof(r->prov), info->fabric_attr->prov_name);
		}
		if (info && info->domain_attr) {
			copy_str(r->name, sizeof(r->name), info->domain_attr->name);
			r->mr_mode = info->domain_attr->mr_mode;
		}
		/* (lib/select.c efab_info_simulated: the same test) */
		r->simulated = info && info->nic && info->nic->device_attr && info->nic->device_attr->firmware &&
			       !strncmp(info->nic->device_attr->firmware, "efasim", 6);
	}
	ndoms++;
	const struct fi_ops_mr *o = d->mr;
	size_t n;
	struct mr_table *t = mr_table_of(mrs, o, &n);
	if (t && !t->orig) {
		if (t->mine.reg)
			t->mine.reg = wrap_reg;
		if (n > offsetof(struct fi_ops_mr, regv) && t->mine.regv)
			t->mine.regv = wrap_regv;
		if (n > offsetof(struct fi_ops_mr, regattr) && t->mine.regattr)
			t->mine.regattr = wrap_regattr;
		t->orig = o;
	}
	if (t)
		d->mr = &t->mine;
	pthread_mutex_unlock(&lock);
}

static const struct fi_ops_fabric *orig_fab(const struct fid_fabric *f)
{
	for (int i = 0; i < MAX_TABLES; i++)
		if (fabs[i].orig && f->ops == &fabs[i].mine)
			return fabs[i].orig;
	return f->ops;
}

static int wrap_domain(struct fid_fabric *f, struct fi_info *info, struct fid_domain **d, void *context)
{
	opening++;
	int rc = orig_fab(f)->domain(f, info, d, context);
	opening--;
	if (!rc && d && *d)
		seen_domain(*d, info);
	return rc;
}

static int wrap_domain2(struct fid_fabric *f, struct fi_info *info, struct fid_domain **d, uint64_t flags,
			void *context)
{
	opening++;
	int rc = orig_fab(f)->domain2(f, info, d, flags, context);
	opening--;
	if (!rc && d && *d)
		seen_domain(*d, info);
	return rc;
}

static void seen_fabric(struct fid_fabric *f)
{
	pthread_mutex_lock(&lock);
	const struct fi_ops_fabric *o = f->ops;
	size_t n;
	struct fab_table *t = fab_table_of(fabs, o, &n);
	/* as seen_domain's mr table: table_of is the shared part, the
	 * wrappers are each table's own entries */
	if (t && !t->orig) {
		if (t->mine.domain)
			t->mine.domain = wrap_domain;
		if (n > offsetof(struct fi_ops_fabric, domain2) && t->mine.domain2)
			t->mine.domain2 = wrap_domain2;
		t->orig = o;
	}
	if (t)
		f->ops = &t->mine;
	pthread_mutex_unlock(&lock);
}

typedef int (*fabric_fn)(struct fi_fabric_attr *, struct fid_fabric **, void *);

/* The real entry point: next in the global scope, or -- when libfabric came
 * in with a library dlopen'ed RTLD_LOCAL (NVSHMEM's transport plugin: the
 * program itself does not link libfabric) -- from the loaded libfabric.so.1. */
static void *real_sym(const char *name, const char *version)
{
	void *f = dlvsym(RTLD_NEXT, name, version);
	if (!f) {
		void *h = dlopen("libfabric.so.1", RTLD_LAZY | RTLD_NOLOAD);
		if (h) {
			f = dlvsym(h, name, version);
			dlclose(h);
		}
	}
	return f;
}

static void warn_uncovered(const char *want);

EXPORT int efab_fitrace_fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context);
__asm__(".symver efab_fitrace_fi_fabric,fi_fabric@@FABRIC_1.1");
int efab_fitrace_fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context)
{
	static fabric_fn real;
	if (!real)
		real = (fabric_fn)real_sym("fi_fabric", "FABRIC_1.1");
	if (!real)
		return -FI_ENOSYS;
	const char *want = getenv("EFAB_FITRACE_FABRIC");
	if (want && *want)
		warn_uncovered(want);
	int rc = real(attr, fabric, context);
	if (!rc && fabric && *fabric)
		seen_fabric(*fabric);
	return rc;
}

/* Keeps the entries of list whose fabric_attr->name is want, in order;
 * frees the others one at a time with freeinfo (the caller's ABI version of
 * fi_freeinfo; NULL: they are unlinked and left, a small leak rather than an
 * unfiltered list). Every fi_info ABI since 1.0 starts with next and keeps
 * fabric_attr where efab_fi_info_1_3_t has it, and every fi_fabric_attr has
 * name second: one walk serves every version. Returns 0, or -FI_ENODATA
 * (list emptied) when no entry is of that fabric. */
static int keep_fabric(void **list, const char *want, void (*freeinfo)(void *))
{
	void **link = list;
	while (*link) {
		efab_fi_info_1_3_t *e = *link;
		const struct fi_fabric_attr *fa = e->fabric_attr;
		if (fa && fa->name && !strcmp(fa->name, want)) {
			link = &e->next;
			continue;
		}
		*link = e->next;
		e->next = NULL;
		if (freeinfo)
			freeinfo(e);
	}
	return *list ? 0 : -FI_ENODATA;
}

typedef void (*freeinfo_fn)(void *);

/* What EFAB_FITRACE_FABRIC did (efab_fitrace_filter), under lock. */
static efab_fitrace_filter_t report;

/* The newest fi_getinfo@FABRIC_1.m above the interposed ones (m > 10) that
 * the loaded libfabric exports, into out ("" when none or not loaded):
 * a caller linked to it is not filtered. */
static void newest_uncovered(char *out, size_t len)
{
	out[0] = 0;
	for (int m = 39; m > 10 && !out[0]; m--) {
		char v[32];
		snprintf(v, sizeof(v), "FABRIC_1.%d", m);
		if (real_sym("fi_getinfo", v))
			snprintf(out, len, "%s", v);
	}
}

/* Once per process with EFAB_FITRACE_FABRIC set: say on stderr when the
 * loaded libfabric has an fi_getinfo newer than the interposed ones. */
static void warn_uncovered(const char *want)
{
	static int done;
	char v[32];
	pthread_mutex_lock(&lock);
	int first = !done;
	done = 1;
	pthread_mutex_unlock(&lock);
	if (!first)
		return;
	newest_uncovered(v, sizeof(v));
	if (v[0])
		fprintf(stderr,
			"libefab_fitrace.so: this libfabric exports fi_getinfo@%s, which the interposer does "
			"not interpose (it does %s): EFAB_FITRACE_FABRIC=%s does not apply to a caller linked to it\n",
			v, EFAB_FITRACE_GETINFO_VERSIONS, want);
}

/* A call of fi_getinfo@FABRIC_1.minor with EFAB_FITRACE_FABRIC want (or
 * NULL), in the report; under lock. */
static void note_call(int minor, const char *want)
{
	report.calls++;
	report.versions |= 1u << minor;
	if (want && *want && !report.want[0])
		copy_str(report.want, sizeof(report.want), want);
}

/* fi_getinfo@version (FABRIC_1.minor) returned rc and *info: with
 * EFAB_FITRACE_FABRIC set, only that fabric's entries are kept, and the
 * report says so. */
static int filtered(int rc, void **info, int minor, const char *version)
{
	const char *want = getenv("EFAB_FITRACE_FABRIC");
	int apply = !rc && info && *info && want && *want;
	pthread_mutex_lock(&lock);
	note_call(minor, want);
	report.applied += apply;
	pthread_mutex_unlock(&lock);
	if (want && *want)
		warn_uncovered(want);
	if (!apply)
		return rc;
	return keep_fabric(info, want, (freeinfo_fn)real_sym("fi_freeinfo", version));
}

/* The real entry could not be found: the loaded libfabric lacks this
 * version (a caller reaching it through dlvsym, or a program built against
 * newer headers). No other version fills the caller's fi_info layout (1.7
 * to 1.10 grew domain_attr and ep_attr), so the call is refused, loudly. */
static int refuse(int minor, const char *version)
{
	static uint32_t said;
	pthread_mutex_lock(&lock);
	note_call(minor, getenv("EFAB_FITRACE_FABRIC"));
	report.refused++;
	int first = !(said & (1u << minor));
	said |= 1u << minor;
	pthread_mutex_unlock(&lock);
	if (first)
		fprintf(stderr,
			"libefab_fitrace.so: fi_getinfo@%s called, but the loaded libfabric has no such "
			"version: -FI_ENOSYS\n", version);
	return -FI_ENOSYS;
}

typedef int (*getinfo_fn)(uint32_t, const char *, const char *, uint64_t, const void *, void **);

/* The caller's fi_getinfo@FABRIC_1.minor, forwarded to the real one of the
 * same version; hints is of that ABI's layout (efab_fi_info_1_3_t: the top
 * level of each, which is all that is read here). EFAB_FITRACE_CLEAR_NIC=1
 * applies to the 1.3 entry (NVSHMEM 3.4.5's). */
static int getinfo_at(int minor, const char *version, getinfo_fn *real, uint32_t api, const char *node,
		      const char *service, uint64_t flags, const efab_fi_info_1_3_t *hints, void **info)
{
	if (!*real)
		*real = (getinfo_fn)real_sym("fi_getinfo", version);
	if (!*real)
		return refuse(minor, version);
	const char *clear = getenv("EFAB_FITRACE_CLEAR_NIC");
	if (minor == 3 && hints && hints->nic && clear && !strcmp(clear, "1")) {
		efab_fi_info_1_3_t h = *hints;
		h.nic = NULL;
		return filtered((*real)(api, node, service, flags, &h, info), info, minor, version);
	}
	return filtered((*real)(api, node, service, flags, hints, info), info, minor, version);
}

/* One interposed entry per fi_getinfo version libfabric has exported from
 * 1.3 to 2.7.0a1 (src/abi_1_0.c COMPAT_SYMVER, src/fabric.c DEFAULT_SYMVER):
 * 1.3 (Debian's 1.17 default; NVSHMEM 3.4.5), 1.7, 1.8 (the default of
 * 2.1.0 and 2.4.0; NVSHMEM 3.5+), 1.9 (2.6.0's default) and 1.10 (2.7.0a1's).
 * Their fi_info is laid out alike; the attrs it points to grew (1.7
 * domain_attr max_ep_auth_key, 1.8 max_group_id, 1.9 max_cntr_value,
 * max_err_cntr_value and ep_attr auth_key, 1.10 max_xpu_ctx_cnt and ep_attr
 * xpu_ctx), which only the real entry of the caller's version fills right.
 * 1.0-1.2 (1.0 and 1.1 without nic) are not interposed: a caller of them is
 * not filtered, and the report says no call was (calls 0). Each is
 * non-default (@), so it matches only a caller bound to that version. */
#define GETINFO_ENTRY(minor, ver)                                                                          \
	EXPORT int efab_fitrace_fi_getinfo_1_##minor(uint32_t api, const char *node, const char *service,    \
						     uint64_t flags, const efab_fi_info_1_3_t *hints,         \
						     void **info);                                            \
	__asm__(".symver efab_fitrace_fi_getinfo_1_" #minor ",fi_getinfo@" ver);                             \
	int efab_fitrace_fi_getinfo_1_##minor(uint32_t api, const char *node, const char *service,           \
					      uint64_t flags, const efab_fi_info_1_3_t *hints, void **info)  \
	{                                                                                                    \
		static getinfo_fn real;                                                                      \
		return getinfo_at(minor, ver, &real, api, node, service, flags, hints, info);                \
	}
GETINFO_ENTRY(3, "FABRIC_1.3")
GETINFO_ENTRY(7, "FABRIC_1.7")
GETINFO_ENTRY(8, "FABRIC_1.8")
GETINFO_ENTRY(9, "FABRIC_1.9")
GETINFO_ENTRY(10, "FABRIC_1.10")

EXPORT void efab_fitrace_filter(efab_fitrace_filter_t *out)
{
	char v[32];
	newest_uncovered(v, sizeof(v));
	pthread_mutex_lock(&lock);
	*out = report;
	copy_str(out->uncovered, sizeof(out->uncovered), v);
	pthread_mutex_unlock(&lock);
}

EXPORT size_t efab_fitrace_read(efab_fitrace_dom_t *out, size_t max)
{
	pthread_mutex_lock(&lock);
	size_t n = ndoms < EFAB_FITRACE_MAX_DOMAINS ? ndoms : EFAB_FITRACE_MAX_DOMAINS;
	for (size_t i = 0; out && i < n && i < max; i++)
		out[i] = doms[i];
	size_t all = ndoms;
	pthread_mutex_unlock(&lock);
	return all;
}
