/* libfitrace_user.so: the libfabric user fitrace_check loads, as NVSHMEM
 * loads its transport plugin (dlopen, RTLD_LOCAL unless --global: the
 * program itself does not link libfabric). What it checks: the interposer
 * libefab_fitrace.so (bench/tools/fitrace.c) on a real provider, and
 * libfabric's 1.3 compatibility entry with the hints NVSHMEM 3.4.5's
 * transport gives it.
 *   fitrace_check count PROV      opens PROV's domain twice, registers
 *       through fi_mr_reg (1), fi_mr_regv (1) and fi_mr_regattr (3) on the
 *       first and fi_mr_regattr (2) on the second, then compares what the
 *       interposer counted: exit 0 when exact, 1 when not, 77 when the
 *       interposer is not preloaded or PROV is not here.
 *   fitrace_check nic13           fi_getinfo@FABRIC_1.3 with hints->nic an
 *       all-zero struct fid_nic (NVSHMEM 3.4.5, libfabric.cpp:1511-1533):
 *       prints what it returned and exits 0 -- or dies with the signal.
 *   fitrace_check fabric VER PROV fi_getinfo@FABRIC_VER (1.3 ... 1.10) for
 *       PROV with FI_RMA and FI_MR_LOCAL, as NVSHMEM's transport asks:
 *       prints the return and each entry's fabric name ("fabrics: a b");
 *       exit 0, 77 when neither this libfabric nor a preloaded interposer
 *       has such an entry (the interposer's, where the libfabric lacks the
 *       version, is called: it must refuse). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>

#include "efab_fitrace.h"

int fitrace_user_main(int argc, char **argv);

#define CHECK(c, ...)                                                                 \
	do {                                                                          \
		if (!(c)) {                                                           \
			fprintf(stderr, "fitrace_check: " __VA_ARGS__);               \
			fputc('\n', stderr);                                          \
			return 1;                                                     \
		}                                                                     \
	} while (0)

static int reg_attr(struct fid_domain *d, void *buf, size_t len, struct fid_mr **mr)
{
	struct iovec iov = {buf, len};
	struct fi_mr_attr a = {0};
	a.mr_iov = &iov;
	a.iov_count = 1;
	a.access = FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
	a.requested_key = (uint64_t)(uintptr_t)buf;
	return fi_mr_regattr(d, &a, 0, mr);
}

static int count(const char *prov)
{
	efab_fitrace_read_fn rd = (efab_fitrace_read_fn)dlsym(RTLD_DEFAULT, EFAB_FITRACE_READ);
	if (!rd) {
		printf("libefab_fitrace.so is not preloaded\n");
		return 77;
	}
	struct fi_info *hints = fi_allocinfo(), *info = NULL;
	hints->caps = FI_RMA;
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_LOCAL;
	hints->fabric_attr->prov_name = strdup(prov);
	int rc = fi_getinfo(FI_VERSION(1, 5), NULL, NULL, 0, hints, &info);
	fi_freeinfo(hints);
	if (rc) {
		printf("provider %s not here: %s\n", prov, fi_strerror(-rc));
		return 77;
	}
	struct fid_fabric *fab;
	struct fid_domain *d[2];
	CHECK(!fi_fabric(info->fabric_attr, &fab, NULL), "fi_fabric");
	CHECK(!fi_domain(fab, info, &d[0], NULL) && !fi_domain(fab, info, &d[1], NULL), "fi_domain");
	static char buf[8][4096];
	struct fid_mr *mr[8];
	int n = 0;
	struct iovec iov = {buf[n], sizeof(buf[0])};
	CHECK(!fi_mr_reg(d[0], buf[n], sizeof(buf[0]), FI_REMOTE_WRITE, 0, 1, 0, &mr[n], NULL), "fi_mr_reg");
	n++;
	iov.iov_base = buf[n];
	CHECK(!fi_mr_regv(d[0], &iov, 1, FI_REMOTE_WRITE, 0, 2, 0, &mr[n], NULL), "fi_mr_regv");
	n++;
	for (int i = 0; i < 5; i++, n++)
		CHECK(!reg_attr(d[i < 3 ? 0 : 1], buf[n], sizeof(buf[0]), &mr[n]), "fi_mr_regattr %d", i);
	efab_fitrace_dom_t t[8];
	size_t nd = rd(t, 8), outer = 0;
	CHECK(nd <= 8, "%zu domains seen", nd);
	for (size_t i = 0; i < nd; i++) {
		printf("domain %zu: %s %s %s mr_mode %#x%s%s regs %llu regattr %llu failed %llu\n", i, t[i].prov,
		       t[i].fabric, t[i].name, t[i].mr_mode, t[i].inner ? " (inner)" : "",
		       t[i].simulated ? " (simulated)" : "",
		       (unsigned long long)t[i].regs, (unsigned long long)t[i].regattr,
		       (unsigned long long)t[i].failed);
		if (t[i].inner)
			continue;
		int k = t[i].fid == d[0] ? 0 : t[i].fid == d[1] ? 1 : -1;
		CHECK(k >= 0, "domain %zu is none of the two opened", i);
		outer++;
		CHECK(t[i].regs == (k ? 2u : 5u) && t[i].regattr == (k ? 2u : 3u) && !t[i].failed,
		      "domain %d: %d registrations (%d regattr) expected", k, k ? 2 : 5, k ? 2 : 3);
		CHECK(!strcmp(t[i].prov, info->fabric_attr->prov_name) &&
			      !strcmp(t[i].fabric, info->fabric_attr->name) &&
			      !strcmp(t[i].name, info->domain_attr->name) && t[i].mr_mode == info->domain_attr->mr_mode,
		      "names or mr_mode differ from the fi_info's");
	}
	CHECK(outer == 2, "%zu domains opened by the program seen, 2 opened", outer);
	for (int i = 0; i < n; i++)
		fi_close(&mr[i]->fid);
	fi_close(&d[1]->fid);
	fi_close(&d[0]->fid);
	fi_close(&fab->fid);
	fi_freeinfo(info);
	return 0;
}


static int nic13(void)
{
	typedef int (*fn)(uint32_t, const char *, const char *, uint64_t, const void *, void **);
	fn gi = (fn)dlvsym(RTLD_DEFAULT, "fi_getinfo", "FABRIC_1.3");
	if (!gi) {
		printf("this libfabric has no fi_getinfo@FABRIC_1.3\n");
		return 77;
	}
	struct fi_info *h = fi_allocinfo(); /* today's layout: its prefix is the 1.3 one */
	h->caps = FI_RMA | FI_MSG;
	h->ep_attr->type = FI_EP_RDM;
	h->fabric_attr->prov_name = strdup("tcp;ofi_rxm");
	static struct fid_nic zero_nic; /* what NVSHMEM 3.4.5 passes: no ops */
	efab_fi_info_1_3_t *h13 = (efab_fi_info_1_3_t *)h;
	void *saved = h13->nic;
	h13->nic = &zero_nic;
	void *info = NULL;
	fflush(stdout);
	int rc = gi(FI_VERSION(1, 5), NULL, NULL, 0, h13, &info);
	h13->nic = saved;
	printf("fi_getinfo@FABRIC_1.3 with an all-zero hints->nic returned %d (%s)\n", rc,
	       rc ? fi_strerror(-rc) : "ok");
	if (!rc)
		fi_freeinfo(info);
	fi_freeinfo(h);
	return 0;
}

