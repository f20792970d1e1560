/* efasim: libibverbs.so.1 replacement presenting simulated EFA NICs.
 *
 * Model (what libfabric's efa provider relies on; see README.md):
 * - K NICs per simulated host (EFASIM_NICS, default 2), named rdmap<bus>s0
 *   after their PCI address, with a sysfs tree the provider reads.
 * - SRD: reliable delivery between processes. QPs, MRs and AHs of every
 *   process live in one shared registry ($EFASIM_DIR/registry); receive
 *   queues and CQs are shared-memory rings, so the initiator's process does
 *   everything a NIC does (key/bounds/access checks, moving bytes with
 *   process_vm_readv/writev, writing both completions) without the target's
 *   help, as an RDMA NIC needs no target CPU.
 * - UD (the provider's DGRAM endpoint): unreliable sends with a 40-byte GRH
 *   before the payload on the receive side; RNR retries of SRD sends run on a
 *   per-process retry thread, as a NIC needs no host CPU for them.
 * - Errors are the device's own completion codes (vendor_err) mapped to
 *   ibv_wc_status as rdma-core's libefa maps them.
 * - The direct (MMIO) data path queries answer EOPNOTSUPP, so the provider
 *   uses the verbs function pointers.
 * It is a functional model: timings measure the simulator, never EFA. */
#define _GNU_SOURCE
#include "efasim.h"

#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define container_of(p, t, m) ((t *)((char *)(p) - offsetof(t, m)))

/* ---------------------------------------------------------------- config */

struct profile {
	const char *name;
	uint32_t vendor_part_id;
	uint32_t caps;           /* EFADV_DEVICE_ATTR_CAPS_* */
	uint32_t max_msg_sz;     /* port MTU: largest send */
	uint32_t max_rdma_size;
	uint16_t inline_size;
	uint8_t speed, width;    /* ibv_port_attr active_speed/width: libfabric's ofi_vrb_speed */
};

/* Values: EFA_IO / efadv caps are documented per instance generation in AWS's
 * EFA docs (RDMA read since p4d, RDMA write since p5/"EFA v3", unsolicited write
 * receive on newer firmware) and libfabric's efa provider; the sizes below are
 * what ibv_devinfo reports on those instances as far as public posts show, and
 * are marked in README.md where they are assumed. */
static const struct profile profiles[] = {
	{"p5en", 0xefa3,
	 EFADV_DEVICE_ATTR_CAPS_RDMA_READ | EFADV_DEVICE_ATTR_CAPS_RNR_RETRY | EFADV_DEVICE_ATTR_CAPS_CQ_WITH_SGID |
		 EFADV_DEVICE_ATTR_CAPS_RDMA_WRITE | EFADV_DEVICE_ATTR_CAPS_UNSOLICITED_WRITE_RECV,
	 8928, 1u << 30, 32, 64, 2},
	{"p5", 0xefa2,
	 EFADV_DEVICE_ATTR_CAPS_RDMA_READ | EFADV_DEVICE_ATTR_CAPS_RNR_RETRY | EFADV_DEVICE_ATTR_CAPS_CQ_WITH_SGID |
		 EFADV_DEVICE_ATTR_CAPS_RDMA_WRITE,
	 8928, 1u << 30, 32, 32, 2},
	{"p4d", 0xefa1,
	 EFADV_DEVICE_ATTR_CAPS_RDMA_READ | EFADV_DEVICE_ATTR_CAPS_RNR_RETRY | EFADV_DEVICE_ATTR_CAPS_CQ_WITH_SGID,
	 8928, 1u << 30, 32, 32, 2},
};

enum { MAX_SQ_WR = 4096, MAX_RQ_WR = 32768, MAX_SQ_SGE = 2, MAX_RQ_SGE = 3, MAX_CQE = 1 << 22,
       MAX_MR = 262144, MAX_AH = 1024, MAX_PD = 256 };

struct sim_device {
	struct ibv_device ibdev;
	int nic;
	int gdev;                /* registry index */
	uint8_t gid[16];
	char pci[16];
};

static struct {
	pthread_once_t once;
	int ok;
	char dir[PATH_MAX];
	char sysfs[PATH_MAX];
	char host[64];
	const struct profile *prof;
	int nnics;
	int reorder;
	char drop_host[64];
	struct sim_device devs[EFASIM_MAX_NICS];
	struct efasim_registry *reg;
	pid_t pid;               /* this process: reset in a forked child (atfork_child) */
	pthread_mutex_t lock;    /* process-local state below */
	uint32_t pd_counter, file_counter;
	struct sim_qp *qp_by_slot[EFASIM_MAX_QPS];
	struct sim_qp *qps;      /* this process's QPs (the RNR retry pass walks them) */
	pthread_mutex_t progress_lock; /* one RNR retry pass at a time */
	pthread_cond_t retry_cond;     /* with lock: a WR was parked (CLOCK_MONOTONIC) */
	pthread_cond_t idle_cond;      /* with lock: a retry pass let go of a QP */
	int retry_thread;        /* the retry thread runs in this process */
	int log;
} sim = {.once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER,
	 .progress_lock = PTHREAD_MUTEX_INITIALIZER};

static void slog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void slog(const char *fmt, ...)
{
	if (!sim.log)
		return;
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "efasim[%d]: ", (int)getpid());
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

static void robust_lock(pthread_mutex_t *m)
{
	if (pthread_mutex_lock(m) == EOWNERDEAD)
		pthread_mutex_consistent(m);
}

static void robust_init(pthread_mutex_t *m)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(m, &a);
	pthread_mutexattr_destroy(&a);
}

static int pid_alive(pid_t pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno != ESRCH);
}

static int mkdir_p(const char *path)
{
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, 0755) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(tmp, 0755) && errno != EEXIST ? -1 : 0;
}

static int write_file(const char *path, const char *text)
{
	char tmp[PATH_MAX + 32];
	snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
	FILE *f = fopen(tmp, "w");
	if (!f)
		return -1;
	fputs(text, f);
	fclose(f);
	return rename(tmp, path);
}

static int symlink_force(const char *target, const char *link)
{
	char tmp[PATH_MAX + 32];
	snprintf(tmp, sizeof(tmp), "%s.%d", link, (int)getpid());
	unlink(tmp);
	if (symlink(target, tmp))
		return -1;
	return rename(tmp, link);
}

