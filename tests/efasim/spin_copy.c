/* spin_copy: can efasim's copy finish while a CUDA kernel spins waiting for
 * it? A diagnostic for the GPU machine (no simulated device needed, only
 * libcuda), written for issue 47's hang: NVSHMEM's blocking
 * nvshmemx_putmem_on_stream runs one kernel that spins until NVSHMEM's proxy
 * sees the put complete, and on efasim the put completes only when the
 * simulated NIC's cuMemcpyAsync + cuStreamSynchronize of the source (8 bytes,
 * GPU to pinned host memory, on efasim's own non-blocking stream,
 * memkind.c cu_memcpy) returns. On the H200 machine that copy never
 * returned (results/20261204-202629-vm-h200-efasim-gpucheck-vmm-2.7/data.tar.gz, blocking-onstream/),
 * while the same copy under NVSHMEM's kernel-initiated put + quiet (one
 * spinning kernel of efabench's) did. A real NIC makes no CUDA call.
 *
 *   spin_copy CASE [LIMIT_S]
 *
 * Every case: a one-thread kernel spins on a flag in pinned, mapped host
 * memory on a non-blocking stream S, for at most LIMIT_S (default 3) seconds
 * of its %globaltimer, and the main thread waits in cuStreamSynchronize(S);
 * once the kernel runs, a second thread makes the copy (8 B on its own
 * non-blocking stream, then cuStreamSynchronize; that stream made one copy
 * before the kernel, so nothing in it is a first use) and sets the flag.
 * The verdict: "ran beside the kernel" when the kernel saw the flag and the
 * copy returned within half of LIMIT_S (8 bytes take microseconds; half the
 * limit leaves the rest for the kernel to see the flag); else "BLOCKED" (the
 * line gives both times). Cases, each changing one thing from queued:
 *   alone    nothing else on S (efabench's kernel-initiated put + quiet)
 *   queued   an empty kernel and an event record enqueued on S behind the
 *            spinner (NVSHMEM's blocking on-stream put: its quiet kernel
 *            behind it, then efab_shmem_lat's event)
 *   cold     queued, the copy's stream never used before the kernel runs
 *   h2d      queued, the copy host to device (a get's last step)
 *   streams  queued, 64 more streams made first (more streams than
 *            CUDA_DEVICE_MAX_CONNECTIONS' hardware queues, as NCCL's and
 *            NVSHMEM's make)
 *   onecpu   queued, the process bound to one CPU (mpirun binds a PE so)
 *   prio     queued, the copy's stream at the greatest stream priority
 *   query    queued, the copy waited for by polling cuStreamQuery between
 *            sched_yield()s instead of cuStreamSynchronize (efasim's
 *            EFASIM_CUDA_WAIT=query)
 *   ipcproc  queued, the copy made by a helper process in its own context
 *            through cuIpcOpenMemHandle of the source (the way efasim reaches
 *            another process's GPU memory)
 *   twoproc  queued, while another process's kernel spins all along in its
 *            own context (PE 1's barrier kernel in the hang's stacks: the GPU
 *            then time-slices two contexts); it spins until this process has
 *            its verdict (at most 2 x LIMIT_S + 10 s), said in the line
 * Prints one line: the case, the verdict, the copy's time, the kernel's
 * time; exit 0 when it ran beside, 3 when BLOCKED, 77 without a GPU, 1 on
 * a CUDA error or a helper process that failed. Environment knobs worth varying around it (tests/efasim/
 * spin_copy.sh does): CUDA_DEVICE_MAX_CONNECTIONS, CUDA_MODULE_LOADING. */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static struct {
	CUresult (*Init)(unsigned);
	CUresult (*DeviceGet)(CUdevice *, int);
	CUresult (*DeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
	CUresult (*PrimaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*CtxSetCurrent)(CUcontext);
	CUresult (*CtxGetStreamPriorityRange)(int *, int *);
	CUresult (*StreamCreate)(CUstream *, unsigned);
	CUresult (*StreamCreateWithPriority)(CUstream *, unsigned, int);
	CUresult (*StreamSynchronize)(CUstream);
	CUresult (*StreamQuery)(CUstream);
	CUresult (*EventCreate)(CUevent *, unsigned);
	CUresult (*EventRecord)(CUevent, CUstream);
	CUresult (*MemAlloc)(CUdeviceptr *, size_t);
	CUresult (*MemHostAlloc)(void **, size_t, unsigned);
	CUresult (*MemHostGetDevicePointer)(CUdeviceptr *, void *, unsigned);
	CUresult (*MemcpyAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
	CUresult (*ModuleLoadData)(CUmodule *, const void *);
	CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
	CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
				 CUstream, void **, void **);
	CUresult (*IpcGetMemHandle)(CUipcMemHandle *, CUdeviceptr);
	CUresult (*IpcOpenMemHandle)(CUdeviceptr *, CUipcMemHandle, unsigned);
	CUresult (*GetErrorString)(CUresult, const char **);
} cu;

/* spin(flag, limit_ns, out): out[2] = 1 when it starts; spins on the 32-bit
 * flag (mapped host memory) until non-zero or limit_ns of %globaltimer;
 * out[0] = ns spun, out[1] = the flag seen (0: gave up). nop(): nothing.
 * The target is patched to the device's (sm_XY); checked with ptxas. */
static const char ptx_fmt[] =
	".version 8.0\n"
	".target sm_%d%d\n"
	".address_size 64\n"
	".visible .entry spin(.param .u64 p_flag, .param .u64 p_limit, .param .u64 p_out)\n"
	"{\n"
	"	.reg .pred %%p<3>;\n"
	"	.reg .b32 %%r<3>;\n"
	"	.reg .b64 %%rd<12>;\n"
	"	ld.param.u64 %%rd1, [p_flag];\n"
	"	ld.param.u64 %%rd2, [p_limit];\n"
	"	ld.param.u64 %%rd3, [p_out];\n"
	"	mov.u64 %%rd9, 1;\n"
	"	st.volatile.global.u64 [%%rd3+16], %%rd9;\n"
	"	membar.sys;\n"
	"	mov.u64 %%rd4, %%globaltimer;\n"
	"	add.u64 %%rd5, %%rd4, %%rd2;\n"
	"LOOP:\n"
	"	ld.volatile.global.u32 %%r1, [%%rd1];\n"
	"	setp.ne.u32 %%p1, %%r1, 0;\n"
	"	@%%p1 bra DONE;\n"
	"	mov.u64 %%rd6, %%globaltimer;\n"
	"	setp.lt.u64 %%p2, %%rd6, %%rd5;\n"
	"	@%%p2 bra LOOP;\n"
	"DONE:\n"
	"	mov.u64 %%rd7, %%globaltimer;\n"
	"	sub.u64 %%rd8, %%rd7, %%rd4;\n"
	"	cvt.u64.u32 %%rd10, %%r1;\n"
	"	st.volatile.global.u64 [%%rd3], %%rd8;\n"
	"	st.volatile.global.u64 [%%rd3+8], %%rd10;\n"
	"	membar.sys;\n"
	"	ret;\n"
	"}\n"
	".visible .entry nop()\n"
	"{\n"
	"	ret;\n"
	"}\n";

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static const char *err_str(CUresult r)
{
	const char *s = NULL;
	if (cu.GetErrorString)
		cu.GetErrorString(r, &s);
	return s ? s : "?";
}

#define CK(call)                                                                                           \
	do {                                                                                               \
		CUresult r_ = (call);                                                                      \
		if (r_ != CUDA_SUCCESS) {                                                                  \
			printf("%s: ERROR %s: %s\n", kase, #call, err_str(r_));                            \
			exit(1);                                                                           \
		}                                                                                          \
	} while (0)

static const char *kase = "?";
static CUcontext ctx;
static CUstream cstream;   /* the copy's stream */
static CUdeviceptr dsrc;   /* 8 bytes of GPU memory */
static void *hbuf;         /* pinned host memory: the copy's other side */
static volatile uint32_t *flag;
static volatile uint64_t *out;
static int h2d, via_helper, other_spins, poll_query;
static int to_helper[2], from_helper[2];
static double copy_ms = -1;
static int copy_failed;

/* A forked process's own CUDA: the device's primary context, current, and
 * a non-blocking stream of it; as name in its messages. */
static CUdevice child_cuda(const char *name, CUstream *s)
{
	CUdevice dev;
	CUcontext c;
	kase = name;
	CK(cu.Init(0));
	CK(cu.DeviceGet(&dev, 0));
	CK(cu.PrimaryCtxRetain(&c, dev));
	CK(cu.CtxSetCurrent(c));
	CK(cu.StreamCreate(s, CU_STREAM_NON_BLOCKING));
	return dev;
}

/* The helper: its own process and context; opens the source's IPC handle
 * once, then for each byte it reads copies the 8 bytes into its own pinned
 * buffer on its own non-blocking stream and answers with one byte. */
static void helper(void)
{
	CUipcMemHandle h;
	CUstream s;
	CUdeviceptr p;
	void *b;
	char c = 0;
	if (read(to_helper[0], &h, sizeof(h)) != (ssize_t)sizeof(h))
		_exit(1);
	child_cuda("ipcproc helper", &s);
	CK(cu.MemHostAlloc(&b, 8, 0));
	CK(cu.IpcOpenMemHandle(&p, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
	while (read(to_helper[0], &c, 1) == 1) {
		CK(cu.MemcpyAsync((CUdeviceptr)(uintptr_t)b, p, 8, s));
		CK(cu.StreamSynchronize(s));
		if (write(from_helper[1], &c, 1) != 1)
			break;
	}
	_exit(0);
}

static CUfunction load_spin(CUdevice dev, CUfunction *nop);

/* twoproc's other process: its own context and a kernel spinning on its own
 * flag, set only when the measuring process closes the pipe (its verdict is
 * made) or after 2 x limit_s + 10 s; says "running" (one byte) once the
 * kernel runs, and at the end whether its kernel was still spinning then */
static void spinner(double limit_s)
{
	char c;
	CUstream s;
	void *sh;
	CUdeviceptr dsh;
	if (read(to_helper[0], &c, 1) != 1)
		_exit(1);
	CUfunction spin = load_spin(child_cuda("twoproc spinner", &s), NULL);
	CK(cu.MemHostAlloc(&sh, 64, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP));
	memset(sh, 0, 64);
	CK(cu.MemHostGetDevicePointer(&dsh, sh, 0));
	uint64_t limit_ns = (uint64_t)((2 * limit_s + 10) * 1e9);
	CUdeviceptr dflag = dsh, dout = dsh + 32;
	void *args[] = {&dflag, &limit_ns, &dout};
	volatile uint64_t *o = (volatile uint64_t *)((char *)sh + 32);
	CK(cu.LaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
	while (!o[2])
		sched_yield();
	if (write(from_helper[1], &c, 1) != 1)
		_exit(1);
	while (read(to_helper[0], &c, 1) == 1) /* EOF: the verdict is made */
		;
	/* still spinning then: out[1] (seen) is written only when it stops */
	c = o[0] == 0 ? 'y' : 'n';
	*(volatile uint32_t *)sh = 1;
	__sync_synchronize();
	CK(cu.StreamSynchronize(s));
	if (write(from_helper[1], &c, 1) != 1)
		_exit(1);
	_exit(0);
}

static void *copier(void *arg)
{
	(void)arg;
	cu.CtxSetCurrent(ctx);
	while (!out[2]) /* the kernel runs */
		sched_yield();
	double t0 = now_ms();
	if (via_helper) {
		char c = 1;
		if (write(to_helper[1], &c, 1) != 1 || read(from_helper[0], &c, 1) != 1) {
			copy_failed = 1; /* the kernel gives up at its limit */
			return NULL;
		}
	} else if (h2d) {
		CK(cu.MemcpyAsync(dsrc, (CUdeviceptr)(uintptr_t)hbuf, 8, cstream));
		CK(cu.StreamSynchronize(cstream));
	} else if (poll_query) {
		CUresult r;
		CK(cu.MemcpyAsync((CUdeviceptr)(uintptr_t)hbuf, dsrc, 8, cstream));
		while ((r = cu.StreamQuery(cstream)) == CUDA_ERROR_NOT_READY)
			sched_yield();
		CK(r);
	} else {
		CK(cu.MemcpyAsync((CUdeviceptr)(uintptr_t)hbuf, dsrc, 8, cstream));
		CK(cu.StreamSynchronize(cstream));
	}
	copy_ms = now_ms() - t0;
	*flag = 1;
	__sync_synchronize();
	return NULL;
}

/* the module for the device's sm_XY (the current context's) */
static CUfunction load_spin(CUdevice dev, CUfunction *nop)
{
	int maj = 0, min = 0;
	CK(cu.DeviceGetAttribute(&maj, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
	CK(cu.DeviceGetAttribute(&min, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
	char ptx[sizeof(ptx_fmt) + 16];
	snprintf(ptx, sizeof(ptx), ptx_fmt, maj, min);
	CUmodule mod;
	CUfunction spin;
	CK(cu.ModuleLoadData(&mod, ptx));
	CK(cu.ModuleGetFunction(&spin, mod, "spin"));
	if (nop)
		CK(cu.ModuleGetFunction(nop, mod, "nop"));
	return spin;
}

int main(int argc, char **argv)
{
	static const char *const cases[] = {"alone", "queued", "cold",    "h2d",     "streams",
					    "onecpu", "prio",  "query", "ipcproc", "twoproc", NULL};
	int k = -1;
	for (int i = 0; argc > 1 && cases[i]; i++)
		if (!strcmp(argv[1], cases[i]))
			k = i;
	if (k < 0) {
		fprintf(stderr, "usage: spin_copy alone|queued|cold|h2d|streams|onecpu|prio|query|ipcproc|twoproc "
				"[LIMIT_S]\n");
		return 2;
	}
	kase = cases[k];
	double limit_s = argc > 2 ? atof(argv[2]) : 3;
	if (limit_s <= 0 || limit_s > 60) {
		fprintf(stderr, "spin_copy: LIMIT_S %s: expected 0 < s <= 60\n", argv[2]);
		return 2;
	}
	h2d = !strcmp(kase, "h2d");
	via_helper = !strcmp(kase, "ipcproc");
	other_spins = !strcmp(kase, "twoproc");
	poll_query = !strcmp(kase, "query");
	int queued = strcmp(kase, "alone") != 0;
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	if (!h) {
		printf("%s: SKIP no CUDA driver (dlopen libcuda.so.1: %s)\n", kase, dlerror());
		return 77;
	}
#define SYM(f, n)                                                                                          \
	if (!(*(void **)&cu.f = dlsym(h, n))) {                                                            \
		printf("%s: SKIP libcuda.so.1 lacks %s\n", kase, n);                                       \
		return 77;                                                                                 \
	}
	SYM(Init, "cuInit");
	SYM(DeviceGet, "cuDeviceGet");
	SYM(DeviceGetAttribute, "cuDeviceGetAttribute");
	SYM(PrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
	SYM(CtxSetCurrent, "cuCtxSetCurrent");
	SYM(CtxGetStreamPriorityRange, "cuCtxGetStreamPriorityRange");
	SYM(StreamCreate, "cuStreamCreate");
	SYM(StreamCreateWithPriority, "cuStreamCreateWithPriority");
	SYM(StreamSynchronize, "cuStreamSynchronize");
	SYM(StreamQuery, "cuStreamQuery");
	SYM(EventCreate, "cuEventCreate");
	SYM(EventRecord, "cuEventRecord");
	SYM(MemAlloc, "cuMemAlloc_v2");
	SYM(MemHostAlloc, "cuMemHostAlloc");
	SYM(MemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2");
	SYM(MemcpyAsync, "cuMemcpyAsync");
	SYM(ModuleLoadData, "cuModuleLoadData");
	SYM(ModuleGetFunction, "cuModuleGetFunction");
	SYM(LaunchKernel, "cuLaunchKernel");
	SYM(IpcGetMemHandle, "cuIpcGetMemHandle");
	SYM(IpcOpenMemHandle, "cuIpcOpenMemHandle_v2");
	SYM(GetErrorString, "cuGetErrorString");
	if (via_helper || other_spins) { /* forked before this process touches CUDA */
		if (pipe(to_helper) || pipe(from_helper))
			return 1;
		pid_t p = fork();
		if (p == 0) {
			close(to_helper[1]);
			close(from_helper[0]);
			if (other_spins)
				spinner(limit_s);
			helper();
		}
		close(to_helper[0]);
		close(from_helper[1]);
	}
	if (!strcmp(kase, "onecpu")) {
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(sched_getcpu(), &one);
		sched_setaffinity(0, sizeof(one), &one);
	}
	CUdevice dev;
	int maj = 0, min = 0;
	if (cu.Init(0) != CUDA_SUCCESS || cu.DeviceGet(&dev, 0) != CUDA_SUCCESS) {
		printf("%s: SKIP cuInit/cuDeviceGet failed: no usable GPU\n", kase);
		return 77; /* a helper or spinner reads EOF and ends */
	}
	if (other_spins) { /* the other process's kernel spins before ours starts */
		char c = 1;
		if (write(to_helper[1], &c, 1) != 1 || read(from_helper[0], &c, 1) != 1) {
			printf("%s: ERROR the spinning process did not start its kernel\n", kase);
			return 1;
		}
	}
	CK(cu.DeviceGetAttribute(&maj, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
	CK(cu.DeviceGetAttribute(&min, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
	CK(cu.PrimaryCtxRetain(&ctx, dev));
	CK(cu.CtxSetCurrent(ctx));
	CUfunction nop, spin = load_spin(dev, &nop);
	if (!strcmp(kase, "streams"))
		for (int i = 0; i < 64; i++) {
			CUstream extra;
			CK(cu.StreamCreate(&extra, CU_STREAM_NON_BLOCKING));
		}
	CUstream s;
	CK(cu.StreamCreate(&s, CU_STREAM_NON_BLOCKING));
	if (!strcmp(kase, "prio")) {
		int least = 0, greatest = 0;
		CK(cu.CtxGetStreamPriorityRange(&least, &greatest));
		CK(cu.StreamCreateWithPriority(&cstream, CU_STREAM_NON_BLOCKING, greatest));
	} else {
		CK(cu.StreamCreate(&cstream, CU_STREAM_NON_BLOCKING));
	}
	void *shared;
	CUdeviceptr dshared;
	CK(cu.MemHostAlloc(&shared, 64, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP));
	memset(shared, 0, 64);
	CK(cu.MemHostGetDevicePointer(&dshared, shared, 0));
	flag = (volatile uint32_t *)shared;
	out = (volatile uint64_t *)((char *)shared + 32);
	CK(cu.MemHostAlloc(&hbuf, 8, CU_MEMHOSTALLOC_PORTABLE));
	CK(cu.MemAlloc(&dsrc, 8 << 20));
	if (via_helper) {
		CUipcMemHandle ih;
		CK(cu.IpcGetMemHandle(&ih, dsrc));
		if (write(to_helper[1], &ih, sizeof(ih)) != (ssize_t)sizeof(ih))
			return 1;
		/* the helper has opened the handle and made its stream before the
		 * kernel runs: its first copy answers (the kernel is not running) */
		char c = 0;
		if (write(to_helper[1], &c, 1) != 1 || read(from_helper[0], &c, 1) != 1) {
			printf("%s: ERROR the helper process did not answer\n", kase);
			return 1;
		}
	}
	if (strcmp(kase, "cold")) { /* the copy's stream used once before the kernel runs */
		CK(cu.MemcpyAsync((CUdeviceptr)(uintptr_t)hbuf, dsrc, 8, cstream));
		CK(cu.MemcpyAsync(dsrc, (CUdeviceptr)(uintptr_t)hbuf, 8, cstream));
		CK(cu.StreamSynchronize(cstream));
	}
	CUevent ev;
	CK(cu.EventCreate(&ev, CU_EVENT_DEFAULT));
	uint64_t limit_ns = (uint64_t)(limit_s * 1e9);
	CUdeviceptr dflag = dshared, dout = dshared + 32;
	void *args[] = {&dflag, &limit_ns, &dout};
	pthread_t t;
	double t0 = now_ms();
	CK(cu.LaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
	if (queued) {
		CK(cu.LaunchKernel(nop, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL));
		CK(cu.EventRecord(ev, s));
	}
	if (pthread_create(&t, NULL, copier, NULL))
		return 1;
	CK(cu.StreamSynchronize(s));
	double kernel_ms = now_ms() - t0;
	pthread_join(t, NULL);
	double spun_ms = (double)out[0] / 1e6;
	int saw = out[1] != 0;
	int beside = saw && copy_ms >= 0 && copy_ms < limit_s * 1e3 / 2;
	char other[64] = "";
	if (other_spins) { /* the verdict is made: the other kernel stops and says if it still ran */
		char c = '?';
		close(to_helper[1]);
		if (read(from_helper[0], &c, 1) != 1 || c != 'y') {
			printf("%s: ERROR the other process's kernel %s\n", kase,
			       c == 'n' ? "had stopped before the verdict" : "did not report");
			wait(NULL);
			return 1;
		}
		snprintf(other, sizeof(other), "; the other process's kernel spun throughout");
		to_helper[1] = -1;
	}
	if (copy_failed) {
		printf("%s: ERROR the helper process did not make the copy\n", kase);
		return 1;
	}
	const char *mc = getenv("CUDA_DEVICE_MAX_CONNECTIONS"), *ml = getenv("CUDA_MODULE_LOADING");
	printf("%s: %s: copy %s %.3f ms; kernel spun %.3f ms (%s), stream done after %.3f ms%s; sm_%d%d "
	       "CUDA_DEVICE_MAX_CONNECTIONS=%s CUDA_MODULE_LOADING=%s\n",
	       kase, beside ? "ran beside the kernel" : "BLOCKED", h2d ? "H2D" : via_helper ? "D2H (helper process)" : "D2H",
	       copy_ms, spun_ms, saw ? "saw the flag" : "gave up at its limit", kernel_ms, other, maj, min,
	       mc ? mc : "unset", ml ? ml : "unset");
	if (via_helper || other_spins) {
		if (to_helper[1] >= 0)
			close(to_helper[1]);
		wait(NULL);
	}
	return beside ? 0 : 3;
}
