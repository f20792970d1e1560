/* efasim: Hardware counters, SIMULATED: the port counters the EFA kernel driver
 * exposes in sysfs (amzn-drivers / upstream drivers/infiniband/hw/efa/
 * efa_verbs.c, EFA_DEFINE_PORT_STATS; the names AWS documents for
 * /sys/class/infiniband/<dev>/ports/1/hw_counters), counted per simulated NIC
 * in the shared registry as the device moves bytes, and kept in the
 * simulated sysfs tree's plain files ("%llu\n", as the kernel prints them).
 *
 * Freshness, as the kernel serves them (EFASIM_HZ, default 100). A read of
 * ports/N/hw_counters/<name> is not a device read: ib_core answers it from the
 * values cached at its last device query (drivers/infiniband/core/sysfs.c,
 * hw_stat_port_show -> update_hw_stats):
 *     if (time_is_after_eq_jiffies(stats->timestamp + stats->lifespan))
 *             return 0;               (the cached values)
 *     ret = dev->ops.get_hw_stats(...);  (efa_get_hw_stats: every counter)
 *     if (ret == stats->num_counters) stats->timestamp = jiffies;
 * lifespan is kept in jiffies: msecs_to_jiffies(10) at allocation
 * (rdma_alloc_hw_stats_struct, RDMA_HW_STATS_DEFAULT_LIFESPAN) and at a
 * write of the `lifespan` file (lifespan_store: 0..10000 ms), shown as
 * jiffies_to_msecs(lifespan) (lifespan_show). The cache is per port, shared
 * by every process (a device-wide view: another process's read refreshes
 * it, another process's traffic moves it). A cached value is served while
 * jiffies <= timestamp + lifespan: up to lifespan + 1 jiffies after the
 * query, that is 20 ms at HZ=100 while the file says 10, 16 ms at HZ=250
 * (file: 12), 11 ms at HZ=1000 (file: 10).
 * Model: the true counters live in the registry (e->hw, added to by whoever
 * counts, in any process); the files are the cache. A plain file cannot
 * re-query when it is read, so the cache is refreshed the way it is when
 * some reader reads at least once a jiffy (an exporter polling the
 * counters): at the first jiffy after each expiry, by a thread of every
 * process of the NIC's host (one refresh per expiry: e->hwjiffies under
 * e->hwmx). That is the kernel's worst case for every read: a value up to
 * lifespan + 1 jiffies old, whatever the reader does. The thread asks for
 * SCHED_FIFO (granted to root) so that a loaded machine does not make the
 * files later than the kernel's rule. Kinder than the kernel in one place:
 * a process's exit refreshes its host's files (a read after the run, with
 * no efasim process left to refresh, then sees what the kernel would show
 * lifespan + 1 jiffies later); after ranks that were killed, any efasim
 * process of the host (its thread's first pass, its exit) refreshes them. The `lifespan` file is the kernel's: written
 * at init as jiffies_to_msecs(msecs_to_jiffies(10)) of EFASIM_HZ, and a
 * value written into it (0..10000) is taken and shown rounded as the
 * kernel's lifespan_store/lifespan_show do. EFASIM_HZ=0: no cache, every
 * count shown in its file at once (the model before, kinder than any
 * kernel). EFASIM_HW_STALE_MS=N (a test fault, no kernel does this): the
 * cache is served N ms longer than the rule, so efabench's "stale" label
 * can be shown.
 * A file is refreshed in place (the page of a shared mapping: a few memory
 * stores, a file length that grows by a digit takes one ftruncate); a
 * reader that races a refresh can see a number mid-write (the kernel copies
 * from its cache); efabench reads between phases, not during a refresh of
 * its own traffic's values it waits for.
 * What each counts here:
 *   tx_bytes/tx_pkts, rx_bytes/rx_pkts  payload bytes leaving / entering the
 *       NIC (sends, RDMA write data at the initiator, RDMA read data at the
 *       responder), packets = MTU-sized pieces (at least 1); no headers
 *   send_bytes/send_wrs, recv_bytes/recv_wrs  two-sided messages (sender, receiver)
 *   rdma_write_wrs/bytes/wr_err, rdma_write_recv_bytes  initiator / responder
 *   rdma_read_wrs/bytes/wr_err, rdma_read_resp_bytes  initiator / responder
 *   rx_drops  UD datagrams the receiving NIC dropped (no receive, qkey, QP type)
 *   retrans_pkts/bytes  SRD sends retried after RNR, packets lost on an EFASIM_LOSS link,
 *       and a background rate (EFASIM_RETRANS, datapath.c count_background)
 *   unresponsive_remote_events  completions with "unresponsive remote"
 *   retrans_timeout_events, impaired_remote_conn_events  0: not modelled */
