/* The atomic value model: simulate K initiators applying their operand
 * sequences one op at a time (the order libfabric may pick does not matter
 * for these ops) and compare with the closed form the benchmark checks; and
 * show that a wrong final value is rejected. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "efab_atomic.h"
#include "efab_opts.h"

static uint64_t apply(int aop, int dt, uint64_t cur, uint64_t opnd)
{
	uint64_t m = efab_dtype_mask(dt);
	switch (aop) {
	case EFAB_AOP_ADD:
	case EFAB_AOP_FADD: return (cur + opnd) & m;
	case EFAB_AOP_SWAP: return opnd;
	case EFAB_AOP_MIN: return opnd < cur ? opnd : cur;
	case EFAB_AOP_MAX: return opnd > cur ? opnd : cur;
	case EFAB_AOP_BOR: return cur | opnd;
	case EFAB_AOP_BAND: return cur & opnd;
	case EFAB_AOP_BXOR: return cur ^ opnd;
	}
	return cur;
}

static void test_model_matches_simulation(void **state)
{
	(void)state;
	static const int aops[] = {EFAB_AOP_ADD, EFAB_AOP_FADD, EFAB_AOP_SWAP, EFAB_AOP_MIN,
				   EFAB_AOP_MAX, EFAB_AOP_BOR,  EFAB_AOP_BAND, EFAB_AOP_BXOR};
	static const int dts[] = {EFAB_DT_U64, EFAB_DT_U32, EFAB_DT_I32, EFAB_DT_I64};
	static const uint64_t ks[] = {1, 2, 3};
	static const uint64_t cnts[] = {1, 2, 5, 31, 32, 33, 70, 1000};
	for (size_t a = 0; a < 8; a++)
		for (size_t d = 0; d < 4; d++)
			for (size_t ki = 0; ki < 3; ki++)
				for (size_t ci = 0; ci < 8; ci++) {
					int aop = aops[a], dt = dts[d];
					uint64_t k = ks[ki], cnt = cnts[ci];
					if (aop == EFAB_AOP_SWAP && k > 1)
						continue; /* order-dependent: checked as a range */
					uint64_t v = efab_atomic_init_value(aop, dt);
					for (uint64_t j = 0; j < cnt; j++) /* initiators interleaved */
						for (uint64_t i = 0; i < k; i++)
							v = apply(aop, dt, v, efab_atomic_operand(aop, dt, j));
					if (v != efab_atomic_expected(aop, dt, k, cnt))
						fail_msg("aop %d dt %d k %llu cnt %llu: simulated %llu, model %llu",
							 aop, dt, (unsigned long long)k, (unsigned long long)cnt,
							 (unsigned long long)v,
							 (unsigned long long)efab_atomic_expected(aop, dt, k, cnt));
					assert_true(efab_atomic_final_ok(aop, dt, k, cnt, 1, 1, 0, v));
				}
}

static void test_validator_rejects_wrong_final(void **state)
{
	(void)state;
	/* 1000 fetch-adds of 1 from 3 initiators must leave 3000 */
	assert_int_equal(efab_atomic_expected(EFAB_AOP_FADD, EFAB_DT_U64, 3, 1000), 3000);
	assert_true(efab_atomic_final_ok(EFAB_AOP_FADD, EFAB_DT_U64, 3, 1000, 1, 1, 0, 3000));
	assert_false(efab_atomic_final_ok(EFAB_AOP_FADD, EFAB_DT_U64, 3, 1000, 1, 1, 0, 2999));
	assert_false(efab_atomic_final_ok(EFAB_AOP_FADD, EFAB_DT_U64, 3, 1000, 1, 1, 0, 3001));
	assert_false(efab_atomic_final_ok(EFAB_AOP_MIN, EFAB_DT_U32, 1, 10, 1, 1, 0,
					  EFAB_ATOMIC_MINMAX_TOP));
	/* cswap chains: the final value is the number of successes */
	assert_true(efab_atomic_final_ok(EFAB_AOP_CSWAP, EFAB_DT_U64, 2, 100, 1, 1, 150, 150));
	assert_false(efab_atomic_final_ok(EFAB_AOP_CSWAP, EFAB_DT_U64, 2, 100, 1, 1, 150, 149));
	/* cswap rate (_bw): the word never changes */
	assert_true(efab_atomic_final_ok(EFAB_AOP_CSWAP, EFAB_DT_U64, 1, 100, 64, 0, 0, 0));
	assert_false(efab_atomic_final_ok(EFAB_AOP_CSWAP, EFAB_DT_U64, 1, 100, 64, 0, 0, 1));
	/* swap with a window: one of the last window's values */
	assert_true(efab_atomic_final_ok(EFAB_AOP_SWAP, EFAB_DT_U64, 1, 640, 64, 0, 0, 600));
	assert_false(efab_atomic_final_ok(EFAB_AOP_SWAP, EFAB_DT_U64, 1, 640, 64, 0, 0, 500));
	assert_false(efab_atomic_final_ok(EFAB_AOP_SWAP, EFAB_DT_U64, 1, 640, 1, 1, 0, 639));
}

static void test_store_load_floats(void **state)
{
	(void)state;
	double d[2];
	float f[2];
	efab_atomic_word_store(EFAB_DT_F64, d, 1, 3000);
	assert_true(d[1] == 3000.0);
	assert_int_equal(efab_atomic_word_load(EFAB_DT_F64, d, 1), 3000);
	efab_atomic_word_store(EFAB_DT_F32, f, 0, EFAB_ATOMIC_MINMAX_TOP - 1);
	assert_int_equal(efab_atomic_word_load(EFAB_DT_F32, f, 0), EFAB_ATOMIC_MINMAX_TOP - 1);
	uint32_t u[1];
	efab_atomic_word_store(EFAB_DT_I32, u, 0, efab_atomic_init_value(EFAB_AOP_BAND, EFAB_DT_I32));
	assert_int_equal(u[0], 0xffffffffu);
	int kind;
	enum fi_op op;
	efab_aop_map(EFAB_AOP_SWAP, &kind, &op);
	assert_int_equal(op, FI_ATOMIC_WRITE);
	efab_aop_map(EFAB_AOP_CSWAP, &kind, &op);
	assert_int_equal(op, FI_CSWAP);
	assert_int_equal(efab_fi_dtype(EFAB_DT_F32), FI_FLOAT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_model_matches_simulation),
		cmocka_unit_test(test_validator_rejects_wrong_final),
		cmocka_unit_test(test_store_load_floats),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
