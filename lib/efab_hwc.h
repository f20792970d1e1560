/* NIC hardware counters (hwc.c): the port counters an RDMA driver exposes in
 * sysfs, $SYSFS_PATH/class/infiniband/<device>/ports/<port>/hw_counters/<name>
 * (SYSFS_PATH as rdma-core reads it; default /sys), read as snapshots,
 * subtracted into deltas, and the rule that names the path the payload took.
 *
 * Freshness: a read is not a device read. ib_core answers it from the values
 * cached at its last device query and queries again only once the cache has
 * expired (drivers/infiniband/core/sysfs.c, update_hw_stats: cached while
 * time_is_after_eq_jiffies(stats->timestamp + stats->lifespan)). lifespan is
 * kept in jiffies and the `lifespan` file shows it in ms (default 10): a
 * cached value can be served for lifespan + 1 jiffy after its query, 20 ms at
 * HZ=100 while the file says 10. The cache is per port and device-wide: any
 * process's read refreshes it. So a snapshot (efab_hwc_settle) waits
 * lifespan + the longest jiffy Linux has (10 ms: CONFIG_HZ >= 100) + 1 ms
 * before each read -- a read then comes from a query made after the wait
 * began -- and reads until two such reads agree: the values then include
 * everything that happened before the snapshot began. */
#ifndef EFAB_HWC_H
#define EFAB_HWC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The counters efabench records, with the EFA driver's names (amzn-drivers
 * and upstream drivers/infiniband/hw/efa/efa_verbs.c, EFA_DEFINE_STATS).
 * X(name) in column order. */
#define EFAB_HWC_LIST(X)                                                                     \
	X(tx_bytes) X(tx_pkts) X(rx_bytes) X(rx_pkts) X(send_bytes) X(send_wrs) X(recv_bytes)  \
	X(recv_wrs) X(rdma_write_bytes) X(rdma_write_wrs) X(rdma_write_recv_bytes)             \
	X(rdma_read_bytes) X(rdma_read_wrs) X(rdma_read_resp_bytes) X(rdma_write_wr_err)       \
	X(rdma_read_wr_err) X(rx_drops) X(retrans_bytes) X(retrans_pkts)                       \
	X(retrans_timeout_events) X(unresponsive_remote_events) X(impaired_remote_conn_events)

enum efab_hwc_id {
#define EFAB_HWC_ENUM(n) EFAB_HWC_##n,
	EFAB_HWC_LIST(EFAB_HWC_ENUM)
#undef EFAB_HWC_ENUM
	EFAB_HWC_N
};

extern const char *const efab_hwc_names[EFAB_HWC_N];

/* Counters that say something went wrong on the wire (efab_scan names a NIC
 * whose rose): drops, retransmissions, timeouts, errors, unresponsive or
 * impaired remotes. */
int efab_hwc_is_trouble(int id);

typedef struct efab_hwc {
	char dir[512];        /* .../hw_counters */
	char dev[64];         /* the RDMA device, e.g. rdmap0s31 */
	unsigned lifespan_ms; /* the kernel's cache lifetime (10 when the file is missing) */
	uint32_t present;     /* bit k: efab_hwc_names[k] exists in dir */
	int nfiles;           /* every counter file in dir, known or not */
} efab_hwc_t;

typedef struct efab_hwc_snap {
	uint64_t v[EFAB_HWC_N];
	uint32_t have; /* bit k: v[k] was read (or, in a delta, is valid) */
} efab_hwc_snap_t;

/* The counter directory of RDMA device dev: the first port (1..8) that has
 * hw_counters. EFAB_OK, or EFAB_SKIP when dev is unknown or has none. */
int efab_hwc_open(const char *dev, efab_hwc_t *h);

/* Every counter of h's directory (a snapshot of what is present). */
void efab_hwc_read(const efab_hwc_t *h, efab_hwc_snap_t *s);

/* The longest jiffy: 1000 / CONFIG_HZ ms, CONFIG_HZ one of 100, 250, 300, 1000.
 * Not read from the running kernel: it is not exported, and efasim's
 * simulated kernel has its own (EFASIM_HZ). */
#define EFAB_HWC_JIFFY_MAX_MS 10.0

/* The wait before each read of a snapshot: lifespan_ms + EFAB_HWC_JIFFY_MAX_MS
 * + 1 ms (the kernel serves a cache up to lifespan + 1 jiffy after its query;
 * 1 ms for the query itself and the clock's rounding), ms. */
double efab_hwc_wait_ms(const efab_hwc_t *h);

/* A snapshot that is not older than the moment the call began: (up to tries
 * times, at least 2) run wait(arg, ms) for efab_hwc_wait_ms and read, until
 * two reads agree. wait returns nonzero on a failure (passed back, *s unset).
 * *settled: 1 when two reads agreed, 0 when the counters were still moving at
 * the last try (other traffic on the NIC; *s is the last read). */
int efab_hwc_settle(const efab_hwc_t *h, int tries, int (*wait)(void *arg, double ms), void *arg,
		    efab_hwc_snap_t *s, int *settled);

/* d = b - a for every counter read in both; one that is missing from either
 * (unreadable: the driver stopped answering, the device went away) or went
 * backwards (a reset or a wrap) is left out of d->have and named in note. */
void efab_hwc_delta(const efab_hwc_snap_t *a, const efab_hwc_snap_t *b, efab_hwc_snap_t *d,
		    char *note, size_t len);

/* The path rule. Of the payload P (bytes of the timed phase), which
 * counter carried it, over every NIC: W = rdma_write_bytes, R =
 * rdma_read_bytes, S = send_bytes (sums, each NIC once). A category with
 * >= 0.9 P is the path: "device-write", "device-read", "emulated-send";
 * two or more such categories, or none but W + R + S >= 0.9 P: "mixed";
 * W + R + S < 0.9 P: "none" (the payload did not cross a NIC: the efa
 * fabric's shm between ranks of one host). "-" when no counter of the three
 * is valid or P is 0. *ratio: the path category's bytes / P (mixed, none:
 * (W + R + S) / P); 0 with "-". */
const char *efab_hwc_path(const efab_hwc_snap_t *total, double payload, double *ratio);

/* The names of every counter file in h's directory, space separated. */
void efab_hwc_list(const efab_hwc_t *h, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
