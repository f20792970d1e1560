/* efasim: Protection domains, memory registration (pinning checked as the kernel
 * does) and address handles. */
#include "sim.h"

#include <sys/resource.h>

EXPORT struct ibv_pd *ibv_alloc_pd(struct ibv_context *ctx)
{
	struct sim_pd *p = calloc(1, sizeof(*p));
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	p->pd.context = ctx;
	pthread_mutex_lock(&sim.lock);
	p->tag = ((uint64_t)sim.pid << 32) | ++sim.pd_counter;
	p->pd.handle = sim.pd_counter;
	pthread_mutex_unlock(&sim.lock);
	return &p->pd;
}

EXPORT int ibv_dealloc_pd(struct ibv_pd *pd)
{
	struct sim_pd *p = container_of(pd, struct sim_pd, pd);
	if (atomic_load(&p->usecnt)) {
		ebusy_note("ibv_dealloc_pd", "MRs, QPs and AHs on it", atomic_load(&p->usecnt));
		return EBUSY; /* uverbs_free_pd */
	}
	free(p);
	return 0;
}

/* Linux >= 6.11: PROCMAP_QUERY on /proc/<pid>/maps answers "which VMA covers
 * this address" without formatting the whole table (uapi linux/fs.h, declared
 * here because older headers lack it). */
struct procmap_query_v1 {
	uint64_t size, query_flags, query_addr, vma_start, vma_end, vma_flags, vma_page_size, vma_offset, inode;
	uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
	uint64_t vma_name_addr, build_id_addr;
};
#define EFASIM_PROCMAP_QUERY _IOWR('f', 17, struct procmap_query_v1)
enum { PROCMAP_VMA_READABLE = 1, PROCMAP_VMA_WRITABLE = 2 };

/* Registration pins the pages as the kernel does (ib_umem_get): every page of
 * the range must be mapped, readable, and writable when the access lets the
 * device write (LOCAL_WRITE or REMOTE_WRITE pin with FOLL_WRITE); else EFAULT.
 * Checked VMA by VMA against this process's mappings: with PROCMAP_QUERY
 * (about 1 us a VMA), else by reading /proc/self/maps, which lists the VMAs in
 * address order, up to the first one past the range. Either way the cost does
 * not grow with the range's size. */
int range_pinnable(const void *addr, size_t len, int write)
{
	static atomic_int no_query; /* the kernel has no PROCMAP_QUERY */
	uintptr_t want = (uintptr_t)addr, end = want + len;
	if (end < want)
		return 0;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0) { /* no procfs: probe the first and last byte */
		char b;
		struct iovec l = {&b, 1}, r = {(void *)addr, 1};
		if (process_vm_readv(getpid(), &l, 1, &r, 1, 0) != 1)
			return 0;
		r.iov_base = (char *)addr + len - 1;
		return process_vm_readv(getpid(), &l, 1, &r, 1, 0) == 1;
	}
	while (!atomic_load_explicit(&no_query, memory_order_relaxed)) {
		struct procmap_query_v1 q = {.size = sizeof(q), .query_addr = want};
		if (ioctl(fd, EFASIM_PROCMAP_QUERY, &q)) {
			if (errno == ENOENT)
				break; /* no VMA covers want */
			atomic_store(&no_query, 1);
			break;
		}
		if (!(q.vma_flags & (write ? PROCMAP_VMA_WRITABLE : PROCMAP_VMA_READABLE)) || q.vma_end <= want)
			break;
		if ((want = (uintptr_t)q.vma_end) >= end) {
			close(fd);
			return 1;
		}
	}
	if (!atomic_load_explicit(&no_query, memory_order_relaxed)) {
		close(fd);
		return 0;
	}
	char buf[16384];
	size_t have = 0;
	int ok = 0, done = 0;
	while (!done) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);
		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = 0;
		char *line = buf, *nl;
		while (!done && (nl = strchr(line, '\n'))) {
			*nl = 0;
			char *p;
			unsigned long long lo = strtoull(line, &p, 16), hi = 0;
			if (*p == '-')
				hi = strtoull(p + 1, &p, 16);
			while (*p == ' ')
				p++;
			if (hi > want) {
				if (lo > want || p[0] == 0 || (write ? p[1] != 'w' : p[0] != 'r'))
					done = 1; /* a hole, or a page without the access */
				else if ((want = (uintptr_t)hi) >= end)
					done = ok = 1;
			}
			line = nl + 1;
		}
		have = (size_t)(buf + have - line);
		memmove(buf, line, have); /* a line longer than buf (none: paths fit) ends the read: EFAULT */
	}
	close(fd);
	return ok;
}