#include <sys/mman.h>

#include "sim.h"

static const char *const hw_names[HW_N] = {
	[HW_TX_BYTES] = "tx_bytes", [HW_TX_PKTS] = "tx_pkts", [HW_RX_BYTES] = "rx_bytes", [HW_RX_PKTS] = "rx_pkts",
	[HW_RX_DROPS] = "rx_drops", [HW_SEND_BYTES] = "send_bytes", [HW_SEND_WRS] = "send_wrs",
	[HW_RECV_BYTES] = "recv_bytes", [HW_RECV_WRS] = "recv_wrs", [HW_RDMA_READ_WRS] = "rdma_read_wrs",
	[HW_RDMA_READ_BYTES] = "rdma_read_bytes", [HW_RDMA_READ_WR_ERR] = "rdma_read_wr_err",
	[HW_RDMA_READ_RESP_BYTES] = "rdma_read_resp_bytes", [HW_RDMA_WRITE_WRS] = "rdma_write_wrs",
	[HW_RDMA_WRITE_BYTES] = "rdma_write_bytes", [HW_RDMA_WRITE_WR_ERR] = "rdma_write_wr_err",
	[HW_RDMA_WRITE_RECV_BYTES] = "rdma_write_recv_bytes", [HW_RETRANS_BYTES] = "retrans_bytes",
	[HW_RETRANS_PKTS] = "retrans_pkts", [HW_RETRANS_TIMEOUT_EVENTS] = "retrans_timeout_events",
	[HW_UNRESPONSIVE_REMOTE_EVENTS] = "unresponsive_remote_events",
	[HW_IMPAIRED_REMOTE_CONN_EVENTS] = "impaired_remote_conn_events",
};

/* This process's mappings of the counter files: one page each, MAP_SHARED,
 * made at the NIC's first count (or at init for its own host's NICs). */
struct hw_file {
	char *page;
	int fd;
};
static struct hw_file files[EFASIM_MAX_DEVS][HW_N];
static signed char mapped[EFASIM_MAX_DEVS]; /* 0 not tried, 1 mapped, -1 not efasim's tree / failed */
static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER;

