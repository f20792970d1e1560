/* libefab_fitrace.so: counts the memory registrations libfabric's domains
 * receive, below the library that makes them (efab_fitrace.h). Preloaded
 * (LD_PRELOAD), it defines the versioned libfabric entry points a library
 * built against libfabric links to -- fi_fabric@FABRIC_1.1 (every release
 * since 1.1) and fi_getinfo@FABRIC_1.3 (libraries built before libfabric
 * 1.5's ABI, e.g. NVSHMEM 3.4.5's transport) -- forwards them to the real
 * ones (dlvsym RTLD_NEXT), and puts a copy of each fabric's and each
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
 * EFAB_FITRACE_FABRIC=NAME: fi_getinfo (the 1.3 entry and the 1.8 entry,
 * which NVSHMEM 3.5+ links) returns only the entries of fabric NAME
 * (-FI_ENODATA when none is). On EFA with libfabric >= 2.1 a program that
 * asks FI_MR_LOCAL gets efa-direct first; with EFAB_FITRACE_FABRIC=efa it is
 * given the efa fabric of the same NIC, which honours FI_MR_LOCAL too: the
 * same program on the other fabric, without changing it.
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
	struct mr_table *t = NULL;
	for (int i = 0; o && i < MAX_TABLES && !t; i++)
		if (mrs[i].orig == o || !mrs[i].orig)
			t = &mrs[i];
	if (t && !t->orig) {
		size_t n = o->size < sizeof(t->mine) ? o->size : sizeof(t->mine);
		memcpy(&t->mine, o, n);
		t->mine.size = n;
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
	struct fab_table *t = NULL;
	for (int i = 0; o && i < MAX_TABLES && !t; i++)
		if (fabs[i].orig == o || !fabs[i].orig)
			t = &fabs[i];
	if (t && !t->orig) {
		size_t n = o->size < sizeof(t->mine) ? o->size : sizeof(t->mine);
		memcpy(&t->mine, o, n);
		t->mine.size = n;
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

/* Keeps the entries of list whose fabric_attr->name is want, in order;
 * frees the others one at a time with freeinfo (the caller's ABI version of
 * fi_freeinfo). Every fi_info ABI since 1.0 starts with next and keeps
 * fabric_attr where efab_fi_info_1_3_t has it, and every fi_fabric_attr
 * has name second: one walk serves the 1.3 and the 1.8 entries. Returns 0,
 * or -FI_ENODATA (list emptied) when no entry is of that fabric. */
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
		freeinfo(e);
	}
	return *list ? 0 : -FI_ENODATA;
}

typedef void (*freeinfo_fn)(void *);

static int filtered(int rc, void **info, const char *version)
{
	const char *want = getenv("EFAB_FITRACE_FABRIC");
	if (rc || !info || !*info || !want || !*want)
		return rc;
	freeinfo_fn fr = (freeinfo_fn)real_sym("fi_freeinfo", version);
	if (!fr)
		return rc; /* cannot free what it drops: leave the list as it is */
	return keep_fabric(info, want, fr);
}

EXPORT int efab_fitrace_fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context);
__asm__(".symver efab_fitrace_fi_fabric,fi_fabric@@FABRIC_1.1");
int efab_fitrace_fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context)
{
	static fabric_fn real;
	if (!real)
		real = (fabric_fn)real_sym("fi_fabric", "FABRIC_1.1");
	if (!real)
		return -FI_ENOSYS;
	int rc = real(attr, fabric, context);
	if (!rc && fabric && *fabric)
		seen_fabric(*fabric);
	return rc;
}

/* efab_fi_info_1_3_t (efab_fitrace.h): fi_info as the 1.3 ABI lays it out */
typedef int (*getinfo13_fn)(uint32_t, const char *, const char *, uint64_t, const efab_fi_info_1_3_t *, void **);

EXPORT int efab_fitrace_fi_getinfo_1_3(uint32_t version, const char *node, const char *service, uint64_t flags,
				       const efab_fi_info_1_3_t *hints, void **info);
__asm__(".symver efab_fitrace_fi_getinfo_1_3,fi_getinfo@FABRIC_1.3");
int efab_fitrace_fi_getinfo_1_3(uint32_t version, const char *node, const char *service, uint64_t flags,
				const efab_fi_info_1_3_t *hints, void **info)
{
	static getinfo13_fn real;
	if (!real)
		real = (getinfo13_fn)real_sym("fi_getinfo", "FABRIC_1.3");
	if (!real)
		return -FI_ENOSYS;
	const char *clear = getenv("EFAB_FITRACE_CLEAR_NIC");
	if (hints && hints->nic && clear && !strcmp(clear, "1")) {
		efab_fi_info_1_3_t h = *hints;
		h.nic = NULL;
		return filtered(real(version, node, service, flags, &h, info), info, "FABRIC_1.3");
	}
	return filtered(real(version, node, service, flags, hints, info), info, "FABRIC_1.3");
}

/* fi_info of the 1.8 ABI (the default entry of libfabric 2.1.0 and 2.4.0, a
 * compatibility entry in 2.6.0, whose default is 1.9); only its next and
 * fabric_attr are read here. */
typedef int (*getinfo18_fn)(uint32_t, const char *, const char *, uint64_t, const void *, void **);

EXPORT int efab_fitrace_fi_getinfo_1_8(uint32_t version, const char *node, const char *service, uint64_t flags,
				       const void *hints, void **info);
__asm__(".symver efab_fitrace_fi_getinfo_1_8,fi_getinfo@FABRIC_1.8");
int efab_fitrace_fi_getinfo_1_8(uint32_t version, const char *node, const char *service, uint64_t flags,
				const void *hints, void **info)
{
	static getinfo18_fn real;
	if (!real)
		real = (getinfo18_fn)real_sym("fi_getinfo", "FABRIC_1.8");
	if (!real)
		return -FI_ENOSYS;
	return filtered(real(version, node, service, flags, hints, info), info, "FABRIC_1.8");
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
