/* efasim: Hardware counters, SIMULATED: the port counters the EFA kernel driver
 * exposes in sysfs (amzn-drivers / upstream drivers/infiniband/hw/efa/
 * efa_verbs.c, EFA_DEFINE_PORT_STATS; the names AWS documents for
 * /sys/class/infiniband/<dev>/ports/1/hw_counters), counted per simulated NIC
 * in the shared registry as the device moves bytes, and kept in the
 * simulated sysfs tree's plain files ("%llu\n", as the kernel prints them).
 *
 * Freshness. The kernel answers a read from values cached at its last
 * device query and re-queries when they are older than `lifespan` ms
 * (drivers/infiniband/core/sysfs.c, update_hw_stats), so every read taken
 * lifespan after the traffic is exact. A plain file cannot re-query on read,
 * so the file is never behind: whoever counts (the engine thread, the thread
 * posting on the verbs path, in the initiator's or the responder's process)
 * stores the counter's new value into the file's page through a shared
 * mapping, under the NIC's lock in the registry -- a few memory stores, no
 * system call on the data path (a file length that grows by a digit takes
 * one ftruncate: about 20 times in a counter's life). A reader's read(2)
 * copies from that same page, so any read after the traffic is exact however
 * loaded the machine is. (The counters were written by a flusher thread
 * before, a few ms after they stopped moving: on a loaded machine it fell
 * behind readers, and two stale reads agreed; writing the files with
 * write(2)+rename(2) per change had doubled a direct-path ping-pong's p50.)
 * What differs from the kernel: a read *during* traffic sees the current
 * value (the kernel's may be up to lifespan old), and one that races a store
 * can see a number mid-write (the kernel copies from its cache); efabench
 * reads before and after a phase, never during one.
 * What each counts here:
 *   tx_bytes/tx_pkts, rx_bytes/rx_pkts  payload bytes leaving / entering the
 *       NIC (sends, RDMA write data at the initiator, RDMA read data at the
 *       responder), packets = MTU-sized pieces (at least 1); no headers
 *   send_bytes/send_wrs, recv_bytes/recv_wrs  two-sided messages (sender, receiver)
 *   rdma_write_wrs/bytes/wr_err, rdma_write_recv_bytes  initiator / responder
 *   rdma_read_wrs/bytes/wr_err, rdma_read_resp_bytes  initiator / responder
 *   rx_drops  UD datagrams the receiving NIC dropped (no receive, qkey, QP type)
 *   retrans_pkts/bytes  SRD sends retried after RNR, and packets lost on an EFASIM_LOSS link
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

/* Counter k of NIC e shows its current value; under e->hwmx. The new digits
 * go into the page first, then a longer file is extended to them (a read in
 * between sees the new number without its newline, which parses the same);
 * a shorter one (a tree left by an earlier registry, at init only) is cut
 * first. */
static void show_locked(struct efasim_dev_ent *e, struct hw_file *f, int k)
{
	uint64_t v = __atomic_load_n(&e->hw[k], __ATOMIC_RELAXED);
	if (v == e->hwshown[k] && e->hwlen[k])
		return;
	char b[32];
	int n = fmt_u64(b, v);
	if (n < e->hwlen[k] && ftruncate(f->fd, n))
		return;
	memcpy(f->page, b, (size_t)n);
	if (n > e->hwlen[k] && ftruncate(f->fd, n))
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
 * directory, "lifespan" (the rdma core's update period, ms, as the kernel's
 * default) and every counter's file, then its current value shown (a tree
 * kept from an earlier run is rewritten in place: a process of another host
 * may have mapped its files already). */
void hw_counters_init(void)
{
	if (!sim.own_sysfs)
		return;
	for (int i = 0; i < sim.nnics; i++) {
		char dir[PATH_MAX * 2];
		int g = sim.devs[i].gdev;
		struct efasim_dev_ent *e = &sim.reg->devs[g];
		snprintf(dir, sizeof(dir), "%s/class/infiniband/%s/ports/1/hw_counters", sim.sysfs,
			 sim.devs[i].ibdev.name);
		if (strlen(dir) >= sizeof(e->hwdir) || mkdir_p(dir) || create_counter(dir, "lifespan", 10))
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
			show_locked(e, &files[g][k], k);
		}
		pthread_mutex_unlock(&e->hwmx);
	}
}
