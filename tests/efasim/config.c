/* efasim: Configuration (profiles, environment knobs), the shared registry of every
 * process's objects, the simulated sysfs tree and per-process initialisation. */
#include "sim.h"

/* Values: EFA_IO / efadv caps are documented per instance generation in AWS's
 * EFA docs (RDMA read since p4d, RDMA write since p5/"EFA v3", unsolicited write
 * receive on newer firmware) and libfabric's efa provider; the sizes below are
 * what ibv_devinfo reports on those instances as far as public posts show, and
 * are marked in README.md where they are assumed. */
/* CQ with external memory (EFADV_DEVICE_ATTR_CAPS_CQ_WITH_EXT_MEM_DMABUF, what
 * libfabric's GDA cq_open_ext needs) is a driver property, not a device one:
 * the EFA driver reports EFA_QUERY_DEVICE_CAPS_CQ_WITH_EXT_MEM whenever the
 * kernel has raw-fd uverbs attributes and pinned dma-buf umems (amzn-drivers
 * efa_verbs.c, r2.17.0 "Add CQ with external memory support"), so every
 * profile has it; EFASIM_EXT_CQ=0 is an older driver without it. */
/* PCI device ids (README.md's profile table gives the sources): p4d 0xefa0
 * (first generation: libfabric runs sub-CQ mode, the verbs path), p5 0xefa1,
 * p5en 0xefa2 (INFERRED from aws-ofi-nccl's generation numbering; no public
 * p5en output shows it). SQ depth: p5 4096, newer devices 2048 (public
 * fi_info/log outputs); p4d's is assumed to be p5's. Completion counters
 * (built against rdma-core main only): ASSUMED on every profile -- the
 * driver reports them when the device has event counters, which no public
 * source shows for any instance; EFASIM_COMP_CNTR=0 takes them away. */
static const struct profile profiles[] = {
	{"p5en", 0xefa2,
	 EFADV_DEVICE_ATTR_CAPS_RDMA_READ | EFADV_DEVICE_ATTR_CAPS_RNR_RETRY | EFADV_DEVICE_ATTR_CAPS_CQ_WITH_SGID |
		 EFADV_DEVICE_ATTR_CAPS_RDMA_WRITE | EFADV_DEVICE_ATTR_CAPS_UNSOLICITED_WRITE_RECV |
		 EFADV_DEVICE_ATTR_CAPS_CQ_WITH_EXT_MEM_DMABUF | SIM_CAPS_COMP_CNTR,
	 8928, 1u << 30, 32, 64, 2, 2048},
	{"p5", 0xefa1,
	 EFADV_DEVICE_ATTR_CAPS_RDMA_READ | EFADV_DEVICE_ATTR_CAPS_RNR_RETRY | EFADV_DEVICE_ATTR_CAPS_CQ_WITH_SGID |
		 EFADV_DEVICE_ATTR_CAPS_RDMA_WRITE | EFADV_DEVICE_ATTR_CAPS_CQ_WITH_EXT_MEM_DMABUF | SIM_CAPS_COMP_CNTR,
	 8928, 1u << 30, 32, 32, 2, 4096},
	{"p4d", 0xefa0,
	 EFADV_DEVICE_ATTR_CAPS_RDMA_READ | EFADV_DEVICE_ATTR_CAPS_RNR_RETRY | EFADV_DEVICE_ATTR_CAPS_CQ_WITH_SGID |
		 EFADV_DEVICE_ATTR_CAPS_CQ_WITH_EXT_MEM_DMABUF | SIM_CAPS_COMP_CNTR,
	 8928, 1u << 30, 32, 32, 2, 4096},
};

struct sim_state sim = {.once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER,
	 .progress_lock = PTHREAD_MUTEX_INITIALIZER};

void slog(const char *fmt, ...)
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

uint64_t now_ns(void)
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

