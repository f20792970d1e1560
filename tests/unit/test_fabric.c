/* Real libfabric, one process: bring up shm and tcp (loopback) endpoints with
 * the single-rank runtime, register memory, write and read to ourselves, and
 * check the payload and the selection errors. */
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
#include "efab_abi.h"
#include "efab_clock.h"
#include "efab_endpoint.h"
#include "efab_mem.h"
#include "efab_ops.h"
#include "efab_opts.h"
#include "efab_registration.h"
#include "efab_result.h"
#include "efab_rt.h"
#include "efab_select.h"

#define RMA_CAPS (FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)

/* One rank's loopback: a fabric on prov, len bytes of host memory
 * registered for RMA and keyed for ourselves. */
typedef struct loopback {
	efab_fabric_t fab;
	efab_mem_t mem;
	efab_mr_t mr;
	efab_rkey_t rk;
} loopback_t;

static void loopback_open(loopback_t *l, const char *prov, size_t len)
{
	efab_fabric_req_t req = {.provider = prov, .caps = RMA_CAPS};
	struct fi_info *info = NULL;
	assert_int_equal(efab_fabric_select(&req, &info), EFAB_OK);
	assert_true(efab_prov_matches(prov, info->fabric_attr->prov_name));
	assert_int_equal(efab_fabric_open(info, efab_rt_single(), 5.0, &l->fab), EFAB_OK);
	assert_int_equal(efab_mem_alloc(EFAB_MEM_HOST, 0, len, &l->mem), EFAB_OK);
	assert_int_equal(efab_mr_register(&l->fab, l->mem.ptr, len, FI_HMEM_SYSTEM, 0,
					  FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE, &l->mr),
			 EFAB_OK);
	assert_int_equal(efab_mr_exchange(&l->fab, &l->mr, &l->rk), EFAB_OK);
}

static void loopback_close(loopback_t *l)
{
	efab_rkeys_release(&l->fab, &l->rk, 1);
	efab_mr_dereg(&l->mr);
	efab_mem_free(&l->mem);
	efab_fabric_close(&l->fab);
}

static void loop_rma(const char *prov)
{
	loopback_t l;
	efab_waitfor_t w = {"completion", "write", 4096, 0, 0};
	loopback_open(&l, prov, 8192);
	uint8_t *b = l.mem.ptr;
	for (int i = 0; i < 4096; i++)
		b[i] = (uint8_t)(i * 7 + 1);
	/* write [0,4096) onto [4096,8192) of the same buffer, then read it back to [0,4096) */
	assert_int_equal(efab_post_write(&l.fab, 0, b, 4096, l.mr.desc, l.rk.base + 4096, l.rk.key, 0, 0, &w),
			 EFAB_OK);
	assert_int_equal(efab_wait_tx(&l.fab, 1, &w), EFAB_OK);
	assert_memory_equal(b, b + 4096, 4096);
	memset(b, 0, 4096);
	assert_int_equal(efab_post_read(&l.fab, 0, b, 4096, l.mr.desc, l.rk.base + 4096, l.rk.key, &w),
			 EFAB_OK);
	assert_int_equal(efab_wait_tx(&l.fab, 2, &w), EFAB_OK);
	assert_memory_equal(b, b + 4096, 4096);
	assert_int_equal(b[4095], (uint8_t)(4095 * 7 + 1));
	loopback_close(&l);
}

/* The endpoint's RMA limits: an FI_OPT answer within the attribute wins (as
 * efa-direct's inject 0 under inject_size 32), anything else falls back. */
static void test_limit_pick(void **state)
{
	(void)state;
	efab_limit_t l = efab_limit_pick(0, 0, "FI_OPT_INJECT_RMA_SIZE", 32, "tx_attr->inject_size");
	assert_int_equal(l.value, 0);
	assert_string_equal(l.source, "FI_OPT_INJECT_RMA_SIZE");
	assert_true(l.from_ep);
	l = efab_limit_pick(-FI_ENOPROTOOPT, 0, "FI_OPT_INJECT_RMA_SIZE", 32, "tx_attr->inject_size");
	assert_int_equal(l.value, 32);
	assert_string_equal(l.source, "tx_attr->inject_size");
	assert_false(l.from_ep);
	l = efab_limit_pick(0, 1UL << 30, "FI_OPT_MAX_RMA_SIZE", 1UL << 31, "ep_attr->max_msg_size");
	assert_int_equal(l.value, 1UL << 30);
	/* an answer above the attribute breaks the contract: keep the attribute */
	l = efab_limit_pick(0, 64, "FI_OPT_INJECT_RMA_SIZE", 32, "tx_attr->inject_size");
	assert_int_equal(l.value, 32);
	assert_string_equal(l.source, "tx_attr->inject_size");
}

/* On a real endpoint the limits are never above the fi_info attributes, and
 * the bring-up records the same as the standalone query. */
