/* fitrace_gi_1_M: a program linked to fi_getinfo@FABRIC_1.M and
 * fi_freeinfo@FABRIC_1.M (GI_MINOR=M) of the stand-in libfabric
 * (stubfab.c), as a program built against that libfabric's headers is. It
 * calls fi_getinfo once and prints
 *   fi_getinfo@FABRIC_1.M returned RC (ok); fabrics: NAME(VERSION) ...
 * (VERSION: the real entry that made the entry), then, where
 * libefab_fitrace.so is preloaded, its report (efab_fitrace_filter)
 *   filter: calls N applied N refused N versions 1.3 1.8 uncovered V
 * and whether a run may claim EFAB_FITRACE_FABRIC (efab_fitrace_claim):
 *   claim: yes | claim: no: WHY | claim: none
 * Exit 0; 77 when the interposer is not preloaded (after the first line). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <rdma/fabric.h>

#include "efab_fitrace.h"

#define STR2(x) #x
#define STR(x) STR2(x)
#define VERSION "FABRIC_1." STR(GI_MINOR)

int gi_getinfo(uint32_t api, const char *node, const char *service, uint64_t flags, const void *hints,
	       void **info);
void gi_freeinfo(void *info);
__asm__(".symver gi_getinfo,fi_getinfo@" VERSION);
__asm__(".symver gi_freeinfo,fi_freeinfo@" VERSION);

int main(void)
{
	efab_fi_info_1_3_t hints = {0};
	void *info = NULL;
	int rc = gi_getinfo(FI_VERSION(1, 5), NULL, NULL, 0, &hints, &info);
	printf("fi_getinfo@%s returned %d (%s); fabrics:", VERSION, rc, rc ? "error" : "ok");
	for (efab_fi_info_1_3_t *e = rc ? NULL : info; e; e = e->next) {
		const struct fi_fabric_attr *fa = e->fabric_attr;
		printf(" %s(%s)", fa && fa->name ? fa->name : "-", fa && fa->prov_name ? fa->prov_name : "-");
	}
	printf("\n");
	if (!rc)
		gi_freeinfo(info);
	efab_fitrace_filter_fn ff = (efab_fitrace_filter_fn)dlsym(RTLD_DEFAULT, EFAB_FITRACE_FILTER);
	efab_fitrace_filter_t f;
	char why[512];
	if (ff) {
		ff(&f);
		printf("filter: calls %llu applied %llu refused %llu versions", (unsigned long long)f.calls,
		       (unsigned long long)f.applied, (unsigned long long)f.refused);
		for (int m = 0; m < 32; m++)
			if (f.versions & (1u << m))
				printf(" 1.%d", m);
		printf(" uncovered %s\n", f.uncovered[0] ? f.uncovered : "-");
	}
	int c = efab_fitrace_claim(ff ? &f : NULL, NULL, 0, why, sizeof(why));
	printf("claim: %s%s%s\n", c > 0 ? "yes" : c < 0 ? "no" : "none", c < 0 ? ": " : "", why);
	if (!ff && !dlsym(RTLD_DEFAULT, EFAB_FITRACE_READ)) {
		printf("libefab_fitrace.so is not preloaded\n");
		return 77;
	}
	return 0;
}
