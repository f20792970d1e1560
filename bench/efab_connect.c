#include "harness.h"
extern const efab_bench_t efab_bench_connect;
int main(int argc, char **argv) { return efab_bench_main(argc, argv, &efab_bench_connect); }