static void rma_limits(const char *prov)
{
	efab_fabric_req_t req = {.provider = prov, .caps = RMA_CAPS};
	struct fi_info *info = NULL;
	efab_fabric_t fab;
	efab_limit_t inj, mx;
	assert_int_equal(efab_fabric_select(&req, &info), EFAB_OK);
	efab_info_rma_limits(info, &inj, &mx);
	assert_true(inj.value <= info->tx_attr->inject_size);
	assert_true(mx.value <= info->ep_attr->max_msg_size && mx.value > 0);
	assert_int_equal(efab_fabric_open(info, efab_rt_single(), 5.0, &fab), EFAB_OK);
	assert_int_equal(fab.inject_rma.value, inj.value);
	assert_string_equal(fab.inject_rma.source, inj.source);
	assert_int_equal(fab.max_rma.value, mx.value);
	efab_fabric_close(&fab);
}

static void test_rma_limits(void **state)
{
	(void)state;
	rma_limits("shm");
	rma_limits("tcp");
}

static void test_shm(void **state)
{
	(void)state;
	loop_rma("shm");
}

static void test_tcp(void **state)
{
	(void)state;
	loop_rma("tcp");
}

/* A stream's window ends with efab_drive_wait_tx: one progress call even
 * when nothing is outstanding (an injected window), so a rank applies its
 * peer's traffic every window (shm applies an injected write when the
 * target drives progress). Counted at the CQ: the endpoint's CQ read entry
 * is wrapped. efab_wait_tx with nothing to wait for makes no call. */
static struct fi_ops_cq counting_ops;
static ssize_t (*real_cq_read)(struct fid_cq *, void *, size_t);
static int cq_reads;
static ssize_t counting_cq_read(struct fid_cq *cq, void *buf, size_t count)
{
	cq_reads++;
	return real_cq_read(cq, buf, count);
}

static void test_drive_wait_tx(void **state)
{
	(void)state;
	loopback_t l;
	efab_waitfor_t w = {"completion", "write", 8, 0, 0};
	loopback_open(&l, "shm", 4096);
	efab_fabric_t *fab = &l.fab;
	struct fi_ops_cq *saved = fab->cq->ops;
	counting_ops = *saved;
	real_cq_read = saved->read;
	counting_ops.read = counting_cq_read;
	fab->cq->ops = &counting_ops;
	volatile uint8_t *b = l.mem.ptr;
	uint64_t flags = fab->inject_rma.value >= 8 ? FI_INJECT : 0;
	for (int round = 1; round <= 3; round++) {
		memset(l.mem.ptr, 0, 4096);
		b[0] = (uint8_t)(0x40 + round);
		assert_int_equal(efab_post_write(fab, 0, l.mem.ptr, 8, l.mr.desc, l.rk.base + 1024,
						 l.rk.key, 0, flags, &w),
				 EFAB_OK);
		if (!flags) /* no inject here: the write's completion first */
			assert_int_equal(efab_wait_tx(fab, fab->tx_posted, &w), EFAB_OK);
		assert_int_equal(fab->tx_posted, fab->tx_done); /* nothing outstanding */
		cq_reads = 0;
		assert_int_equal(efab_wait_tx(fab, fab->tx_posted, &w), EFAB_OK);
		assert_int_equal(cq_reads, 0);
		assert_int_equal(efab_drive_wait_tx(fab, fab->tx_posted, &w), EFAB_OK);
		assert_int_equal(cq_reads, 1);
		assert_int_equal(b[1024], 0x40 + round); /* applied, by this call at the latest */
	}
	fab->cq->ops = saved;
	loopback_close(&l);
}

static void test_wait_timeout(void **state)
{
	(void)state;
	efab_fabric_req_t req = {.provider = "shm", .caps = RMA_CAPS};
	struct fi_info *info = NULL;
	efab_fabric_t fab;
	efab_waitfor_t w = {"a completion that never comes", "write", 8, 0, 0};
	assert_int_equal(efab_fabric_select(&req, &info), EFAB_OK);
	assert_int_equal(efab_fabric_open(info, efab_rt_single(), 0.2, &fab), EFAB_OK);
	efab_stopwatch_t sw = efab_stopwatch_start();
	assert_int_equal(efab_wait_tx(&fab, 1, &w), EFAB_ERR);
	double s = efab_stopwatch_elapsed_s(sw);
	assert_true(s >= 0.2 && s < 2.0);
	volatile uint8_t never = 0;
	assert_int_equal(efab_wait_byte(&fab, &never, 1, &w), EFAB_ERR);
	efab_fabric_close(&fab);
}

