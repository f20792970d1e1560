/* Sweep configs: parsing, validation through the option table, matrix and
 * repeat expansion, and the bad files each rejected with file:line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "efab_config.h"
#include "efab_opts.h"
#include "rows.h"

static int expand(const char *text, efab_job_t **jobs, size_t *n, char *err)
{
	efab_config_t cfg;
	int rc = efab_config_parse(text, strlen(text), "t.conf", &cfg, err, 512);
	if (rc)
		return rc;
	cfg.runner = "efab_sweep";
	rc = efab_config_expand(&cfg, efab_bench_rows, efab_n_bench_rows, jobs, n, err, 512);
	efab_config_free(&cfg);
	return rc;
}

static int has_args(const efab_job_t *j, const char *a, const char *b)
{
	for (int i = 0; i + 1 < j->argc; i++)
		if (!strcmp(j->argv[i], a) && (!b || !strcmp(j->argv[i + 1], b)))
			return 1;
	if (!b && j->argc && !strcmp(j->argv[j->argc - 1], a))
		return 1;
	return 0;
}

static void test_matrix_and_repeat_order(void **state)
{
	(void)state;
	const char *text = "# a comment\n"
			   "[global]\n"
			   "provider = efa\n"
			   "fabric = efa, efa-direct\n"
			   "matrix = fabric\n"
			   "repeat = 2\n"
			   "env = FI_EFA_USE_DEVICE_RDMA=1 FI_LOG_LEVEL=warn\n"
			   "\n"
			   "[lat]\n"
			   "bench = put_lat\n"
			   "sizes = 8:64K\n"
			   "check = true\n"
			   "; another comment\n"
			   "[reg]\n"
			   "bench = efab_mr_reg\n"
			   "regime = fresh\n";
	efab_job_t *jobs;
	size_t n;
	char err[512] = "";
	assert_int_equal(expand(text, &jobs, &n, err), 0);
	assert_int_equal(n, 8); /* 2 repeats x (2 lat + 2 reg) */
	/* A B A B: the repeat is outermost, then sections, then the matrix */
	const char *want[] = {"lat[fabric=efa]#1", "lat[fabric=efa-direct]#1", "reg[fabric=efa]#1",
			      "reg[fabric=efa-direct]#1", "lat[fabric=efa]#2", "lat[fabric=efa-direct]#2",
			      "reg[fabric=efa]#2", "reg[fabric=efa-direct]#2"};
	for (size_t i = 0; i < n; i++)
		assert_string_equal(jobs[i].name, want[i]);
	assert_string_equal(jobs[0].bench, "efab_put_lat");
	assert_true(has_args(&jobs[1], "--fabric", "efa-direct"));
	assert_true(has_args(&jobs[0], "--sizes", "8:64K"));
	assert_true(has_args(&jobs[0], "--check", NULL));
	assert_true(has_args(&jobs[0], "--provider", "efa"));
	assert_int_equal(jobs[0].nenv, 2);
	assert_string_equal(jobs[0].env[1], "FI_LOG_LEVEL=warn");
	assert_int_equal(jobs[0].mpi, 1);
	assert_int_equal(jobs[2].mpi, 0); /* mr_reg runs without a launcher */
	assert_true(has_args(&jobs[2], "--regime", "fresh"));
	assert_false(has_args(&jobs[2], "--sizes", NULL)); /* not set for reg */
	efab_jobs_free(jobs, n);
}

/* libfabric = A, B: every job once per install, the installs of a job back
 * to back (A B A B), also with a matrix; named in 'matrix' it takes that place. */