/* RLIMIT_MEMLOCK, as ib_umem_get (drivers/infiniband/core/umem.c) charges
 * it: every host-memory registration adds the pages it spans to the
 * process's mm->pinned_vm (each registration, also of pages already
 * registered) and fails with ENOMEM when the sum passes RLIMIT_MEMLOCK
 * unless the process has CAP_IPC_LOCK; deregistration gives them back.
 * CUDA memory is not charged: dma-buf registrations go through
 * ib_umem_dmabuf_get, peer memory through the peer client (nvidia-peermem,
 * efa-nv-peermem), neither of which touches pinned_vm. The count is this
 * process's (a forked child starts at 0: its mm's pinned_vm). */
static _Atomic uint64_t pinned_pages;
static pid_t pinned_pid;

static int cap_ipc_lock(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	unsigned long long eff = 0;
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	return (eff >> 14) & 1; /* CAP_IPC_LOCK */
}

static uint64_t span_pages(const void *addr, size_t len)
{
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE), a = (uintptr_t)addr;
	return ((a + len + pg - 1) / pg) - a / pg;
}

static int pin_charge(uint64_t npages)
{
	if (pinned_pid != sim.pid) { /* a fork: the child's mm pins nothing yet */
		pinned_pid = sim.pid;
		atomic_store(&pinned_pages, 0);
	}
	struct rlimit rl;
	uint64_t now = atomic_fetch_add(&pinned_pages, npages) + npages;
	if (getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur == RLIM_INFINITY ||
	    now <= rl.rlim_cur / (uint64_t)sysconf(_SC_PAGESIZE) || cap_ipc_lock())
		return 0;
	atomic_fetch_sub(&pinned_pages, npages);
	return ENOMEM;
}

/* dm: a dmabuf registration's memory (memkind.c checked it), else NULL: the
 * range is pinned as host memory, or registered as CUDA memory when CUDA says
 * it is device memory (GPUDirect RDMA: the nvidia peer-memory client). */
static struct ibv_mr *reg_mr(struct ibv_pd *pd, void *addr, size_t len, uint64_t iova, int access,
			     const struct efasim_mem_info *dm)
{
	struct sim_pd *p = container_of(pd, struct sim_pd, pd);
	struct sim_ctx *c = to_ctx(pd->context);
	const int known = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_RELAXED_ORDERING | IBV_ACCESS_OPTIONAL_RANGE;
	if (access & ~known) {
		errno = EINVAL;
		return NULL;
	}
	if ((access & IBV_ACCESS_REMOTE_WRITE) && !(access & IBV_ACCESS_LOCAL_WRITE)) {
		errno = EINVAL; /* the verbs rule */
		return NULL;
	}
	if ((access & IBV_ACCESS_REMOTE_WRITE) && !(sim.caps & EFADV_DEVICE_ATTR_CAPS_RDMA_WRITE)) {
		errno = EINVAL;
		return NULL;
	}
	if ((access & IBV_ACCESS_REMOTE_READ) && !(sim.caps & EFADV_DEVICE_ATTR_CAPS_RDMA_READ)) {
		errno = EINVAL;
		return NULL;
	}
	const int writable = access & (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	struct efasim_mem_info mi = {.kind = MK_HOST};
	if (dm)
		mi = *dm;
	else if (!len) {
		errno = EFAULT;
		return NULL;
	} else if (!range_pinnable(addr, len, writable)) {
		int err = mk_reg_device(addr, len, &mi);
		if (err) {
			errno = err;
			return NULL;
		}
	} else if (mk_host_refused(addr)) {
		errno = EFAULT;
		return NULL;
	}
	uint64_t npages = !dm && mi.kind == MK_HOST ? span_pages(addr, len) : 0;
	if (npages && pin_charge(npages)) {
		errno = ENOMEM;
		return NULL;
	}
	struct sim_mr *m = calloc(1, sizeof(*m));
	if (!m) {
		atomic_fetch_sub(&pinned_pages, npages);
		if (!dm)
			mk_unreg(&mi);
		errno = ENOMEM;
		return NULL;
	}
	m->pinned_pages = npages;
	struct efasim_registry *r = sim.reg;
	robust_lock(&r->lock);
	int s;
	for (s = 0; s < EFASIM_MAX_MRS && r->mrs[s].used; s++)
		;
	if (s == EFASIM_MAX_MRS) {
		registry_gc_locked();
		for (s = 0; s < EFASIM_MAX_MRS && r->mrs[s].used; s++)
			;
	}
	if (s == EFASIM_MAX_MRS) {
		pthread_mutex_unlock(&r->lock);
		atomic_fetch_sub(&pinned_pages, npages);
		free(m);
		if (!dm)
			mk_unreg(&mi);
		errno = ENOMEM;
		return NULL;
	}
	/* keys fit the device's 24-bit lkey fields (efa_io_tx_buf_desc, efa_io_rx_desc) */
	uint32_t gen = (++r->mr_gen % 0xff) + 1;
	struct efasim_mr_ent *e = &r->mrs[s];
	e->pid = sim.pid;
	e->dev = c->dev->gdev;
	e->pd_tag = p->tag;
	e->iova = iova;
	e->va = (uint64_t)(uintptr_t)addr;
	e->len = len;
	e->access = access;
	e->mk = mi;
	e->key = (gen << 16) | (uint32_t)s;
	e->used = 1;
	pthread_mutex_unlock(&r->lock);
	m->slot = s;
	m->owner = sim.pid;
	m->mr_type = SIM_MR_TYPE_MR; /* ibv_cmd_reg_mr (cmd.c) */
	m->access = access;
	atomic_fetch_add(&p->usecnt, 1);
	m->mr.context = pd->context;
	m->mr.pd = pd;
	m->mr.addr = addr;
	m->mr.length = len;
	m->mr.handle = (uint32_t)s;
	m->mr.lkey = m->mr.rkey = e->key;
	return &m->mr;
}

EXPORT struct ibv_mr *(ibv_reg_mr)(struct ibv_pd *pd, void *addr, size_t len, int access)
{
	return reg_mr(pd, addr, len, (uintptr_t)addr, access, NULL);
}

EXPORT struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t len, uint64_t iova,
				       unsigned int access)
{
	return reg_mr(pd, addr, len, iova, (int)access, NULL);
}