/* "%llu\n" of v into b (at least 24 bytes); its length. */
static int fmt_u64(char *b, uint64_t v)
{
	char t[24];
	int n = 0;
	do {
		t[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (int i = 0; i < n; i++)
		b[i] = t[n - 1 - i];
	b[n] = '\n';
	return n + 1;
}

/* Counter k of NIC e shows its current value; under e->hwmx. A longer file
 * is extended first, then the new digits go into the page (extending a file
 * zeroes what lies past its old end, also bytes already stored there through
 * a mapping: digits stored first were lost, "5128\n" over "0\n" read "51");
 * a shorter one gets its digits, then is cut. A read in between sees the old
 * number with zeros after it, or a number mid-write (efabench's settle reads
 * until two reads agree). */
static void show_locked(struct efasim_dev_ent *e, struct hw_file *f, int k)
{
	uint64_t v = __atomic_load_n(&e->hw[k], __ATOMIC_RELAXED);
	if (v == e->hwshown[k] && e->hwlen[k])
		return;
	char b[32];
	int n = fmt_u64(b, v);
	if (n > e->hwlen[k] && ftruncate(f->fd, n))
		return;
	memcpy(f->page, b, (size_t)n);
	if (n < e->hwlen[k] && ftruncate(f->fd, n))
		return;
	e->hwshown[k] = v;
	e->hwlen[k] = (uint8_t)n;
}

/* Open and map NIC d's counter files (its hwdir, set once its host's process
 * has created them); 0 when they are mapped. */
static int map_dev(int d)
{
	if (mapped[d])
		return mapped[d] > 0 ? 0 : -1;
	/* no tree yet (its host's process has not built it) or none at all (a
	 * SYSFS_PATH from outside): a look without the lock, every count */
	if (!__atomic_load_n(&sim.reg->devs[d].hwdir[0], __ATOMIC_ACQUIRE))
		return -1;
	pthread_mutex_lock(&map_lock);
	struct efasim_dev_ent *e = &sim.reg->devs[d];
	char dir[sizeof(e->hwdir)];
	robust_lock(&sim.reg->lock);
	snprintf(dir, sizeof(dir), "%s", e->used ? e->hwdir : "");
	pthread_mutex_unlock(&sim.reg->lock);
	int ok = !mapped[d] && dir[0];
	for (int k = 0; ok && k < HW_N; k++) {
		char p[PATH_MAX * 2];
		snprintf(p, sizeof(p), "%s/%s", dir, hw_names[k]);
		int fd = open(p, O_RDWR | O_CLOEXEC);
		void *m = fd < 0 ? MAP_FAILED : mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED) {
			if (fd >= 0)
				close(fd);
			slog("hw_counters: cannot map %s: %s (its counter is not written)", p, strerror(errno));
			ok = 0;
			break;
		}
		files[d][k].fd = fd;
		files[d][k].page = m;
	}
	if (!mapped[d] && dir[0])
		mapped[d] = ok ? 1 : -1;
	pthread_mutex_unlock(&map_lock);
	/* not mapped yet because the NIC's host has not built its tree: try again later */
	return mapped[d] > 0 ? 0 : -1;
}

void hw_add(int dev, int which, uint64_t n)
{
	if (dev < 0 || dev >= EFASIM_MAX_DEVS || !n)
		return;
	struct efasim_dev_ent *e = &sim.reg->devs[dev];
	__atomic_fetch_add(&e->hw[which], n, __ATOMIC_RELAXED);
	if (sim.hz) /* the kernel's cache: the files change at a refresh only */
		return;
	if (map_dev(dev))
		return;
	robust_lock(&e->hwmx);
	show_locked(e, &files[dev][which], which);
	pthread_mutex_unlock(&e->hwmx);
}

uint64_t hw_pkts(uint64_t bytes)
{
	uint64_t mtu = sim.prof->max_msg_sz;
	return bytes ? (bytes + mtu - 1) / mtu : 1;
}


/* ---- the kernel's hw_stats cache (EFASIM_HZ) ---- */

int hw_hz_parse(const char *v)
{
	if (!v || !*v)
		return 100;
	char *end;
	long hz = strtol(v, &end, 10);
	if (*end || !(hz == 0 || hz == 100 || hz == 250 || hz == 300 || hz == 1000))
		return -1;
	return (int)hz;
}

static uint64_t mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* jiffies of the simulated kernel: ticks of CLOCK_MONOTONIC at EFASIM_HZ */
static uint64_t jiffies_at(uint64_t ns)
{
	return (uint64_t)((unsigned __int128)ns * (unsigned)sim.hz / 1000000000u);
}

/* when jiffy j begins, ns */
static uint64_t jiffy_start(uint64_t j)
{
	return (uint64_t)(((unsigned __int128)j * 1000000000u + (unsigned)sim.hz - 1) / (unsigned)sim.hz);
}

/* include/linux/jiffies.h: msecs_to_jiffies rounds up, jiffies_to_msecs down
 * (exact for the HZ that divide 1000; HZ=300's HZ_TO_MSEC_NUM/DEN is 10/3) */
static uint32_t msecs_to_jiffies(uint32_t ms)
{
	return (uint32_t)(((uint64_t)ms * (unsigned)sim.hz + 999) / 1000);
}

static uint32_t jiffies_to_msecs(uint32_t j)
{
	return (uint32_t)((uint64_t)j * 1000 / (unsigned)sim.hz);
}

/* what the `lifespan` file says at allocation: RDMA_HW_STATS_DEFAULT_LIFESPAN
 * (10 ms) rounded to jiffies and back */
static uint32_t life_shown_ms(void)
{
	return sim.hz ? jiffies_to_msecs(msecs_to_jiffies(10)) : 10;
}

static int write_lifespan(const char *dir, uint32_t ms)
{
	char p[PATH_MAX * 2], b[32];
	snprintf(p, sizeof(p), "%s/lifespan", dir);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	int n = snprintf(b, sizeof(b), "%u\n", ms);
	int rc = write(fd, b, (size_t)n) == n ? 0 : -1;
	close(fd);
	return rc;
}

/* The lifespan of NIC e in jiffies, from its `lifespan` file as the kernel's
 * lifespan_store takes a write (0..10000 ms, else the old value stays) and
 * shows it again (jiffies_to_msecs: a written 11 reads back 20 at HZ=100).
 * Under e->hwmx. */
static uint32_t lifespan_j(struct efasim_dev_ent *e)
{
	char p[PATH_MAX * 2], b[32], *end;
	snprintf(p, sizeof(p), "%s/lifespan", e->hwdir);
	uint32_t old = e->hwlife_j ? e->hwlife_j : msecs_to_jiffies(10);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return old;
	ssize_t n = read(fd, b, sizeof(b) - 1);
	close(fd);
	if (n <= 0)
		return old;
	b[n] = 0;
	long ms = strtol(b, &end, 10);
	if (end == b || (*end && *end != '\n') || ms < 0 || ms > 10000)
		return old;
	uint32_t j = msecs_to_jiffies((uint32_t)ms);
	if (jiffies_to_msecs(j) != (uint32_t)ms)
		write_lifespan(e->hwdir, jiffies_to_msecs(j));
	return j;
}

/* update_hw_stats for NIC g at time now: the files take the device's values
 * when the cache has expired (or force: a process's exit). The time at which
 * the next refresh is due, ns. */
static uint64_t refresh(int g, uint64_t now, int force)
{
	struct efasim_dev_ent *e = &sim.reg->devs[g];
	if (map_dev(g))
		return now + 1000000000ull / (unsigned)sim.hz; /* its tree is not there yet */
	uint64_t stale = (uint64_t)sim.hw_stale_ms * 1000000ull;
	robust_lock(&e->hwmx);
	uint32_t L = lifespan_j(e);
	e->hwlife_j = L;
	uint64_t due = e->hwfresh ? jiffy_start(e->hwjiffies + L + 1) + stale : 0;
	if (force || now >= due) {
		for (int k = 0; k < HW_N; k++)
			show_locked(e, &files[g][k], k);
		e->hwjiffies = jiffies_at(now);
		e->hwfresh = 1;
		due = jiffy_start(e->hwjiffies + L + 1) + stale;
	}
	pthread_mutex_unlock(&e->hwmx);
	return due;
}

/* The reader that polls every jiffy: each of this host's NICs refreshed at
 * the first jiffy after its cache expired. */
static void *hw_kernel_thread(void *arg)
{
	(void)arg;
	struct sched_param sp = {.sched_priority = 1};
	pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp); /* root only; else as it is */
	while (!sim_stopping()) {
		uint64_t now = mono_ns(), next = UINT64_MAX;
		for (int i = 0; i < sim.nnics; i++) {
			uint64_t due = refresh(sim.devs[i].gdev, now, 0);
			if (due < next)
				next = due;
		}
		if (next > now + 20000000ull)
			next = now + 20000000ull; /* at least every 20 ms: sim_stopping */
		struct timespec ts = {(time_t)(next / 1000000000ull), (long)(next % 1000000000ull)};
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
	}
	return NULL;
}

