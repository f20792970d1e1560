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

/* GDRCopy (issue 59 item 4): libfabric's own lines about it, FI_LOG_CORE,
 * as src/hmem.c, src/hmem_cuda.c and src/hmem_cuda_gdrcopy.c format them
 * (2.6.0; 2.1.0's dlopen failure line), and the reg_path suffix. */
static void glines(efab_gdrlog_t *g, const char *const *s)
{
	memset(g, 0, sizeof(*g));
	g->captured = 2;
	for (; *s; s++)
		efab_gdrlog_add(g, *s);
}

#define HMEM_ZE "Hmem iface FI_HMEM_ZE not supported\n"
#define LOADED "Loaded GDRCopy library: /usr/lib64/libgdrapi.so.2.4\n"

static void test_gdr_state(void **state)
{
	(void)state;
	efab_gdrlog_t g;
	char why[200];
	/* 2.4.0+ dlopen build, libgdrapi found, gdr_open worked: on */
	glines(&g, (const char *const[]){HMEM_ZE, "Trying to load: libgdrapi.so\n", LOADED, NULL});
	assert_true(g.saw_hmem);
	assert_int_equal(efab_gdr_state(&g, NULL, 1, why, sizeof(why)), EFAB_GDR_ON);
	assert_non_null(strstr(why, "Loaded GDRCopy library: /usr/lib64/libgdrapi.so.2.4"));
	/* the control run: FI_HMEM_CUDA_USE_GDRCOPY false, as fi_parse_bool reads it */
	assert_int_equal(efab_gdr_state(&g, "0", 1, why, sizeof(why)), EFAB_GDR_OFF);
	assert_non_null(strstr(why, "FI_HMEM_CUDA_USE_GDRCOPY=0"));
	assert_int_equal(efab_gdr_state(&g, "Off", 1, why, sizeof(why)), EFAB_GDR_OFF);
	assert_int_equal(efab_gdr_state(&g, "1", 1, why, sizeof(why)), EFAB_GDR_ON);
	assert_int_equal(efab_gdr_state(&g, "maybe", 1, why, sizeof(why)), EFAB_GDR_ON); /* invalid: default on */
	/* loaded, then gdr_open failed: off */
	glines(&g, (const char *const[]){HMEM_ZE, LOADED, "gdr_open failed!\n",
					 "gdrcopy initialization failed! gdrcopy will not be used.\n", NULL});
	assert_int_equal(efab_gdr_state(&g, NULL, 1, why, sizeof(why)), EFAB_GDR_OFF);
	assert_non_null(strstr(why, "gdrcopy will not be used"));
	/* no usable libgdrapi (2.4.0+), and 2.1.0's dlopen failure */
	glines(&g, (const char *const[]){HMEM_ZE, "Trying to load: libgdrapi.so\n",
					 "Trying to load: libgdrapi.so.2\n",
					 "Failed to find usable libgdrapi.so\n", "gdrcopy_dl_hmem_init failed!\n", NULL});
	assert_int_equal(efab_gdr_state(&g, NULL, -1, why, sizeof(why)), EFAB_GDR_OFF);
	glines(&g, (const char *const[]){HMEM_ZE, "Failed to dlopen libgdrapi.so\n", NULL});
	assert_int_equal(efab_gdr_state(&g, NULL, -1, why, sizeof(why)), EFAB_GDR_OFF);
	/* no CUDA hmem at all */
	glines(&g, (const char *const[]){"Hmem iface FI_HMEM_CUDA not supported\n", NULL});
	assert_int_equal(efab_gdr_state(&g, NULL, -1, why, sizeof(why)), EFAB_GDR_OFF);
	glines(&g, (const char *const[]){"Failed to initialize hmem iface FI_HMEM_CUDA: No such device\n", NULL});
	assert_int_equal(efab_gdr_state(&g, NULL, -1, why, sizeof(why)), EFAB_GDR_OFF);
	/* silent (a build linking libgdrapi, 2.1.0's dlopen): the process's maps */
	glines(&g, (const char *const[]){HMEM_ZE, NULL});
	assert_int_equal(efab_gdr_state(&g, NULL, 0, why, sizeof(why)), EFAB_GDR_OFF);
	assert_non_null(strstr(why, "no libgdrapi"));
	assert_int_equal(efab_gdr_state(&g, NULL, 1, why, sizeof(why)), EFAB_GDR_UNKNOWN);
	assert_non_null(strstr(why, "said nothing of GDRCopy"));
	assert_int_equal(efab_gdr_state(&g, NULL, -1, why, sizeof(why)), EFAB_GDR_UNKNOWN);
	/* libfabric initialised before the tap, or the log was someone else's */
	glines(&g, (const char *const[]){NULL});
	assert_int_equal(efab_gdr_state(&g, NULL, 1, why, sizeof(why)), EFAB_GDR_UNKNOWN);
	assert_non_null(strstr(why, "initialised before"));
	g.captured = 0;
	assert_int_equal(efab_gdr_state(&g, NULL, 1, why, sizeof(why)), EFAB_GDR_UNKNOWN);
	assert_non_null(strstr(why, "not ours"));
	/* lines that are not about GDRCopy or CUDA hmem are not kept */
	glines(&g, (const char *const[]){"Hmem iface FI_HMEM_ROCR not supported\n", "Found provider efa\n", NULL});
	assert_int_equal(g.n, 0);
}

