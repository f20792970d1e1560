/* The atomic benchmarks' value model (bench/ops/atomic_model.c). */
#ifndef EFAB_ATOMIC_H
#define EFAB_ATOMIC_H

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <stddef.h>
#include <stdint.h>

/* min starts here and counts down: exact in every datatype, f32 included. */
#define EFAB_ATOMIC_MINMAX_TOP (1ull << 20)

/* --aop -> call (EFAB_ATOMIC_PLAIN/FETCH/COMPARE) and fi_op. */
void efab_aop_map(int aop, int *kind, enum fi_op *op);
enum fi_datatype efab_fi_dtype(int dt);
/* 0xffffffff for 32-bit types, all ones for 64-bit ones. */
uint64_t efab_dtype_mask(int dt);
/* Values are non-negative integers or bit patterns, stored in the datatype
 * and read back masked to its width. */
void efab_atomic_word_store(int dt, void *base, size_t idx, uint64_t v);
uint64_t efab_atomic_word_load(int dt, const void *base, size_t idx);
uint64_t efab_atomic_init_value(int aop, int dt);
/* Operand of an initiator's j-th operation (0-based). */
uint64_t efab_atomic_operand(int aop, int dt, uint64_t j);
/* Final value after k initiators each applied operations 0..cnt-1. */
uint64_t efab_atomic_expected(int aop, int dt, uint64_t k, uint64_t cnt);
/* Is v a correct final value? window: ops in flight per initiator; chained:
 * cswap chains (latency benchmark) whose successes sum to the final value. */
int efab_atomic_final_ok(int aop, int dt, uint64_t k, uint64_t cnt, uint64_t window, int chained,
			 uint64_t cswap_successes, uint64_t v);

#endif
