/* fitrace_check: loads libfitrace_user.so (beside it, or FITRACE_USER) the
 * way NVSHMEM loads its libfabric transport -- dlopen RTLD_LOCAL, so
 * libfabric is not in the global scope (--global: RTLD_GLOBAL, as for a
 * program that links libfabric itself) -- and runs its check:
 *   fitrace_check [--global] count PROV   the interposer's counts on PROV's
 *       domains (fi_mr_reg 1, fi_mr_regv 1, fi_mr_regattr 3 on one, 2 on the
 *       other): exit 0 exact, 1 not, 77 interposer not preloaded / PROV absent
 *   fitrace_check [--global] nic13        fi_getinfo@FABRIC_1.3 with an
 *       all-zero hints->nic (NVSHMEM 3.4.5): exit 0 -- or the signal */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int global = argc > 1 && !strcmp(argv[1], "--global");
	char path[PATH_MAX];
	const char *lib = getenv("FITRACE_USER");
	if (!lib) {
		ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 32);
		if (n <= 0)
			return 1;
		path[n] = 0;
		strcpy(strrchr(path, '/') + 1, "libfitrace_user.so");
		lib = path;
	}
	void *h = dlopen(lib, RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL));
	int (*um)(int, char **) = h ? (int (*)(int, char **))dlsym(h, "fitrace_user_main") : NULL;
	if (!um) {
		fprintf(stderr, "fitrace_check: %s: %s\n", lib, dlerror());
		return 1;
	}
	return um(argc - global, argv + global);
}
