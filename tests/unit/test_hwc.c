/* NIC hardware counters (lib/hwc.c) on constructed sysfs trees: reading,
 * deltas, counters that stop or go backwards, the path rule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "efab.h"
#include "efab_hwc.h"

static char root[256];

static void put(const char *dev, const char *name, const char *text)
{
	char p[768];
	snprintf(p, sizeof(p), "%s/class/infiniband/%s/ports/1/hw_counters/%s", root, dev, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void putv(const char *dev, const char *name, unsigned long long v)
{
	char s[32];
	snprintf(s, sizeof(s), "%llu\n", v);
	put(dev, name, s);
}

static void make_dev(const char *dev)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/class/infiniband/%s/ports/1/hw_counters", root, dev);
	assert_int_equal(system(cmd), 0);
	for (int k = 0; k < EFAB_HWC_N; k++)
		putv(dev, efab_hwc_names[k], 1000);
	put(dev, "lifespan", "3\n");
	put(dev, "some_future_counter", "5\n");
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/efab-hwc-test.XXXXXX");
	assert_non_null(mkdtemp(root));
	setenv("SYSFS_PATH", root, 1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	return system(cmd);
}

static void test_open_and_read(void **state)
{
	(void)state;
	efab_hwc_t h;
	efab_hwc_snap_t s;
	make_dev("rdmap0s1");
	assert_int_equal(efab_hwc_open("rdmap0s1", &h), EFAB_OK);
	assert_int_equal(h.lifespan_ms, 3);
	assert_int_equal(h.nfiles, EFAB_HWC_N + 1); /* the unknown one too */
	assert_int_equal(h.present, (1u << EFAB_HWC_N) - 1);
	efab_hwc_read(&h, &s);
	assert_int_equal(s.have, (1u << EFAB_HWC_N) - 1);
	assert_int_equal(s.v[EFAB_HWC_rdma_write_bytes], 1000);
	char list[2048];
	efab_hwc_list(&h, list, sizeof(list));
	assert_non_null(strstr(list, "some_future_counter"));
	assert_non_null(strstr(list, "rdma_write_recv_bytes"));
	assert_null(strstr(list, "lifespan"));
	/* no such device, a device without counters, a bad name */
	assert_int_equal(efab_hwc_open("nodev", &h), EFAB_SKIP);
	assert_int_equal(efab_hwc_open("../x", &h), EFAB_SKIP);
	assert_int_equal(efab_hwc_open("", &h), EFAB_SKIP);
}

static void test_delta_stop_and_wrap(void **state)
{
	(void)state;
	efab_hwc_t h;
	efab_hwc_snap_t a, b, d;
	char note[80];
	make_dev("rdmap0s2");
	assert_int_equal(efab_hwc_open("rdmap0s2", &h), EFAB_OK);
	efab_hwc_read(&h, &a);
	putv("rdmap0s2", "rdma_write_bytes", 1000 + 4096);
	putv("rdmap0s2", "tx_bytes", 7);            /* went backwards: a reset or a wrap */
	put("rdmap0s2", "rx_bytes", "garbage\n");   /* stops answering sensibly */
	char p[768];
	snprintf(p, sizeof(p), "%s/class/infiniband/rdmap0s2/ports/1/hw_counters/send_bytes", root);
	assert_int_equal(unlink(p), 0);             /* gone mid-run */
	efab_hwc_read(&h, &b);
	efab_hwc_delta(&a, &b, &d, note, sizeof(note));
	assert_true(d.have & (1u << EFAB_HWC_rdma_write_bytes));
	assert_int_equal(d.v[EFAB_HWC_rdma_write_bytes], 4096);
	assert_int_equal(d.v[EFAB_HWC_rdma_read_bytes], 0);
	assert_true(d.have & (1u << EFAB_HWC_rdma_read_bytes)); /* 0 is a value, not absence */
	assert_false(d.have & (1u << EFAB_HWC_tx_bytes));       /* empty, never a wrong number */
	assert_false(d.have & (1u << EFAB_HWC_rx_bytes));
	assert_false(d.have & (1u << EFAB_HWC_send_bytes));
	assert_non_null(strstr(note, "tx_bytes went backwards"));
	/* only unreadable ones: the note says so */
	putv("rdmap0s2", "tx_bytes", 1000);
	efab_hwc_read(&h, &b);
	efab_hwc_delta(&a, &b, &d, note, sizeof(note));
	assert_true(d.have & (1u << EFAB_HWC_tx_bytes));
	assert_non_null(strstr(note, "unreadable"));
	/* nothing wrong: no note */
	efab_hwc_delta(&a, &a, &d, note, sizeof(note));
	assert_string_equal(note, "");
	assert_int_equal(d.have, a.have);
}