void ebusy_note(const char *what, const char *users, int n)
{
	slog("%s: EBUSY (%d %s)", what, n, users);
	const char *f = getenv("EFASIM_EBUSY_LOG");
	if (!f || !*f)
		return;
	int fd = open(f, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	char line[256];
	int len = snprintf(line, sizeof(line), "%d %s: EBUSY, %d %s\n", (int)getpid(), what, n, users);
	if (write(fd, line, (size_t)len) < 0) {
	}
	close(fd);
}

void robust_lock(pthread_mutex_t *m)
{
	if (pthread_mutex_lock(m) == EOWNERDEAD)
		pthread_mutex_consistent(m);
}

void robust_init(pthread_mutex_t *m)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(m, &a);
	pthread_mutexattr_destroy(&a);
}

/* The simulator's own threads (the direct path's device engine, the RNR
 * retry thread, the hw_counters cache), which a real rdma-core does not have:
 * its libibverbs and libefa start no thread, the NIC and the kernel do that
 * work. So they must not outlive this library: when it is unloaded (dlclose
 * of the last user: NVSHMEM's nvshmem_finalize closes its libfabric transport,
 * whose libfabric.so is the only user of libibverbs.so.1) or the process
 * exits, sim_threads_stop (a destructor) asks them to stop and joins them.
 * Before, a thread left running in unmapped code killed the process with
 * SIGSEGV at teardown (NVSHMEM 3.6.5 on the H200 machine: the core showed the
 * engine and hw_counters threads at addresses of the unloaded library). */
static struct {
	pthread_t t;
	pid_t owner; /* threads do not survive fork: a child never joins its parent's */
} threads[8];
static int nthreads;
static pthread_mutex_t threads_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int stopping;

int sim_stopping(void)
{
	return atomic_load_explicit(&stopping, memory_order_relaxed);
}

int sim_thread_start(void *(*fn)(void *), const char *what)
{
	sigset_t all, old; /* the application's signals go to its own threads */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_t t;
	int rc = pthread_create(&t, NULL, fn, NULL); /* joinable: sim_threads_stop joins it */
	if (rc)
		slog("cannot start %s", what);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		return -1;
	pid_t me = getpid();
	pthread_mutex_lock(&threads_lock);
	int k = 0;
	while (k < nthreads && threads[k].owner == me)
		k++; /* a slot of this process's threads is kept; a forked parent's is reused */
	if (k < (int)(sizeof(threads) / sizeof(threads[0]))) {
		threads[k].t = t;
		threads[k].owner = me;
		if (k == nthreads)
			nthreads++;
	} else {
		pthread_detach(t);
	}
	pthread_mutex_unlock(&threads_lock);
	return 0;
}

__attribute__((destructor)) static void sim_threads_stop(void)
{
	pid_t me = getpid();
	atomic_store(&stopping, 1);
	/* the retry thread waits on retry_cond at most 100 ms at a time; this
	 * only makes it sooner (a lost wakeup costs that wait, no more) */
	pthread_cond_broadcast(&sim.retry_cond);
	for (int k = 0; k < nthreads; k++) {
		if (threads[k].owner != me)
			continue;
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 2;
		int rc = pthread_timedjoin_np(threads[k].t, NULL, &ts);
		if (rc) /* e.g. a copy stuck in a CUDA call: the process goes on; said once */
			slog("a simulator thread did not stop within 2 s at unload/exit: %s", strerror(rc));
		threads[k].owner = 0;
	}
}

int pid_alive(pid_t pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno != ESRCH);
}