/* A dma-buf of CUDA memory registers where the device has GPUDirect RDMA
 * (memkind.c checks the fd, offset and length and finds the device range
 * through the iova); anything else answers EOPNOTSUPP, as without P2P. As
 * rdma-core does (verbs.c ibv_reg_dmabuf_mr), mr->addr is the offset. */
EXPORT struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t len, uint64_t iova, int fd,
					int access)
{
	struct efasim_mem_info mi;
	int err = mk_reg_dmabuf(fd, offset, len, iova, &mi);
	if (err) {
		errno = err;
		return NULL;
	}
	struct ibv_mr *mr = reg_mr(pd, (void *)(uintptr_t)iova, len, iova, access, &mi);
	if (!mr)
		mk_unreg(&mi); /* what mk_reg_dmabuf exported */
	if (mr) {
		mr->addr = (void *)(uintptr_t)offset;
		container_of(mr, struct sim_mr, mr)->mr_type = SIM_MR_TYPE_DMABUF_MR; /* cmd_mr.c */
		/* where this dma-buf starts: an ext-mem CQ or a completion counter
		 * in it resolves through it */
		mk_dmabuf_note(fd, offset, len, iova, container_of(mr, struct sim_mr, mr)->slot, mr->lkey);
	}
	return mr;
}

EXPORT int ibv_dereg_mr(struct ibv_mr *mr)
{
	struct sim_mr *m = container_of(mr, struct sim_mr, mr);
	atomic_fetch_sub(&container_of(mr->pd, struct sim_pd, pd)->usecnt, 1);
	if (m->owner != sim.pid) { /* inherited from the parent: its registration stays */
		free(m);
		return 0;
	}
	if (pinned_pid == sim.pid)
		atomic_fetch_sub(&pinned_pages, m->pinned_pages);
	robust_lock(&sim.reg->lock);
	struct efasim_mr_ent *e = &sim.reg->mrs[m->slot];
	struct efasim_mem_info mk = {.kind = MK_HOST};
	if (e->used && e->key == mr->lkey) {
		e->used = 0;
		mk = e->mk;
	}
	pthread_mutex_unlock(&sim.reg->lock);
	mk_unreg(&mk);
	free(m);
	return 0;
}

int efasim_efadv_query_mr(struct ibv_mr *mr, struct efadv_mr_attr *attr, uint32_t inlen)
{
	(void)mr;
	memset(attr, 0, inlen); /* no interconnect ids: the provider then reports none */
	return 0;
}

/* Address handles: one number per peer GID per NIC in this process; the
 * registry records which (process, NIC) knows which GID, because the device
 * refuses RDMA from a requester the responder has no AH for. */

struct ah_rec {
	int used;
	pid_t pid;
	int dev;
	uint8_t gid[16];
	uint16_t ahn;            /* its number in that process (the direct path's CQE carries it) */
};
static struct ah_rec *ah_table(void);

