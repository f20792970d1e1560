/* libefab_fipost.so: counts, below any program that uses libfabric, what
 * its data path asks of the provider: RMA posts, the posts without FI_MORE
 * (each is a doorbell: the efa provider's direct path and its verbs path
 * ring the SQ doorbell for a post without FI_MORE only -- libfabric 2.6.0
 * and 2.7.0a1 efa_data_path_direct_entry.h, efa_data_path_ops.h -- besides
 * its queue's max_batch, 64 WQEs, and a refused post, counted apart here),
 * the batch each doorbell closes (WQEs since the previous doorbell on that
 * endpoint), and fi_cq_read calls (empty ones apart) with the completions
 * they returned. The same counts for efabench and for fabtests (issue 62:
 * doorbells per batch and CQ reads per operation of both tools).
 *
 * LD_PRELOAD it (under mpirun: -x LD_PRELOAD); at exit each process prints
 * one line on stderr:
 *   fipost[PID]: rma posts P (R refused), doorbells D, WQEs per doorbell
 *   P/D, cq reads Q (E empty), completions C, batches (WQEs x doorbells):
 *   1xA 8xB ... (>64xZ: larger batches)
 * It defines fi_fabric@@FABRIC_1.1 (the entry every libfabric release since
 * 1.1 exports), forwards it to the real one and puts copies of the fabric's,
 * domain's, endpoint's RMA and CQ operation tables in place whose entries
 * count, then call the provider's (as fitrace.c does for registrations).
 * Single-threaded callers (efabench's ranks, fabtests): the counts are plain
 * increments. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#define EXPORT __attribute__((visibility("default")))
#define MAX_TABLES 16
#define MAX_EPS 64

#define HIST_MAX 64 /* batches of more WQEs than this are counted together */
static unsigned long long posts, refused, doorbells, hist[HIST_MAX + 1], cq_reads, cq_empty, comps;
static int used;

/* pending WQEs (posted with FI_MORE) per endpoint */
static struct {
	const void *ep;
	unsigned long long pending;
} eps[MAX_EPS];

static unsigned long long *pending_of(const void *ep)
{
	for (int i = 0; i < MAX_EPS; i++) {
		if (eps[i].ep == ep)
			return &eps[i].pending;
		if (!eps[i].ep) {
			eps[i].ep = ep;
			return &eps[i].pending;
		}
	}
	static unsigned long long spill;
	return &spill;
}

static void posted(const void *ep, ssize_t rc, uint64_t flags)
{
	used = 1;
	if (rc) {
		refused += rc == -FI_EAGAIN;
		return;
	}
	posts++;
	unsigned long long *p = pending_of(ep);
	++*p;
	if (flags & FI_MORE)
		return;
	doorbells++;
	hist[*p > HIST_MAX ? 0 : *p]++;
	*p = 0;
}

/* ---- endpoint RMA tables ---- */
/* ---- the wrapped ops tables ----
 * A provider's ops table (RMA, CQ, domain, fabric) is shared by its objects:
 * the first object seen with a table gets a copy of it with the counting
 * wrappers in, kept in a slot beside the original, and every object with
 * that table is pointed at the copy. One slot type for the four kinds. */
struct ops_slot {
	const void *orig;
	union {
		struct fi_ops_rma rma;
		struct fi_ops_cq cq;
		struct fi_ops_domain dom;
		struct fi_ops_fabric fab;
	} mine;
};
static struct ops_slot rmas[MAX_TABLES], cqs[MAX_TABLES], doms[MAX_TABLES], fabs[MAX_TABLES];

/* The original table behind ops (ops itself where it is not a copy). */
static const void *orig_of(const struct ops_slot *slots, const void *ops)
{
	for (int i = 0; i < MAX_TABLES; i++)
		if (slots[i].orig && ops == &slots[i].mine)
			return slots[i].orig;
	return ops;
}

/* The slot of table o: its copy (*fresh = 0) or a new one holding the first
 * size bytes of o (*fresh = 1: the caller puts its wrappers in); NULL when
 * every slot is taken (the object then goes uncounted). */
static struct ops_slot *slot_of(struct ops_slot *slots, const void *o, size_t size, int *fresh)
{
	for (int i = 0; o && i < MAX_TABLES; i++) {
		if (slots[i].orig == o) {
			*fresh = 0;
			return &slots[i];
		}
		if (!slots[i].orig) {
			memcpy(&slots[i].mine, o,
			       size < sizeof(slots[i].mine) ? size : sizeof(slots[i].mine));
			slots[i].orig = o;
			*fresh = 1;
			return &slots[i];
		}
	}
	return NULL;
}