/* Map a shared file of `size` bytes (create = make it). */
static void *map_file(const char *path, size_t size, int create)
{
	int fd = open(path, create ? O_RDWR | O_CREAT : O_RDWR, 0600);
	if (fd < 0)
		return NULL;
	if (create && ftruncate(fd, (off_t)size)) {
		close(fd);
		return NULL;
	}
	if (!create) {
		struct stat st;
		if (fstat(fd, &st) || (size_t)st.st_size < size) {
			close(fd);
			errno = ENOENT;
			return NULL;
		}
	}
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

/* The registry is created atomically: built under a private name, then linked. */
static struct efasim_registry *registry_open(void)
{
	char path[PATH_MAX + 16], tmp[PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/registry", sim.dir);
	struct efasim_registry *r = map_file(path, sizeof(*r), 0);
	if (r && r->magic == EFASIM_MAGIC && r->size == sizeof(*r))
		return r;
	if (r) {
		munmap(r, sizeof(*r));
		slog("registry %s has another layout; set EFASIM_DIR or remove it", path);
		return NULL;
	}
	snprintf(tmp, sizeof(tmp), "%s/registry.%d", sim.dir, (int)getpid());
	r = map_file(tmp, sizeof(*r), 1);
	if (!r)
		return NULL;
	robust_init(&r->lock);
	r->size = sizeof(*r);
	r->magic = EFASIM_MAGIC;
	msync(r, sizeof(*r), MS_SYNC);
	if (link(tmp, path) && errno != EEXIST) {
		unlink(tmp);
		munmap(r, sizeof(*r));
		return NULL;
	}
	unlink(tmp);
	munmap(r, sizeof(*r));
	r = map_file(path, sizeof(*r), 0);
	return r && r->magic == EFASIM_MAGIC ? r : NULL;
}

/* Entries of processes that died without cleaning up (kill -9) are freed, and
 * their ring files removed: a dead peer's QPs answer like a vanished QP. */
static void registry_gc_locked(void)
{
	struct efasim_registry *r = sim.reg;
	for (int i = 0; i < EFASIM_MAX_QPS; i++) {
		struct efasim_qp_ent *q = &r->qps[i];
		if (q->used && !pid_alive(q->pid)) {
			char p[PATH_MAX + 80];
			snprintf(p, sizeof(p), "%s/%s", sim.dir, q->rq_file);
			unlink(p);
			q->used = 0;
		}
	}
	for (int i = 0; i < EFASIM_MAX_MRS; i++)
		if (r->mrs[i].used && !pid_alive(r->mrs[i].pid))
			r->mrs[i].used = 0;
	DIR *d = opendir(sim.dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		int pid;
		char kind;
		if (sscanf(e->d_name, "%c-%d-", &kind, &pid) == 2 && (kind == 'q' || kind == 'c' || kind == 'h') &&
		    !pid_alive(pid)) {
			char p[PATH_MAX + 300];
			snprintf(p, sizeof(p), "%s/%s", sim.dir, e->d_name);
			unlink(p);
		}
	}
	closedir(d);
}

static int find_dev_by_gid(const uint8_t gid[16])
{
	for (int i = 0; i < EFASIM_MAX_DEVS; i++)
		if (sim.reg->devs[i].used && !memcmp(sim.reg->devs[i].gid, gid, 16))
			return i;
	return -1;
}

/* Per-NIC test knobs for this host: EFASIM_SLOW="nic:MBps:delay_us[,...]". */
static void apply_slow_knobs(void)
{
	const char *s = getenv("EFASIM_SLOW");
	for (int i = 0; i < sim.nnics; i++) {
		struct efasim_dev_ent *d = &sim.reg->devs[sim.devs[i].gdev];
		d->rate_MBps = 0;
		d->delay_us = 0;
	}
	while (s && *s) {
		int nic;
		unsigned rate = 0, delay = 0;
		if (sscanf(s, "%d:%u:%u", &nic, &rate, &delay) >= 2 && nic >= 0 && nic < sim.nnics) {
			struct efasim_dev_ent *d = &sim.reg->devs[sim.devs[nic].gdev];
			d->rate_MBps = rate;
			d->delay_us = delay;
		}
		s = strchr(s, ',');
		if (s)
			s++;
	}
}

static int parse_pci(const char *s, unsigned *dom, unsigned *bus, unsigned *dev, unsigned *fn)
{
	return sscanf(s, "%x:%x:%x.%x", dom, bus, dev, fn) == 4 ? 0 : -1;
}

static int build_sysfs(void)
{
	char p[PATH_MAX * 2], t[PATH_MAX * 2];
	snprintf(p, sizeof(p), "%s/class/infiniband_verbs", sim.sysfs);
	if (mkdir_p(p))
		return -1;
	snprintf(p, sizeof(p), "%s/class/infiniband_verbs/abi_version", sim.sysfs);
	write_file(p, "6\n");
	snprintf(p, sizeof(p), "%s/bus/pci/drivers/efa", sim.sysfs);
	mkdir_p(p);
	for (int i = 0; i < sim.nnics; i++) {
		struct sim_device *d = &sim.devs[i];
		snprintf(p, sizeof(p), "%s/devices/pci0000:00/%s", sim.sysfs, d->pci);
		mkdir_p(p);
		snprintf(p, sizeof(p), "%s/devices/pci0000:00/%s/driver", sim.sysfs, d->pci);
		snprintf(t, sizeof(t), "../../../bus/pci/drivers/efa");
		symlink_force(t, p);
		snprintf(p, sizeof(p), "%s/class/infiniband/%s", sim.sysfs, d->ibdev.name);
		mkdir_p(p);
		snprintf(p, sizeof(p), "%s/class/infiniband/%s/device", sim.sysfs, d->ibdev.name);
		snprintf(t, sizeof(t), "../../../devices/pci0000:00/%s", d->pci);
		symlink_force(t, p);
	}
	return 0;
}

static void locks_init(void)
{
	pthread_mutex_init(&sim.lock, NULL);
	pthread_mutex_init(&sim.progress_lock, NULL);
	pthread_condattr_t a;
	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&sim.retry_cond, &a);
	pthread_condattr_destroy(&a);
	pthread_cond_init(&sim.idle_cond, NULL);
}

static void atfork_child(void);

static void sim_init_once(void)
{
	sim.pid = getpid();
	locks_init();
	pthread_atfork(NULL, NULL, atfork_child);
	sim.log = getenv("EFASIM_LOG") && atoi(getenv("EFASIM_LOG")) > 0;
	const char *dir = getenv("EFASIM_DIR");
	if (dir && *dir)
		snprintf(sim.dir, sizeof(sim.dir), "%s", dir);
	else
		snprintf(sim.dir, sizeof(sim.dir), "/tmp/efasim-%u", (unsigned)getuid());
	/* EFASIM_HOST: the simulated host; "%r" makes every MPI rank its own host
	 * (ranks of one machine then reach each other through the device, not shm). */
	const char *host = getenv("EFASIM_HOST");
	if (host && !strcmp(host, "%r")) {
		const char *r = getenv("OMPI_COMM_WORLD_RANK");
		if (!r)
			r = getenv("PMI_RANK");
		if (!r)
			r = getenv("SLURM_PROCID");
		snprintf(sim.host, sizeof(sim.host), "rank%s", r ? r : "0");
	} else if (host && *host) {
		snprintf(sim.host, sizeof(sim.host), "%s", host);
	} else {
		gethostname(sim.host, sizeof(sim.host));
	}
	const char *prof = getenv("EFASIM_PROFILE");
	sim.prof = &profiles[0];
	if (prof && *prof) {
		sim.prof = NULL;
		for (size_t i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++)
			if (!strcmp(prof, profiles[i].name))
				sim.prof = &profiles[i];
		if (!sim.prof) {
			fprintf(stderr, "efasim: unknown EFASIM_PROFILE '%s' (p5en, p5, p4d)\n", prof);
			return;
		}
	}
	const char *n = getenv("EFASIM_NICS");
	sim.nnics = n && *n ? atoi(n) : 2;
	if (sim.nnics < 0 || sim.nnics > EFASIM_MAX_NICS) {
		fprintf(stderr, "efasim: EFASIM_NICS must be 0..%d\n", EFASIM_MAX_NICS);
		return;
	}
	sim.reorder = getenv("EFASIM_REORDER") && atoi(getenv("EFASIM_REORDER")) > 0;
	const char *drop = getenv("EFASIM_DROP_HOST");
	if (drop)
		snprintf(sim.drop_host, sizeof(sim.drop_host), "%s", drop);
	const char *sysfs = getenv("SYSFS_PATH");
	/* A SYSFS_PATH that efasim set for another host (inherited from a parent
	 * such as efab_sweep through a launcher into a test node) is not ours. */
	const char *owner = getenv("EFASIM_SYSFS_HOST");
	int foreign = sysfs && *sysfs && owner && strcmp(owner, sim.host);
	if (foreign)
		sysfs = NULL;
	char hostdir[PATH_MAX];
	snprintf(hostdir, sizeof(hostdir), "%s/sysfs-%s", sim.dir, sim.host);
	snprintf(sim.sysfs, sizeof(sim.sysfs), "%s", sysfs && *sysfs ? sysfs : hostdir);

	/* PCI addresses: EFASIM_PCI="0000:10:00.0,..." (e.g. to match an hwloc XML), default bus 0x10*(i+1). */
	const char *pci = getenv("EFASIM_PCI");
	uint32_t h = fnv1a(sim.host);
	for (int i = 0; i < sim.nnics; i++) {
		struct sim_device *d = &sim.devs[i];
		unsigned dom = 0, bus = 0x10 * (unsigned)(i + 1), dv = 0, fn = 0;
		if (pci && *pci) {
			char one[32];
			size_t len = strcspn(pci, ",");
			snprintf(one, sizeof(one), "%.*s", (int)(len < 31 ? len : 31), pci);
			if (parse_pci(one, &dom, &bus, &dv, &fn)) {
				fprintf(stderr, "efasim: bad EFASIM_PCI entry '%s'\n", one);
				return;
			}
			pci += len + (pci[len] == ',');
		}
		snprintf(d->pci, sizeof(d->pci), "%04x:%02x:%02x.%x", dom, bus, dv, fn);
		d->nic = i;
		d->ibdev.node_type = IBV_NODE_UNSPECIFIED;
		d->ibdev.transport_type = IBV_TRANSPORT_UNSPECIFIED;
		snprintf(d->ibdev.name, sizeof(d->ibdev.name), "rdmap%us%u", bus, dv);
		snprintf(d->ibdev.dev_name, sizeof(d->ibdev.dev_name), "uverbs%d", i);
		snprintf(d->ibdev.dev_path, sizeof(d->ibdev.dev_path), "%s/class/infiniband_verbs/uverbs%d", sim.sysfs, i);
		snprintf(d->ibdev.ibdev_path, sizeof(d->ibdev.ibdev_path), "%s/class/infiniband/%s", sim.sysfs,
			 d->ibdev.name);
		/* A GID per host and NIC: processes of one host share it (the provider
		 * then reaches them through shm, as on a real node). */
		d->gid[0] = 0xfe;
		d->gid[1] = 0x80;
		d->gid[8] = 0x0e;
		d->gid[9] = 0xfa;
		memcpy(d->gid + 10, &h, 4);
		d->gid[14] = (uint8_t)(i >> 8);
		d->gid[15] = (uint8_t)i;
	}
	if (strlen(sim.dir) > 160 || strlen(sim.sysfs) > 200) {
		fprintf(stderr, "efasim: EFASIM_DIR/SYSFS_PATH too long (sysfs paths must fit 256 bytes)\n");
		return;
	}
	if (mkdir_p(sim.dir)) {
		fprintf(stderr, "efasim: cannot create %s: %s\n", sim.dir, strerror(errno));
		return;
	}
	sim.reg = registry_open();
	if (!sim.reg) {
		fprintf(stderr, "efasim: cannot open registry in %s\n", sim.dir);
		return;
	}
	if ((!sysfs || !*sysfs) && build_sysfs() == 0) {
		setenv("SYSFS_PATH", sim.sysfs, foreign);
		setenv("EFASIM_SYSFS_HOST", sim.host, 1);
	}
	robust_lock(&sim.reg->lock);
	registry_gc_locked();
	for (int i = 0; i < sim.nnics; i++) {
		int g = find_dev_by_gid(sim.devs[i].gid);
		if (g < 0)
			for (g = 0; g < EFASIM_MAX_DEVS && sim.reg->devs[g].used; g++)
				;
		if (g >= EFASIM_MAX_DEVS) {
			pthread_mutex_unlock(&sim.reg->lock);
			fprintf(stderr, "efasim: more than %d simulated NICs\n", EFASIM_MAX_DEVS);
			return;
		}
		struct efasim_dev_ent *e = &sim.reg->devs[g];
		if (!e->used) {
			memset(e, 0, sizeof(*e));
			e->nic = i;
			snprintf(e->host, sizeof(e->host), "%s", sim.host);
			memcpy(e->gid, sim.devs[i].gid, 16);
			e->used = 1;
		}
		sim.devs[i].gdev = g;
	}
	apply_slow_knobs();
	pthread_mutex_unlock(&sim.reg->lock);
	/* RDMA into this process comes from its peers' process_vm_writev. */
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	sim.ok = 1;
}

static int sim_init(void)
{
	pthread_once(&sim.once, sim_init_once);
	return sim.ok;
}

__attribute__((constructor)) static void efasim_ctor(void)
{
	/* SYSFS_PATH must be in place before the provider reads it. */
	sim_init();
}

/* ---------------------------------------------------------------- objects */

struct sim_ah_ent {
	uint8_t gid[16];
	uint16_t ahn;
	int refs;
	int reg_slot;            /* registry record that this process knows the peer */
};

struct sim_ctx {
	struct verbs_context vctx; /* ibv_context is its last member */
	struct sim_device *dev;
	pthread_mutex_t lock;
	struct sim_ah_ent *ahs;
	int nah, cap_ah;
	uint16_t next_ahn;
};

struct sim_pd {
	struct ibv_pd pd;
	uint64_t tag;
};

/* Every object records the process that created it (owner): a forked child
 * inherits its parent's objects as memory only, and destroying them there
 * frees that memory without touching the parent's shared state. */
struct sim_ah {
	struct ibv_ah ah;
	uint8_t gid[16];
	uint16_t ahn;
	pid_t owner;
};

struct sim_mr {
	struct ibv_mr mr;
	int slot;
	pid_t owner;
};

struct sim_chan {
	struct ibv_comp_channel ch;
	pid_t owner;
};

struct sim_cq {
	struct ibv_cq_ex cqx;    /* first: ibv_cq_ex_to_cq() is a cast */
	struct efadv_cq dv;
	struct sim_ctx *ctx;
	char file[64];
	struct efasim_ring_hdr *ring;
	size_t map_size;
	struct efasim_cqe cur;
	uint32_t events_acked;
	pid_t owner;
};

enum { OP_SEND, OP_SEND_IMM, OP_WRITE, OP_WRITE_IMM, OP_READ };

struct sim_wr {
	int op;
	uint64_t wr_id;
	unsigned flags;
	uint32_t rkey;
	uint64_t raddr;
	uint32_t imm;
	uint8_t dst_gid[16];
	uint32_t dst_qpn, qkey;
	int have_ah;
	uint32_t nsge;
	struct ibv_sge sge[EFASIM_MAX_SGE];
	uint8_t *inl;
	size_t inl_len;
	int tries_left;          /* RNR: -1 = retry forever */
	uint64_t next_try_ns;
	uint64_t backoff_ns;     /* RNR: the wait before the next retry */
	struct sim_wr *next;
};

struct sim_qp {
	struct ibv_qp_ex qpx;    /* ibv_qp is its first member */
	struct efadv_qp dv;
	struct sim_ctx *ctx;
	struct sim_pd *pd;
	struct sim_cq *scq, *rcq;
	int slot;
	pid_t owner;
	int ud;                  /* IBV_QPT_UD: unreliable datagrams, sends only */
	char rq_file[64];
	struct efasim_ring_hdr *rq;
	size_t rq_map;
	uint32_t sq_max, max_inline;
	atomic_uint sq_out;      /* posted, completion not yet polled (the retry thread completes WRs too) */
	int sig_all, unsolicited;
	uint8_t rnr_retry;
	uint64_t send_ops;
	/* the batch between wr_start and wr_complete */
	int in_batch, batch_err;
	struct sim_wr *wrs;
	size_t nwr, cap;
	/* RNR retries, oldest first. pending, busy, dead and next_qp are under
	 * sim.lock; a retry pass holds busy while it executes the QP's WRs, and
	 * ibv_destroy_qp waits for it. */
	struct sim_wr *pending;
	int busy, dead;
	struct sim_qp *next_qp;
};

static struct sim_ctx *to_ctx(struct ibv_context *c)
{
	return container_of(container_of(c, struct verbs_context, context), struct sim_ctx, vctx);
}

int efasim_is_sim_context(struct ibv_context *c)
{
	return c && c->abi_compat == __VERBS_ABI_IS_EXTENDED;
}

/* ---------------------------------------------------------------- rings */

static struct efasim_ring_hdr *ring_create(const char *name, uint32_t want, uint32_t esize, size_t *map_size)
{
	uint32_t n = 16;
	while (n < want)
		n <<= 1;
	char path[PATH_MAX + 80];
	snprintf(path, sizeof(path), "%s/%s", sim.dir, name);
	size_t sz = sizeof(struct efasim_ring_hdr) + (size_t)n * esize;
	struct efasim_ring_hdr *h = map_file(path, sz, 1);
	if (!h)
		return NULL;
	robust_init(&h->lock);
	h->owner = sim.pid;
	h->size = n;
	h->entry_size = esize;
	h->magic = EFASIM_MAGIC;
	*map_size = sz;
	return h;
}

static void *ring_slot(struct efasim_ring_hdr *h, uint64_t i)
{
	return (char *)(h + 1) + (size_t)(i & (h->size - 1)) * h->entry_size;
}

/* Remote rings are mapped once per process and kept (names are never reused:
 * they carry the owner's pid and a counter). */
struct ring_map {
	char name[64];
	struct efasim_ring_hdr *h;
	size_t size;
	struct ring_map *next;
};
static struct ring_map *ring_maps;

static struct efasim_ring_hdr *ring_get(const char *name)
{
	pthread_mutex_lock(&sim.lock);
	for (struct ring_map *m = ring_maps; m; m = m->next)
		if (!strcmp(m->name, name)) {
			pthread_mutex_unlock(&sim.lock);
			return m->h;
		}
	char path[PATH_MAX + 80];
	snprintf(path, sizeof(path), "%s/%s", sim.dir, name);
	struct efasim_ring_hdr *h = map_file(path, sizeof(*h), 0);
	struct efasim_ring_hdr *full = NULL;
	size_t sz = 0;
	if (h && h->magic == EFASIM_MAGIC) {
		sz = sizeof(*h) + (size_t)h->size * h->entry_size;
		full = map_file(path, sz, 0);
	}
	if (h)
		munmap(h, sizeof(*h));
	if (full) {
		struct ring_map *m = calloc(1, sizeof(*m));
		snprintf(m->name, sizeof(m->name), "%s", name);
		m->h = full;
		m->size = sz;
		m->next = ring_maps;
		ring_maps = m;
	}
	pthread_mutex_unlock(&sim.lock);
	return full;
}

static void cq_push(struct efasim_ring_hdr *h, const struct efasim_cqe *e)
{
	char fifo[sizeof(h->chan_fifo)] = "";
	uint64_t handle = 0;
	robust_lock(&h->lock);
	if (h->tail - h->head >= h->size) {
		h->overruns++;
		pthread_mutex_unlock(&h->lock);
		slog("CQ overrun (owner %d)", (int)h->owner);
		return;
	}
	memcpy(ring_slot(h, h->tail), e, sizeof(*e));
	atomic_thread_fence(memory_order_release);
	h->tail++;
	if (h->armed && h->chan_fifo[0]) {
		h->armed = 0;
		memcpy(fifo, h->chan_fifo, sizeof(fifo));
		handle = h->owner_handle;
	}
	pthread_mutex_unlock(&h->lock);
	if (fifo[0]) {
		int fd = open(fifo, O_WRONLY | O_NONBLOCK);
		if (fd >= 0) {
			if (write(fd, &handle, sizeof(handle)) != sizeof(handle))
				slog("completion event lost");
			close(fd);
		}
	}
}

/* ---------------------------------------------------------------- devices */

EXPORT struct ibv_device **ibv_get_device_list(int *num)
{
	if (num)
		*num = 0;
	if (!sim_init()) {
		errno = ENOSYS;
		return NULL;
	}
	struct ibv_device **l = calloc((size_t)sim.nnics + 1, sizeof(*l));
	if (!l) {
		errno = ENOMEM;
		return NULL;
	}
	for (int i = 0; i < sim.nnics; i++)
		l[i] = &sim.devs[i].ibdev;
	if (num)
		*num = sim.nnics;
	return l;
}

EXPORT void ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

EXPORT const char *ibv_get_device_name(struct ibv_device *d)
{
	return d->name;
}

static int sim_query_port(struct ibv_context *c, uint8_t port, struct ibv_port_attr *a, size_t len);
static struct ibv_cq_ex *sim_create_cq_ex(struct ibv_context *c, struct ibv_cq_init_attr_ex *attr);
static struct ibv_qp *sim_create_qp_ex(struct ibv_context *c, struct ibv_qp_init_attr_ex *attr);
static int sim_query_device_ex(struct ibv_context *c, const struct ibv_query_device_ex_input *in,
			       struct ibv_device_attr_ex *attr, size_t size);
static int sim_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);
static int sim_req_notify(struct ibv_cq *cq, int solicited);
static int sim_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
static int sim_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);

