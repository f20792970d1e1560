/* reg_path: the classification of libfabric's own log lines (the efa
 * provider's strings, formatted as efa_mr.c formats them in 2.1.0..2.7.0a1),
 * and the capture itself against the libfabric this is linked with: its
 * fi_log entry points are called as a provider calls them (FI_LOG). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_ext.h>

#include "efab.h"
#include "efab_reglog.h"

/* One registration's MR lines as libfabric 2.6.0 logs them (efa_mr.c). */
static void lines(efab_reglog_t *l, const char *const *s)
{
	memset(l, 0, sizeof(*l));
	l->captured = 1;
	for (; *s; s++)
		efab_reglog_add(l, *s);
}

#define REG_OK "Registered memory at 0x7f1c40000000 of size 4096flags 0 for ibv pd 0x55d0c0, total mr reg size 4096, mr reg count 1\n"

static void test_cuda_dmabuf(void **state)
{
	(void)state;
	efab_reglog_t l;
	lines(&l, (const char *const[]){"Registering dmabuf MR: fd=17 offset=0 len=4096\n", REG_OK, NULL});
	assert_string_equal(efab_reglog_classify(&l, 1, 0, 1), "dmabuf");
	assert_non_null(strstr(efab_reglog_evidence(&l), "Registering dmabuf MR: fd=17"));
}

static void test_cuda_peermem_silent(void **state)
{
	(void)state;
	efab_reglog_t l;
	/* 2.1/2.4, or 2.6 after the provider found dma-buf unusable at load:
	 * ibv_reg_mr on the device address, only the success line */
	lines(&l, (const char *const[]){REG_OK, NULL});
	assert_string_equal(efab_reglog_classify(&l, 1, 0, 1), "peermem");
	lines(&l, (const char *const[]){"Registered memory of size 4096 for ibv pd 0x1, total mr reg size 4096, mr reg count 1\n", NULL}); /* 2.1.0's words */
	assert_string_equal(efab_reglog_classify(&l, 1, 0, 1), "peermem");
}

static void test_cuda_fd_fallback(void **state)
{
	(void)state;
	efab_reglog_t l;
	/* the export failed: ibv_reg_mr; efa_mark_dmabuf_fail logs after it */
	lines(&l, (const char *const[]){
			  "Unable to get dmabuf fd for cuda device buffer, Fall back to ibv_reg_mr\n",
			  "assumed dmabuf support for cuda was incorrect\n", REG_OK, NULL});
	assert_string_equal(efab_reglog_classify(&l, 1, 0, 1), "peermem");
	assert_non_null(strstr(efab_reglog_evidence(&l), "Unable to get dmabuf fd"));
}

static void test_cuda_dmabuf_refused(void **state)
{
	(void)state;
	efab_reglog_t l;
	lines(&l, (const char *const[]){"Registering dmabuf MR: fd=17 offset=0 len=4096\n",
					"assumed dmabuf support for cuda was incorrect\n", REG_OK, NULL});
	assert_string_equal(efab_reglog_classify(&l, 1, 0, 1), "dmabuf->peermem");
	assert_non_null(strstr(efab_reglog_evidence(&l), "was incorrect"));
}

static void test_no_evidence(void **state)
{
	(void)state;
	efab_reglog_t l;
	lines(&l, (const char *const[]){NULL});
	assert_string_equal(efab_reglog_classify(&l, 1, 0, 1), "unknown"); /* nothing said */
	lines(&l, (const char *const[]){"Registering dmabuf MR: fd=3 offset=0 len=8\n", NULL});
	l.captured = 0; /* lines without a capture are no evidence */
	assert_string_equal(efab_reglog_classify(&l, 1, 0, 1), "unknown");
	assert_string_equal(efab_reglog_evidence(&(efab_reglog_t){0}), "");
}