static const struct fi_ops_rma *orig_rma(const struct fid_ep *ep)
{
	return orig_of(rmas, ep->rma);
}

static ssize_t w_read(struct fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src,
		      uint64_t addr, uint64_t key, void *context)
{
	ssize_t rc = orig_rma(ep)->read(ep, buf, len, desc, src, addr, key, context);
	posted(ep, rc, 0);
	return rc;
}

static ssize_t w_readmsg(struct fid_ep *ep, const struct fi_msg_rma *msg, uint64_t flags)
{
	ssize_t rc = orig_rma(ep)->readmsg(ep, msg, flags);
	posted(ep, rc, flags);
	return rc;
}

static ssize_t w_write(struct fid_ep *ep, const void *buf, size_t len, void *desc, fi_addr_t dest,
		       uint64_t addr, uint64_t key, void *context)
{
	ssize_t rc = orig_rma(ep)->write(ep, buf, len, desc, dest, addr, key, context);
	posted(ep, rc, 0);
	return rc;
}

static ssize_t w_writemsg(struct fid_ep *ep, const struct fi_msg_rma *msg, uint64_t flags)
{
	ssize_t rc = orig_rma(ep)->writemsg(ep, msg, flags);
	posted(ep, rc, flags);
	return rc;
}

static ssize_t w_inject(struct fid_ep *ep, const void *buf, size_t len, fi_addr_t dest,
			uint64_t addr, uint64_t key)
{
	ssize_t rc = orig_rma(ep)->inject(ep, buf, len, dest, addr, key);
	posted(ep, rc, 0);
	return rc;
}

static ssize_t w_writedata(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			   uint64_t data, fi_addr_t dest, uint64_t addr, uint64_t key,
			   void *context)
{
	ssize_t rc = orig_rma(ep)->writedata(ep, buf, len, desc, data, dest, addr, key, context);
	posted(ep, rc, 0);
	return rc;
}

static ssize_t w_injectdata(struct fid_ep *ep, const void *buf, size_t len, uint64_t data,
			    fi_addr_t dest, uint64_t addr, uint64_t key)
{
	ssize_t rc = orig_rma(ep)->injectdata(ep, buf, len, data, dest, addr, key);
	posted(ep, rc, 0);
	return rc;
}

static void seen_ep(struct fid_ep *ep)
{
	int fresh;
	struct ops_slot *t = ep->rma ? slot_of(rmas, ep->rma, ep->rma->size, &fresh) : NULL;
	if (!t)
		return;
	if (fresh) {
		struct fi_ops_rma *m = &t->mine.rma;
		m->size = ep->rma->size < sizeof(*m) ? ep->rma->size : sizeof(*m);
		m->read = w_read;
		m->readmsg = w_readmsg;
		m->write = w_write;
		m->writemsg = w_writemsg;
		m->inject = w_inject;
		m->writedata = w_writedata;
		m->injectdata = w_injectdata;
	}
	ep->rma = &t->mine.rma;
}

/* ---- CQ tables ---- */
static const struct fi_ops_cq *orig_cq(const struct fid_cq *cq)
{
	return orig_of(cqs, cq->ops);
}

static void read_done(ssize_t rc)
{
	used = 1;
	cq_reads++;
	if (rc > 0)
		comps += (unsigned long long)rc;
	else
		cq_empty++;
}

/* A provider's read may call its readfrom through the table (util_cq's
 * ofi_cq_read does): the outer call alone counts. */
static int in_read;

static ssize_t w_cq_read(struct fid_cq *cq, void *buf, size_t count)
{
	int outer = !in_read++;
	ssize_t rc = orig_cq(cq)->read(cq, buf, count);
	in_read--;
	if (outer)
		read_done(rc);
	return rc;
}

static ssize_t w_cq_readfrom(struct fid_cq *cq, void *buf, size_t count, fi_addr_t *src)
{
	int outer = !in_read++;
	ssize_t rc = orig_cq(cq)->readfrom(cq, buf, count, src);
	in_read--;
	if (outer)
		read_done(rc);
	return rc;
}

