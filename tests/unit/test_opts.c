#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "efab_opts.h"
#include "rows.h"

/* The options a benchmark row accepts. */
#define OPTIONS_OF(name) (efab_row(name)->options)

static int parse(efab_opts_t *o, unsigned options, char *err, const char *line)
{
	char buf[512], *argv[32];
	int argc = 0;
	snprintf(buf, sizeof(buf), "%s", line);
	argv[argc++] = "prog";
	for (char *t = strtok(buf, " "); t && argc < 31; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	efab_opts_init(o);
	return efab_opts_parse(o, options, argc, argv, err, 256);
}

static void test_defaults_and_values(void **state)
{
	(void)state;
	efab_opts_t o;
	char err[256] = "";
	assert_int_equal(parse(&o, OPTIONS_OF("efab_put_lat"), err, ""), EFAB_PARSE_OK);
	assert_int_equal(o.sizes.min, 1);
	assert_int_equal(o.sizes.max, 4u << 20);
	assert_true(o.timeout_s == 30.0);
	assert_int_equal(o.op, EFAB_OP_DEFAULT);
	assert_int_equal(parse(&o, OPTIONS_OF("efab_put_lat"), err,
			       "-p efa -f efa-direct -m 8:64K -n 100 -w 5 -c --csv out.csv -t 2.5 "
			       "-o writedata --mem host:host-huge -vv"),
			 EFAB_PARSE_OK);
	assert_string_equal(o.provider, "efa");
	assert_string_equal(o.fabric, "efa-direct");
	assert_int_equal(o.sizes.min, 8);
	assert_int_equal(o.sizes.max, 65536);
	assert_int_equal(o.iters, 100);
	assert_int_equal(o.warmup, 5);
	assert_int_equal(o.check, 1);
	assert_string_equal(o.csv, "out.csv");
	assert_true(o.timeout_s == 2.5);
	assert_int_equal(o.op, EFAB_OP_WRITEDATA);
	assert_int_equal(o.mem_local, EFAB_MEM_HOST);
	assert_int_equal(o.mem_remote, EFAB_MEM_HOST_HUGE);
	assert_int_equal(o.verbose, 2);
	assert_int_equal(parse(&o, OPTIONS_OF("efab_put_lat"), err, "--provider=shm --sizes 4K"), EFAB_PARSE_OK);
	assert_string_equal(o.provider, "shm");
	assert_int_equal(o.sizes.max, 4096);
	assert_int_equal(parse(&o, OPTIONS_OF("efab_put_lat"), err, "--mem cuda --gpu 3"), EFAB_PARSE_OK);
	assert_int_equal(o.mem_local, EFAB_MEM_CUDA);
	assert_int_equal(o.mem_remote, EFAB_MEM_CUDA);
	assert_int_equal(o.gpu, 3);
}

/* --mem cuda-vmm (CUDA VMM memory, cuMemCreate) where --mem cuda is taken:
 * both sides, initiator only, and its name back for rows and headers. */
static void test_mem_cuda_vmm(void **state)
{
	(void)state;
	efab_opts_t o;
	char err[256] = "";
	const char *benches[] = {"efab_put_lat", "efab_get_lat", "efab_put_bw", "efab_get_bw", "efab_mr_reg",
				 "efab_shmem_reg"};
	for (size_t i = 0; i < sizeof(benches) / sizeof(benches[0]); i++) {
		if (parse(&o, OPTIONS_OF(benches[i]), err, "--mem cuda-vmm") != EFAB_PARSE_OK)
			fail_msg("%s --mem cuda-vmm: %s", benches[i], err);
		assert_int_equal(o.mem_local, EFAB_MEM_CUDA_VMM);
		assert_int_equal(o.mem_remote, EFAB_MEM_CUDA_VMM);
	}
	assert_int_equal(parse(&o, OPTIONS_OF("efab_put_lat"), err, "--mem cuda-vmm:host"), EFAB_PARSE_OK);
	assert_int_equal(o.mem_local, EFAB_MEM_CUDA_VMM);
	assert_int_equal(o.mem_remote, EFAB_MEM_HOST);
	assert_int_equal(parse(&o, OPTIONS_OF("efab_get_bw"), err, "--mem host:cuda-vmm --dmabuf"), EFAB_PARSE_OK);
	assert_int_equal(o.mem_local, EFAB_MEM_HOST);
	assert_int_equal(o.mem_remote, EFAB_MEM_CUDA_VMM);
	assert_string_equal(efab_mem_name(EFAB_MEM_CUDA_VMM), "cuda-vmm");
	assert_string_equal(efab_mem_name(EFAB_MEM_CUDA), "cuda");
	assert_string_equal(efab_mem_name(EFAB_MEM_CUDA_VMM + 1), "?");
	assert_int_equal(parse(&o, OPTIONS_OF("efab_put_lat"), err, "--mem cuda-vmm:"), EFAB_EUSAGE);
	assert_int_equal(parse(&o, OPTIONS_OF("efab_put_lat"), err, "--mem cuda-vm"), EFAB_EUSAGE);
	assert_non_null(strstr(err, "cuda-vmm")); /* the message lists the kinds */
	assert_int_equal(parse(&o, OPTIONS_OF("efab_put_lat"), err, "--mem vmm"), EFAB_EUSAGE);
}

static void expect_bad(unsigned options, const char *line, const char *msg_part)
{
	efab_opts_t o;
	char err[256] = "";
	int rc = parse(&o, options, err, line);
	if (rc != EFAB_EUSAGE || !strstr(err, msg_part))
		fail_msg("'%s': rc %d, message '%s' (wanted '%s')", line, rc, err, msg_part);
}

static void test_bad(void **state)
{
	(void)state;
	expect_bad(OPTIONS_OF("efab_put_lat"), "--bogus", "unknown option '--bogus'");
	expect_bad(OPTIONS_OF("efab_put_lat"), "-Z", "unknown option '-Z'");
	expect_bad(OPTIONS_OF("efab_put_lat"), "-n", "needs a value");
	expect_bad(OPTIONS_OF("efab_put_lat"), "-n abc", "expected a non-negative integer");
	expect_bad(OPTIONS_OF("efab_put_lat"), "-n -5", "expected a non-negative integer");
	expect_bad(OPTIONS_OF("efab_put_lat"), "-n 0", "out of range");
	expect_bad(OPTIONS_OF("efab_put_lat"), "-n 99999999999999999999999", "out of range");
	expect_bad(OPTIONS_OF("efab_put_lat"), "-t 0", "out of range");
	expect_bad(OPTIONS_OF("efab_put_lat"), "-t nan", "expected a number");
	expect_bad(OPTIONS_OF("efab_put_lat"), "-t 1s", "expected a number");
	expect_bad(OPTIONS_OF("efab_put_lat"), "-o read2", "expected one of write, writedata, read");
	expect_bad(OPTIONS_OF("efab_put_lat"), "--mem gpu", "--mem");
	expect_bad(OPTIONS_OF("efab_put_lat"), "--mem host:", "--mem");
	expect_bad(OPTIONS_OF("efab_put_lat"), "--gpu -1", "--gpu");
	expect_bad(OPTIONS_OF("efab_put_lat"), "-m 4M:1K", "MIN is larger");
	expect_bad(OPTIONS_OF("efab_put_lat"), "extra", "unexpected argument");
	/* window belongs to bandwidth benchmarks only */
	expect_bad(OPTIONS_OF("efab_put_lat"), "-W 4", "unknown option '-W'");
	expect_bad(OPTIONS_OF("efab_put_bw"), "-W 0", "out of range");
}

static void test_help_version(void **state)
{
	(void)state;
	efab_opts_t o;
	char err[256];
	assert_int_equal(parse(&o, OPTIONS_OF("efab_put_lat"), err, "-p shm --help"), EFAB_PARSE_HELP);
	assert_int_equal(parse(&o, OPTIONS_OF("efab_put_lat"), err, "-V"), EFAB_PARSE_VERSION);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	efab_opts_help(f, "efab_put_lat", "summary", OPTIONS_OF("efab_put_lat"));
	fclose(f);
	assert_non_null(strstr(buf, "--provider NAME"));
	assert_non_null(strstr(buf, "--src-unregistered"));
	assert_null(strstr(buf, "--window")); /* not an option of put_lat */
	assert_non_null(strstr(buf, "77"));
	free(buf);
}

static void test_set_by_name(void **state)
{
	(void)state;
	efab_opts_t o;
	char err[256];
	efab_opts_init(&o);
	assert_int_equal(efab_opts_set(&o, OPTIONS_OF("efab_put_bw"), "window", "16", err, sizeof(err)), 0);
	assert_int_equal(o.window, 16);
	assert_int_equal(efab_opts_set(&o, OPTIONS_OF("efab_put_bw"), "bidir", "true", err, sizeof(err)), 0);
	assert_int_equal(o.bidir, 1);
	assert_int_equal(efab_opts_set(&o, OPTIONS_OF("efab_put_bw"), "bidir", "no", err, sizeof(err)), 0);
	assert_int_equal(o.bidir, 0);
	assert_int_equal(efab_opts_set(&o, OPTIONS_OF("efab_put_bw"), "bidir", "maybe", err, sizeof(err)),
			 EFAB_EUSAGE);
	assert_int_equal(efab_opts_set(&o, OPTIONS_OF("efab_put_lat"), "window", "16", err, sizeof(err)),
			 EFAB_EUSAGE);
	assert_non_null(strstr(err, "unknown option 'window'"));
	assert_int_equal(efab_opts_set(&o, OPTIONS_OF("efab_atomic_lat"), "aop", "cswap", err, sizeof(err)), 0);
	assert_int_equal(o.aop, EFAB_AOP_CSWAP);
	char longv[300];
	memset(longv, 'a', sizeof(longv) - 1);
	longv[sizeof(longv) - 1] = '\0';
	assert_int_equal(efab_opts_set(&o, OPTIONS_OF("efab_put_lat"), "fabric", longv, err, sizeof(err)),
			 EFAB_EUSAGE);
	assert_non_null(strstr(err, "too long"));
}

/* Regression (found by fuzz_opts): a parse that stops inside a cluster of
 * short options ("-hc" returns at 'h') must not leak into the next parse. */
static void test_reparse_after_cluster(void **state)
{
	(void)state;
	efab_opts_t o;
	char err[256];
	char a0[] = "prog", a1[] = "-hc";
	char *argv1[] = {a0, a1, NULL};
	efab_opts_init(&o);
	assert_int_equal(efab_opts_parse(&o, OPTIONS_OF("efab_put_lat"), 2, argv1, err, sizeof(err)),
			 EFAB_PARSE_HELP);
	char b0[] = "prog", b1[] = "-p", b2[] = "shm";
	char *argv2[] = {b0, b1, b2, NULL};
	efab_opts_init(&o);
	assert_int_equal(efab_opts_parse(&o, OPTIONS_OF("efab_put_lat"), 3, argv2, err, sizeof(err)),
			 EFAB_PARSE_OK);
	assert_string_equal(o.provider, "shm");
	assert_int_equal(o.check, 0);
}

/* Issue 48: the peak-rate options, where each applies. */
static void test_peak_options(void **state)
{
	(void)state;
	efab_opts_t o;
	char err[256] = "";
	assert_int_equal(parse(&o, OPTIONS_OF("efab_put_bw"), err, ""), EFAB_PARSE_OK);
	assert_int_equal(o.post_list, 1);
	assert_int_equal(o.pipeline, 0);
	assert_int_equal(o.high_pps, 0);
	assert_int_equal(o.tclass, EFAB_TC_UNSPEC);
	assert_int_equal(parse(&o, OPTIONS_OF("efab_put_bw"), err,
			       "--post-list 8 --pipeline --high-pps --tclass low-latency"),
			 EFAB_PARSE_OK);
	assert_int_equal(o.post_list, 8);
	assert_int_equal(o.pipeline, 1);
	assert_int_equal(o.high_pps, 1);
	assert_int_equal(o.tclass, EFAB_TC_LOW_LATENCY);
	assert_string_equal(efab_tclass_name(o.tclass), "low-latency");
	assert_int_equal(o.eps, 1);
	assert_int_equal(parse(&o, OPTIONS_OF("efab_get_bw"), err, "--post-list 4 --pipeline --eps 4"),
			 EFAB_PARSE_OK);
	assert_int_equal(o.eps, 4);
	assert_int_equal(parse(&o, OPTIONS_OF("efab_put_bw"), err, "--eps 0"), EFAB_EUSAGE);
	assert_int_equal(parse(&o, OPTIONS_OF("efab_put_bw"), err, "--eps 65"), EFAB_EUSAGE);
	/* the hint marks writes: not an option of the read benchmark */
	assert_int_equal(parse(&o, OPTIONS_OF("efab_get_bw"), err, "--high-pps"), EFAB_EUSAGE);
	/* a traffic class for any endpoint, the loop's techniques for streams only */
	assert_int_equal(parse(&o, OPTIONS_OF("efab_put_lat"), err, "--tclass bulk-data"),
			 EFAB_PARSE_OK);
	assert_int_equal(o.tclass, EFAB_TC_BULK_DATA);
	assert_int_equal(parse(&o, OPTIONS_OF("efab_put_lat"), err, "--pipeline"), EFAB_EUSAGE);
	assert_int_equal(parse(&o, OPTIONS_OF("efab_put_bw"), err, "--post-list 0"), EFAB_EUSAGE);
	assert_int_equal(parse(&o, OPTIONS_OF("efab_put_bw"), err, "--tclass fast"), EFAB_EUSAGE);
}

static void test_table_consistent(void **state)
{
	(void)state;
	/* every option has help and one group; a long name or short letter
	 * appears once in the options of any one row (efab_shmem_lat's -o put|get
	 * and the RMA rows' -o write|writedata|read share the name, never a row),
	 * and a name used twice is used by two groups that no row takes together */
	for (size_t i = 0; i < efab_n_optdefs; i++) {
		const efab_optdef_t *d = &efab_optdefs[i];
		assert_non_null(d->help);
		assert_true(d->group != 0 && (d->group & (d->group - 1)) == 0);
		for (size_t j = i + 1; j < efab_n_optdefs; j++) {
			const efab_optdef_t *e = &efab_optdefs[j];
			int same = !strcmp(d->name, e->name) || (d->short_name && d->short_name == e->short_name);
			if (!same)
				continue;
			assert_true(d->group != e->group);
			for (size_t r = 0; r < efab_n_bench_rows; r++)
				assert_false((efab_bench_rows[r].options & d->group) &&
					     (efab_bench_rows[r].options & e->group));
		}
	}
}

/* NVSHMEM's RMA rows: their own -o and --initiator, no RMA row's */
static void test_shmem_options(void **state)
{
	(void)state;
	efab_opts_t o;
	char err[256] = "";
	assert_int_equal(parse(&o, OPTIONS_OF("efab_shmem_lat"), err, ""), EFAB_PARSE_OK);
	assert_int_equal(o.shmem_op, EFAB_SHMEM_PUT);
	assert_int_equal(o.shmem_initiator, EFAB_SHMEM_HOST);
	assert_int_equal(o.shmem_src, EFAB_SHMEM_SRC_CUDA);
	assert_int_equal(o.shmem_register, 0);
	assert_int_equal(parse(&o, OPTIONS_OF("efab_shmem_lat"), err,
			       "-o get --initiator stream --src host --register -m 8:16M -n 10 -w 2 -c"),
			 EFAB_PARSE_OK);
	assert_int_equal(o.shmem_op, EFAB_SHMEM_GET);
	assert_int_equal(o.shmem_initiator, EFAB_SHMEM_STREAM);
	assert_int_equal(o.shmem_src, EFAB_SHMEM_SRC_HOST);
	assert_int_equal(o.shmem_register, 1);
	assert_int_equal(o.op, EFAB_OP_DEFAULT); /* the RMA rows' field untouched */
	assert_int_equal(parse(&o, OPTIONS_OF("efab_shmem_bw"), err, "--initiator block -W 16"),
			 EFAB_PARSE_OK);
	assert_int_equal(o.shmem_initiator, EFAB_SHMEM_BLOCK);
	assert_int_equal(o.window, 16);
	assert_int_equal(o.gpu_threads, 0); /* the kernel's default (128) is shmem_put.cc's */
	/* --gpu-threads: the block initiator's CTA, 1..1024 here (the GPU
	 * initiator's entry allows 1..32) */
	assert_int_equal(parse(&o, OPTIONS_OF("efab_shmem_lat"), err, "--initiator block --gpu-threads 1024"),
			 EFAB_PARSE_OK);
	assert_int_equal(o.gpu_threads, 1024);
	assert_int_equal(parse(&o, OPTIONS_OF("efab_shmem_bw"), err, "--gpu-threads 1025"), EFAB_EUSAGE);
	assert_int_equal(parse(&o, OPTIONS_OF("efab_put_bw"), err, "--initiator gpu --gpu-threads 64"),
			 EFAB_EUSAGE);
	/* a latency row has no window; each row refuses the other's words */
	assert_int_equal(parse(&o, OPTIONS_OF("efab_shmem_lat"), err, "-W 16"), EFAB_EUSAGE);
	assert_int_equal(parse(&o, OPTIONS_OF("efab_shmem_lat"), err, "-o write"), EFAB_EUSAGE);
	assert_non_null(strstr(err, "put, get"));
	assert_int_equal(parse(&o, OPTIONS_OF("efab_shmem_bw"), err, "--initiator gpu"), EFAB_EUSAGE);
	assert_int_equal(parse(&o, OPTIONS_OF("efab_shmem_bw"), err, "--src cuda-host"), EFAB_EUSAGE);
	assert_int_equal(parse(&o, OPTIONS_OF("efab_put_lat"), err, "-o put"), EFAB_EUSAGE);
	assert_int_equal(parse(&o, OPTIONS_OF("efab_put_lat"), err, "--initiator stream"), EFAB_EUSAGE);
	assert_int_equal(parse(&o, OPTIONS_OF("efab_put_lat"), err, "--initiator gpu"), EFAB_PARSE_OK);
	assert_int_equal(parse(&o, OPTIONS_OF("efab_put_lat"), err, "--register"), EFAB_EUSAGE);
	/* NVSHMEM's knobs (efab_nvtune.h): the two NVSHMEM RMA rows only */
	assert_int_equal(parse(&o, OPTIONS_OF("efab_shmem_bw"), err, ""), EFAB_PARSE_OK);
	assert_int_equal(o.nv_batch_rma, 0);
	assert_int_equal(o.nv_batch_ops + o.nv_proxy_batch + o.nv_lf_proxy_batch, 0);
	assert_int_equal(parse(&o, OPTIONS_OF("efab_shmem_bw"), err,
			       "--nv-batch-rma off --nv-batch-ops 1 --nv-proxy-batch 64 --nv-lf-proxy-batch 8"),
			 EFAB_PARSE_OK);
	assert_int_equal(o.nv_batch_rma, 2);
	assert_int_equal(o.nv_batch_ops, 1);
	assert_int_equal(o.nv_proxy_batch, 64);
	assert_int_equal(o.nv_lf_proxy_batch, 8);
	assert_int_equal(parse(&o, OPTIONS_OF("efab_shmem_lat"), err, "--nv-batch-rma on"), EFAB_PARSE_OK);
	assert_int_equal(o.nv_batch_rma, 1);
	assert_int_equal(parse(&o, OPTIONS_OF("efab_shmem_lat"), err, "--nv-batch-ops 0"), EFAB_EUSAGE);
	assert_int_equal(parse(&o, OPTIONS_OF("efab_shmem_lat"), err, "--nv-proxy-batch 65537"), EFAB_EUSAGE);
	assert_int_equal(parse(&o, OPTIONS_OF("efab_shmem_reg"), err, "--nv-batch-rma off"), EFAB_EUSAGE);
	assert_int_equal(parse(&o, OPTIONS_OF("efab_put_bw"), err, "--nv-batch-ops 4"), EFAB_EUSAGE);
	/* --nbi: the latency row's form; bandwidth is always _nbi */
	assert_int_equal(parse(&o, OPTIONS_OF("efab_shmem_lat"), err, ""), EFAB_PARSE_OK);
	assert_int_equal(o.shmem_nbi, 0);
	assert_int_equal(parse(&o, OPTIONS_OF("efab_shmem_lat"), err, "--nbi --initiator stream"), EFAB_PARSE_OK);
	assert_int_equal(o.shmem_nbi, 1);
	assert_int_equal(parse(&o, OPTIONS_OF("efab_shmem_bw"), err, "--nbi"), EFAB_EUSAGE);
	assert_int_equal(parse(&o, OPTIONS_OF("efab_put_lat"), err, "--nbi"), EFAB_EUSAGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_and_values), cmocka_unit_test(test_bad),
		cmocka_unit_test(test_help_version),        cmocka_unit_test(test_set_by_name),
		cmocka_unit_test(test_table_consistent),   cmocka_unit_test(test_peak_options),
		cmocka_unit_test(test_reparse_after_cluster), cmocka_unit_test(test_shmem_options),
		cmocka_unit_test(test_mem_cuda_vmm),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
