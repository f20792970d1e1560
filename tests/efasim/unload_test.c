/* The simulator's threads do not outlive its library (config.c
 * sim_threads_stop). A real rdma-core starts no thread; efasim's device engine
 * (direct path), RNR retry and hw_counters threads are its own, and a program
 * that dlopens libfabric, uses efa-direct and dlcloses it again (NVSHMEM's
 * nvshmem_finalize does this with its libfabric transport) unloads
 * libibverbs.so.1 with them. Left running in unmapped code they killed the
 * process with SIGSEGV (NVSHMEM 3.6.5 on the H200 machine).
 *
 * This program: dlopen libfabric.so.1 (RTLD_LOCAL), open efa-direct's fabric,
 * domain, CQ, AV and an enabled endpoint (the QP: the engine thread starts),
 * write to itself once so the engine has worked, close everything, dlclose,
 * check that libibverbs.so.1 is gone, sleep 300 ms and check that the
 * process's thread count is back to what it was before. Exit 0 and "unload_test:
 * ok", 1 with the reason, 77 when there is no efa-direct (no simulator).
 * Build: cc -I<libfabric>/include unload_test.c -ldl; run under tests/efasim/run. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_rma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int threads(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

#define FAIL(...) do { fprintf(stderr, "unload_test: " __VA_ARGS__); fputc('\n', stderr); return 1; } while (0)
#define TRY(what, call) do { int r_ = (int)(call); if (r_) FAIL("%s: %d", what, r_); } while (0)

int main(void)
{
	int before = threads();
	void *h = dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		FAIL("dlopen libfabric.so.1: %s", dlerror());
	int (*getinfo)(uint32_t, const char *, const char *, uint64_t, const struct fi_info *,
		       struct fi_info **) = (void *)dlsym(h, "fi_getinfo");
	void (*freeinfo)(struct fi_info *) = (void *)dlsym(h, "fi_freeinfo");
	struct fi_info *(*dupinfo)(const struct fi_info *) = (void *)dlsym(h, "fi_dupinfo");
	int (*fabric_open)(struct fi_fabric_attr *, struct fid_fabric **, void *) = (void *)dlsym(h, "fi_fabric");
	if (!getinfo || !freeinfo || !dupinfo || !fabric_open)
		FAIL("libfabric.so.1 lacks fi_getinfo/fi_freeinfo/fi_dupinfo/fi_fabric");
	struct fi_info *hints = dupinfo(NULL), *info = NULL;
	hints->caps = FI_RMA;
	hints->ep_attr->type = FI_EP_RDM;
	hints->fabric_attr->prov_name = strdup("efa");
	hints->fabric_attr->name = strdup("efa-direct");
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY;
	hints->mode = FI_CONTEXT | FI_CONTEXT2;
	if (getinfo(FI_VERSION(1, 18), NULL, NULL, 0, hints, &info) || !info) {
		printf("unload_test: no efa-direct here (run it under tests/efasim/run)\n");
		return 77;
	}
	struct fid_fabric *fab;
	struct fid_domain *dom;
	struct fid_cq *cq;
	struct fid_av *av;
	struct fid_ep *ep;
	struct fid_mr *mr;
	struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_DATA, .wait_obj = FI_WAIT_NONE};
	struct fi_av_attr ava = {.type = FI_AV_TABLE, .count = 1};
	TRY("fi_fabric", fabric_open(info->fabric_attr, &fab, NULL));
	TRY("fi_domain", fi_domain(fab, info, &dom, NULL));
	TRY("fi_cq_open", fi_cq_open(dom, &cqa, &cq, NULL));
	TRY("fi_av_open", fi_av_open(dom, &ava, &av, NULL));
	TRY("fi_endpoint", fi_endpoint(dom, info, &ep, NULL));
	TRY("fi_ep_bind av", fi_ep_bind(ep, &av->fid, 0));
	TRY("fi_ep_bind cq", fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
	TRY("fi_enable", fi_enable(ep));
	/* one RDMA write to itself: the device engine executes it */
	static char buf[2][4096];
	char name[64];
	size_t nlen = sizeof(name);
	fi_addr_t self;
	TRY("fi_getname", fi_getname(&ep->fid, name, &nlen));
	if (fi_av_insert(av, name, 1, &self, 0, NULL) != 1)
		FAIL("fi_av_insert of its own address");
	TRY("fi_mr_reg", fi_mr_reg(dom, buf, sizeof(buf), FI_WRITE | FI_REMOTE_WRITE, 0, 0, 0, &mr, NULL));
	memset(buf[0], 0x5a, sizeof(buf[0]));
	struct fi_context2 ctx;
	uint64_t raddr = (info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) ? (uint64_t)(uintptr_t)buf[1] : sizeof(buf[0]);
	int r;
	while ((r = (int)fi_write(ep, buf[0], sizeof(buf[0]), fi_mr_desc(mr), self, raddr, fi_mr_key(mr), &ctx)) == -FI_EAGAIN)
		fi_cq_read(cq, NULL, 0);
	if (r)
		FAIL("fi_write: %d", r);
	struct fi_cq_data_entry ce;
	time_t t0 = time(NULL);
	while ((r = (int)fi_cq_read(cq, &ce, 1)) == -FI_EAGAIN && time(NULL) - t0 < 10)
		;
	if (r != 1)
		FAIL("no completion of the write to itself: %d", r);
	if (buf[1][0] != 0x5a || buf[1][4095] != 0x5a)
		FAIL("the write to itself did not land");
	int during = threads();
	fi_close(&mr->fid);
	fi_close(&ep->fid);
	fi_close(&av->fid);
	fi_close(&cq->fid);
	fi_close(&dom->fid);
	fi_close(&fab->fid);
	freeinfo(info);
	freeinfo(hints);
	if (dlclose(h))
		FAIL("dlclose: %s", dlerror());
	if (dlopen("libibverbs.so.1", RTLD_NOW | RTLD_NOLOAD))
		FAIL("libibverbs.so.1 is still loaded after dlclose of libfabric: this test shows nothing here");
	struct timespec ts = {0, 300000000};
	nanosleep(&ts, NULL); /* a thread left in the unloaded library dies here, and the process with it */
	int after = threads();
	printf("unload_test: threads %d before, %d with efa-direct open, %d after dlclose\n", before, during, after);
	if (during <= before)
		FAIL("no simulator thread started (nothing to check)");
	if (after != before)
		FAIL("%d threads left after dlclose", after - before);
	printf("unload_test: ok\n");
	return 0;
}