static void seen_cq(struct fid_cq *cq)
{
	int fresh;
	struct ops_slot *t = cq->ops ? slot_of(cqs, cq->ops, cq->ops->size, &fresh) : NULL;
	if (!t)
		return;
	if (fresh) {
		t->mine.cq.read = w_cq_read;
		t->mine.cq.readfrom = w_cq_readfrom;
	}
	cq->ops = &t->mine.cq;
}

/* ---- domain and fabric tables ---- */
static const struct fi_ops_domain *orig_dom(const struct fid_domain *d)
{
	return orig_of(doms, d->ops);
}

static int w_endpoint(struct fid_domain *d, struct fi_info *info, struct fid_ep **ep, void *context)
{
	int rc = orig_dom(d)->endpoint(d, info, ep, context);
	if (!rc && ep && *ep)
		seen_ep(*ep);
	return rc;
}

static int w_cq_open(struct fid_domain *d, struct fi_cq_attr *attr, struct fid_cq **cq,
		     void *context)
{
	int rc = orig_dom(d)->cq_open(d, attr, cq, context);
	if (!rc && cq && *cq)
		seen_cq(*cq);
	return rc;
}

static void seen_domain(struct fid_domain *d)
{
	int fresh;
	struct ops_slot *t = d->ops ? slot_of(doms, d->ops, d->ops->size, &fresh) : NULL;
	if (!t)
		return;
	if (fresh) {
		struct fi_ops_domain *m = &t->mine.dom;
		m->size = d->ops->size < sizeof(*m) ? d->ops->size : sizeof(*m);
		m->endpoint = w_endpoint;
		m->cq_open = w_cq_open;
	}
	d->ops = &t->mine.dom;
}

static const struct fi_ops_fabric *orig_fab(const struct fid_fabric *f)
{
	return orig_of(fabs, f->ops);
}

static int w_domain(struct fid_fabric *f, struct fi_info *info, struct fid_domain **d,
		    void *context)
{
	int rc = orig_fab(f)->domain(f, info, d, context);
	if (!rc && d && *d)
		seen_domain(*d);
	return rc;
}

static int w_domain2(struct fid_fabric *f, struct fi_info *info, struct fid_domain **d,
		     uint64_t flags, void *context)
{
	int rc = orig_fab(f)->domain2(f, info, d, flags, context);
	if (!rc && d && *d)
		seen_domain(*d);
	return rc;
}

static void seen_fabric(struct fid_fabric *f)
{
	int fresh;
	struct ops_slot *t = f->ops ? slot_of(fabs, f->ops, f->ops->size, &fresh) : NULL;
	if (!t)
		return;
	if (fresh) {
		struct fi_ops_fabric *m = &t->mine.fab;
		m->size = f->ops->size < sizeof(*m) ? f->ops->size : sizeof(*m);
		m->domain = w_domain;
		if (m->size > offsetof(struct fi_ops_fabric, domain2) && m->domain2)
			m->domain2 = w_domain2;
	}
	f->ops = &t->mine.fab;
}

typedef int (*fabric_fn)(struct fi_fabric_attr *, struct fid_fabric **, void *);

EXPORT int efab_fipost_fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
				 void *context);
__asm__(".symver efab_fipost_fi_fabric,fi_fabric@@FABRIC_1.1");
int efab_fipost_fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context)
{
	static fabric_fn real;
	if (!real)
		real = (fabric_fn)dlvsym(RTLD_NEXT, "fi_fabric", "FABRIC_1.1");
	if (!real)
		return -FI_ENOSYS;
	int rc = real(attr, fabric, context);
	if (!rc && fabric && *fabric)
		seen_fabric(*fabric);
	return rc;
}

__attribute__((destructor)) static void report(void)
{
	char b[1024] = "";
	size_t n = 0;
	if (!used)
		return;
	for (int i = 1; i <= HIST_MAX && n < sizeof(b) - 32; i++)
		if (hist[i])
			n += (size_t)snprintf(b + n, sizeof(b) - n, " %dx%llu", i, hist[i]);
	if (hist[0])
		snprintf(b + n, sizeof(b) - n, " >%dx%llu", HIST_MAX, hist[0]);
	fprintf(stderr,
		"fipost[%d]: rma posts %llu (%llu refused), doorbells %llu, WQEs per doorbell %.3f, "
		"cq reads %llu (%llu empty), completions %llu, batches (WQEs x doorbells):%s\n",
		(int)getpid(), posts, refused, doorbells,
		doorbells ? (double)posts / (double)doorbells : 0.0, cq_reads, cq_empty, comps,
		b[0] ? b : " none");
}
