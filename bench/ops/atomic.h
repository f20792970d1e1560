/* The atomic family (atomic.c): fi_atomic, fi_fetch_atomic and
 * fi_compare_atomic under the ping-pong and stream patterns. */
#ifndef EFAB_BENCH_ATOMIC_H
#define EFAB_BENCH_ATOMIC_H

#include "efab_atomic.h"
#include "family.h"


#endif
