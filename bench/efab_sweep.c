int efab_sweep_main(int argc, char **argv);
int main(int argc, char **argv) { return efab_sweep_main(argc, argv); }
