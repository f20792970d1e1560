#include "harness.h"
int efab_mr_reg_main(int argc, char **argv);
int main(int argc, char **argv) { return efab_mr_reg_main(argc, argv); }
