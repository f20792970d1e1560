#include "harness.h"
int efab_probe_main(int argc, char **argv);
int main(int argc, char **argv) { return efab_probe_main(argc, argv); }
