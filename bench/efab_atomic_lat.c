#include "harness.h"
int main(int argc, char **argv)
{
	return efab_bench_main(argc, argv, efab_row("efab_atomic_lat"), &efab_family_atomic);
}