EXPORT struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct sim_ctx *c = to_ctx(pd->context);
	if (!attr->is_global) {
		errno = EINVAL;
		return NULL;
	}
	struct sim_ah *a = calloc(1, sizeof(*a));
	if (!a) {
		errno = ENOMEM;
		return NULL;
	}
	memcpy(a->gid, attr->grh.dgid.raw, 16);
	pthread_mutex_lock(&c->lock);
	struct sim_ah_ent *e = NULL;
	for (int i = 0; i < c->nah; i++)
		if (!memcmp(c->ahs[i].gid, a->gid, 16) && c->ahs[i].refs > 0)
			e = &c->ahs[i];
	if (!e) {
		for (int i = 0; i < c->nah; i++)
			if (c->ahs[i].refs == 0)
				e = &c->ahs[i];
		if (!e) {
			if (c->nah == c->cap_ah) {
				int n = c->cap_ah ? 2 * c->cap_ah : 16;
				void *p = realloc(c->ahs, (size_t)n * sizeof(*c->ahs));
				if (!p) {
					pthread_mutex_unlock(&c->lock);
					free(a);
					errno = ENOMEM;
					return NULL;
				}
				c->ahs = p;
				c->cap_ah = n;
			}
			e = &c->ahs[c->nah++];
		}
		memcpy(e->gid, a->gid, 16);
		e->ahn = c->next_ahn++;
		e->refs = 0;
		e->reg_slot = -1;
		struct ah_rec *t = ah_table();
		if (t) {
			robust_lock(&sim.reg->lock);
			for (int i = 0; i < EFASIM_MAX_QPS; i++)
				if (!t[i].used || !pid_alive(t[i].pid)) {
					t[i].pid = sim.pid;
					t[i].dev = c->dev->gdev;
					memcpy(t[i].gid, a->gid, 16);
					t[i].ahn = e->ahn;
					t[i].used = 1;
					e->reg_slot = i;
					break;
				}
			pthread_mutex_unlock(&sim.reg->lock);
		}
	}
	e->refs++;
	a->ahn = e->ahn;
	pthread_mutex_unlock(&c->lock);
	a->owner = sim.pid;
	atomic_fetch_add(&container_of(pd, struct sim_pd, pd)->usecnt, 1);
	a->ah.context = pd->context;
	a->ah.pd = pd;
	a->ah.handle = a->ahn;
	return &a->ah;
}

EXPORT int ibv_destroy_ah(struct ibv_ah *ah)
{
	struct sim_ah *a = container_of(ah, struct sim_ah, ah);
	struct sim_ctx *c = to_ctx(ah->context);
	atomic_fetch_sub(&container_of(ah->pd, struct sim_pd, pd)->usecnt, 1);
	if (a->owner != sim.pid) { /* inherited: the parent's record stays */
		free(a);
		return 0;
	}
	pthread_mutex_lock(&c->lock);
	for (int i = 0; i < c->nah; i++)
		if (c->ahs[i].refs > 0 && c->ahs[i].ahn == a->ahn && --c->ahs[i].refs == 0 && c->ahs[i].reg_slot >= 0) {
			struct ah_rec *t = ah_table();
			robust_lock(&sim.reg->lock);
			t[c->ahs[i].reg_slot].used = 0;
			pthread_mutex_unlock(&sim.reg->lock);
		}
	pthread_mutex_unlock(&c->lock);
	free(a);
	return 0;
}

int efasim_efadv_query_ah(struct ibv_ah *ah, struct efadv_ah_attr *attr, uint32_t inlen)
{
	struct sim_ah *a = container_of(ah, struct sim_ah, ah);
	struct efadv_ah_attr v = {.ahn = a->ahn};
	memset(attr, 0, inlen);
	memcpy(attr, &v, inlen < sizeof(v) ? inlen : sizeof(v));
	return 0;
}

/* The AH records live in their own shared file beside the registry. */
static struct ah_rec *ah_records;
static pthread_once_t ah_once = PTHREAD_ONCE_INIT;

static void ah_table_init(void)
{
	char path[PATH_MAX + 16];
	snprintf(path, sizeof(path), "%s/ahs", sim.dir);
	ah_records = map_file(path, sizeof(struct ah_rec) * EFASIM_MAX_QPS, 1);
}

static struct ah_rec *ah_table(void)
{
	pthread_once(&ah_once, ah_table_init);
	return ah_records;
}

int ah_known_by(pid_t pid, int dev, const uint8_t gid[16])
{
	struct ah_rec *t = ah_table();
	if (!t)
		return 1;
	for (int i = 0; i < EFASIM_MAX_QPS; i++)
		if (t[i].used && t[i].pid == pid && t[i].dev == dev && !memcmp(t[i].gid, gid, 16))
			return 1;
	return 0;
}


uint16_t ah_num_by(pid_t pid, int dev, const uint8_t gid[16])
{
	struct ah_rec *t = ah_table();
	if (!t)
		return EFASIM_UNKNOWN_AH;
	for (int i = 0; i < EFASIM_MAX_QPS; i++)
		if (t[i].used && t[i].pid == pid && t[i].dev == dev && !memcmp(t[i].gid, gid, 16))
			return t[i].ahn;
	return EFASIM_UNKNOWN_AH;
}
