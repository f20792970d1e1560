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
#include "efab_select.h"

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
	prov_info_mr("Registering dmabuf MR: fd=4 offset=0 len=65536\n");
	prov_info_mr(REG_OK);
	efab_reglog_end(&l);
	assert_int_equal(efab_filog_taps(), 0);
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

/* another library's importer of libfabric's log: it wants nothing */
static int quiet_enabled(const struct fi_provider *p, enum fi_log_level l, enum fi_log_subsys s,
			 uint64_t f)
{
	(void)p, (void)l, (void)s, (void)f;
	return 0;
}

static int quiet_ready(const struct fi_provider *p, enum fi_log_level l, enum fi_log_subsys s,
		       uint64_t f, uint64_t *t)
{
	(void)t;
	return quiet_enabled(p, l, s, f);
}

static void quiet_log(const struct fi_provider *p, enum fi_log_level l, enum fi_log_subsys s,
		      const char *func, int line, const char *msg)
{
	(void)p, (void)l, (void)s, (void)func, (void)line, (void)msg;
}

/* libfabric lets one importer hold its log: efabench imports it once for
 * every capture (filog.c). The probe's warning capture (select.c) and a
 * registration's path capture live at once, each seeing its own lines; before,
 * each imported the log itself and the second got -FI_EALREADY. A foreign
 * importer still makes a capture say why it has nothing. */
static void test_two_captures_one_import(void **state)
{
	(void)state;
	unsetenv("FI_LOG_LEVEL");
	efab_reglog_t l;
	char said[400];
	assert_int_equal(efab_provider_log_capture(1, "FI_MR_LOCAL", NULL, 0), EFAB_OK);
	assert_int_equal(efab_reglog_begin(&l), EFAB_OK);
	assert_int_equal(efab_filog_taps(), 2);
	prov_info_mr(REG_OK);
	if (fi_log_enabled(&fake_prov, FI_LOG_WARN, FI_LOG_EP_DATA))
		fi_log(&fake_prov, FI_LOG_WARN, FI_LOG_EP_DATA, "efa_rma_post", 1,
		       "EFA direct requires FI_MR_LOCAL but application does not provide a valid desc\n");
	efab_reglog_end(&l);
	assert_int_equal(l.n, 1); /* the MR line only */
	/* the probe's capture is still on after the registration's ended */
	assert_true(fi_log_enabled(&fake_prov, FI_LOG_WARN, FI_LOG_CORE));
	assert_int_equal(efab_provider_log_capture(0, NULL, said, sizeof(said)), EFAB_OK);
	assert_non_null(strstr(said, "requires FI_MR_LOCAL"));
	assert_int_equal(efab_filog_taps(), 0);
	assert_false(fi_log_enabled(&fake_prov, FI_LOG_INFO, FI_LOG_MR));
	/* someone else's import: refused with the reason, nothing attached */
	static struct fi_ops_log ops = {.enabled = quiet_enabled, .ready = quiet_ready, .log = quiet_log};
	static struct fid_logging other = {.ops = &ops};
	assert_int_equal(fi_import_log(FI_VERSION(1, 13), 0, &other), 0);
	assert_int_equal(efab_reglog_begin(&l), EFAB_ERR);
	assert_false(l.captured);
	assert_non_null(strstr(l.why, "imported already"));
	efab_reglog_end(&l);
	fi_close(&other.fid);
	assert_int_equal(efab_reglog_begin(&l), EFAB_OK);
	efab_reglog_end(&l);
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
		cmocka_unit_test(test_two_captures_one_import),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
