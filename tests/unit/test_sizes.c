#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "efab_opts.h"

static void parse_ok(const char *s, uint64_t min, uint64_t max, uint64_t f)
{
	efab_sizes_t r;
	char err[256] = "";
	assert_int_equal(efab_sizes_parse(s, &r, err, sizeof(err)), EFAB_OK);
	assert_int_equal(r.min, min);
	assert_int_equal(r.max, max);
	assert_int_equal(r.factor, f);
}

static void parse_bad(const char *s, const char *msg_part)
{
	efab_sizes_t r = {7, 7, 7};
	char err[256] = "";
	assert_int_equal(efab_sizes_parse(s, &r, err, sizeof(err)), EFAB_EUSAGE);
	assert_non_null(strstr(err, msg_part));
	assert_int_equal(r.min, 7); /* outputs untouched on failure */
}

static void test_good(void **state)
{
	(void)state;
	parse_ok("1:4M", 1, 4u << 20, 2);
	parse_ok("8", 8, 8, 2);
	parse_ok("4K", 4096, 4096, 2);
	parse_ok("8:64K:x4", 8, 65536, 4);
	parse_ok("1K:1G:8", 1024, 1u << 30, 8);
	parse_ok("2k:2m", 2048, 2u << 20, 2);
	parse_ok("1Ki:1Mi", 1024, 1u << 20, 2);
	parse_ok("1T", 1ull << 40, 1ull << 40, 2);
}

static void test_bad(void **state)
{
	(void)state;
	parse_bad("", "invalid");
	parse_bad("0", "at least 1");
	parse_bad("abc", "invalid size");
	parse_bad("-5", "invalid size");
	parse_bad("4M:1K", "MIN is larger");
	parse_bad("1:99999999T", "out of range");
	parse_bad("1:2T", "out of range");
	parse_bad("99999999999999999999999", "out of range");
	parse_bad("1:4M:x1", "invalid factor");
	parse_bad("1:4M:xx", "invalid factor");
	parse_bad("1:2:3:4", "expected MIN:MAX");
	parse_bad("1::4", "invalid size");
	parse_bad("1K ", "invalid size");
	parse_bad("0x10", "invalid size");
}

static void test_sequence(void **state)
{
	(void)state;
	efab_sizes_t s = {1, 4u << 20, 2};
	assert_int_equal(efab_sizes_count(&s), 23);
	assert_int_equal(efab_sizes_at(&s, 0), 1);
	assert_int_equal(efab_sizes_at(&s, 22), 4u << 20);
	efab_sizes_t t = {8, 100, 4}; /* 8 32 (128 > 100) */
	assert_int_equal(efab_sizes_count(&t), 2);
	efab_sizes_t one = {4096, 4096, 2};
	assert_int_equal(efab_sizes_count(&one), 1);
	efab_sizes_t big = {1ull << 39, 1ull << 40, 1024}; /* no overflow past the top */
	assert_int_equal(efab_sizes_count(&big), 1);
}

static void test_size_str(void **state)
{
	(void)state;
	char b[32];
	efab_size_str(1536, b, sizeof(b));
	assert_string_equal(b, "1536");
	efab_size_str(4096, b, sizeof(b));
	assert_string_equal(b, "4K");
	efab_size_str(4u << 20, b, sizeof(b));
	assert_string_equal(b, "4M");
	efab_size_str(1ull << 30, b, sizeof(b));
	assert_string_equal(b, "1G");
	efab_size_str(8, b, sizeof(b));
	assert_string_equal(b, "8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_sequence),
		cmocka_unit_test(test_size_str),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
