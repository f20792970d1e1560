#include "rows.h"
#include "shmem_put.h"
int main(int argc, char **argv) { return efab_shmem_put_main(argc, argv, efab_row("efab_shmem_bw")); }