EXPORT struct ibv_context *ibv_open_device(struct ibv_device *d)
{
	if (!sim_init()) {
		errno = ENODEV;
		return NULL;
	}
	struct sim_device *sd = container_of(d, struct sim_device, ibdev);
	struct sim_ctx *c = calloc(1, sizeof(*c));
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	c->dev = sd;
	c->next_ahn = 1;
	pthread_mutex_init(&c->lock, NULL);
	struct verbs_context *v = &c->vctx;
	v->sz = sizeof(*v);
	v->query_port = sim_query_port;
	v->create_cq_ex = sim_create_cq_ex;
	v->create_qp_ex = sim_create_qp_ex;
	v->query_device_ex = sim_query_device_ex;
	struct ibv_context *ctx = &v->context;
	ctx->device = d;
	ctx->cmd_fd = -1;
	ctx->async_fd = -1;
	ctx->num_comp_vectors = 4; /* the provider refuses CQ wait objects with fewer than 2 */
	ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;
	ctx->ops.poll_cq = sim_poll_cq;
	ctx->ops.req_notify_cq = sim_req_notify;
	ctx->ops.post_recv = sim_post_recv;
	ctx->ops.post_send = sim_post_send;
	pthread_mutex_init(&ctx->mutex, NULL);
	return ctx;
}

EXPORT int ibv_close_device(struct ibv_context *ctx)
{
	struct sim_ctx *c = to_ctx(ctx);
	free(c->ahs);
	free(c);
	return 0;
}

static void fill_device_attr(struct sim_ctx *c, struct ibv_device_attr *a)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "efasim-%s", sim.prof->name);
	a->max_mr_size = 1ull << 39;
	a->page_size_cap = 0xfffff000;
	a->vendor_id = 0x1d0f;
	a->vendor_part_id = sim.prof->vendor_part_id;
	a->hw_ver = sim.prof->vendor_part_id;
	a->max_qp = EFASIM_QP_TABLE;
	a->max_qp_wr = MAX_SQ_WR;
	a->max_sge = MAX_SQ_SGE;
	a->max_cq = 512;
	a->max_cqe = MAX_CQE;
	a->max_mr = MAX_MR;
	a->max_pd = MAX_PD;
	a->max_ah = MAX_AH;
	a->phys_port_cnt = 1;
	memcpy(&a->node_guid, c->dev->gid + 8, 8);
}

EXPORT int ibv_query_device(struct ibv_context *ctx, struct ibv_device_attr *a)
{
	fill_device_attr(to_ctx(ctx), a);
	return 0;
}

static int sim_query_device_ex(struct ibv_context *ctx, const struct ibv_query_device_ex_input *in,
			       struct ibv_device_attr_ex *attr, size_t size)
{
	(void)in;
	memset(attr, 0, size);
	fill_device_attr(to_ctx(ctx), &attr->orig_attr);
	return 0;
}

static int sim_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *a, size_t len)
{
	(void)ctx;
	if (port != 1)
		return EINVAL;
	memset(a, 0, len < sizeof(*a) ? len : sizeof(*a));
	a->state = IBV_PORT_ACTIVE;
	a->max_mtu = IBV_MTU_4096;
	a->active_mtu = IBV_MTU_4096;
	a->gid_tbl_len = 1;
	a->max_msg_sz = sim.prof->max_msg_sz;
	a->pkey_tbl_len = 1;
	a->lmc = 1;
	a->active_width = sim.prof->width;
	a->active_speed = sim.prof->speed;
	a->phys_state = 5; /* LinkUp */
	a->link_layer = IBV_LINK_LAYER_UNSPECIFIED;
	return 0;
}

/* The compat entry point: only reached when verbs_context lacks query_port. */
EXPORT int(ibv_query_port)(struct ibv_context *ctx, uint8_t port, struct _compat_ibv_port_attr *a)
{
	return sim_query_port(ctx, port, (struct ibv_port_attr *)a, sizeof(struct ibv_port_attr));
}

EXPORT int ibv_query_gid(struct ibv_context *ctx, uint8_t port, int index, union ibv_gid *gid)
{
	if (port != 1 || index != 0)
		return -1;
	memcpy(gid->raw, to_ctx(ctx)->dev->gid, 16);
	return 0;
}

int efasim_efadv_query_device(struct ibv_context *ctx, struct efadv_device_attr *attr, uint32_t inlen)
{
	if (!efasim_is_sim_context(ctx))
		return EOPNOTSUPP;
	struct efadv_device_attr a = {0};
	a.max_sq_wr = MAX_SQ_WR;
	a.max_rq_wr = MAX_RQ_WR;
	a.max_sq_sge = MAX_SQ_SGE;
	a.max_rq_sge = MAX_RQ_SGE;
	a.inline_buf_size = sim.prof->inline_size;
	a.inline_buf_size_ex = sim.prof->inline_size;
	a.device_caps = sim.prof->caps;
	a.max_rdma_size = sim.prof->max_rdma_size;
	memset(attr, 0, inlen);
	memcpy(attr, &a, inlen < sizeof(a) ? inlen : sizeof(a));
	return 0;
}

/* Fork: the provider asks whether fork support is on; there is no kernel to ask. */
EXPORT int ibv_fork_init(void)
{
	return 0;
}

EXPORT enum ibv_fork_status ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}

/* ---------------------------------------------------------------- pd, mr, ah */

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
	free(container_of(pd, struct sim_pd, pd));
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
static int range_pinnable(const void *addr, size_t len, int write)
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

static struct ibv_mr *reg_mr(struct ibv_pd *pd, void *addr, size_t len, uint64_t iova, int access)
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
	if ((access & IBV_ACCESS_REMOTE_WRITE) && !(sim.prof->caps & EFADV_DEVICE_ATTR_CAPS_RDMA_WRITE)) {
		errno = EINVAL;
		return NULL;
	}
	if ((access & IBV_ACCESS_REMOTE_READ) && !(sim.prof->caps & EFADV_DEVICE_ATTR_CAPS_RDMA_READ)) {
		errno = EINVAL;
		return NULL;
	}
	const int writable = access & (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!len || !range_pinnable(addr, len, writable)) {
		errno = EFAULT;
		return NULL;
	}
	struct sim_mr *m = calloc(1, sizeof(*m));
	if (!m) {
		errno = ENOMEM;
		return NULL;
	}
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
		free(m);
		errno = ENOMEM;
		return NULL;
	}
	uint32_t gen = (++r->mr_gen & 0x7fff) + 1;
	struct efasim_mr_ent *e = &r->mrs[s];
	e->pid = sim.pid;
	e->dev = c->dev->gdev;
	e->pd_tag = p->tag;
	e->iova = iova;
	e->va = (uint64_t)(uintptr_t)addr;
	e->len = len;
	e->access = access;
	e->key = (gen << 16) | (uint32_t)s;
	e->used = 1;
	pthread_mutex_unlock(&r->lock);
	m->slot = s;
	m->owner = sim.pid;
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
	return reg_mr(pd, addr, len, (uintptr_t)addr, access);
}

EXPORT struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t len, uint64_t iova,
				       unsigned int access)
{
	return reg_mr(pd, addr, len, iova, (int)access);
}

/* dmabuf needs a device exporting the buffer (a GPU); there is none here. */
EXPORT struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t len, uint64_t iova, int fd,
					int access)
{
	(void)pd, (void)offset, (void)len, (void)iova, (void)fd, (void)access;
	errno = EOPNOTSUPP;
	return NULL;
}