static void test_select_errors(void **state)
{
	(void)state;
	struct fi_info *info = NULL;
	efab_fabric_req_t nope = {.provider = "no-such-provider", .caps = RMA_CAPS};
	assert_int_equal(efab_fabric_select(&nope, &info), EFAB_EUSAGE);
	efab_fabric_req_t nofab = {.provider = "shm", .fabric = "efa-direct", .caps = RMA_CAPS};
	assert_int_equal(efab_fabric_select(&nofab, &info), EFAB_EUSAGE);
	efab_fabric_req_t nodom = {.provider = "shm", .domain = "rdmap0s0-rdm", .caps = RMA_CAPS};
	assert_int_equal(efab_fabric_select(&nodom, &info), EFAB_EUSAGE);
	assert_null(info);
	char list[4096];
	efab_fabric_list(list, sizeof(list));
	assert_non_null(strstr(list, "shm/shm/shm"));
}

static void test_mem_kinds(void **state)
{
	(void)state;
	efab_mem_t m;
	assert_int_equal(efab_mem_alloc(EFAB_MEM_HOST, 0, 100, &m), EFAB_OK);
	assert_true(((uintptr_t)m.ptr & 4095) == 0);
	uint8_t x[4] = {1, 2, 3, 4}, y[4];
	assert_int_equal(efab_mem_write(&m, 10, x, 4), EFAB_OK);
	assert_int_equal(efab_mem_read(&m, 10, y, 4), EFAB_OK);
	assert_memory_equal(x, y, 4);
	efab_mem_free(&m);
	/* no GPU on a CI machine: a clean SKIP, never a crash */
	if (getenv("EFAB_TEST_HAVE_GPU") == NULL)
		assert_int_equal(efab_mem_alloc(EFAB_MEM_CUDA, 0, 100, &m), EFAB_SKIP);
}

/* One binary for every version: the API asked for follows the running
 * library up to the newest mirrored layout; the run info names the library
 * loaded and the EFA installer it came with. */
static void test_runtime_version(void **state)
{
	(void)state;
	uint32_t v = fi_version(), a = efab_fi_api_version();
	assert_true(a <= v && a <= EFAB_FI_ABI_MAX);
	assert_true(a == v || a == EFAB_FI_ABI_MAX);
	assert_int_equal(efab_fi_has_dmabuf(), a >= FI_VERSION(1, 20));
	assert_int_equal(efab_fi_has_rma_size_opts(), a >= FI_VERSION(2, 0));
	efab_run_info_t ri;
	memset(&ri, 0, sizeof(ri));
	efab_run_info_libfabric(&ri);
	char want[32];
	snprintf(want, sizeof(want), "%u.%u", FI_MAJOR(v), FI_MINOR(v));
	assert_string_equal(ri.libfabric_version, want);
	snprintf(want, sizeof(want), "%d.%d", FI_MAJOR_VERSION, FI_MINOR_VERSION);
	assert_string_equal(ri.libfabric_built, want);
	assert_non_null(strstr(ri.libfabric_path, "libfabric.so"));
	assert_int_equal(access(ri.libfabric_path, R_OK), 0);
}

static void test_efa_installer(void **state)
{
	(void)state;
	char buf[32];
	efab_efa_installer_parse("# EFA installer version: 1.38.0\n# Debug packages installed: no\n", buf,
				 sizeof(buf));
	assert_string_equal(buf, "1.38.0");
	efab_efa_installer_parse("# Packages installed:\nlibfabric-aws 2.1.0\n", buf, sizeof(buf));
	assert_string_equal(buf, "");
	/* <root>/efa/lib64/libfabric.so.1 -> <root>/efa_installed_packages */
	char root[] = "/tmp/efab_inst_XXXXXX", p[256];
	assert_non_null(mkdtemp(root));
	snprintf(p, sizeof(p), "%s/efa", root);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/efa/lib64", root);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/efa/lib64/libfabric.so.1", root);
	efab_efa_installer_of(p, buf, sizeof(buf));
	assert_string_equal(buf, ""); /* no installer file: not an installer's library */
	char f[256];
	snprintf(f, sizeof(f), "%s/efa_installed_packages", root);
	FILE *fp = fopen(f, "w");
	assert_non_null(fp);
	fputs("# EFA installer version: 1.43.2\n", fp);
	fclose(fp);
	efab_efa_installer_of(p, buf, sizeof(buf));
	assert_string_equal(buf, "1.43.2");
	unlink(f);
	snprintf(p, sizeof(p), "%s/efa/lib64", root);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/efa", root);
	rmdir(p);
	rmdir(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shm),           cmocka_unit_test(test_tcp),
		cmocka_unit_test(test_wait_timeout),  cmocka_unit_test(test_select_errors),
		cmocka_unit_test(test_drive_wait_tx),
		cmocka_unit_test(test_mem_kinds),
		cmocka_unit_test(test_limit_pick),    cmocka_unit_test(test_rma_limits),
		cmocka_unit_test(test_runtime_version), cmocka_unit_test(test_efa_installer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
