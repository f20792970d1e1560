#include "atomic.h"
int main(int argc, char **argv) { return efab_bench_main(argc, argv, &efab_bench_atomic_lat); }
