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
	r->lat = (efab_stats_t){1000, 1.5, 2.25, 2.5, 9.125, 10, 12.0625, 0.5, 2.0, 2.5};
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

/* Schema 1's header is schema 2's: a file whose rows are schema 1 is
 * refused by its first row's schema cell, not appended to; ours is. */
static void test_other_schema_refused(void **state)
{
	(void)state;
	efab_run_info_t ri;
	efab_row_t r;
	char path[] = "/tmp/efab_csv_XXXXXX", header[4096], line[8192];
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	fill(&ri, &r);
	efab_csv_header(&ri, header, sizeof(header));
	int n = efab_csv_format(&ri, &r, line, sizeof(line));
	assert_true(n > 2);
	assert_int_equal(line[0], '0' + EFAB_CSV_SCHEMA);
	assert_int_equal(EFAB_CSV_SCHEMA, 2);
	line[0] = '1';
	FILE *f = fdopen(fd, "w");
	assert_non_null(f);
	fprintf(f, "%s\n%s", header, line);
	fclose(f);
	efab_csv_t csv;
	assert_int_equal(efab_csv_open(path, &ri, &csv), EFAB_EUSAGE);
	assert_int_equal(csv.fd, -1);
	line[0] = '0' + EFAB_CSV_SCHEMA;
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%s\n%s", header, line);
	fclose(f);
	assert_int_equal(efab_csv_open(path, &ri, &csv), EFAB_OK);
	assert_int_equal(efab_csv_write(&csv, &ri, &r), EFAB_OK);
	efab_csv_close(&csv);
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

/* Any layout through the same writer: efab_scan's header and rows. The
 * first row is one of results/20261130-093309-vm-testcluster-scan-8nodes-slow-node5/scan.csv,
 * byte for byte; the second has names that need quoting and empty cells
 * (a NIC without latency figures). */
#define SCAN_HEADER                                                                             \
	"schema,run_id,timestamp,bench,provider,fabric,libfabric_version,provider_version,pass," \
	"round,node_a,node_b,nic_index,nic_a,nic_b,lat_size_bytes,lat_iters,lat_us_p50,"        \
	"lat_us_p99,bw_size_bytes,window,bw_MBps,bw_rev_MBps,errors"

static void test_cells(void **state)
{
	(void)state;
	char path[] = "/tmp/efab_csv_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	const char *sample[] = {"1", "20261130-093058-node0-7348", "2026-11-30T09:30:58Z", "scan",
				"tcp;ofi_rxm", "10.77.0.0/24", "1.17", "117.0", "1", "1", "node0",
				"node7", "0", "eth0", "eth0", "8", "1000", "6.798", "52.877", "65536",
				"16", "1626.639", "1270.794", "0"};
	const char *odd[] = {"1", "run,\"7\"", "2026-11-30T09:30:58Z", "scan", "tcp;ofi_rxm",
			     "10.77.0.0/24", "1.17", "117.0 \"simulated\"", "2", "3", "node\n1",
			     "node,2", "1", "rdmap\r0", "\"", "8", "1000", "", "", "65536", "16",
			     "", "24.698", "2"};
	assert_int_equal(EFAB_ARRAY_SIZE(sample), 24);
	assert_int_equal(EFAB_ARRAY_SIZE(odd), 24);
	efab_csv_t csv;
	assert_int_equal(efab_csv_open_with_header(path, SCAN_HEADER, &csv), 0);
	assert_int_equal(efab_csv_write_cells(&csv, sample, 24), 0);
	assert_int_equal(efab_csv_write_cells(&csv, odd, 24), 0);
	efab_csv_close(&csv);
	/* reopening appends without a second header; another header is refused */
	assert_int_equal(efab_csv_open_with_header(path, SCAN_HEADER, &csv), 0);
	efab_csv_close(&csv);
	assert_int_equal(efab_csv_open_with_header(path, "schema,run_id", &csv), 2);
	const char *want =
		SCAN_HEADER "\n"
		"1,20261130-093058-node0-7348,2026-11-30T09:30:58Z,scan,tcp;ofi_rxm,10.77.0.0/24,"
		"1.17,117.0,1,1,node0,node7,0,eth0,eth0,8,1000,6.798,52.877,65536,16,1626.639,"
		"1270.794,0\n"
		"1,\"run,\"\"7\"\"\",2026-11-30T09:30:58Z,scan,tcp;ofi_rxm,10.77.0.0/24,1.17,"
		"\"117.0 \"\"simulated\"\"\",2,3,\"node 1\",\"node,2\",1,\"rdmap 0\",\"\"\"\",8,1000,,,"
		"65536,16,,24.698,2\n";
	assert_string_equal(slurp(path), want);
	unlink(path);

	/* a row that does not fit is refused whole, wherever it overflows */
	char small[64];
	assert_int_equal(efab_csv_format_cells(sample, 24, small, sizeof(small)), -1);
	const char *one[] = {"a\"b"};
	assert_int_equal(efab_csv_format_cells(one, 1, small, 7), -1); /* "a""b" + \n */
	assert_int_equal(efab_csv_format_cells(one, 1, small, 8), 7);
	assert_string_equal(small, "\"a\"\"b\"\n");
	assert_int_equal(efab_csv_format_cells(one, 1, small, 6), -1);
}

/* The engine's terminal table: the default set, "all" less what cannot
 * apply, names by the table's or the CSV's name, a bad name, fixed widths. */
static void test_table_columns(void **state)
{
	(void)state;
	efab_run_info_t ri;
	efab_row_t r;
	efab_table_t t;
	char err[1024], out[4096];
	fill(&ri, &r);
	ri.extra_cols[1] = "initiator";
	ri.extra_cols[2] = "nic_tx_bytes";
	ri.n_extra = 3;
	snprintf(r.extra[1], sizeof(r.extra[1]), "cpu");
	assert_int_equal(efab_table_pick(&t, &ri, 1, 0, "", "size,iters,p50_us,nosuch,errors", NULL,
					 err, sizeof(err)),
			 EFAB_OK);
	assert_int_equal(t.n, 4); /* a default name the run lacks is left out */
	assert_int_equal(efab_table_pick(&t, &ri, 1, 0, "all", "", "initiator", err, sizeof(err)),
			 EFAB_OK);
	assert_int_equal(t.n,
			 12); /* 11 built-in latency columns + inject: no nic_*, no initiator */
	assert_int_equal(efab_table_pick(&t, &ri, 1, 0, "lat_us_p50,initiator,MB/s", "", NULL, err,
					 sizeof(err)),
			 EFAB_EUSAGE); /* MB/s: not a latency run's */
	assert_non_null(strstr(err, "has no column 'MB/s'; columns: all, size, op, iters"));
	assert_null(strchr(err, '\n'));
	assert_int_equal(efab_table_pick(&t, &ri, 1, 0, "size,lat_us_p50,initiator", "", NULL, err,
					 sizeof(err)),
			 EFAB_OK);
	FILE *f = fmemopen(out, sizeof(out), "w");
	assert_non_null(f);
	efab_table_head(f, &t, &ri);
	efab_table_line(f, &t, &ri, &r);
	fclose(f);
	assert_string_equal(out, "    size    p50_us initiator\n"
				 "      4K      2.25       cpu\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden),        cmocka_unit_test(test_other_schema_refused),
		cmocka_unit_test(test_row_too_long),  cmocka_unit_test(test_cells),
		cmocka_unit_test(test_table_columns),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