static void test_libfabric_installs(void **state)
{
	(void)state;
	const char *text = "[global]\n"
			   "libfabric = /usr, /opt/lf-2.6\n"
			   "provider = shm, tcp\n"
			   "matrix = provider\n"
			   "repeat = 2\n"
			   "[lat]\n"
			   "bench = put_lat\n"
			   "[reg]\n"
			   "bench = mr_reg\n";
	efab_job_t *jobs;
	size_t n;
	char err[512] = "";
	assert_int_equal(expand(text, &jobs, &n, err), 0);
	assert_int_equal(n, 16); /* 2 repeats x 2 sections x 2 providers x 2 installs */
	const char *want[] = {"lat[libfabric=/usr,provider=shm]#1",
			      "lat[libfabric=/opt/lf-2.6,provider=shm]#1",
			      "lat[libfabric=/usr,provider=tcp]#1",
			      "lat[libfabric=/opt/lf-2.6,provider=tcp]#1"};
	for (size_t i = 0; i < 4; i++)
		assert_string_equal(jobs[i].name, want[i]);
	assert_string_equal(jobs[0].libfabric, "/usr");
	assert_string_equal(jobs[1].libfabric, "/opt/lf-2.6");
	assert_int_equal(jobs[1].libfabric_line, 2);
	assert_false(has_args(&jobs[0], "--libfabric", NULL)); /* a runner key, not an option */
	assert_string_equal(jobs[8].name, "lat[libfabric=/usr,provider=shm]#2");
	efab_jobs_free(jobs, n);
	/* named in the matrix: its place there; a job without the key: "" */
	assert_int_equal(expand("[j]\nbench = put_lat\nprovider = shm, tcp\n"
				"libfabric = /a, /b\nmatrix = provider, libfabric\n[k]\nbench = get_lat\n",
				&jobs, &n, err), 0);
	assert_int_equal(n, 5);
	assert_string_equal(jobs[0].name, "j[provider=shm,libfabric=/a]");
	assert_string_equal(jobs[1].name, "j[provider=tcp,libfabric=/a]");
	assert_string_equal(jobs[4].libfabric, "");
	efab_jobs_free(jobs, n);
	assert_int_equal(expand("[j]\nbench = put_lat\nlibfabric = /a, /a\n", &jobs, &n, err), 2);
	assert_non_null(strstr(err, "t.conf:3: key 'libfabric': '/a' listed twice"));
	assert_int_equal(expand("[j]\nbench = put_lat\nlibfabric = /a, \n", &jobs, &n, err), 2);
	assert_non_null(strstr(err, "empty item"));
}

static void test_two_key_matrix(void **state)
{
	(void)state;
	const char *text = "[j]\nbench = put_bw\nfabric = a, b, c\nmem = host, cuda\n"
			   "matrix = fabric, mem\nnp = 4\nlauncher = srun -n {np}\n";
	efab_job_t *jobs;
	size_t n;
	char err[512];
	assert_int_equal(expand(text, &jobs, &n, err), 0);
	assert_int_equal(n, 6);
	assert_string_equal(jobs[0].name, "j[fabric=a,mem=host]");
	assert_string_equal(jobs[5].name, "j[fabric=c,mem=cuda]");
	assert_int_equal(jobs[0].np, 4);
	assert_string_equal(jobs[0].launcher, "srun -n {np}");
	efab_jobs_free(jobs, n);
}

static void bad(const char *text, const char *where, const char *what)
{
	efab_job_t *jobs = NULL;
	size_t n = 0;
	char err[512] = "";
	int rc = expand(text, &jobs, &n, err);
	if (rc != EFAB_EUSAGE || !strstr(err, where) || !strstr(err, what))
		fail_msg("config:\n%s\nrc %d, message '%s' (wanted '%s' and '%s')", text, rc, err, where,
			 what);
}