EXPORT int ibv_dereg_mr(struct ibv_mr *mr)
{
	struct sim_mr *m = container_of(mr, struct sim_mr, mr);
	if (m->owner != sim.pid) { /* inherited from the parent: its registration stays */
		free(m);
		return 0;
	}
	robust_lock(&sim.reg->lock);
	struct efasim_mr_ent *e = &sim.reg->mrs[m->slot];
	if (e->used && e->key == mr->lkey)
		e->used = 0;
	pthread_mutex_unlock(&sim.reg->lock);
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
static int ah_known_by(pid_t pid, int dev, const uint8_t gid[16]);

struct ah_rec {
	int used;
	pid_t pid;
	int dev;
	uint8_t gid[16];
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
	a->ah.context = pd->context;
	a->ah.pd = pd;
	a->ah.handle = a->ahn;
	return &a->ah;
}

EXPORT int ibv_destroy_ah(struct ibv_ah *ah)
{
	struct sim_ah *a = container_of(ah, struct sim_ah, ah);
	struct sim_ctx *c = to_ctx(ah->context);
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

static int ah_known_by(pid_t pid, int dev, const uint8_t gid[16])
{
	struct ah_rec *t = ah_table();
	if (!t)
		return 1;
	for (int i = 0; i < EFASIM_MAX_QPS; i++)
		if (t[i].used && t[i].pid == pid && t[i].dev == dev && !memcmp(t[i].gid, gid, 16))
			return 1;
	return 0;
}

/* ---------------------------------------------------------------- CQ */

static int cq_start_poll(struct ibv_cq_ex *cqx, struct ibv_poll_cq_attr *attr);
static int cq_next_poll(struct ibv_cq_ex *cqx);
static void cq_end_poll(struct ibv_cq_ex *cqx);
static enum ibv_wc_opcode cq_read_opcode(struct ibv_cq_ex *cqx);
static uint32_t cq_read_vendor_err(struct ibv_cq_ex *cqx);
static uint32_t cq_read_byte_len(struct ibv_cq_ex *cqx);
static __be32 cq_read_imm_data(struct ibv_cq_ex *cqx);
static uint32_t cq_read_qp_num(struct ibv_cq_ex *cqx);
static uint32_t cq_read_src_qp(struct ibv_cq_ex *cqx);
static unsigned int cq_read_wc_flags(struct ibv_cq_ex *cqx);
static uint32_t cq_read_slid(struct ibv_cq_ex *cqx);
static uint8_t cq_read_sl(struct ibv_cq_ex *cqx);
static uint8_t cq_read_dlid_path_bits(struct ibv_cq_ex *cqx);
static int cq_wc_read_sgid(struct efadv_cq *dv, union ibv_gid *sgid);
static bool cq_wc_is_unsolicited(struct efadv_cq *dv);

static struct ibv_cq_ex *create_cq(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr, uint64_t efa_wc_flags)
{
	const uint64_t supported = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM |
				   IBV_WC_EX_WITH_SRC_QP | IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |
				   IBV_WC_EX_WITH_DLID_PATH_BITS;
	if (attr->wc_flags & ~supported) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if ((efa_wc_flags & EFADV_WC_EX_WITH_SGID) && !(sim.prof->caps & EFADV_DEVICE_ATTR_CAPS_CQ_WITH_SGID)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!attr->cqe || attr->cqe > MAX_CQE) {
		errno = EINVAL;
		return NULL;
	}
	struct sim_cq *cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	cq->ctx = to_ctx(ctx);
	cq->owner = sim.pid;
	pthread_mutex_lock(&sim.lock);
	snprintf(cq->file, sizeof(cq->file), "c-%d-%u", (int)sim.pid, ++sim.file_counter);
	pthread_mutex_unlock(&sim.lock);
	cq->ring = ring_create(cq->file, attr->cqe, sizeof(struct efasim_cqe), &cq->map_size);
	if (!cq->ring) {
		free(cq);
		errno = ENOMEM;
		return NULL;
	}
	cq->ring->owner_handle = (uint64_t)(uintptr_t)cq;
	if (attr->channel)
		snprintf(cq->ring->chan_fifo, sizeof(cq->ring->chan_fifo), "%s/h-%d-%d", sim.dir,
			 (int)container_of(attr->channel, struct sim_chan, ch)->owner, attr->channel->fd);
	struct ibv_cq_ex *x = &cq->cqx;
	x->context = ctx;
	x->channel = attr->channel;
	x->cq_context = attr->cq_context;
	x->cqe = (int)cq->ring->size;
	pthread_mutex_init(&x->mutex, NULL);
	pthread_cond_init(&x->cond, NULL);
	x->start_poll = cq_start_poll;
	x->next_poll = cq_next_poll;
	x->end_poll = cq_end_poll;
	x->read_opcode = cq_read_opcode;
	x->read_vendor_err = cq_read_vendor_err;
	x->read_byte_len = cq_read_byte_len;
	x->read_imm_data = cq_read_imm_data;
	x->read_qp_num = cq_read_qp_num;
	x->read_src_qp = cq_read_src_qp;
	x->read_wc_flags = cq_read_wc_flags;
	x->read_slid = cq_read_slid;
	x->read_sl = cq_read_sl;
	x->read_dlid_path_bits = cq_read_dlid_path_bits;
	cq->dv.wc_read_sgid = cq_wc_read_sgid;
	cq->dv.wc_is_unsolicited = cq_wc_is_unsolicited;
	if (attr->channel)
		attr->channel->refcnt++;
	return x;
}

static struct ibv_cq_ex *sim_create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr)
{
	return create_cq(ctx, attr, 0);
}

struct ibv_cq_ex *efasim_efadv_create_cq(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr,
					 struct efadv_cq_init_attr *efa_attr, uint32_t inlen)
{
	uint64_t wc = 0;
	if (efa_attr && inlen >= offsetof(struct efadv_cq_init_attr, wc_flags) + sizeof(uint64_t))
		wc = efa_attr->wc_flags;
	if (efa_attr && inlen >= offsetof(struct efadv_cq_init_attr, flags) + sizeof(uint64_t) &&
	    (efa_attr->flags & EFADV_CQ_INIT_FLAGS_EXT_MEM_DMABUF)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return create_cq(ctx, attr, wc);
}

struct efadv_cq *efasim_efadv_cq_from_ibv_cq_ex(struct ibv_cq_ex *cqx)
{
	return &container_of(cqx, struct sim_cq, cqx)->dv;
}

EXPORT int ibv_destroy_cq(struct ibv_cq *cq)
{
	struct sim_cq *c = container_of((struct ibv_cq_ex *)cq, struct sim_cq, cqx);
	if (c->owner != sim.pid) { /* inherited: the ring is the parent's */
		free(c);
		return 0;
	}
	char path[PATH_MAX + 80];
	snprintf(path, sizeof(path), "%s/%s", sim.dir, c->file);
	unlink(path);
	munmap(c->ring, c->map_size);
	if (c->cqx.channel)
		c->cqx.channel->refcnt--;
	free(c);
	return 0;
}

static void progress_pending(void);
static atomic_int npending; /* WRs of this process waiting for an RNR retry */

static void qp_sq_done(const struct efasim_cqe *e)
{
	if (e->recv_side || e->qp_slot < 0 || e->qp_slot >= EFASIM_MAX_QPS)
		return;
	pthread_mutex_lock(&sim.lock);
	struct sim_qp *q = sim.qp_by_slot[e->qp_slot];
	if (q) {
		unsigned n = atomic_load(&q->sq_out);
		while (n && !atomic_compare_exchange_weak(&q->sq_out, &n, n - 1))
			;
	}
	pthread_mutex_unlock(&sim.lock);
}

static int qp_alive_here(const struct efasim_cqe *e)
{
	if (e->qp_slot < 0 || e->qp_slot >= EFASIM_MAX_QPS)
		return 0;
	pthread_mutex_lock(&sim.lock);
	struct sim_qp *q = sim.qp_by_slot[e->qp_slot];
	int ok = q && q->qpx.qp_base.qp_num == e->qp_num;
	pthread_mutex_unlock(&sim.lock);
	return ok;
}

static int cq_pop(struct sim_cq *c)
{
	struct efasim_ring_hdr *h = c->ring;
	if (h->head == __atomic_load_n(&h->tail, __ATOMIC_ACQUIRE))
		return ENOENT;
	robust_lock(&h->lock);
	if (h->head == h->tail) {
		pthread_mutex_unlock(&h->lock);
		return ENOENT;
	}
	memcpy(&c->cur, ring_slot(h, h->head), sizeof(c->cur));
	h->head++;
	pthread_mutex_unlock(&h->lock);
	/* As libefa: a completion of a QP that no longer exists is consumed and
	 * reported as EINVAL (the provider drains its CQ that way after destroying
	 * a QP). */
	if (!qp_alive_here(&c->cur))
		return EINVAL;
	qp_sq_done(&c->cur);
	c->cqx.wr_id = c->cur.wr_id;
	switch (c->cur.status) {
	case ES_OK: c->cqx.status = IBV_WC_SUCCESS; break;
	case ES_FLUSHED: c->cqx.status = IBV_WC_WR_FLUSH_ERR; break;
	case ES_LOCAL_QP_INTERNAL:
	case ES_LOCAL_UNSUPPORTED_OP:
	case ES_LOCAL_INVALID_AH: c->cqx.status = IBV_WC_LOC_QP_OP_ERR; break;
	case ES_LOCAL_INVALID_LKEY: c->cqx.status = IBV_WC_LOC_PROT_ERR; break;
	case ES_LOCAL_BAD_LENGTH: c->cqx.status = IBV_WC_LOC_LEN_ERR; break;
	case ES_REMOTE_ABORT: c->cqx.status = IBV_WC_REM_ABORT_ERR; break;
	case ES_REMOTE_RNR: c->cqx.status = IBV_WC_RNR_RETRY_EXC_ERR; break;
	case ES_REMOTE_BAD_DEST_QPN: c->cqx.status = IBV_WC_REM_INV_RD_REQ_ERR; break;
	case ES_REMOTE_BAD_STATUS: c->cqx.status = IBV_WC_BAD_RESP_ERR; break;
	case ES_REMOTE_BAD_LENGTH: c->cqx.status = IBV_WC_REM_INV_REQ_ERR; break;
	case ES_LOCAL_UNRESP_REMOTE:
	case ES_LOCAL_UNREACH_REMOTE: c->cqx.status = IBV_WC_RESP_TIMEOUT_ERR; break;
	case ES_REMOTE_BAD_ADDRESS: c->cqx.status = IBV_WC_REM_ACCESS_ERR; break;
	case ES_REMOTE_UNKNOWN_PEER: c->cqx.status = IBV_WC_REM_OP_ERR; break;
	default: c->cqx.status = IBV_WC_GENERAL_ERR; break;
	}
	return 0;
}

static int cq_start_poll(struct ibv_cq_ex *cqx, struct ibv_poll_cq_attr *attr)
{
	(void)attr;
	progress_pending();
	return cq_pop(container_of(cqx, struct sim_cq, cqx));
}

static int cq_next_poll(struct ibv_cq_ex *cqx)
{
	return cq_pop(container_of(cqx, struct sim_cq, cqx));
}

static void cq_end_poll(struct ibv_cq_ex *cqx)
{
	(void)cqx;
}

#define CUR(x) (container_of(x, struct sim_cq, cqx)->cur)

static enum ibv_wc_opcode cq_read_opcode(struct ibv_cq_ex *x)
{
	/* As libefa: a send-queue completion is RDMA_WRITE or SEND (RDMA read too). */
	if (!CUR(x).recv_side)
		return CUR(x).rdma_write ? IBV_WC_RDMA_WRITE : IBV_WC_SEND;
	return CUR(x).rdma_write ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV;
}
static uint32_t cq_read_vendor_err(struct ibv_cq_ex *x) { return CUR(x).status; }
static uint32_t cq_read_byte_len(struct ibv_cq_ex *x) { return CUR(x).recv_side ? CUR(x).byte_len : 0; }
static __be32 cq_read_imm_data(struct ibv_cq_ex *x) { return htobe32(CUR(x).imm); }
static uint32_t cq_read_qp_num(struct ibv_cq_ex *x) { return CUR(x).qp_num; }
static uint32_t cq_read_src_qp(struct ibv_cq_ex *x) { return CUR(x).src_qp; }
static unsigned int cq_read_wc_flags(struct ibv_cq_ex *x) { return CUR(x).has_imm ? IBV_WC_WITH_IMM : 0; }
static uint8_t cq_read_sl(struct ibv_cq_ex *x) { (void)x; return 0; }
static uint8_t cq_read_dlid_path_bits(struct ibv_cq_ex *x) { (void)x; return 0; }

/* The sender's AH number in the receiver's table, or 0xFFFF when it has none
 * (then the SGID is readable: the RDM handshake identifies peers by it). */
static uint32_t cq_read_slid(struct ibv_cq_ex *x)
{
	struct sim_cq *c = container_of(x, struct sim_cq, cqx);
	struct sim_ctx *ctx = c->ctx;
	uint32_t ahn = EFASIM_UNKNOWN_AH;
	if (!c->cur.recv_side)
		return ahn;
	pthread_mutex_lock(&ctx->lock);
	for (int i = 0; i < ctx->nah; i++)
		if (ctx->ahs[i].refs > 0 && !memcmp(ctx->ahs[i].gid, c->cur.src_gid, 16))
			ahn = ctx->ahs[i].ahn;
	pthread_mutex_unlock(&ctx->lock);
	return ahn;
}

static int cq_wc_read_sgid(struct efadv_cq *dv, union ibv_gid *sgid)
{
	struct sim_cq *c = container_of(dv, struct sim_cq, dv);
	if (cq_read_slid(&c->cqx) != EFASIM_UNKNOWN_AH)
		return -ENOENT;
	memcpy(sgid->raw, c->cur.src_gid, 16);
	return 0;
}

static bool cq_wc_is_unsolicited(struct efadv_cq *dv)
{
	return container_of(dv, struct sim_cq, dv)->cur.unsolicited;
}

static int sim_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	struct ibv_cq_ex *x = (struct ibv_cq_ex *)cq;
	struct sim_cq *c = container_of(x, struct sim_cq, cqx);
	int got = 0;
	progress_pending();
	while (got < n && cq_pop(c) == 0) {
		struct ibv_wc *w = &wc[got++];
		memset(w, 0, sizeof(*w));
		w->wr_id = x->wr_id;
		w->status = x->status;
		w->opcode = cq_read_opcode(x);
		w->vendor_err = c->cur.status;
		w->byte_len = cq_read_byte_len(x);
		w->imm_data = cq_read_imm_data(x);
		w->qp_num = c->cur.qp_num;
		w->src_qp = c->cur.src_qp;
		w->wc_flags = cq_read_wc_flags(x);
		w->slid = (uint16_t)cq_read_slid(x);
	}
	return got;
}

/* Completion channels: a FIFO per channel; the device writes the CQ's handle
 * into it when an armed CQ gets a completion. */
EXPORT struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *ctx)
{
	struct sim_chan *sc = calloc(1, sizeof(*sc));
	if (!sc) {
		errno = ENOMEM;
		return NULL;
	}
	struct ibv_comp_channel *ch = &sc->ch;
	sc->owner = sim.pid;
	static atomic_int next_fifo;
	char path[PATH_MAX + 80];
	int id = atomic_fetch_add(&next_fifo, 1);
	snprintf(path, sizeof(path), "%s/h-%d-x%d", sim.dir, (int)sim.pid, id);
	unlink(path);
	if (mkfifo(path, 0600)) {
		free(sc);
		return NULL;
	}
	ch->fd = open(path, O_RDWR | O_CLOEXEC);
	if (ch->fd < 0) {
		unlink(path);
		free(sc);
		return NULL;
	}
	/* the CQ finds the FIFO by the channel's fd number */
	char byfd[PATH_MAX + 80];
	snprintf(byfd, sizeof(byfd), "%s/h-%d-%d", sim.dir, (int)sim.pid, ch->fd);
	unlink(byfd);
	if (rename(path, byfd)) {
		close(ch->fd);
		unlink(path);
		free(sc);
		return NULL;
	}
	ch->context = ctx;
	return ch;
}

EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel *ch)
{
	struct sim_chan *sc = container_of(ch, struct sim_chan, ch);
	if (ch->refcnt)
		return EBUSY;
	if (sc->owner == sim.pid) { /* an inherited channel's FIFO is the parent's */
		char path[PATH_MAX + 80];
		snprintf(path, sizeof(path), "%s/h-%d-%d", sim.dir, (int)sc->owner, ch->fd);
		unlink(path);
	}
	close(ch->fd);
	free(sc);
	return 0;
}

static int sim_req_notify(struct ibv_cq *cq, int solicited)
{
	(void)solicited;
	struct sim_cq *c = container_of((struct ibv_cq_ex *)cq, struct sim_cq, cqx);
	robust_lock(&c->ring->lock);
	c->ring->armed = 1;
	pthread_mutex_unlock(&c->ring->lock);
	return 0;
}

EXPORT int ibv_get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq, void **cq_context)
{
	uint64_t handle;
	ssize_t n = read(ch->fd, &handle, sizeof(handle));
	if (n != sizeof(handle))
		return -1;
	struct sim_cq *c = (struct sim_cq *)(uintptr_t)handle;
	*cq = (struct ibv_cq *)&c->cqx;
	*cq_context = c->cqx.cq_context;
	return 0;
}

EXPORT void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	struct sim_cq *c = container_of((struct ibv_cq_ex *)cq, struct sim_cq, cqx);
	c->events_acked += nevents;
}

/* ---------------------------------------------------------------- QP */

static void wr_start(struct ibv_qp_ex *qpx);
static int wr_complete(struct ibv_qp_ex *qpx);
static void wr_abort(struct ibv_qp_ex *qpx);
static void wr_send(struct ibv_qp_ex *qpx);
static void wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm);
static void wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t raddr);
static void wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t raddr);
static void wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t raddr, __be32 imm);
static void wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey);
static void wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr, uint32_t len);
static void wr_set_sge_list(struct ibv_qp_ex *qpx, size_t n, const struct ibv_sge *l);
static void wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr, size_t len);
static void wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t n, const struct ibv_data_buf *l);
static void wr_set_processing_hints(struct efadv_qp *dv, uint32_t hints);

static struct ibv_qp *create_qp(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr, int srd, uint32_t flags)
{
	struct sim_ctx *c = to_ctx(ctx);
	/* As libefa: efadv_create_qp_ex makes SRD (IBV_QPT_DRIVER) QPs, the plain
	 * ibv_create_qp_ex only UD ones (the provider's FI_EP_DGRAM endpoint). */
	if (attr->qp_type != (srd ? IBV_QPT_DRIVER : IBV_QPT_UD) ||
	    (attr->comp_mask & ~(uint32_t)(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD)) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->cap.max_send_wr > MAX_SQ_WR || attr->cap.max_recv_wr > MAX_RQ_WR ||
	    attr->cap.max_send_sge > MAX_SQ_SGE || attr->cap.max_recv_sge > MAX_RQ_SGE ||
	    attr->cap.max_inline_data > sim.prof->inline_size) {
		errno = EINVAL;
		return NULL;
	}
	if ((flags & EFADV_QP_FLAGS_UNSOLICITED_WRITE_RECV) &&
	    !(sim.prof->caps & EFADV_DEVICE_ATTR_CAPS_UNSOLICITED_WRITE_RECV)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* supported send ops as libefa's efa_check_qp_attr: UD sends only, SRD
	 * also the RDMA the device offers */
	uint64_t ops = (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) ? attr->send_ops_flags : 0;
	uint64_t supp = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
	if (srd && (sim.prof->caps & EFADV_DEVICE_ATTR_CAPS_RDMA_READ))
		supp |= IBV_QP_EX_WITH_RDMA_READ;
	if (srd && (sim.prof->caps & EFADV_DEVICE_ATTR_CAPS_RDMA_WRITE))
		supp |= IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
	if (ops & ~supp) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	struct sim_qp *q = calloc(1, sizeof(*q));
	if (!q) {
		errno = ENOMEM;
		return NULL;
	}
	q->ctx = c;
	q->owner = sim.pid;
	q->ud = !srd;
	q->pd = container_of(attr->pd, struct sim_pd, pd);
	q->scq = container_of((struct ibv_cq_ex *)attr->send_cq, struct sim_cq, cqx);
	q->rcq = container_of((struct ibv_cq_ex *)attr->recv_cq, struct sim_cq, cqx);
	q->sq_max = attr->cap.max_send_wr ? attr->cap.max_send_wr : 1;
	q->max_inline = attr->cap.max_inline_data;
	q->sig_all = attr->sq_sig_all;
	q->unsolicited = !!(flags & EFADV_QP_FLAGS_UNSOLICITED_WRITE_RECV);
	q->send_ops = ops;
	pthread_mutex_lock(&sim.lock);
	snprintf(q->rq_file, sizeof(q->rq_file), "q-%d-%u", (int)sim.pid, ++sim.file_counter);
	pthread_mutex_unlock(&sim.lock);
	q->rq = ring_create(q->rq_file, attr->cap.max_recv_wr ? attr->cap.max_recv_wr : 1, sizeof(struct efasim_rqe),
			    &q->rq_map);
	if (!q->rq) {
		free(q);
		errno = ENOMEM;
		return NULL;
	}
	/* QP numbers are unique per NIC across processes, and distinct modulo the
	 * table size within it (the provider indexes its table by qpn & 255). */
	struct efasim_registry *r = sim.reg;
	robust_lock(&r->lock);
	registry_gc_locked();
	int slot = -1, used_low[EFASIM_QP_TABLE] = {0};
	for (int i = 0; i < EFASIM_MAX_QPS; i++) {
		if (r->qps[i].used && r->qps[i].dev == c->dev->gdev)
			used_low[r->qps[i].qpn & (EFASIM_QP_TABLE - 1)] = 1;
		else if (!r->qps[i].used && slot < 0)
			slot = i;
	}
	int low = 1;
	while (low < EFASIM_QP_TABLE && used_low[low])
		low++;
	if (slot < 0 || low >= EFASIM_QP_TABLE) {
		pthread_mutex_unlock(&r->lock);
		char p[PATH_MAX + 80];
		snprintf(p, sizeof(p), "%s/%s", sim.dir, q->rq_file);
		unlink(p);
		munmap(q->rq, q->rq_map);
		free(q);
		errno = ENOSPC;
		return NULL;
	}
	struct efasim_dev_ent *d = &r->devs[c->dev->gdev];
	d->next_qp_gen = (d->next_qp_gen + 1) & 0xffff;
	struct efasim_qp_ent *e = &r->qps[slot];
	memset(e, 0, sizeof(*e));
	e->pid = sim.pid;
	e->dev = c->dev->gdev;
	e->qpn = ((d->next_qp_gen & 0xff) << 8) | (uint32_t)low; /* the provider keeps 16 bits */
	e->pd_tag = q->pd->tag;
	e->unsolicited_write_recv = q->unsolicited;
	e->ud = (uint8_t)q->ud;
	snprintf(e->rq_file, sizeof(e->rq_file), "%s", q->rq_file);
	snprintf(e->cq_file, sizeof(e->cq_file), "%s", q->rcq->file);
	e->used = 1;
	pthread_mutex_unlock(&r->lock);
	q->slot = slot;
	struct ibv_qp *qp = &q->qpx.qp_base;
	qp->context = ctx;
	qp->qp_context = attr->qp_context;
	qp->pd = attr->pd;
	qp->send_cq = attr->send_cq;
	qp->recv_cq = attr->recv_cq;
	qp->srq = attr->srq;
	qp->handle = (uint32_t)slot;
	qp->qp_num = e->qpn;
	qp->state = IBV_QPS_RESET;
	qp->qp_type = attr->qp_type;
	pthread_mutex_init(&qp->mutex, NULL);
	pthread_cond_init(&qp->cond, NULL);
	struct ibv_qp_ex *x = &q->qpx;
	x->wr_start = wr_start;
	x->wr_complete = wr_complete;
	x->wr_abort = wr_abort;
	x->wr_send = wr_send;
	x->wr_send_imm = wr_send_imm;
	x->wr_rdma_read = wr_rdma_read;
	x->wr_rdma_write = wr_rdma_write;
	x->wr_rdma_write_imm = wr_rdma_write_imm;
	x->wr_set_ud_addr = wr_set_ud_addr;
	x->wr_set_sge = wr_set_sge;
	x->wr_set_sge_list = wr_set_sge_list;
	x->wr_set_inline_data = wr_set_inline_data;
	x->wr_set_inline_data_list = wr_set_inline_data_list;
	q->dv.wr_set_processing_hints = wr_set_processing_hints;
	pthread_mutex_lock(&sim.lock);
	sim.qp_by_slot[slot] = q;
	q->next_qp = sim.qps;
	sim.qps = q;
	pthread_mutex_unlock(&sim.lock);
	return qp;
}

static struct ibv_qp *sim_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr)
{
	return create_qp(ctx, attr, 0, 0);
}

struct ibv_qp *efasim_efadv_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr,
					 struct efadv_qp_init_attr *efa_attr, uint32_t inlen)
{
	if (!efa_attr || inlen < offsetof(struct efadv_qp_init_attr, flags) + sizeof(uint16_t) ||
	    efa_attr->driver_qp_type != EFADV_QP_DRIVER_TYPE_SRD) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (efa_attr->flags & EFADV_QP_FLAGS_INLINE_WRITE) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return create_qp(ctx, attr, 1, efa_attr->flags);
}

struct efadv_qp *efasim_efadv_qp_from_ibv_qp_ex(struct ibv_qp_ex *qpx)
{
	return &container_of(qpx, struct sim_qp, qpx)->dv;
}

EXPORT struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	return container_of(qp, struct ibv_qp_ex, qp_base);
}

static struct sim_qp *to_qp(struct ibv_qp *qp)
{
	return container_of(qp, struct sim_qp, qpx.qp_base);
}