static int fabrics(const char *ver, const char *prov)
{
	typedef int (*gi_fn)(uint32_t, const char *, const char *, uint64_t, const void *, void **);
	typedef void (*fr_fn)(void *);
	char v[32];
	snprintf(v, sizeof(v), "FABRIC_%s", ver);
	gi_fn gi = (gi_fn)dlvsym(RTLD_DEFAULT, "fi_getinfo", v);
	fr_fn fr = (fr_fn)dlvsym(RTLD_DEFAULT, "fi_freeinfo", v);
	if (!gi) {
		printf("this libfabric has no fi_getinfo@%s\n", v);
		return 77;
	}
	/* these headers' layout: every older ABI's layout is its prefix (a
	 * version newer than the headers would read past it: build against
	 * the libfabric whose newest entry is asked for) */
	struct fi_info *h = fi_allocinfo();
	h->caps = FI_RMA;
	h->mode = FI_CONTEXT | FI_CONTEXT2;
	h->ep_attr->type = FI_EP_RDM;
	h->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_LOCAL;
	h->fabric_attr->prov_name = strdup(prov);
	void *info = NULL;
	int rc = gi(FI_VERSION(1, 5), NULL, NULL, 0, h, &info);
	printf("fi_getinfo@%s returned %d (%s); fabrics:", v, rc, rc ? fi_strerror(-rc) : "ok");
	for (efab_fi_info_1_3_t *e = rc ? NULL : info; e; e = e->next) {
		const struct fi_fabric_attr *fa = e->fabric_attr;
		printf(" %s", fa && fa->name ? fa->name : "(none)");
	}
	printf("\n");
	if (!rc && fr)
		fr(info);
	fi_freeinfo(h);
	return 0;
}

int fitrace_user_main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "fabric"))
		return fabrics(argv[2], argv[3]);
	if (argc == 3 && !strcmp(argv[1], "count"))
		return count(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "nic13"))
		return nic13();
	fprintf(stderr, "usage: fitrace_check [--global] count PROVIDER | nic13 | fabric 1.3|1.7|1.8|1.9|1.10 PROVIDER\n");
	return 2;
}
