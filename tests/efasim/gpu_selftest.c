/* efasim GPU self-test: the simulated device's registration of CUDA memory
 * (memkind.c), through the verbs API the efa provider calls.
 *   gpu_selftest        with GPUDirect (EFASIM_P2P unset or 1): a cuMemAlloc
 *                       range registers; managed memory and an unmapped address
 *                       fail with EFAULT; a CUDA dmabuf registers at an offset
 *                       (mr->addr = offset, as rdma-core), and one whose offset
 *                       + length runs past the dma-buf fails with EINVAL
 *   EFASIM_P2P=0 gpu_selftest   the device pointer fails with EFAULT and the
 *                       dmabuf with EOPNOTSUPP (an instance without GPUDirect)
 * Exit 0 all checks passed, 1 a check failed, 77 no GPU here (the reason on the
 * last line). Runs under tests/efasim/run (the simulator's libibverbs). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef EFASIM_HAVE_CUDA
int main(void)
{
	printf("gpu_selftest: built without cuda.h: the simulator models host memory only\n");
	return 77;
}
#else
#include <cuda.h>

static int failures;
#define CHECK(cond, ...)                                                                                   \
	do {                                                                                               \
		if (cond) {                                                                                \
			printf("ok   ");                                                                     \
		} else {                                                                                   \
			printf("FAIL ");                                                                     \
			failures++;                                                                        \
		}                                                                                          \
		printf(__VA_ARGS__);                                                                       \
		putchar('\n');                                                                             \
	} while (0)


static struct {
	CUresult (*Init)(unsigned);
	CUresult (*DeviceGet)(CUdevice *, int);
	CUresult (*DeviceGetCount)(int *);
	CUresult (*PrimaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*CtxSetCurrent)(CUcontext);
	CUresult (*MemAlloc)(CUdeviceptr *, size_t);
	CUresult (*MemAllocManaged)(CUdeviceptr *, size_t, unsigned);
	CUresult (*MemGetHandleForAddressRange)(void *, CUdeviceptr, size_t, CUmemRangeHandleType, unsigned long long);
} cu;

static int skip(const char *why)
{
	printf("gpu_selftest: %s\n", why);
	return 77;
}

int main(void)
{
	const char *p2p_env = getenv("EFASIM_P2P");
	int p2p = !(p2p_env && !strcmp(p2p_env, "0"));
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	if (!h) {
		char why[512];
		snprintf(why, sizeof(why), "no CUDA driver here (dlopen libcuda.so.1: %s): the GPU checks need a GPU",
			 dlerror());
		return skip(why);
	}
#define SYM(f, n)                                                                                          \
	if (!(*(void **)&cu.f = dlsym(h, n)))                                                              \
		return skip("libcuda.so.1 lacks " n);
	SYM(Init, "cuInit");
	SYM(DeviceGet, "cuDeviceGet");
	SYM(DeviceGetCount, "cuDeviceGetCount");
	SYM(PrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
	SYM(CtxSetCurrent, "cuCtxSetCurrent");
	SYM(MemAlloc, "cuMemAlloc_v2");
	SYM(MemAllocManaged, "cuMemAllocManaged");
	SYM(MemGetHandleForAddressRange, "cuMemGetHandleForAddressRange");
	int n = 0;
	CUdevice dev;
	CUcontext ctx;
	if (cu.Init(0) || cu.DeviceGetCount(&n) || n < 1)
		return skip("cuInit or cuDeviceGetCount failed: no usable GPU here");
	if (cu.DeviceGet(&dev, 0) || cu.PrimaryCtxRetain(&ctx, dev) || cu.CtxSetCurrent(ctx))
		return skip("no context on GPU 0");

	int num = 0;
	struct ibv_device **list = ibv_get_device_list(&num);
	if (!list || num < 1) {
		printf("FAIL no simulated device (run under tests/efasim/run)\n");
		return 1;
	}
	struct ibv_context *c = ibv_open_device(list[0]);
	struct ibv_pd *pd = c ? ibv_alloc_pd(c) : NULL;
	if (!pd) {
		printf("FAIL ibv_open_device/ibv_alloc_pd\n");
		return 1;
	}
	const int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	printf("simulated device %s, EFASIM_P2P=%d\n", ibv_get_device_name(list[0]), p2p);

	const size_t len = 2 << 20;
	CUdeviceptr d = 0;
	if (cu.MemAlloc(&d, len))
		return skip("cuMemAlloc failed");
	errno = 0;
	struct ibv_mr *mr = ibv_reg_mr(pd, (void *)(uintptr_t)(d + 4096), 65536, acc);
	if (p2p)
		CHECK(mr && mr->addr == (void *)(uintptr_t)(d + 4096) && mr->length == 65536,
		      "ibv_reg_mr on cuMemAlloc memory (+4 KiB, 64 KiB): registered (%s)", mr ? "" : strerror(errno));
	else
		CHECK(!mr && errno == EFAULT, "EFASIM_P2P=0: ibv_reg_mr on cuMemAlloc memory: EFAULT (got %s)",
		      mr ? "success" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
	errno = 0;
	mr = ibv_reg_mr(pd, (void *)(uintptr_t)(d + len - 4096), 8192, acc);
	CHECK(!mr && errno == EFAULT, "ibv_reg_mr running past the end of its CUDA allocation: EFAULT (got %s)",
	      mr ? "success" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);

	CUdeviceptr m = 0;
	if (!cu.MemAllocManaged(&m, 65536, CU_MEM_ATTACH_GLOBAL)) {
		errno = 0;
		mr = ibv_reg_mr(pd, (void *)(uintptr_t)m, 65536, acc);
		/* host-mapped, but nvidia-uvm's VM_IO mapping fails the kernel's pin */
		CHECK(!mr && errno == EFAULT, "ibv_reg_mr on CUDA managed memory: EFAULT (got %s)",
		      mr ? "success" : strerror(errno));
		if (mr)
			ibv_dereg_mr(mr);
	}
	errno = 0;
	mr = ibv_reg_mr(pd, (void *)(uintptr_t)0x10000, 4096, acc);
	CHECK(!mr && errno == EFAULT, "ibv_reg_mr on an unmapped address: EFAULT (got %s)",
	      mr ? "success" : strerror(errno));

	int fd = -1;
	CUresult r = cu.MemGetHandleForAddressRange(&fd, d, len, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
	if (r) {
		printf("skip dmabuf checks: cuMemGetHandleForAddressRange(DMA_BUF_FD) = %d on this driver\n", (int)r);
	} else {
		char path[64], info[512] = "";
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
		FILE *fi = fopen(path, "r");
		if (fi) {
			size_t k = fread(info, 1, sizeof(info) - 1, fi);
			info[k] = 0;
			fclose(fi);
		}
		char *x = strstr(info, "exp_name:");
		if (x)
			x[strcspn(x, "\n")] = 0;
		printf("dma-buf of the 2 MiB allocation: %s, lseek(SEEK_END) %lld\n", x ? x : "(no exp_name in fdinfo)",
		       (long long)lseek(fd, 0, SEEK_END));
		errno = 0;
		mr = ibv_reg_dmabuf_mr(pd, 12288, 65536, d + 12288, fd, acc);
		if (p2p)
			CHECK(mr && mr->addr == (void *)(uintptr_t)12288 && mr->length == 65536,
			      "ibv_reg_dmabuf_mr(offset 12 KiB, 64 KiB, iova = the device address): registered, "
			      "mr->addr = offset (%s)",
			      mr ? "" : strerror(errno));
		else
			CHECK(!mr && errno == EOPNOTSUPP, "EFASIM_P2P=0: ibv_reg_dmabuf_mr: EOPNOTSUPP (got %s)",
			      mr ? "success" : strerror(errno));
		if (mr)
			ibv_dereg_mr(mr);
		errno = 0;
		mr = ibv_reg_dmabuf_mr(pd, len - 4096, 8192, d + len - 4096, fd, acc);
		CHECK(!mr && errno == (p2p ? EINVAL : EOPNOTSUPP),
		      "ibv_reg_dmabuf_mr with offset + length past the dma-buf: %s (got %s)",
		      p2p ? "EINVAL" : "EOPNOTSUPP", mr ? "success" : strerror(errno));
		close(fd);
	}
	printf("gpu_selftest: %s\n", failures ? "FAILED" : "all checks passed");
	return failures ? 1 : 0;
}
#endif
