/* NVSHMEM's knobs as options (bench/ops/nvtune.c): the values the options ask,
 * their environment (a conflicting one refused), which knobs a run's
 * NVSHMEM libraries read (constructed libraries behind a constructed
 * /proc/<pid>/maps, laid out as NVSHMEM 3.6.5 and 3.8.0 hold them: the
 * name without "NVSHMEM_", between NUL bytes), the refusal of an asked knob
 * nobody reads, and the cells. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "efab.h"
#include "efab_nvtune.h"
#include "efab_opts.h"

static const char *const envs[] = {"NVSHMEM_LIBFABRIC_DISABLE_BATCH_RMA", "NVSHMEM_TRANSPORT_BATCH_MAX_OPS",
				   "NVSHMEM_PROXY_REQUEST_BATCH_MAX",
				   "NVSHMEM_LIBFABRIC_PROXY_REQUEST_BATCH_MAX"};

static int clean_env(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(envs) / sizeof(envs[0]); i++)
		unsetenv(envs[i]);
	return 0;
}

static void test_names(void **state)
{
	(void)state;
	for (int k = 0; k < EFAB_NV_N_KNOBS; k++) {
		assert_string_equal(efab_nv_knob_env(k), envs[k]);
		assert_memory_equal(efab_nv_knob_option(k), "--nv-", 5);
		assert_memory_equal(efab_nv_knob_column(k), "nv_", 3);
	}
	assert_string_equal(efab_nv_knob_env(EFAB_NV_N_KNOBS), "?");
}

static void test_asked(void **state)
{
	(void)state;
	efab_opts_t o;
	char v[32];
	memset(&o, 0, sizeof(o));
	for (int k = 0; k < EFAB_NV_N_KNOBS; k++) {
		efab_nv_knob_asked(&o, k, v, sizeof(v));
		assert_string_equal(v, "");
	}
	o.nv_batch_rma = 1; /* on: batching kept */
	efab_nv_knob_asked(&o, EFAB_NV_DISABLE_BATCH_RMA, v, sizeof(v));
	assert_string_equal(v, "0");
	o.nv_batch_rma = 2; /* off */
	efab_nv_knob_asked(&o, EFAB_NV_DISABLE_BATCH_RMA, v, sizeof(v));
	assert_string_equal(v, "1");
	o.nv_batch_ops = 1;
	o.nv_proxy_batch = 64;
	o.nv_lf_proxy_batch = 7;
	efab_nv_knob_asked(&o, EFAB_NV_TRANSPORT_BATCH_MAX_OPS, v, sizeof(v));
	assert_string_equal(v, "1");
	efab_nv_knob_asked(&o, EFAB_NV_PROXY_REQUEST_BATCH_MAX, v, sizeof(v));
	assert_string_equal(v, "64");
	efab_nv_knob_asked(&o, EFAB_NV_LF_PROXY_REQUEST_BATCH_MAX, v, sizeof(v));
	assert_string_equal(v, "7");
}

static void test_apply(void **state)
{
	(void)state;
	efab_opts_t o;
	char err[512] = "";
	memset(&o, 0, sizeof(o));
	/* nothing asked: the environment is left as it is */
	assert_int_equal(efab_nv_tune_apply(&o, err, sizeof(err)), EFAB_OK);
	for (size_t i = 0; i < 4; i++)
		assert_null(getenv(envs[i]));
	o.nv_batch_rma = 2;
	o.nv_proxy_batch = 8;
	assert_int_equal(efab_nv_tune_apply(&o, err, sizeof(err)), EFAB_OK);
	assert_string_equal(getenv("NVSHMEM_LIBFABRIC_DISABLE_BATCH_RMA"), "1");
	assert_string_equal(getenv("NVSHMEM_PROXY_REQUEST_BATCH_MAX"), "8");
	assert_null(getenv("NVSHMEM_TRANSPORT_BATCH_MAX_OPS"));
	/* the same value already there: accepted */
	assert_int_equal(efab_nv_tune_apply(&o, err, sizeof(err)), EFAB_OK);
	/* a user's different value: refused, both named, the environment kept */
	setenv("NVSHMEM_TRANSPORT_BATCH_MAX_OPS", "16", 1);
	o.nv_batch_ops = 4;
	assert_int_equal(efab_nv_tune_apply(&o, err, sizeof(err)), EFAB_EUSAGE);
	assert_non_null(strstr(err, "--nv-batch-ops asks NVSHMEM_TRANSPORT_BATCH_MAX_OPS=4"));
	assert_non_null(strstr(err, "already has NVSHMEM_TRANSPORT_BATCH_MAX_OPS=16"));
	assert_null(strchr(err, '\n'));
	assert_string_equal(getenv("NVSHMEM_TRANSPORT_BATCH_MAX_OPS"), "16");
}