static int waits;
static int count_wait(void *arg, double ms)
{
	(void)arg;
	assert_true(ms >= 5.0); /* lifespan 3 + 2 */
	if (++waits == 1)        /* traffic still landing during the first wait */
		putv("rdmap0s3", "rx_bytes", 5000);
	return 0;
}

static void test_settle(void **state)
{
	(void)state;
	efab_hwc_t h;
	efab_hwc_snap_t s;
	int settled = 0;
	make_dev("rdmap0s3");
	assert_int_equal(efab_hwc_open("rdmap0s3", &h), EFAB_OK);
	waits = 0;
	assert_int_equal(efab_hwc_settle(&h, 5, count_wait, NULL, &s, &settled), 0);
	assert_int_equal(settled, 1);
	assert_int_equal(waits, 2); /* moved once, then agreed */
	assert_int_equal(s.v[EFAB_HWC_rx_bytes], 5000);
}

/* The kernel's hw_stats cache, exactly (drivers/infiniband/core/sysfs.c,
 * update_hw_stats; include/linux/jiffies.h): a read at time t refreshes the
 * cache when jiffies(t) > timestamp + lifespan (in jiffies), else answers the
 * cached values. The settle loop reads right after each wait returns, so the
 * wait callback advances a simulated clock and puts into the file what a
 * read at the new time gets. */
static struct kcache {
	const char *dev;
	unsigned hz;
	uint64_t life_j;   /* msecs_to_jiffies(10) */
	double t_ms;       /* simulated time */
	uint64_t ts_j;     /* stats->timestamp */
	uint64_t dev_v;    /* the device's rx_bytes */
	uint64_t cache_v;  /* what the cache holds */
} kc;

static uint64_t kc_jiffies(double ms)
{
	return (uint64_t)(ms * kc.hz / 1000.0 + 1e-9);
}

static void kc_read_at(double ms)
{
	kc.t_ms = ms;
	if (kc_jiffies(ms) > kc.ts_j + kc.life_j) { /* !time_is_after_eq_jiffies(ts + lifespan) */
		kc.cache_v = kc.dev_v;
		kc.ts_j = kc_jiffies(ms);
	}
	putv(kc.dev, "rx_bytes", kc.cache_v);
}

static int kc_wait(void *arg, double ms)
{
	(void)arg;
	kc_read_at(kc.t_ms + ms);
	return 0;
}

/* Every HZ Linux has, every phase length 0..30 ms and every position of the
 * before-snapshot's refresh within its jiffy: the settled snapshot holds the
 * device's value. Before the wait covered lifespan + 1 jiffy (lifespan + 2
 * ms, one read before the first wait) a phase shorter than ~8 ms at HZ=100
 * read the before-snapshot's cache twice: both agreed, delta 0. */
