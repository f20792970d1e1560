/* efasim: Hardware counters, SIMULATED: the port counters the EFA kernel driver
 * exposes in sysfs (amzn-drivers / upstream drivers/infiniband/hw/efa/
 * efa_verbs.c, EFA_DEFINE_PORT_STATS; the names AWS documents for
 * /sys/class/infiniband/<dev>/ports/1/hw_counters), counted per simulated NIC
 * in the shared registry as the device moves bytes, and written into the
 * simulated sysfs tree (plain files, each replaced atomically). Freshness
 * follows the kernel's contract (drivers/infiniband/core/sysfs.c,
 * update_hw_stats): a read returns values no older than `lifespan` ms (10
 * here, as the kernel's default). Since a plain file cannot re-query on
 * read, a thread of the process that counts writes the changed counters
 * within EFASIM_HW_QUIET_MS (2) ms of their last change (while traffic goes
 * on, every EFASIM_HW_BUSY_MS, 100), and the process writes them at its
 * exit; a reader that waits longer than lifespan after the traffic (as
 * efabench does, lib/hwc.c, sleeping while it waits) sees all of it.
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

/* The flusher looks every EFASIM_HW_QUIET_MS: once the counters stopped
 * moving (traffic paused: what a reader who waits lifespan after its phase
 * wants to see) it writes what changed at once; while they keep moving it
 * writes at most every EFASIM_HW_BUSY_MS (a write of the files costs a few
 * hundred us of a core: every 5 ms doubled a direct-path ping-pong's p50 on
 * 2 cores). Nothing of it is on the data path. */
#define EFASIM_HW_QUIET_MS 2
#define EFASIM_HW_BUSY_MS 100

static pthread_once_t flusher_once = PTHREAD_ONCE_INIT;
static atomic_int flusher_stop;
static uint64_t written[EFASIM_MAX_DEVS][HW_N]; /* what this process last wrote */
/* NICs whose counters this process changed: the only ones it looks at and
 * writes (every process writing every NIC's files made a scan's 8 processes
 * share one lock over a hundred files) */
static volatile unsigned char touched[EFASIM_MAX_DEVS];

/* NIC d when this process writes its files: it changed its counters and
 * the NIC's sysfs tree is efasim's; NULL otherwise. */
static struct efasim_dev_ent *written_by_us(int d)
{
	struct efasim_dev_ent *e = &sim.reg->devs[d];
	return touched[d] && e->used && e->hwdir[0] ? e : NULL;
}

/* The registry's counters of every NIC with a tree of efasim's: changed from
 * seen (which takes them), and different from what this process wrote. */
static void scan_counters(uint64_t (*seen)[HW_N], int *moving, int *unwritten)
{
	*moving = *unwritten = 0;
	for (int d = 0; d < EFASIM_MAX_DEVS; d++) {
		struct efasim_dev_ent *e = written_by_us(d);
		if (!e)
			continue;
		for (int k = 0; k < HW_N; k++) {
			uint64_t v = __atomic_load_n(&e->hw[k], __ATOMIC_RELAXED);
			*moving |= v != seen[d][k];
			*unwritten |= v != written[d][k];
			seen[d][k] = v;
		}
	}
}

static void *flusher_main(void *arg)
{
	(void)arg;
	static uint64_t seen[EFASIM_MAX_DEVS][HW_N];
	struct timespec ts = {0, EFASIM_HW_QUIET_MS * 1000000L};
	uint64_t last = now_ns();
	while (!atomic_load(&flusher_stop)) {
		nanosleep(&ts, NULL);
		if (atomic_load(&flusher_stop) || !sim.ok)
			break;
		int moving, unwritten;
		scan_counters(seen, &moving, &unwritten);
		uint64_t t = now_ns();
		if (unwritten && (!moving || t - last >= EFASIM_HW_BUSY_MS * 1000000ull)) {
			hw_flush();
			last = t;
		}
	}
	return NULL;
}

static void flusher_start(void)
{
	sim_thread_start(flusher_main, "the hw_counters thread (counters are then written at exit only)");
}