/* a file of bytes with NUL-delimited strings, as an ELF .rodata holds them */
static void lib_file(const char *path, const char *const *names)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	fputs("\177ELF junk", f);
	for (; *names; names++) {
		fputc(0, f);
		fputs(*names, f);
		fputc(0, f);
		fputs("pad", f);
	}
	fclose(f);
}

struct tree {
	char dir[64], maps[128], host[128], lf[128], other[128];
};

static void make_tree(struct tree *t, const char *const *host_names, const char *const *lf_names)
{
	snprintf(t->dir, sizeof(t->dir), "/tmp/efab-nvtune.XXXXXX");
	assert_non_null(mkdtemp(t->dir));
	snprintf(t->host, sizeof(t->host), "%s/libnvshmem_host.so.3", t->dir);
	snprintf(t->lf, sizeof(t->lf), "%s/nvshmem_transport_libfabric.so.7", t->dir);
	snprintf(t->other, sizeof(t->other), "%s/libother.so", t->dir);
	snprintf(t->maps, sizeof(t->maps), "%s/maps", t->dir);
	lib_file(t->host, host_names);
	if (lf_names)
		lib_file(t->lf, lf_names);
	/* another library holding every name: not NVSHMEM's, never counted */
	lib_file(t->other, (const char *const[]){"LIBFABRIC_DISABLE_BATCH_RMA", "TRANSPORT_BATCH_MAX_OPS",
						 "PROXY_REQUEST_BATCH_MAX",
						 "LIBFABRIC_PROXY_REQUEST_BATCH_MAX", NULL});
	FILE *m = fopen(t->maps, "w");
	assert_non_null(m);
	fprintf(m, "7f0000000000-7f0000001000 r--p 00000000 08:01 11 %s\n", t->host);
	fprintf(m, "7f0000001000-7f0000002000 r-xp 00001000 08:01 11 %s\n", t->host); /* again */
	fprintf(m, "7f0000003000-7f0000004000 r--p 00000000 08:01 12 %s\n", t->other);
	fprintf(m, "7f0000005000-7f0000006000 rw-p 00000000 00:00 0 [heap]\n");
	if (lf_names)
		fprintf(m, "7f0000007000-7f0000008000 r--p 00000000 08:01 13 %s\n", t->lf);
	fclose(m);
}

static void drop_tree(struct tree *t)
{
	unlink(t->host);
	unlink(t->lf);
	unlink(t->other);
	unlink(t->maps);
	rmdir(t->dir);
}

/* NVSHMEM 3.8.0: PROXY_REQUEST_BATCH_MAX and TRANSPORT_BATCH_MAX_OPS in the
 * host library, the two libfabric ones in its transport */