EXPORT int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
	struct sim_qp *q = to_qp(qp);
	if (mask & IBV_QP_QKEY) {
		robust_lock(&sim.reg->lock);
		sim.reg->qps[q->slot].qkey = a->qkey;
		pthread_mutex_unlock(&sim.reg->lock);
	}
	if (mask & IBV_QP_RNR_RETRY) {
		if (q->ud || (!(sim.prof->caps & EFADV_DEVICE_ATTR_CAPS_RNR_RETRY) && a->rnr_retry))
			return EINVAL; /* UD has no RNR (the kernel's modify rejects the attribute) */
		q->rnr_retry = a->rnr_retry;
	}
	if (mask & IBV_QP_STATE)
		qp->state = a->qp_state;
	return 0;
}

/* Completions of a destroyed QP leave its CQs at once: libfabric 2.1 and 2.4
 * index their QP table with a CQE's qp_num without a NULL check. */
static void cq_purge(struct sim_cq *c, int slot, uint32_t qpn)
{
	struct efasim_ring_hdr *h = c->ring;
	robust_lock(&h->lock);
	uint64_t w = h->head;
	for (uint64_t r = h->head; r < h->tail; r++) {
		struct efasim_cqe *e = ring_slot(h, r);
		if (e->qp_slot == slot && e->qp_num == qpn)
			continue;
		if (w != r)
			memcpy(ring_slot(h, w), e, sizeof(*e));
		w++;
	}
	h->tail = w;
	pthread_mutex_unlock(&h->lock);
}

EXPORT int ibv_destroy_qp(struct ibv_qp *qp)
{
	struct sim_qp *q = to_qp(qp);
	if (q->owner != sim.pid) { /* inherited from the parent: the QP is the parent's */
		for (struct sim_wr *w = q->pending, *n; w; w = n) {
			n = w->next;
			free(w->inl);
			free(w);
		}
		for (size_t i = 0; i < q->nwr; i++)
			free(q->wrs[i].inl);
		free(q->wrs);
		free(q);
		return 0;
	}
	robust_lock(&sim.reg->lock);
	sim.reg->qps[q->slot].used = 0;
	pthread_mutex_unlock(&sim.reg->lock);
	/* out of the tables, then wait for a retry pass that is executing its WRs */
	pthread_mutex_lock(&sim.lock);
	sim.qp_by_slot[q->slot] = NULL;
	q->dead = 1;
	while (q->busy)
		pthread_cond_wait(&sim.idle_cond, &sim.lock);
	for (struct sim_qp **pp = &sim.qps; *pp; pp = &(*pp)->next_qp)
		if (*pp == q) {
			*pp = q->next_qp;
			break;
		}
	struct sim_wr *pend = q->pending;
	q->pending = NULL;
	pthread_mutex_unlock(&sim.lock);
	char p[PATH_MAX + 80];
	snprintf(p, sizeof(p), "%s/%s", sim.dir, q->rq_file);
	unlink(p);
	munmap(q->rq, q->rq_map);
	cq_purge(q->scq, q->slot, qp->qp_num);
	if (q->rcq != q->scq)
		cq_purge(q->rcq, q->slot, qp->qp_num);
	for (struct sim_wr *w = pend, *n; w; w = n) {
		n = w->next;
		atomic_fetch_sub(&npending, 1);
		free(w->inl);
		free(w);
	}
	for (size_t i = 0; i < q->nwr; i++)
		free(q->wrs[i].inl);
	free(q->wrs);
	free(q);
	return 0;
}

EXPORT int ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
	(void)qp, (void)op, (void)flags;
	return 0; /* SRD: no ordering guarantee for data placement */
}

static int sim_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct sim_qp *q = to_qp(qp);
	struct efasim_ring_hdr *h = q->rq;
	robust_lock(&h->lock);
	for (; wr; wr = wr->next) {
		if (wr->num_sge < 0 || wr->num_sge > EFASIM_MAX_SGE || h->tail - h->head >= h->size) {
			pthread_mutex_unlock(&h->lock);
			*bad = wr;
			return wr->num_sge > EFASIM_MAX_SGE ? EINVAL : ENOMEM;
		}
		struct efasim_rqe *e = ring_slot(h, h->tail);
		e->wr_id = wr->wr_id;
		e->nsge = (uint32_t)wr->num_sge;
		memcpy(e->sge, wr->sg_list, sizeof(struct ibv_sge) * (size_t)wr->num_sge);
		h->tail++;
	}
	pthread_mutex_unlock(&h->lock);
	return 0;
}

/* ---------------------------------------------------------------- data path */

static struct sim_wr *cur_wr(struct sim_qp *q)
{
	return q->nwr ? &q->wrs[q->nwr - 1] : NULL;
}

static void wr_start(struct ibv_qp_ex *qpx)
{
	struct sim_qp *q = container_of(qpx, struct sim_qp, qpx);
	q->in_batch = 1;
	q->batch_err = 0;
	q->nwr = 0;
}

static struct sim_wr *new_wr(struct sim_qp *q, int op)
{
	struct ibv_qp_ex *x = &q->qpx;
	if (!q->in_batch || q->batch_err)
		return NULL;
	if (x->qp_base.state != IBV_QPS_RTS && x->qp_base.state != IBV_QPS_SQD) {
		q->batch_err = EINVAL;
		return NULL;
	}
	if (!(x->wr_flags & IBV_SEND_SIGNALED) && !q->sig_all) {
		q->batch_err = EINVAL; /* EFA: non-signaled WRs not supported */
		return NULL;
	}
	if (x->wr_flags & ~(unsigned)(IBV_SEND_SIGNALED | IBV_SEND_INLINE)) {
		q->batch_err = EINVAL;
		return NULL;
	}
	if (atomic_load_explicit(&q->sq_out, memory_order_relaxed) + q->nwr >= q->sq_max) {
		q->batch_err = ENOMEM; /* SQ full */
		return NULL;
	}
	if (q->nwr == q->cap) {
		size_t n = q->cap ? 2 * q->cap : 16;
		void *p = realloc(q->wrs, n * sizeof(*q->wrs));
		if (!p) {
			q->batch_err = ENOMEM;
			return NULL;
		}
		q->wrs = p;
		q->cap = n;
	}
	struct sim_wr *w = &q->wrs[q->nwr++];
	memset(w, 0, sizeof(*w));
	w->op = op;
	w->wr_id = x->wr_id;
	w->flags = x->wr_flags;
	return w;
}

static void wr_send(struct ibv_qp_ex *x)
{
	new_wr(container_of(x, struct sim_qp, qpx), OP_SEND);
}

static void wr_send_imm(struct ibv_qp_ex *x, __be32 imm)
{
	struct sim_wr *w = new_wr(container_of(x, struct sim_qp, qpx), OP_SEND_IMM);
	if (w)
		w->imm = be32toh(imm);
}

static int rdma_allowed(struct sim_qp *q, uint32_t cap, uint64_t op)
{
	if (!(sim.prof->caps & cap) || !(q->send_ops & op)) {
		q->batch_err = EOPNOTSUPP;
		return 0;
	}
	return 1;
}

static void wr_rdma_read(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr)
{
	struct sim_qp *q = container_of(x, struct sim_qp, qpx);
	if (!rdma_allowed(q, EFADV_DEVICE_ATTR_CAPS_RDMA_READ, IBV_QP_EX_WITH_RDMA_READ))
		return;
	struct sim_wr *w = new_wr(q, OP_READ);
	if (w) {
		w->rkey = rkey;
		w->raddr = raddr;
	}
}

static void wr_rdma_write(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr)
{
	struct sim_qp *q = container_of(x, struct sim_qp, qpx);
	if (!rdma_allowed(q, EFADV_DEVICE_ATTR_CAPS_RDMA_WRITE, IBV_QP_EX_WITH_RDMA_WRITE))
		return;
	struct sim_wr *w = new_wr(q, OP_WRITE);
	if (w) {
		w->rkey = rkey;
		w->raddr = raddr;
	}
}

static void wr_rdma_write_imm(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr, __be32 imm)
{
	struct sim_qp *q = container_of(x, struct sim_qp, qpx);
	if (!rdma_allowed(q, EFADV_DEVICE_ATTR_CAPS_RDMA_WRITE, IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM))
		return;
	struct sim_wr *w = new_wr(q, OP_WRITE_IMM);
	if (w) {
		w->rkey = rkey;
		w->raddr = raddr;
		w->imm = be32toh(imm);
	}
}

static void wr_set_ud_addr(struct ibv_qp_ex *x, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey)
{
	struct sim_wr *w = cur_wr(container_of(x, struct sim_qp, qpx));
	if (!w)
		return;
	memcpy(w->dst_gid, container_of(ah, struct sim_ah, ah)->gid, 16);
	w->dst_qpn = qpn;
	w->qkey = qkey;
	w->have_ah = 1;
}

static void wr_set_sge_list(struct ibv_qp_ex *x, size_t n, const struct ibv_sge *l)
{
	struct sim_qp *q = container_of(x, struct sim_qp, qpx);
	struct sim_wr *w = cur_wr(q);
	if (!w)
		return;
	if (n > MAX_SQ_SGE) {
		q->batch_err = EINVAL;
		return;
	}
	w->nsge = (uint32_t)n;
	memcpy(w->sge, l, n * sizeof(*l));
}

static void wr_set_sge(struct ibv_qp_ex *x, uint32_t lkey, uint64_t addr, uint32_t len)
{
	struct ibv_sge s = {.addr = addr, .length = len, .lkey = lkey};
	wr_set_sge_list(x, 1, &s);
}

/* Inline data is copied at post time: the buffer may be reused at once. */
static void wr_set_inline_data_list(struct ibv_qp_ex *x, size_t n, const struct ibv_data_buf *l)
{
	struct sim_qp *q = container_of(x, struct sim_qp, qpx);
	struct sim_wr *w = cur_wr(q);
	if (!w)
		return;
	size_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += l[i].length;
	if (total > q->max_inline || total > sim.prof->inline_size) {
		q->batch_err = EINVAL;
		return;
	}
	w->inl = malloc(total ? total : 1);
	if (!w->inl) {
		q->batch_err = ENOMEM;
		return;
	}
	w->inl_len = total;
	size_t off = 0;
	for (size_t i = 0; i < n; i++) {
		memcpy(w->inl + off, l[i].addr, l[i].length);
		off += l[i].length;
	}
	w->nsge = 0;
}

static void wr_set_inline_data(struct ibv_qp_ex *x, void *addr, size_t len)
{
	struct ibv_data_buf b = {.addr = addr, .length = len};
	wr_set_inline_data_list(x, 1, &b);
}

static void wr_set_processing_hints(struct efadv_qp *dv, uint32_t hints)
{
	(void)dv, (void)hints; /* a performance hint: nothing to model */
}

static void wr_abort(struct ibv_qp_ex *x)
{
	struct sim_qp *q = container_of(x, struct sim_qp, qpx);
	for (size_t i = 0; i < q->nwr; i++)
		free(q->wrs[i].inl);
	q->nwr = 0;
	q->in_batch = 0;
}

/* Local SGEs must be covered by this process's MRs on this NIC and PD. */
static int local_iov(struct sim_qp *q, const struct sim_wr *w, struct iovec *iov, size_t *total)
{
	*total = 0;
	if (w->inl) {
		iov[0].iov_base = w->inl;
		iov[0].iov_len = w->inl_len;
		*total = w->inl_len;
		return 1;
	}
	struct efasim_registry *r = sim.reg;
	for (uint32_t i = 0; i < w->nsge; i++) {
		const struct ibv_sge *s = &w->sge[i];
		const struct efasim_mr_ent *m = &r->mrs[s->lkey & 0xffff];
		if (!m->used || m->key != s->lkey || m->pid != sim.pid || m->dev != q->ctx->dev->gdev ||
		    m->pd_tag != q->pd->tag || s->addr < m->iova || s->addr + s->length > m->iova + m->len)
			return -1;
		iov[i].iov_base = (void *)(uintptr_t)(m->va + (s->addr - m->iova));
		iov[i].iov_len = s->length;
		*total += s->length;
	}
	return (int)w->nsge;
}

