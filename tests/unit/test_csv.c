#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "efab_result.h"

#ifndef EFAB_TEST_DATA
#define EFAB_TEST_DATA "tests/data"
#endif

static void fill(efab_run_info_t *ri, efab_row_t *r)
{
	memset(ri, 0, sizeof(*ri));
	snprintf(ri->run_id, sizeof(ri->run_id), "golden-run");
	snprintf(ri->timestamp, sizeof(ri->timestamp), "2026-01-02T03:04:05Z");
	snprintf(ri->bench, sizeof(ri->bench), "put_lat");
	snprintf(ri->provider, sizeof(ri->provider), "tcp;ofi_rxm");
	snprintf(ri->fabric, sizeof(ri->fabric), "127.0.0.1/32");
	snprintf(ri->domain, sizeof(ri->domain), "lo");
	snprintf(ri->libfabric_version, sizeof(ri->libfabric_version), "1.17");
	snprintf(ri->provider_version, sizeof(ri->provider_version), "117.0");
	efab_run_info_request(ri, "tcp", NULL); /* asked -p tcp, no -f */
	snprintf(ri->libfabric_built, sizeof(ri->libfabric_built), "1.17");
	snprintf(ri->libfabric_path, sizeof(ri->libfabric_path), "/opt/amazon/efa/lib64/libfabric.so.1");
	snprintf(ri->efa_installer, sizeof(ri->efa_installer), "1.38.0");
	snprintf(ri->mem_local, sizeof(ri->mem_local), "host");
	snprintf(ri->mem_remote, sizeof(ri->mem_remote), "cuda");
	ri->ranks = 2;
	ri->extra_cols[0] = "inject";
	ri->n_extra = 1;
	memset(r, 0, sizeof(*r));
	snprintf(r->op, sizeof(r->op), "write");
	r->pairs = 1;
	r->size = 4096;
	r->iters = 1000;
	r->has_lat = 1;
	r->lat = (efab_stats_t){1000, 1.5, 2.25, 2.5, 9.125, 10, 12.0625, 0.5};
	r->errors = 3;
	snprintf(r->extra[0], sizeof(r->extra[0]), "yes");
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	static char buf[8192];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void test_golden(void **state)
{
	(void)state;
	efab_run_info_t ri;
	efab_row_t r;
	char path[] = "/tmp/efab_csv_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	fill(&ri, &r);
	efab_csv_t csv;
	assert_int_equal(efab_csv_open(path, &ri, &csv), 0);
	assert_int_equal(efab_csv_write(&csv, &ri, &r), 0);
	r.has_lat = 0;
	r.has_bw = 1;
	r.bw_MBps = 12345.678;
	r.msg_rate_Mops = 3.0141592;
	r.size = 1 << 20;
	r.errors = 0;
	r.extra[0][0] = '\0';
	snprintf(r.op, sizeof(r.op), "odd,\"name\"");
	assert_int_equal(efab_csv_write(&csv, &ri, &r), 0);
	efab_csv_close(&csv);
	/* reopening appends without a second header */
	assert_int_equal(efab_csv_open(path, &ri, &csv), 0);
	efab_csv_close(&csv);
	char want_path[512];
	snprintf(want_path, sizeof(want_path), "%s/golden_put_lat.csv", EFAB_TEST_DATA);
	char *got = strdup(slurp(path));
	assert_string_equal(got, slurp(want_path));
	free(got);
	/* a file with other columns is refused */
	ri.n_extra = 0;
	assert_int_equal(efab_csv_open(path, &ri, &csv), 2);
	unlink(path);
}

static void test_row_too_long(void **state)
{
	(void)state;
	efab_run_info_t ri;
	efab_row_t r;
	char small[64];
	fill(&ri, &r);
	assert_int_equal(efab_csv_format(&ri, &r, small, sizeof(small)), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden),
		cmocka_unit_test(test_row_too_long),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