static void test_gdr_reg_path(void **state)
{
	(void)state;
	efab_reglog_t l;
	/* which registrations take the step (efa_rdm_mr_hmem_setup / efa_mr_hmem_setup) */
	assert_true(efab_gdr_applies("efa", "efa", 1, 0));
	assert_false(efab_gdr_applies("efa", "efa-direct", 1, 0)); /* efa-direct: no such step */
	assert_false(efab_gdr_applies("efa", "efa", 1, 1));        /* FI_MR_DMABUF: skipped */
	assert_false(efab_gdr_applies("efa", "efa", 0, 0));        /* host memory */
	assert_false(efab_gdr_applies("verbs", "IB-0xfe80", 1, 0));
	/* a 2.6.0 efa-fabric CUDA registration with GDRCopy on: dmabuf+gdrcopy */
	lines(&l, (const char *const[]){"Registering dmabuf MR: fd=17 offset=0 len=4096\n", REG_OK, NULL});
	assert_string_equal(efab_reglog_classify(&l, 1, 0, 1), "dmabuf");
	assert_string_equal(efab_reglog_gdr_suffix(&l, 1, EFAB_GDR_ON), "+gdrcopy");
	assert_string_equal(efab_reglog_gdr_suffix(&l, 1, EFAB_GDR_OFF), "");
	assert_string_equal(efab_reglog_gdr_suffix(&l, 1, EFAB_GDR_UNKNOWN), "+gdrcopy-unknown");
	assert_string_equal(efab_reglog_gdr_suffix(&l, 0, EFAB_GDR_ON), "");
	/* the pin failed: libfabric warned and registered without it */
	lines(&l, (const char *const[]){"Registering dmabuf MR: fd=17 offset=0 len=4096\n", REG_OK,
					"Unable to register handle for GPU memory. err: -22 buf: 0x7f1c40000000 len: 4096\n",
					NULL});
	assert_string_equal(efab_reglog_gdr_suffix(&l, 1, EFAB_GDR_ON), "+gdrcopy-failed");
}

/* The tap around libfabric's real initialisation (the first fi_getinfo of
 * this process: first in main's list): it sees ofi_hmem_init, and the state
 * it gives agrees with the process's maps. */
static void test_gdr_live_init(void **state)
{
	(void)state;
	unsetenv("FI_LOG_LEVEL");
	efab_gdrlog_t g;
	char why[200];
	struct fi_info *info = NULL;
	assert_int_equal(efab_gdrlog_begin(&g), EFAB_OK);
	int ret = fi_getinfo(FI_VERSION(1, 13), NULL, NULL, 0, NULL, &info);
	efab_gdrlog_end(&g);
	if (!ret)
		fi_freeinfo(info);
	assert_int_equal(efab_filog_taps(), 0);
	assert_true(g.saw_hmem); /* "Hmem iface ... not supported" for some interface */
	int mapped = efab_libgdrapi_mapped();
	int st = efab_gdr_state(&g, getenv("FI_HMEM_CUDA_USE_GDRCOPY"), mapped, why, sizeof(why));
	print_message("# libfabric here: GDRCopy %s (%s); %zu line(s) kept\n",
		      st == EFAB_GDR_ON ? "on" : st == EFAB_GDR_OFF ? "off" : "unknown", why, g.n);
	if (mapped == 0)
		assert_int_equal(st, EFAB_GDR_OFF);
	if (st == EFAB_GDR_ON)
		assert_int_equal(mapped, 1);
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
		cmocka_unit_test(test_gdr_live_init), /* first: libfabric not yet initialised */
		cmocka_unit_test(test_gdr_state),
		cmocka_unit_test(test_gdr_reg_path),
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