static ssize_t move_bytes(pid_t pid, int to_remote, struct iovec *l, int nl, struct iovec *r, int nr)
{
	if (pid == sim.pid) {
		/* same process: copy between the two scatter lists */
		size_t li = 0, lo = 0, ri = 0, ro = 0, done = 0;
		while ((int)li < nl && (int)ri < nr) {
			size_t n = l[li].iov_len - lo;
			if (r[ri].iov_len - ro < n)
				n = r[ri].iov_len - ro;
			char *lp = (char *)l[li].iov_base + lo, *rp = (char *)r[ri].iov_base + ro;
			if (to_remote)
				memmove(rp, lp, n);
			else
				memmove(lp, rp, n);
			done += n;
			lo += n;
			ro += n;
			if (lo == l[li].iov_len) {
				li++;
				lo = 0;
			}
			if (ro == r[ri].iov_len) {
				ri++;
				ro = 0;
			}
		}
		return (ssize_t)done;
	}
	return to_remote ? process_vm_writev(pid, l, (unsigned long)nl, r, (unsigned long)nr, 0)
			 : process_vm_readv(pid, l, (unsigned long)nl, r, (unsigned long)nr, 0);
}

/* A multi-MTU write placed in reverse MTU order (EFASIM_REORDER=1): SRD
 * delivers the packets of one write in any order. */
static ssize_t write_reordered(pid_t pid, struct iovec *l, int nl, uint64_t dst, size_t total)
{
	char *tmp = malloc(total);
	if (!tmp)
		return -1;
	size_t off = 0;
	for (int i = 0; i < nl; i++) {
		memcpy(tmp + off, l[i].iov_base, l[i].iov_len);
		off += l[i].iov_len;
	}
	size_t mtu = sim.prof->max_msg_sz;
	size_t nchunks = (total + mtu - 1) / mtu;
	for (size_t c = nchunks; c-- > 0;) {
		size_t o = c * mtu, n = total - o < mtu ? total - o : mtu;
		struct iovec a = {tmp + o, n}, b = {(void *)(uintptr_t)(dst + o), n};
		if (move_bytes(pid, 1, &a, 1, &b, 1) != (ssize_t)n) {
			free(tmp);
			return -1;
		}
	}
	free(tmp);
	return (ssize_t)total;
}

static void throttle(int src_dev, int dst_dev, size_t bytes)
{
	struct efasim_dev_ent *s = &sim.reg->devs[src_dev], *d = &sim.reg->devs[dst_dev];
	uint64_t ns = 1000ull * (s->delay_us + d->delay_us);
	uint32_t rate = s->rate_MBps;
	if (d->rate_MBps && (!rate || d->rate_MBps < rate))
		rate = d->rate_MBps;
	if (rate)
		ns += (uint64_t)bytes * 1000ull / rate;
	if (!ns)
		return;
	/* A slow NIC costs its host no CPU: sleep through most of the wait (a
	 * spinning simulator would slow every other process sharing the cores,
	 * and with them the figures of NICs that are not slow), spin the end. */
	uint64_t end = now_ns() + ns;
	if (ns > 60000) {
		struct timespec ts = {(time_t)((ns - 50000) / 1000000000ull),
				      (long)((ns - 50000) % 1000000000ull)};
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
	while (now_ns() < end)
		;
}

/* Pop a receive WQE of the target QP; 0 = none posted (RNR). */
static int rq_pop(struct efasim_ring_hdr *h, struct efasim_rqe *out)
{
	robust_lock(&h->lock);
	if (h->head == h->tail) {
		pthread_mutex_unlock(&h->lock);
		return 0;
	}
	memcpy(out, ring_slot(h, h->head), sizeof(*out));
	h->head++;
	pthread_mutex_unlock(&h->lock);
	return 1;
}

enum { DONE, RETRY };
enum { RNR_RETRY_MIN_NS = 20000, RNR_RETRY_MAX_NS = 500000 }; /* the wait between RNR retries doubles */
enum { GRH_LEN = 40 }; /* UD: the receive buffer starts with the packet's GRH */

/* A receive WQE's buffers, checked against the receiver's MRs as its NIC
 * would; nonzero: a bad lkey. */
static int rqe_iov(const struct efasim_rqe *rqe, const struct efasim_qp_ent *tq, int dst_dev, struct iovec *riov,
		   size_t *cap)
{
	struct efasim_registry *r = sim.reg;
	int bad = 0;
	*cap = 0;
	robust_lock(&r->lock);
	for (uint32_t i = 0; i < rqe->nsge; i++) {
		const struct ibv_sge *s = &rqe->sge[i];
		const struct efasim_mr_ent *m = &r->mrs[s->lkey & 0xffff];
		if (!m->used || m->key != s->lkey || m->pid != tq->pid || m->dev != dst_dev || m->pd_tag != tq->pd_tag ||
		    s->addr < m->iova || s->addr + s->length > m->iova + m->len) {
			bad = 1;
			break;
		}
		riov[i].iov_base = (void *)(uintptr_t)(m->va + (s->addr - m->iova));
		riov[i].iov_len = s->length;
		*cap += s->length;
	}
	pthread_mutex_unlock(&r->lock);
	return bad;
}

/* UD (the provider's FI_EP_DGRAM endpoint): unreliable datagrams, sends only.
 * The sender's completion reports local errors only; a datagram the target
 * cannot take (no such host, QP or process, a different qkey, an SRD QP, no
 * receive posted: no RNR on UD) is dropped without a word. The receiver gets
 * the packet's 40-byte GRH (IB layout: version 6, payload length, next header,
 * hop limit, SGID, DGID) and then the payload, scattered over its buffers as
 * one stream, and byte_len counts both: the provider's msg_prefix_size 40. */
static void execute_ud(struct sim_qp *q, struct sim_wr *w)
{
	struct efasim_registry *r = sim.reg;
	struct efasim_cqe sc = {.wr_id = w->wr_id, .qp_num = q->qpx.qp_base.qp_num, .qp_slot = q->slot, .src_dev = -1};
	struct efasim_cqe rc = {.recv_side = 1, .src_qp = q->qpx.qp_base.qp_num, .src_dev = q->ctx->dev->gdev};
	memcpy(rc.src_gid, q->ctx->dev->gid, 16);
	uint8_t grh[GRH_LEN] = {0};
	struct iovec liov[EFASIM_MAX_SGE + 1] = {{grh, GRH_LEN}};
	size_t len = 0;
	int nl = local_iov(q, w, liov + 1, &len);
	int status = ES_OK;
	if (!w->have_ah)
		status = ES_LOCAL_INVALID_AH;
	else if (nl < 0)
		status = ES_LOCAL_INVALID_LKEY;
	else if (len > sim.prof->max_msg_sz)
		status = ES_LOCAL_BAD_LENGTH;
	if (status != ES_OK)
		goto done;
	robust_lock(&r->lock);
	int dst_dev = find_dev_by_gid(w->dst_gid), ts = -1;
	if (dst_dev >= 0)
		for (int i = 0; i < EFASIM_MAX_QPS; i++)
			if (r->qps[i].used && r->qps[i].dev == dst_dev && r->qps[i].qpn == w->dst_qpn) {
				ts = i;
				break;
			}
	struct efasim_qp_ent tq;
	if (ts >= 0)
		tq = r->qps[ts];
	int dropped = dst_dev >= 0 && sim.drop_host[0] && !strcmp(r->devs[dst_dev].host, sim.drop_host);
	pthread_mutex_unlock(&r->lock);
	if (dst_dev < 0 || dropped || ts < 0 || !tq.ud || tq.qkey != w->qkey || !pid_alive(tq.pid))
		goto done;
	throttle(q->ctx->dev->gdev, dst_dev, len);
	struct efasim_ring_hdr *trq = ring_get(tq.rq_file), *tcq = ring_get(tq.cq_file);
	struct efasim_rqe rqe;
	if (!trq || !tcq || !rq_pop(trq, &rqe))
		goto done;
	rc.wr_id = rqe.wr_id;
	rc.qp_num = tq.qpn;
	rc.qp_slot = ts;
	grh[0] = 0x60; /* IP version 6, traffic class 0, flow label 0 */
	grh[4] = (uint8_t)(len >> 8);
	grh[5] = (uint8_t)len;
	grh[6] = 0x1b; /* next header: IB transport */
	grh[7] = 1;    /* hop limit */
	memcpy(grh + 8, q->ctx->dev->gid, 16);
	memcpy(grh + 24, r->devs[dst_dev].gid, 16);
	struct iovec riov[EFASIM_MAX_SGE];
	size_t cap = 0;
	if (rqe_iov(&rqe, &tq, dst_dev, riov, &cap))
		rc.status = ES_LOCAL_INVALID_LKEY;
	else if (cap < GRH_LEN + len)
		rc.status = ES_LOCAL_BAD_LENGTH;
	else if (move_bytes(tq.pid, 1, liov, nl + 1, riov, (int)rqe.nsge) != (ssize_t)(GRH_LEN + len))
		rc.status = ES_LOCAL_QP_INTERNAL;
	rc.byte_len = (uint32_t)(GRH_LEN + len);
	if (w->op == OP_SEND_IMM) {
		rc.has_imm = 1;
		rc.imm = w->imm;
	}
	cq_push(tcq, &rc);
done:
	sc.status = (uint16_t)status;
	if (status != ES_OK)
		slog("ud qp %u wr %#llx -> status %d", q->qpx.qp_base.qp_num, (unsigned long long)w->wr_id, status);
	cq_push(q->scq->ring, &sc);
	free(w->inl);
	w->inl = NULL;
}

/* Execute one WR as the device would; returns RETRY on RNR with retries left. */
static int execute(struct sim_qp *q, struct sim_wr *w)
{
	if (q->ud) {
		execute_ud(q, w);
		return DONE;
	}
	struct efasim_registry *r = sim.reg;
	struct efasim_cqe sc = {.wr_id = w->wr_id, .qp_num = q->qpx.qp_base.qp_num, .qp_slot = q->slot,
				.rdma_write = (w->op == OP_WRITE || w->op == OP_WRITE_IMM), .src_dev = -1};
	struct efasim_cqe rc = {.recv_side = 1, .qp_slot = -1, .src_qp = q->qpx.qp_base.qp_num,
				.src_dev = q->ctx->dev->gdev};
	memcpy(rc.src_gid, q->ctx->dev->gid, 16);
	struct iovec liov[EFASIM_MAX_SGE];
	size_t len = 0;
	int nl = local_iov(q, w, liov, &len);
	int dst_dev = -1;
	struct efasim_qp_ent tq;
	struct efasim_ring_hdr *trq = NULL, *tcq = NULL;
	int status = ES_OK;

	if (!w->have_ah) {
		status = ES_LOCAL_INVALID_AH;
		goto done;
	}
	if (nl < 0) {
		status = ES_LOCAL_INVALID_LKEY;
		goto done;
	}
	if ((w->op == OP_SEND || w->op == OP_SEND_IMM) ? len > sim.prof->max_msg_sz : len > sim.prof->max_rdma_size) {
		status = ES_LOCAL_BAD_LENGTH;
		goto done;
	}
	robust_lock(&r->lock);
	dst_dev = find_dev_by_gid(w->dst_gid);
	int ts = -1;
	if (dst_dev >= 0)
		for (int i = 0; i < EFASIM_MAX_QPS; i++)
			if (r->qps[i].used && r->qps[i].dev == dst_dev && r->qps[i].qpn == w->dst_qpn) {
				ts = i;
				break;
			}
	if (ts >= 0)
		tq = r->qps[ts];
	int dropped = dst_dev >= 0 && sim.drop_host[0] && !strcmp(r->devs[dst_dev].host, sim.drop_host);
	pthread_mutex_unlock(&r->lock);
	if (dst_dev < 0) {
		status = ES_LOCAL_UNREACH_REMOTE;
		goto done;
	}
	if (dropped) {
		status = ES_LOCAL_UNRESP_REMOTE;
		goto done;
	}
	if (ts < 0 || tq.ud) { /* no such QP, or a UD one (SRD and UD do not talk) */
		status = ES_REMOTE_BAD_DEST_QPN;
		goto done;
	}
	if (!pid_alive(tq.pid)) {
		status = ES_LOCAL_UNRESP_REMOTE;
		goto done;
	}
	throttle(q->ctx->dev->gdev, dst_dev, len);
	rc.qp_num = tq.qpn;
	rc.qp_slot = ts;

	if (w->op == OP_SEND || w->op == OP_SEND_IMM || (w->op == OP_WRITE_IMM && !tq.unsolicited_write_recv)) {
		if (w->op != OP_WRITE_IMM && w->qkey != tq.qkey) {
			status = ES_REMOTE_BAD_DEST_QPN;
			goto done;
		}
		trq = ring_get(tq.rq_file);
		tcq = ring_get(tq.cq_file);
		if (!trq || !tcq) {
			status = ES_REMOTE_BAD_DEST_QPN;
			goto done;
		}
		struct efasim_rqe rqe;
		if (!rq_pop(trq, &rqe)) {
			if (w->tries_left != 0) {
				if (w->tries_left > 0)
					w->tries_left--;
				w->backoff_ns = !w->backoff_ns ? RNR_RETRY_MIN_NS
					      : w->backoff_ns >= RNR_RETRY_MAX_NS / 2 ? RNR_RETRY_MAX_NS
										       : 2 * w->backoff_ns;
				w->next_try_ns = now_ns() + w->backoff_ns;
				return RETRY;
			}
			status = ES_REMOTE_RNR;
			goto done;
		}
		rc.wr_id = rqe.wr_id;
		if (w->op == OP_WRITE_IMM)
			goto rdma;
		/* scatter into the receive buffers, checked against the receiver's MRs */
		struct iovec riov[EFASIM_MAX_SGE];
		size_t cap = 0;
		int bad = rqe_iov(&rqe, &tq, dst_dev, riov, &cap);
		if (bad) {
			rc.status = ES_LOCAL_INVALID_LKEY;
			status = ES_REMOTE_BAD_STATUS;
		} else if (cap < len) {
			rc.status = ES_LOCAL_BAD_LENGTH;
			status = ES_REMOTE_BAD_LENGTH;
		} else if (len && move_bytes(tq.pid, 1, liov, nl, riov, (int)rqe.nsge) != (ssize_t)len) {
			rc.status = ES_LOCAL_QP_INTERNAL;
			status = ES_LOCAL_UNRESP_REMOTE;
		}
		rc.byte_len = (uint32_t)len;
		if (w->op == OP_SEND_IMM) {
			rc.has_imm = 1;
			rc.imm = w->imm;
		}
		cq_push(tcq, &rc);
		goto done;
	}

rdma:
	if (w->op == OP_WRITE || w->op == OP_WRITE_IMM || w->op == OP_READ) {
		/* The responder's device needs an AH for the requester. */
		if (!ah_known_by(tq.pid, dst_dev, q->ctx->dev->gid)) {
			status = ES_REMOTE_UNKNOWN_PEER;
			goto rdma_done;
		}
		int need = w->op == OP_READ ? IBV_ACCESS_REMOTE_READ : IBV_ACCESS_REMOTE_WRITE;
		robust_lock(&r->lock);
		const struct efasim_mr_ent *m = &r->mrs[w->rkey & 0xffff];
		int ok = m->used && m->key == w->rkey && m->pid == tq.pid && m->dev == dst_dev &&
			 m->pd_tag == tq.pd_tag && (m->access & need) && w->raddr >= m->iova &&
			 w->raddr + len <= m->iova + m->len;
		uint64_t va = ok ? m->va + (w->raddr - m->iova) : 0;
		pthread_mutex_unlock(&r->lock);
		if (!ok) {
			status = ES_REMOTE_BAD_ADDRESS;
			goto rdma_done;
		}
		struct iovec riov = {(void *)(uintptr_t)va, len};
		ssize_t n;
		if (!len)
			n = 0;
		else if (w->op == OP_READ)
			n = move_bytes(tq.pid, 0, liov, nl, &riov, 1);
		else if (sim.reorder && len > sim.prof->max_msg_sz)
			n = write_reordered(tq.pid, liov, nl, va, len);
		else
			n = move_bytes(tq.pid, 1, liov, nl, &riov, 1);
		if (n != (ssize_t)len)
			status = ES_LOCAL_UNRESP_REMOTE;
	rdma_done:
		if (w->op == OP_WRITE_IMM) {
			if (tq.unsolicited_write_recv) {
				tcq = ring_get(tq.cq_file);
				rc.unsolicited = 1;
				rc.wr_id = 0;
			}
			/* a consumed WQE completes even when the write failed */
			if (tcq && (status == ES_OK || !tq.unsolicited_write_recv)) {
				if (status != ES_OK)
					rc.status = ES_REMOTE_ABORT;
				rc.rdma_write = 1;
				rc.has_imm = 1;
				rc.imm = w->imm;
				rc.byte_len = (uint32_t)len;
				cq_push(tcq, &rc);
			}
		}
	}
done:
	sc.status = (uint16_t)status;
	if (status != ES_OK)
		slog("qp %u wr %#llx op %d -> status %d", q->qpx.qp_base.qp_num, (unsigned long long)w->wr_id, w->op,
		     status);
	cq_push(q->scq->ring, &sc);
	free(w->inl);
	w->inl = NULL;
	return DONE;
}

/* ---------------------------------------------------------------- RNR retries
 *
 * A send that finds no receive posted is parked on its QP (in this process)
 * and retried with a doubling wait (20 us .. 500 us) until it gets a receive
 * or runs out of rnr_retry. As on a NIC, retries need nothing from the
 * application: a per-process retry thread, started the first time a WR is
 * parked, runs them (an application blocked on a completion channel waits
 * exactly for the event a parked WR produces). It sleeps on retry_cond when
 * nothing is parked, else until the earliest retry is due. A CQ poll also
 * runs a pass (one relaxed load when nothing is parked). Passes are
 * serialized by progress_lock; the application's posts execute their new WRs
 * at the same time (execute() touches only the WR and shared rings, sq_out is
 * atomic), and ibv_destroy_qp waits for a pass that holds the QP (busy). */

static void *retry_main(void *arg);

/* With sim.lock held. */
static void retry_thread_start_locked(void)
{
	if (sim.retry_thread)
		return;
	/* the application's signals go to its own threads */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_t t;
	if (pthread_create(&t, &a, retry_main, NULL) == 0)
		sim.retry_thread = 1; /* else the retries wait for CQ polls; the next park tries again */
	else
		slog("cannot start the RNR retry thread");
	pthread_attr_destroy(&a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void park(struct sim_qp *q, struct sim_wr *p)
{
	p->next = NULL;
	pthread_mutex_lock(&sim.lock);
	struct sim_wr **tail = &q->pending;
	while (*tail)
		tail = &(*tail)->next;
	*tail = p;
	atomic_fetch_add(&npending, 1);
	retry_thread_start_locked();
	pthread_cond_signal(&sim.retry_cond);
	pthread_mutex_unlock(&sim.lock);
}

static int wr_complete(struct ibv_qp_ex *x)
{
	struct sim_qp *q = container_of(x, struct sim_qp, qpx);
	int err = q->batch_err;
	q->in_batch = 0;
	if (err) {
		wr_abort(x);
		return err;
	}
	/* rnr_retry 7 = retry for ever (IB semantics) */
	int tries = q->rnr_retry >= 7 ? -1 : q->rnr_retry;
	for (size_t i = 0; i < q->nwr; i++) {
		struct sim_wr *w = &q->wrs[i];
		atomic_fetch_add(&q->sq_out, 1);
		w->tries_left = tries;
		if (execute(q, w) == RETRY) {
			struct sim_wr *p = malloc(sizeof(*p));
			if (!p) {
				w->tries_left = 0;
				execute(q, w);
				continue;
			}
			*p = *w;
			park(q, p);
		}
	}
	q->nwr = 0;
	return 0;
}

/* One pass: every parked WR that is due is executed again; those that get RNR
 * again stay parked in their order, ahead of WRs parked meanwhile. */
static int progress_pass(void)
{
	if (pthread_mutex_trylock(&sim.progress_lock))
		return 0; /* another thread is passing */
	uint64_t t = now_ns();
	pthread_mutex_lock(&sim.lock);
	for (struct sim_qp *q = sim.qps; q; q = q->next_qp) {
		if (q->dead || !q->pending)
			continue;
		int due = 0;
		for (struct sim_wr *w = q->pending; w && !due; w = w->next)
			due = w->next_try_ns <= t;
		if (!due)
			continue;
		struct sim_wr *list = q->pending, *keep = NULL, **kt = &keep;
		q->pending = NULL;
		q->busy++;
		pthread_mutex_unlock(&sim.lock);
		int done = 0;
		for (struct sim_wr *w = list, *n; w; w = n) {
			n = w->next;
			w->next = NULL;
			if (w->next_try_ns > t || execute(q, w) == RETRY) {
				*kt = w;
				kt = &w->next;
			} else {
				free(w);
				done++;
			}
		}
		atomic_fetch_sub(&npending, done);
		pthread_mutex_lock(&sim.lock);
		*kt = q->pending;
		q->pending = keep;
		/* parked again: the retry thread may have looked while the list was
		 * detached here, seen nothing and gone idle */
		if (keep)
			pthread_cond_signal(&sim.retry_cond);
		if (--q->busy == 0 && q->dead)
			pthread_cond_broadcast(&sim.idle_cond);
	}
	pthread_mutex_unlock(&sim.lock);
	pthread_mutex_unlock(&sim.progress_lock);
	return 1;
}

static void progress_pending(void)
{
	if (atomic_load_explicit(&npending, memory_order_relaxed))
		progress_pass();
}

static void *retry_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&sim.lock);
	for (;;) {
		uint64_t next = UINT64_MAX;
		for (struct sim_qp *q = sim.qps; q; q = q->next_qp)
			for (struct sim_wr *w = q->dead ? NULL : q->pending; w; w = w->next)
				if (w->next_try_ns < next)
					next = w->next_try_ns;
		if (next == UINT64_MAX) { /* idle: nothing parked (a pass that holds WRs signals when it parks them again) */
			pthread_cond_wait(&sim.retry_cond, &sim.lock);
			continue;
		}
		uint64_t t = now_ns();
		if (next > t) {
			struct timespec ts = {.tv_sec = (time_t)(next / 1000000000ull),
					      .tv_nsec = (long)(next % 1000000000ull)};
			pthread_cond_timedwait(&sim.retry_cond, &sim.lock, &ts);
			continue;
		}
		pthread_mutex_unlock(&sim.lock);
		int ran = progress_pass();
		pthread_mutex_lock(&sim.lock);
		if (!ran) { /* another thread's pass: let it finish */
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			ts.tv_nsec += 10000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&sim.retry_cond, &sim.lock, &ts);
		}
	}
	return NULL;
}