static void test_bad_configs(void **state)
{
	(void)state;
	bad("", "t.conf", "no sections");
	bad("[global]\nprovider = shm\n", "t.conf", "no job sections");
	bad("provider = shm\n", "t.conf:1:", "before any [section]");
	bad("[j\nbench = put_lat\n", "t.conf:1:", "malformed section header");
	bad("[j]\nbench put_lat\n", "t.conf:2:", "expected 'key = value'");
	bad("[j]\nbench = put_lat\nsizez = 8\n", "t.conf:3:", "key 'sizez' is not an option of efab_put_lat");
	bad("[j]\nbench = put_lat\nsizes = 0\n", "t.conf:3:", "key 'sizes'");
	bad("[j]\nbench = put_lat\niters = many\n", "t.conf:3:", "key 'iters'");
	bad("[j]\nbench = put_lat\nwindow = 4\n", "t.conf:3:", "not an option of efab_put_lat");
	bad("[j]\nbench = nosuch\n", "t.conf:2:", "unknown benchmark 'nosuch'");
	bad("[j]\nsizes = 8\n", "t.conf:1:", "has no 'bench' key");
	bad("[j]\nbench = put_lat\nbench = get_lat\n", "t.conf:3:", "repeated");
	bad("[j]\nbench = put_lat\n[j]\nbench = get_lat\n", "t.conf:3:", "already defined");
	bad("[j]\nbench = put_lat\nmatrix = fabric\n", "t.conf:3:", "'fabric' has no values");
	bad("[j]\nbench = put_lat\nfabric = a, b\nmatrix = fabrik\n", "t.conf:4:", "'fabrik' is not an option");
	bad("[j]\nbench = put_lat\nmem = host, gpu\nmatrix = mem\n", "t.conf:3:", "key 'mem'");
	bad("[j]\nbench = put_lat\nrepeat = 0\n", "t.conf:3:", "key 'repeat'");
	bad("[j]\nbench = put_lat\nnp = -2\n", "t.conf:3:", "key 'np'");
	bad("[j]\nbench = put_lat\nenv = NOEQUALS\n", "t.conf:3:", "key 'env'");
	bad("[j]\nbench = put_lat\ncsv = x.csv\n", "t.conf:3:", "set by efab_sweep");
	bad("[global]\nfrobnicate = 1\n[j]\nbench = put_lat\n", "t.conf:2:", "unknown key 'frobnicate'");
	bad("[j k]\nbench = put_lat\n", "t.conf:1:", "section name");
	bad("[j]\nbench = put_lat\nop = fetch\n", "t.conf:3:", "expected one of write");
	/* regression (fuzz_config): one key or value too many overflowed the lists */
	bad("[j]\nbench = put_lat\nmatrix = fabric, mem, sizes, iters, warmup\n", "t.conf:3:",
	    "at most 4 keys");
	bad("[j]\nbench = put_lat\nfabric = a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q\nmatrix = fabric\n",
	    "t.conf:3:", "at most 16 matrix values");
}

/* Regression (fuzz_config): matrix values longer than the job label. */
static void test_long_matrix_label(void **state)
{
	(void)state;
	char text[1024];
	char v[101];
	memset(v, 'x', 100);
	v[100] = '\0';
	snprintf(text, sizeof(text),
		 "[j]\nbench = put_lat\nfabric = %s, b\ndomain = %s\nmatrix = domain, fabric\n", v, v);
	efab_job_t *jobs;
	size_t n;
	char err[512];
	assert_int_equal(expand(text, &jobs, &n, err), 0);
	assert_int_equal(n, 2);
	assert_true(strlen(jobs[0].name) < sizeof(jobs[0].name));
	assert_true(has_args(&jobs[1], "--fabric", "b")); /* values survive a cut label */
	efab_jobs_free(jobs, n);
}

/* Regression (fuzz_config, UBSan): an empty [global] (no keys, kv == NULL)
 * and a job with its own matrix. */
static void test_empty_global_with_matrix(void **state)
{
	(void)state;
	const char *text = "[global]\n[j]\nbench = put_lat\nfabric = a, b\nmatrix = fabric\n";
	efab_job_t *jobs;
	size_t n;
	char err[512];
	assert_int_equal(expand(text, &jobs, &n, err), 0);
	assert_int_equal(n, 2);
	assert_true(has_args(&jobs[1], "--fabric", "b"));
	efab_jobs_free(jobs, n);
}

static void test_global_keys_apply_where_they_fit(void **state)
{
	(void)state;
	/* sizes is not an option of efab_probe: global keys skip it there */
	const char *text = "[global]\nsizes = 8\nprovider = shm\n[p]\nbench = probe\n[l]\nbench = get_lat\n";
	efab_job_t *jobs;
	size_t n;
	char err[512];
	assert_int_equal(expand(text, &jobs, &n, err), 0);
	assert_int_equal(n, 2);
	assert_false(has_args(&jobs[0], "--sizes", NULL));
	assert_true(has_args(&jobs[0], "--provider", "shm"));
	assert_true(has_args(&jobs[1], "--sizes", "8"));
	efab_jobs_free(jobs, n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_matrix_and_repeat_order),
		cmocka_unit_test(test_two_key_matrix),
		cmocka_unit_test(test_libfabric_installs),
		cmocka_unit_test(test_bad_configs),
		cmocka_unit_test(test_global_keys_apply_where_they_fit),
		cmocka_unit_test(test_long_matrix_label),
		cmocka_unit_test(test_empty_global_with_matrix),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