static void test_scan_38(void **state)
{
	(void)state;
	struct tree t;
	int known[EFAB_NV_N_KNOBS];
	char libs[256];
	make_tree(&t, (const char *const[]){"PROXY_REQUEST_BATCH_MAX", "TRANSPORT_BATCH_MAX_OPS", NULL},
		  (const char *const[]){"LIBFABRIC_PROXY_REQUEST_BATCH_MAX", "LIBFABRIC_DISABLE_BATCH_RMA", NULL});
	assert_int_equal(efab_nv_tune_scan(t.maps, known, libs, sizeof(libs)), 2);
	assert_string_equal(libs, "libnvshmem_host.so.3+nvshmem_transport_libfabric.so.7");
	for (int k = 0; k < EFAB_NV_N_KNOBS; k++)
		assert_int_equal(known[k], 1);
	/* a names buffer too short: cut, both libraries still searched */
	char small[12];
	memset(small, 'x', sizeof(small));
	assert_int_equal(efab_nv_tune_scan(t.maps, known, small, 8), 2);
	assert_string_equal(small, "libnvsh");
	assert_int_equal(small[8], 'x');
	assert_int_equal(known[EFAB_NV_DISABLE_BATCH_RMA], 1);
	drop_tree(&t);
}

/* NVSHMEM 3.6.5: PROXY_REQUEST_BATCH_MAX only. A name that holds another
 * (LIBFABRIC_PROXY_REQUEST_BATCH_MAX holds PROXY_REQUEST_BATCH_MAX) is not
 * the other: here the host library has only the longer one. */
static void test_scan_365_and_substring(void **state)
{
	(void)state;
	struct tree t;
	int known[EFAB_NV_N_KNOBS];
	char libs[256];
	make_tree(&t, (const char *const[]){"PROXY_REQUEST_BATCH_MAX", "NOT_TRANSPORT_BATCH_MAX_OPS", NULL}, NULL);
	assert_int_equal(efab_nv_tune_scan(t.maps, known, libs, sizeof(libs)), 1);
	assert_string_equal(libs, "libnvshmem_host.so.3");
	assert_int_equal(known[EFAB_NV_PROXY_REQUEST_BATCH_MAX], 1);
	assert_int_equal(known[EFAB_NV_TRANSPORT_BATCH_MAX_OPS], 0);
	assert_int_equal(known[EFAB_NV_DISABLE_BATCH_RMA], 0);
	assert_int_equal(known[EFAB_NV_LF_PROXY_REQUEST_BATCH_MAX], 0);
	drop_tree(&t);
	make_tree(&t, (const char *const[]){"LIBFABRIC_PROXY_REQUEST_BATCH_MAX", NULL}, NULL);
	assert_int_equal(efab_nv_tune_scan(t.maps, known, libs, sizeof(libs)), 1);
	assert_int_equal(known[EFAB_NV_LF_PROXY_REQUEST_BATCH_MAX], 1);
	assert_int_equal(known[EFAB_NV_PROXY_REQUEST_BATCH_MAX], 0);
	drop_tree(&t);
	/* no maps file */
	assert_int_equal(efab_nv_tune_scan("/nonexistent/maps", known, libs, sizeof(libs)), -1);
	assert_string_equal(libs, "");
}

/* the transports NVSHMEM loaded (efab_shmem_* rows' column fabric), from the
 * same list of mapped NVSHMEM libraries */