static void test_host_and_others(void **state)
{
	(void)state;
	efab_reglog_t l;
	lines(&l, (const char *const[]){REG_OK, NULL});
	assert_string_equal(efab_reglog_classify(&l, 0, 0, 1), "host");
	lines(&l, (const char *const[]){"Registering dmabuf MR: fd=5 offset=0 len=4096\n", REG_OK, NULL});
	assert_string_equal(efab_reglog_classify(&l, 0, 0, 1), "dmabuf"); /* what libfabric said */
	assert_string_equal(efab_reglog_classify(&l, 1, 1, 1), "efabench-dmabuf");
	assert_string_equal(efab_reglog_classify(&l, 1, 0, 0), "-"); /* shm, tcp: no NIC */
	lines(&l, (const char *const[]){"FI_MR_DMABUF: fd=9 offset=0 len=4096\n", REG_OK, NULL});
	assert_string_equal(efab_reglog_classify(&l, 1, 1, 1), "efabench-dmabuf");
	assert_non_null(strstr(efab_reglog_evidence(&l), "FI_MR_DMABUF: fd=9"));
}

static void test_lines_bounded(void **state)
{
	(void)state;
	efab_reglog_t l;
	memset(&l, 0, sizeof(l));
	char big[600];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	for (int i = 0; i < 3 * EFAB_REGLOG_LINES; i++)
		efab_reglog_add(&l, big);
	assert_int_equal(l.n, EFAB_REGLOG_LINES);
	assert_int_equal(strlen(l.line[0]), sizeof(l.line[0]) - 1);
}

/* A provider as libfabric's FI_LOG sees it: context zero (logging not
 * filtered, ofi_prov_ctx). */
static struct fi_provider fake_prov = {.name = "efa"};

/* What a provider's EFA_INFO(FI_LOG_MR, ...) does (rdma/providers/fi_log.h). */
static void prov_info_mr(const char *msg)
{
	if (fi_log_enabled(&fake_prov, FI_LOG_INFO, FI_LOG_MR))
		fi_log(&fake_prov, FI_LOG_INFO, FI_LOG_MR, __func__, __LINE__, "%s", msg);
}

static void test_capture_live(void **state)
{
	(void)state;
	unsetenv("FI_LOG_LEVEL");
	efab_reglog_t l, l2;
	/* libfabric's own logging: info off without FI_LOG_LEVEL */
	assert_false(fi_log_enabled(&fake_prov, FI_LOG_INFO, FI_LOG_MR));
	assert_int_equal(efab_reglog_begin(&l), EFAB_OK);
	assert_true(l.captured);
	assert_true(fi_log_enabled(&fake_prov, FI_LOG_INFO, FI_LOG_MR));
	assert_false(fi_log_enabled(&fake_prov, FI_LOG_INFO, FI_LOG_CQ)); /* only MR */
	assert_false(fi_log_enabled(&fake_prov, FI_LOG_DEBUG, FI_LOG_MR));
	/* libfabric takes one import at a time */
	assert_int_equal(efab_reglog_begin(&l2), EFAB_ERR);
	assert_non_null(strstr(l2.why, "imported already"));
	prov_info_mr("Registering dmabuf MR: fd=4 offset=0 len=65536\n");
	prov_info_mr(REG_OK);
	efab_reglog_end(&l);
	/* given back: the timed calls after this format nothing */
	assert_false(fi_log_enabled(&fake_prov, FI_LOG_INFO, FI_LOG_MR));
	prov_info_mr("after the capture\n");
	assert_int_equal(l.n, 2);
	assert_string_equal(efab_reglog_classify(&l, 1, 0, 1), "dmabuf");
	/* and it can be taken again (one probe per size) */
	assert_int_equal(efab_reglog_begin(&l2), EFAB_OK);
	prov_info_mr(REG_OK);
	efab_reglog_end(&l2);
	assert_int_equal(l2.n, 1);
	assert_string_equal(efab_reglog_classify(&l2, 1, 0, 1), "peermem");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cuda_dmabuf),
		cmocka_unit_test(test_cuda_peermem_silent),
		cmocka_unit_test(test_cuda_fd_fallback),
		cmocka_unit_test(test_cuda_dmabuf_refused),
		cmocka_unit_test(test_no_evidence),
		cmocka_unit_test(test_host_and_others),
		cmocka_unit_test(test_lines_bounded),
		cmocka_unit_test(test_capture_live),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