static pid_t hw_owner; /* the process that started the thread */

static void hw_exit_refresh(void)
{
	if (getpid() != hw_owner) /* a forked child: its parent's thread refreshes */
		return;
	uint64_t now = mono_ns();
	for (int i = 0; i < sim.nnics; i++)
		refresh(sim.devs[i].gdev, now, 1);
}

/* A counter file that does not exist yet gets its first value with write(2)
 * (a mapping of an empty file has no page to store into). */
static int create_counter(const char *dir, const char *name, uint64_t v)
{
	char p[PATH_MAX * 2], b[32];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return errno == EEXIST ? 0 : -1;
	int n = fmt_u64(b, v);
	int rc = write(fd, b, (size_t)n) == n ? 0 : -1;
	close(fd);
	return rc;
}

/* At init, after the sysfs tree is built: for each NIC of this host, the
 * directory, "lifespan" (the kernel's default at EFASIM_HZ) and every
 * counter's file, then its current value shown (a tree
 * kept from an earlier run is rewritten in place: a process of another host
 * may have mapped its files already). */
void hw_counters_init(void)
{
	int started = 0;
	if (!sim.own_sysfs)
		return;
	for (int i = 0; i < sim.nnics; i++) {
		char dir[PATH_MAX * 2];
		int g = sim.devs[i].gdev;
		struct efasim_dev_ent *e = &sim.reg->devs[g];
		snprintf(dir, sizeof(dir), "%s/class/infiniband/%s/ports/1/hw_counters", sim.sysfs,
			 sim.devs[i].ibdev.name);
		if (strlen(dir) >= sizeof(e->hwdir) || mkdir_p(dir) || write_lifespan(dir, life_shown_ms()))
			continue;
		int ok = 1;
		robust_lock(&e->hwmx);
		for (int k = 0; ok && k < HW_N; k++)
			ok = !create_counter(dir, hw_names[k], __atomic_load_n(&e->hw[k], __ATOMIC_RELAXED));
		pthread_mutex_unlock(&e->hwmx);
		if (!ok)
			continue;
		robust_lock(&sim.reg->lock);
		if (!e->hwdir[0]) /* the first process of this host: the lengths are its files' */
			memset(e->hwlen, 0, sizeof(e->hwlen));
		snprintf(e->hwdir, sizeof(e->hwdir), "%s", dir);
		pthread_mutex_unlock(&sim.reg->lock);
		if (map_dev(g))
			continue;
		robust_lock(&e->hwmx);
		for (int k = 0; k < HW_N; k++) {
			if (!e->hwlen[k]) { /* its length as the file has it */
				struct stat st;
				e->hwlen[k] = fstat(files[g][k].fd, &st) || st.st_size > 24 ? 0 : (uint8_t)st.st_size;
				e->hwshown[k] = UINT64_MAX;
			}
			/* with the cache, a NIC another process of this host refreshes
			 * already keeps its files until the next expiry */
			if (!sim.hz || !e->hwfresh || e->hwshown[k] == UINT64_MAX)
				show_locked(e, &files[g][k], k);
		}
		pthread_mutex_unlock(&e->hwmx);
		started++;
	}
	if (sim.hz && started) {
		hw_owner = getpid();
		atexit(hw_exit_refresh);
		sim_thread_start(hw_kernel_thread, "the hw_counters cache (EFASIM_HZ)");
	}
}