static void test_libs_and_transports(void **state)
{
	(void)state;
	struct tree t;
	char paths[16][EFAB_NV_PATH], tr[64];
	make_tree(&t, (const char *const[]){"PROXY_REQUEST_BATCH_MAX", NULL},
		  (const char *const[]){"LIBFABRIC_DISABLE_BATCH_RMA", NULL});
	/* the host library mapped twice, another library, [heap]: two paths */
	assert_int_equal(efab_nv_libs(t.maps, paths, 16), 2);
	assert_string_equal(paths[0], t.host);
	assert_string_equal(paths[1], t.lf);
	assert_int_equal(efab_nv_libs(t.maps, paths, 1), 1);
	efab_nv_transports(t.maps, tr, sizeof(tr));
	assert_string_equal(tr, "libfabric");
	/* a second version's file of the same transport, and another transport */
	FILE *m = fopen(t.maps, "a");
	assert_non_null(m);
	fprintf(m, "7f0000009000-7f000000a000 r--p 00000000 08:01 14 /opt/nv/lib/nvshmem_transport_libfabric.so.6\n");
	fprintf(m, "7f000000b000-7f000000c000 r--p 00000000 08:01 15 /opt/nv/lib/nvshmem_transport_ibrc.so.3\n");
	fclose(m);
	efab_nv_transports(t.maps, tr, sizeof(tr));
	assert_string_equal(tr, "libfabric+ibrc");
	drop_tree(&t);
	make_tree(&t, (const char *const[]){"PROXY_REQUEST_BATCH_MAX", NULL}, NULL);
	efab_nv_transports(t.maps, tr, sizeof(tr));
	assert_string_equal(tr, "none");
	drop_tree(&t);
	assert_int_equal(efab_nv_libs("/nonexistent/maps", paths, 16), -1);
	efab_nv_transports("/nonexistent/maps", tr, sizeof(tr));
	assert_string_equal(tr, "none");
}

static void test_check_and_cells(void **state)
{
	(void)state;
	efab_opts_t o;
	char err[1024] = "", c[64];
	int known[EFAB_NV_N_KNOBS] = {0, 0, 1, 0}; /* 3.6.5 */
	memset(&o, 0, sizeof(o));
	/* nothing asked: fine whatever NVSHMEM reads */
	assert_int_equal(efab_nv_tune_check(&o, known, "libnvshmem_host.so.3", "3.6.5", err, sizeof(err)), EFAB_OK);
	o.nv_proxy_batch = 16;
	assert_int_equal(efab_nv_tune_check(&o, known, "libnvshmem_host.so.3", "3.6.5", err, sizeof(err)), EFAB_OK);
	o.nv_batch_rma = 2;
	assert_int_equal(efab_nv_tune_check(&o, known, "libnvshmem_host.so.3", "3.6.5", err, sizeof(err)),
			 EFAB_SKIP);
	assert_non_null(strstr(err, "--nv-batch-rma: NVSHMEM 3.6.5 does not read "
				    "NVSHMEM_LIBFABRIC_DISABLE_BATCH_RMA (not in libnvshmem_host.so.3)"));
	assert_non_null(strstr(err, "libfabric transport"));
	assert_null(strchr(err, '\n'));
	/* no NVSHMEM library seen at all */
	assert_int_equal(efab_nv_tune_check(&o, known, "", "", err, sizeof(err)), EFAB_SKIP);
	assert_non_null(strstr(err, "NVSHMEM ? does not read"));
	assert_non_null(strstr(err, "any NVSHMEM library mapped here"));
	/* the cells: unset, set and read, set and unread */
	efab_nv_knob_cell(EFAB_NV_PROXY_REQUEST_BATCH_MAX, known, c, sizeof(c));
	assert_string_equal(c, "default");
	setenv("NVSHMEM_PROXY_REQUEST_BATCH_MAX", "16", 1);
	efab_nv_knob_cell(EFAB_NV_PROXY_REQUEST_BATCH_MAX, known, c, sizeof(c));
	assert_string_equal(c, "16");
	setenv("NVSHMEM_LIBFABRIC_DISABLE_BATCH_RMA", "1", 1);
	efab_nv_knob_cell(EFAB_NV_DISABLE_BATCH_RMA, known, c, sizeof(c));
	assert_string_equal(c, "unread:1");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_names, clean_env),
		cmocka_unit_test_setup(test_asked, clean_env),
		cmocka_unit_test_setup(test_apply, clean_env),
		cmocka_unit_test_setup(test_scan_38, clean_env),
		cmocka_unit_test_setup(test_scan_365_and_substring, clean_env),
		cmocka_unit_test_setup(test_libs_and_transports, clean_env),
		cmocka_unit_test_setup(test_check_and_cells, clean_env),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