/* A forked child is a new process: its own pid for everything it creates
 * (registry entries, ring and FIFO names, process_vm_* targets), no retry
 * thread (threads do not survive fork), and no claim on its parent's objects:
 * they stay the parent's (their owner pid), this process neither retries the
 * parent's parked WRs nor completes its QPs' WRs, and destroying them here
 * only frees memory. Locks are made anew: another thread may have held them
 * at the fork. */
static void atfork_child(void)
{
	sim.pid = getpid();
	locks_init();
	sim.retry_thread = 0;
	sim.qps = NULL;
	memset(sim.qp_by_slot, 0, sizeof(sim.qp_by_slot));
	atomic_store(&npending, 0);
	if (sim.ok)
		prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
}

/* The legacy post_send (not used by the provider): mapped onto the same path. */
static int sim_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(qp);
	for (; wr; wr = wr->next) {
		x->wr_id = wr->wr_id;
		x->wr_flags = wr->send_flags;
		wr_start(x);
		switch (wr->opcode) {
		case IBV_WR_SEND: wr_send(x); break;
		case IBV_WR_SEND_WITH_IMM: wr_send_imm(x, wr->imm_data); break;
		case IBV_WR_RDMA_WRITE: wr_rdma_write(x, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr); break;
		case IBV_WR_RDMA_WRITE_WITH_IMM:
			wr_rdma_write_imm(x, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr, wr->imm_data);
			break;
		case IBV_WR_RDMA_READ: wr_rdma_read(x, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr); break;
		default: *bad = wr; wr_abort(x); return EINVAL;
		}
		if (wr->opcode == IBV_WR_SEND || wr->opcode == IBV_WR_SEND_WITH_IMM)
			wr_set_ud_addr(x, wr->wr.ud.ah, wr->wr.ud.remote_qpn, wr->wr.ud.remote_qkey);
		wr_set_sge_list(x, (size_t)wr->num_sge, wr->sg_list);
		int rc = wr_complete(x);
		if (rc) {
			*bad = wr;
			return rc;
		}
	}
	return 0;
}
