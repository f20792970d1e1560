/* Which way libfabric's efa provider registered a GPU buffer (lib/reglog.c),
 * from its own MR messages: the strings are libfabric 2.6.0's and 2.7.0a1's
 * prov/efa/src/efa_mr.c (efa_mr_reg_ibv_mr, efa_mark_dmabuf_fail) as its
 * logger formats them; 2.1.0 and 2.4.0 register CUDA memory with ibv_reg_mr
 * and say nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <rdma/fabric.h>

#include "efab_reglog.h"

static void test_paths(void **state)
{
	(void)state;
	const uint32_t v26 = FI_VERSION(2, 6), v21 = FI_VERSION(2, 1), v117 = FI_VERSION(1, 17);
	/* dma-buf first, taken */
	assert_string_equal(efab_reglog_path("Registering dmabuf MR: fd=17 offset=0 len=4096\n", 1, 0, v26),
			    "dmabuf");
	/* no dma-buf fd for it: ibv_reg_mr on the address (peer memory) */
	assert_string_equal(efab_reglog_path("Unable to get dmabuf fd for cuda device buffer, Fall back to "
					     "ibv_reg_mr\n", 1, 0, v26), "va");
	/* dma-buf tried, refused by the device, then ibv_reg_mr */
	assert_string_equal(efab_reglog_path("Registering dmabuf MR: fd=17 offset=0 len=4096\n"
					     "assumed dmabuf support for cuda was incorrect\n", 1, 0, v26),
			    "dmabuf->va");
	/* silent: ibv_reg_mr in every release read */
	assert_string_equal(efab_reglog_path("", 1, 0, v26), "va");
	assert_string_equal(efab_reglog_path("", 1, 0, v21), "va");
	assert_string_equal(efab_reglog_path("", 1, 0, FI_VERSION(2, 7)), "va");
	/* a release not read, or the log not taken: no claim */
	assert_string_equal(efab_reglog_path("", 1, 0, v117), "unknown");
	assert_string_equal(efab_reglog_path("", 1, 0, FI_VERSION(2, 8)), "unknown");
	assert_string_equal(efab_reglog_path("Registering dmabuf MR: fd=1\n", 0, 0, v26), "unknown");
	/* efabench's own FI_MR_DMABUF: the one path libfabric has for it */
	assert_string_equal(efab_reglog_path("", 0, 1, v117), "dmabuf");
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_paths)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