int mkdir_p(const char *path)
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
void *map_file(const char *path, size_t size, int create)
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
	struct stat st;
	int have = stat(path, &st) == 0;
	if (r || (have && (size_t)st.st_size != sizeof(*r))) {
		/* another efasim build's registry (its processes may still run) */
		if (r)
			munmap(r, sizeof(*r));
		fprintf(stderr,
			"efasim: %s was made by another efasim build (its magic or size differs: %lld bytes, "
			"this build's %zu); remove %s or set EFASIM_DIR to another directory\n",
			path, have ? (long long)st.st_size : -1LL, sizeof(*r), sim.dir);
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
void registry_gc_locked(void)
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

int find_dev_by_gid(const uint8_t gid[16])
{
	for (int i = 0; i < EFASIM_MAX_DEVS; i++)
		if (sim.reg->devs[i].used && !memcmp(sim.reg->devs[i].gid, gid, 16))
			return i;
	return -1;
}

/* Per-NIC test knobs for this host: EFASIM_SLOW="nic:MBps:delay_us[,...]",
 * EFASIM_LOSS="nic:N[,...]". */
static void apply_slow_knobs(void)
{
	const char *s = getenv("EFASIM_SLOW");
	for (int i = 0; i < sim.nnics; i++) {
		struct efasim_dev_ent *d = &sim.reg->devs[sim.devs[i].gdev];
		d->rate_MBps = 0;
		d->delay_us = 0;
		d->loss_every = 0;
	}
	/* EFASIM_LOSS="nic:N[,...]": a lossy link at this host's NIC nic */
	for (const char *l = getenv("EFASIM_LOSS"); l && *l;) {
		int nic;
		unsigned every = 0;
		if (sscanf(l, "%d:%u", &nic, &every) == 2 && nic >= 0 && nic < sim.nnics)
			sim.reg->devs[sim.devs[nic].gdev].loss_every = every;
		l = strchr(l, ',');
		if (l)
			l++;
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
	/* The kernel module's version, where a real node has it
	 * (/sys/module/efa/version: the driver's MODULE_VERSION, amzn-drivers
	 * kernel/linux/efa/src/efa_main.c; "3.3.1" with EFA installer 1.51):
	 * "efasim" unless EFASIM_DRIVER_VERSION names one (a test of two nodes on
	 * two drivers). efabench reads it under SYSFS_PATH, as rdma-core reads
	 * class/infiniband. */
	snprintf(p, sizeof(p), "%s/module/efa", sim.sysfs);
	mkdir_p(p);
	snprintf(p, sizeof(p), "%s/module/efa/version", sim.sysfs);
	{
		const char *dv = getenv("EFASIM_DRIVER_VERSION");
		char text[80];
		snprintf(text, sizeof(text), "%s\n", dv && *dv ? dv : "efasim");
		write_file(p, text);
	}
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
		/* fw_ver as ibv_query_device answers it (devices.c) */
		snprintf(p, sizeof(p), "%s/class/infiniband/%s/fw_ver", sim.sysfs, d->ibdev.name);
		snprintf(t, sizeof(t), "efasim-%s\n", sim.prof->name);
		write_file(p, t);
	}
	return 0;
}

void locks_init(void)
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

static void sim_init_once(void)
{
	sim.pid = getpid();
	locks_init();
	pthread_atfork(NULL, NULL, atfork_child);
	sim.log = getenv("EFASIM_LOG") && atoi(getenv("EFASIM_LOG")) > 0;
	sim.stats = getenv("EFASIM_ENGINE_STATS") && atoi(getenv("EFASIM_ENGINE_STATS")) > 0;
	sim.qp_stats = getenv("EFASIM_QP_STATS") && atoi(getenv("EFASIM_QP_STATS")) > 0;
	if (sim.stats)
		atexit(engine_stats);
	/* EFASIM_P2P=0: a device without GPUDirect RDMA (GPU memory does not register) */
	sim.p2p = !(getenv("EFASIM_P2P") && !strcmp(getenv("EFASIM_P2P"), "0"));
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
	sim.caps = sim.prof->caps;
	/* EFASIM_EXT_CQ=0: a driver without CQs in external memory (before
	 * amzn-drivers r2.17.0): libfabric's cq_open_ext answers -FI_EOPNOTSUPP */
	if (getenv("EFASIM_EXT_CQ") && !strcmp(getenv("EFASIM_EXT_CQ"), "0"))
		sim.caps &= ~(uint32_t)EFADV_DEVICE_ATTR_CAPS_CQ_WITH_EXT_MEM_DMABUF;
	/* test knob (objrules, compcntr_test): with no dma-buf exporter on the machine, a memfd
	 * named "efasim-dmabuf" stands for one, so the checks after the fd's
	 * (ranges, length, resolution) can be reached */
	sim.fake_dmabuf = getenv("EFASIM_TEST_FAKE_DMABUF") && atoi(getenv("EFASIM_TEST_FAKE_DMABUF")) > 0;
	const char *n = getenv("EFASIM_NICS");
	sim.nnics = n && *n ? atoi(n) : 2;
	if (sim.nnics < 0 || sim.nnics > EFASIM_MAX_NICS) {
		fprintf(stderr, "efasim: EFASIM_NICS must be 0..%d\n", EFASIM_MAX_NICS);
		return;
	}
	/* Out-of-order placement of a multi-packet RDMA write is the default, as
	 * on the device: SRD gives no ordering (libfabric 2.6.0
	 * prov/efa/src/efa_prov_info.c: EFA_MSG_ORDER 0 for efa-direct;
	 * prov/efa/docs/efa_rdm_protocol_v4.md section 1.1 "the EFA device does
	 * not guarantee ordered delivery"). EFASIM_REORDER=0 turns it off; unset
	 * or empty is the default. */
	const char *ro = getenv("EFASIM_REORDER");
	sim.reorder = !(ro && *ro && atoi(ro) <= 0);
	/* EFASIM_HZ: the tick of the simulated kernel whose hw_stats cache serves
	 * the counter files (counters.c); 100 by default, the coarsest CONFIG_HZ */
	sim.hz = hw_hz_parse(getenv("EFASIM_HZ"));
	if (sim.hz < 0) {
		fprintf(stderr, "efasim: EFASIM_HZ must be 100, 250, 300, 1000 (a CONFIG_HZ) or 0 (no cache)\n");
		return;
	}
	/* EFASIM_MAX_CQE: a device whose max_cq_depth is smaller (the real value
	 * is not public; MAX_CQE is assumed) */
	sim.max_cqe = MAX_CQE;
	sim.cq_contig = !(getenv("EFASIM_CQ_CONTIG") && !strcmp(getenv("EFASIM_CQ_CONTIG"), "0"));
	/* 128-byte WQEs: the device reports inline_buf_size_ex 80 (rdma-core's
	 * EFA_IO_TX_DESC_INLINE_MAX_SIZE_128) and takes them on QPs created for
	 * more inline data or inline RDMA writes; EFASIM_WIDE_WQE=0: a device
	 * without them (inline_buf_size_ex = inline_buf_size) */
	sim.inline_ex = sim.prof->inline_size;
	if ((sim.caps & EFADV_DEVICE_ATTR_CAPS_RDMA_WRITE) &&
	    !(getenv("EFASIM_WIDE_WQE") && !strcmp(getenv("EFASIM_WIDE_WQE"), "0")))
		sim.inline_ex = WIDE_INLINE_MAX;
#ifdef EFASIM_REQ_ID_EX
	/* rdma-core >= 65 on a device with EFA_QUERY_DEVICE_CAPS_SQ_64_BIT_REQ_ID:
	 * every SRD QP's SQ (and the send CQEs) switch to 64-bit request ids
	 * (providers/efa/verbs.c efa_setup_qp: req_id_64_bit = EFA_DEV_CAP(...)) */
	sim.req_id_64 = !(getenv("EFASIM_REQ_ID_64") && !strcmp(getenv("EFASIM_REQ_ID_64"), "0"));
#else
	sim.req_id_64 = 0; /* rdma-core 64's headers: no efadv_wq_attr.caps to say so */
#endif
	if (getenv("EFASIM_MAX_CQE") && atoi(getenv("EFASIM_MAX_CQE")) > 0 &&
	    (uint32_t)atoi(getenv("EFASIM_MAX_CQE")) < MAX_CQE)
		sim.max_cqe = (uint32_t)atoi(getenv("EFASIM_MAX_CQE"));
	sim.hw_stale_ms = getenv("EFASIM_HW_STALE_MS") ? (unsigned)atoi(getenv("EFASIM_HW_STALE_MS")) : 0;
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
	sim.own_sysfs = !sysfs || !*sysfs || (owner && !strcmp(owner, sim.host)); /* efasim's tree: hw counters go there */

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
			robust_init(&e->hwmx);
			e->used = 1;
		}
		sim.devs[i].gdev = g;
	}
	apply_slow_knobs();
	pthread_mutex_unlock(&sim.reg->lock);
	/* RDMA into this process comes from its peers' process_vm_writev. */
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	sim.ok = 1;
	hw_counters_init();
}

int sim_init(void)
{
	pthread_once(&sim.once, sim_init_once);
	return sim.ok;
}

__attribute__((constructor)) static void efasim_ctor(void)
{
	/* SYSFS_PATH must be in place before the provider reads it. */
	sim_init();
}