void hw_add(int dev, int which, uint64_t n)
{
	if (dev < 0 || dev >= EFASIM_MAX_DEVS || !n)
		return;
	__atomic_fetch_add(&sim.reg->devs[dev].hw[which], n, __ATOMIC_RELAXED);
	if (!touched[dev])
		touched[dev] = 1;
	pthread_once(&flusher_once, flusher_start);
	/* an error completion follows: written before it is, since the
	 * application may end at once (MPI_Abort: no exit handler runs) */
	if (which == HW_UNRESPONSIVE_REMOTE_EVENTS || which == HW_RDMA_WRITE_WR_ERR ||
	    which == HW_RDMA_READ_WR_ERR || which == HW_IMPAIRED_REMOTE_CONN_EVENTS)
		hw_flush();
}

uint64_t hw_pkts(uint64_t bytes)
{
	uint64_t mtu = sim.prof->max_msg_sz;
	return bytes ? (bytes + mtu - 1) / mtu : 1;
}

static void write_counter(const char *dir, const char *name, uint64_t v)
{
	char p[PATH_MAX * 2], t[PATH_MAX * 2 + 32], s[32];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	snprintf(t, sizeof(t), "%s/.%s.%d", dir, name, (int)sim.pid);
	int fd = open(t, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return;
	int n = snprintf(s, sizeof(s), "%llu\n", (unsigned long long)v);
	if (write(fd, s, (size_t)n) != n) {
		close(fd);
		unlink(t);
		return;
	}
	close(fd);
	if (rename(t, p))
		unlink(t);
}

/* The counters of every NIC whose values this process has not written yet
 * (the responder's NIC is counted by the initiator's process, so it writes
 * both hosts' files), into the sysfs tree its host's process named
 * (hwdir: efasim's own trees only; a SYSFS_PATH set from outside is left alone). */
static pthread_mutex_t flush_lock = PTHREAD_MUTEX_INITIALIZER;

void hw_flush(void)
{
	if (!sim.ok)
		return;
	pthread_mutex_lock(&flush_lock);
	/* every process that counts writes the files of both ends' NICs: under
	 * one lock, each writer reads the (only growing) values after the last
	 * one wrote, so no file is ever replaced by an older value */
	robust_lock(&sim.reg->hw_lock);
	for (int d = 0; d < EFASIM_MAX_DEVS; d++) {
		struct efasim_dev_ent *e = written_by_us(d);
		if (!e)
			continue;
		for (int k = 0; k < HW_N; k++) {
			uint64_t v = __atomic_load_n(&e->hw[k], __ATOMIC_RELAXED);
			if (v != written[d][k]) {
				write_counter(e->hwdir, hw_names[k], v);
				written[d][k] = v;
			}
		}
	}
	pthread_mutex_unlock(&sim.reg->hw_lock);
	pthread_mutex_unlock(&flush_lock);
}

static void hw_flush_at_exit(void)
{
	atomic_store(&flusher_stop, 1);
	hw_flush(); /* writes only what changed */
}


/* At init, after the sysfs tree is built: the directories, "lifespan" (the
 * rdma core's update period, ms) and the current values. */
void hw_counters_init(void)
{
	if (sim.own_sysfs)
		for (int i = 0; i < sim.nnics; i++) {
			char dir[PATH_MAX * 2];
			struct efasim_dev_ent *e = &sim.reg->devs[sim.devs[i].gdev];
			snprintf(dir, sizeof(dir), "%s/class/infiniband/%s/ports/1/hw_counters", sim.sysfs,
				 sim.devs[i].ibdev.name);
			if (strlen(dir) >= sizeof(e->hwdir) || mkdir_p(dir))
				continue;
			write_counter(dir, "lifespan", 10);
			for (int k = 0; k < HW_N; k++)
				write_counter(dir, hw_names[k], __atomic_load_n(&e->hw[k], __ATOMIC_RELAXED));
			robust_lock(&sim.reg->lock);
			snprintf(e->hwdir, sizeof(e->hwdir), "%s", dir);
			pthread_mutex_unlock(&sim.reg->lock);
		}
	atexit(hw_flush_at_exit);
}
