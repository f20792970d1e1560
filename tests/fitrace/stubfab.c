/* A stand-in libfabric.so.1 for the interposer's per-version tests
 * (t_fitrace_getinfo_*): fi_getinfo and fi_freeinfo at every version
 * libfabric 2.7.0a1 exports them (FABRIC_1.0-1.3 and 1.7-1.10, 1.10 the
 * default there) and at FABRIC_1.11, a version no libfabric has yet (a
 * future ABI the interposer cannot know; the default here). Each
 * fi_getinfo returns three entries, of fabrics alpha, beta and alpha, whose
 * prov_name is the version that made them ("FABRIC_1.9"): a caller sees
 * which real entry its call reached. Only next and fabric_attr are filled,
 * which every fi_info ABI lays out alike (efab_fi_info_1_3_t). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

static void free_list(struct fi_info *i)
{
	while (i) {
		struct fi_info *n = i->next;
		if (i->fabric_attr) {
			free(i->fabric_attr->name);
			free(i->fabric_attr->prov_name);
			free(i->fabric_attr);
		}
		free(i);
		i = n;
	}
}

static int make_list(const char *version, struct fi_info **info)
{
	static const char *const names[] = {"alpha", "beta", "alpha"};
	struct fi_info *head = NULL, **link = &head;
	for (int k = 0; k < 3; k++) {
		struct fi_info *e = calloc(1, sizeof(*e));
		struct fi_fabric_attr *fa = calloc(1, sizeof(*fa));
		if (!e || !fa) {
			free(e);
			free(fa);
			free_list(head);
			return -FI_ENOMEM;
		}
		fa->name = strdup(names[k]);
		fa->prov_name = strdup(version);
		e->fabric_attr = fa;
		*link = e;
		link = &e->next;
	}
	*info = head;
	return 0;
}

#define STUB(minor, ver, at)                                                                                   \
	int stub_getinfo_1_##minor(uint32_t api, const char *node, const char *service, uint64_t flags,        \
				   const void *hints, struct fi_info **info);                                  \
	void stub_freeinfo_1_##minor(struct fi_info *info);                                                    \
	__asm__(".symver stub_getinfo_1_" #minor ",fi_getinfo" at ver);                                        \
	__asm__(".symver stub_freeinfo_1_" #minor ",fi_freeinfo" at ver);                                      \
	int stub_getinfo_1_##minor(uint32_t api, const char *node, const char *service, uint64_t flags,        \
				   const void *hints, struct fi_info **info)                                   \
	{                                                                                                      \
		(void)api, (void)node, (void)service, (void)flags, (void)hints;                                \
		return make_list(ver, info);                                                                   \
	}                                                                                                      \
	void stub_freeinfo_1_##minor(struct fi_info *info)                                                     \
	{                                                                                                      \
		free_list(info);                                                                               \
	}
STUB(0, "FABRIC_1.0", "@")
STUB(1, "FABRIC_1.1", "@")
STUB(2, "FABRIC_1.2", "@")
STUB(3, "FABRIC_1.3", "@")
STUB(7, "FABRIC_1.7", "@")
STUB(8, "FABRIC_1.8", "@")
STUB(9, "FABRIC_1.9", "@")
STUB(10, "FABRIC_1.10", "@")
STUB(11, "FABRIC_1.11", "@@")
