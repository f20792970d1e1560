/* The value model of the atomic benchmarks: initial values, operand
 * sequences and the final values they must produce. Pure functions, so the
 * validation is unit-tested without a fabric. */
#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>

#include "efab_atomic.h"
#include "efab_ops.h"
#include "efab_opts.h"

#define MINMAX_TOP EFAB_ATOMIC_MINMAX_TOP

void efab_aop_map(int aop, int *kind, enum fi_op *op)
{
	static const struct {
		int kind;
		enum fi_op op;
	} m[] = {
		[EFAB_AOP_ADD] = {EFAB_ATOMIC_PLAIN, FI_SUM},
		[EFAB_AOP_FADD] = {EFAB_ATOMIC_FETCH, FI_SUM},
		[EFAB_AOP_CSWAP] = {EFAB_ATOMIC_COMPARE, FI_CSWAP},
		[EFAB_AOP_SWAP] = {EFAB_ATOMIC_FETCH, FI_ATOMIC_WRITE},
		[EFAB_AOP_MIN] = {EFAB_ATOMIC_PLAIN, FI_MIN},
		[EFAB_AOP_MAX] = {EFAB_ATOMIC_PLAIN, FI_MAX},
		[EFAB_AOP_BOR] = {EFAB_ATOMIC_PLAIN, FI_BOR},
		[EFAB_AOP_BAND] = {EFAB_ATOMIC_PLAIN, FI_BAND},
		[EFAB_AOP_BXOR] = {EFAB_ATOMIC_PLAIN, FI_BXOR},
	};
	*kind = m[aop].kind;
	*op = m[aop].op;
}

enum fi_datatype efab_fi_dtype(int dt)
{
	switch (dt) {
	case EFAB_DT_U32: return FI_UINT32;
	case EFAB_DT_I32: return FI_INT32;
	case EFAB_DT_I64: return FI_INT64;
	case EFAB_DT_F32: return FI_FLOAT;
	case EFAB_DT_F64: return FI_DOUBLE;
	default: return FI_UINT64;
	}
}

uint64_t efab_dtype_mask(int dt)
{
	return efab_dtype_size(dt) == 4 ? 0xffffffffull : ~0ull;
}

/* Values are non-negative integers (or bit patterns): stored in the
 * datatype, read back as the integer or the pattern masked to its width. */
void efab_atomic_word_store(int dt, void *base, size_t idx, uint64_t v)
{
	switch (dt) {
	case EFAB_DT_F32: ((float *)base)[idx] = (float)v; break;
	case EFAB_DT_F64: ((double *)base)[idx] = (double)v; break;
	case EFAB_DT_U32:
	case EFAB_DT_I32: ((uint32_t *)base)[idx] = (uint32_t)v; break;
	default: ((uint64_t *)base)[idx] = v; break;
	}
}

uint64_t efab_atomic_word_load(int dt, const void *base, size_t idx)
{
	switch (dt) {
	case EFAB_DT_F32: {
		float f = ((const float *)base)[idx];
		return f < 0 ? ~0ull : (uint64_t)f;
	}
	case EFAB_DT_F64: {
		double d = ((const double *)base)[idx];
		return d < 0 ? ~0ull : (uint64_t)d;
	}
	case EFAB_DT_U32:
	case EFAB_DT_I32: return ((const uint32_t *)base)[idx];
	default: return ((const uint64_t *)base)[idx];
	}
}

uint64_t efab_atomic_init_value(int aop, int dt)
{
	if (aop == EFAB_AOP_MIN)
		return MINMAX_TOP;
	if (aop == EFAB_AOP_BAND)
		return efab_dtype_mask(dt);
	return 0;
}

/* Operand of an initiator's j-th operation (0-based). */
uint64_t efab_atomic_operand(int aop, int dt, uint64_t j)
{
	unsigned width = (unsigned)efab_dtype_size(dt) * 8;
	switch (aop) {
	case EFAB_AOP_SWAP: return (j + 1) & efab_dtype_mask(dt);
	case EFAB_AOP_MIN: return MINMAX_TOP - 1 - (j < MINMAX_TOP - 1 ? j : MINMAX_TOP - 1);
	case EFAB_AOP_MAX: return j + 1 < MINMAX_TOP ? j + 1 : MINMAX_TOP;
	case EFAB_AOP_BOR: return 1ull << (j % width);
	case EFAB_AOP_BAND: return efab_dtype_mask(dt) & ~(1ull << (j % width));
	case EFAB_AOP_BXOR: return (j + 1) & efab_dtype_mask(dt);
	default: return 1; /* add, fadd */
	}
}

static uint64_t xor_1_to(uint64_t n)
{
	switch (n % 4) {
	case 0: return n;
	case 1: return 1;
	case 2: return n + 1;
	default: return 0;
	}
}

/* Final value after k initiators each applied ops 0..cnt-1. For swap and
 * contended cswap the caller checks a range or a sum instead. */
uint64_t efab_atomic_expected(int aop, int dt, uint64_t k, uint64_t cnt)
{
	unsigned width = (unsigned)efab_dtype_size(dt) * 8;
	uint64_t m = efab_dtype_mask(dt);
	switch (aop) {
	case EFAB_AOP_ADD:
	case EFAB_AOP_FADD: return (k * cnt) & m;
	case EFAB_AOP_SWAP: return cnt & m;
	case EFAB_AOP_MIN: return MINMAX_TOP - (cnt < MINMAX_TOP ? cnt : MINMAX_TOP);
	case EFAB_AOP_MAX: return cnt < MINMAX_TOP ? cnt : MINMAX_TOP;
	case EFAB_AOP_BOR: return cnt >= width ? m : ((1ull << cnt) - 1);
	case EFAB_AOP_BAND: return cnt >= width ? 0 : m & ~((1ull << cnt) - 1);
	case EFAB_AOP_BXOR: return k % 2 ? xor_1_to(cnt) & m : 0;
	default: return 0; /* cswap: successes, known only at run time */
	}
}


int efab_atomic_final_ok(int aop, int dt, uint64_t k, uint64_t cnt, uint64_t window, int chained,
			 uint64_t cswap_successes, uint64_t v)
{
	if (aop == EFAB_AOP_CSWAP) /* chains (latency) move on by one per success */
		return v == (chained ? cswap_successes : efab_atomic_init_value(aop, dt));
	if (aop == EFAB_AOP_SWAP && (k > 1 || window > 1)) /* the last writer is not defined */
		return v >= (k > 1 ? 1 : cnt - window + 1) && v <= cnt;
	return v == efab_atomic_expected(aop, dt, k, cnt);
}