static void test_settle_kernel_cache(void **state)
{
	(void)state;
	static const unsigned hzs[] = {100, 250, 300, 1000};
	kc.dev = "rdmap0s4";
	make_dev(kc.dev);
	for (size_t z = 0; z < sizeof(hzs) / sizeof(hzs[0]); z++) {
		kc.hz = hzs[z];
		kc.life_j = (10 * kc.hz + 999) / 1000;           /* msecs_to_jiffies(10) */
		unsigned shown = (unsigned)(kc.life_j * 1000 / kc.hz); /* jiffies_to_msecs */
		char life[16];
		snprintf(life, sizeof(life), "%u\n", shown);
		put(kc.dev, "lifespan", life);
		efab_hwc_t h;
		assert_int_equal(efab_hwc_open(kc.dev, &h), EFAB_OK);
		assert_int_equal(h.lifespan_ms, shown);
		double jiffy = 1000.0 / kc.hz;
		for (double phase = 0; phase <= 30.0; phase += 0.5)
			for (double off = 0; off < jiffy; off += jiffy / 4) {
				/* the before-snapshot's last read refreshed the cache at
				 * off into jiffy 100; the phase's traffic then moved the
				 * device; the after-snapshot begins phase ms later */
				kc.ts_j = 100;
				kc.dev_v = kc.cache_v = 1000;
				kc_read_at(100 * jiffy + off);
				kc.dev_v = 1000 + 4096;
				kc_read_at(kc.t_ms + phase);
				efab_hwc_snap_t s;
				int settled = 0;
				assert_int_equal(efab_hwc_settle(&h, 5, kc_wait, NULL, &s, &settled), 0);
				if (s.v[EFAB_HWC_rx_bytes] != kc.dev_v || !settled)
					fail_msg("HZ=%u lifespan file %u ms, phase %.1f ms, refresh %.2f ms into its jiffy: "
						 "settled=%d rx_bytes %llu, the device has %llu",
						 kc.hz, shown, phase, off, settled,
						 (unsigned long long)s.v[EFAB_HWC_rx_bytes], (unsigned long long)kc.dev_v);
			}
	}
}

static void test_path_rule(void **state)
{
	(void)state;
	efab_hwc_snap_t t;
	double r;
	memset(&t, 0, sizeof(t));
	t.have = (1u << EFAB_HWC_N) - 1;
	assert_string_equal(efab_hwc_path(&t, 0, &r), "-");
	/* 4 MiB x 100 written by the device, plus an 8-byte end flag */
	t.v[EFAB_HWC_rdma_write_bytes] = 4194304ull * 100 + 8;
	t.v[EFAB_HWC_send_bytes] = 300;
	assert_string_equal(efab_hwc_path(&t, 4194304.0 * 100, &r), "device-write");
	assert_true(r > 1.0 && r < 1.0 + 1e-7);
	/* emulated: 8 B writes as sends with headers and receipts (ratio > 1) */
	memset(t.v, 0, sizeof(t.v));
	t.v[EFAB_HWC_send_bytes] = 64 * 1000;
	assert_string_equal(efab_hwc_path(&t, 8 * 1000, &r), "emulated-send");
	assert_true(r == 8.0);
	/* the target reads the payload (a long-read protocol) */
	memset(t.v, 0, sizeof(t.v));
	t.v[EFAB_HWC_rdma_read_bytes] = 1 << 22;
	t.v[EFAB_HWC_send_bytes] = 200;
	assert_string_equal(efab_hwc_path(&t, 1 << 22, &r), "device-read");
	/* half and half */
	memset(t.v, 0, sizeof(t.v));
	t.v[EFAB_HWC_rdma_write_bytes] = 500;
	t.v[EFAB_HWC_send_bytes] = 500;
	assert_string_equal(efab_hwc_path(&t, 1000, &r), "mixed");
	/* two categories each carry it all */
	t.v[EFAB_HWC_rdma_write_bytes] = 1000;
	t.v[EFAB_HWC_send_bytes] = 1000;
	assert_string_equal(efab_hwc_path(&t, 1000, &r), "mixed");
	/* the payload never crossed the NIC */
	memset(t.v, 0, sizeof(t.v));
	t.v[EFAB_HWC_send_bytes] = 40;
	assert_string_equal(efab_hwc_path(&t, 1000, &r), "none");
	assert_true(r == 0.04);
	/* none of the three counters valid */
	t.have = 1u << EFAB_HWC_tx_bytes;
	assert_string_equal(efab_hwc_path(&t, 1000, &r), "-");
	assert_true(efab_hwc_is_trouble(EFAB_HWC_retrans_pkts));
	assert_false(efab_hwc_is_trouble(EFAB_HWC_tx_bytes));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_and_read),
		cmocka_unit_test(test_delta_stop_and_wrap),
		cmocka_unit_test(test_settle),
		cmocka_unit_test(test_settle_kernel_cache),
		cmocka_unit_test(test_path_rule),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
