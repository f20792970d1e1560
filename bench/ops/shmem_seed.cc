/* efab_shmem_seed: the question efabench was started for, literally. A
 * host-side NVSHMEM put from a CUDA buffer (cuMemAlloc: what a PyTorch CUDA
 * tensor is) into the symmetric heap of the other PE, through whatever
 * remote transport NVSHMEM runs, with the source never registered, or
 * registered with nvshmemx_buffer_register first. The outcome is recorded
 * as it happens, never assumed: "ok (data verified)", the error in
 * NVSHMEM's or the provider's words (NVSHMEM's log on stderr above it), or
 * "killed by SIGSEGV in <library>" (the library of the faulting
 * instruction, from a handler that prints it and ends the process: run it
 * once per case, as tests/nvshmem/seed does, so a crash ends only that
 * case). PE 0 puts, PE 1 checks every byte. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <getopt.h>

#include "efab.h"
#include "efab_child.h"
#include "efab_clock.h"
#include "efab_cuda.h"
#include "shmem_up.h"

static const char usage[] =
	"usage: mpirun -np 2 efab_shmem_seed [--register] [--api putmem|putmem_nbi_on_stream] [-m BYTES] [--src cuda|host]\n"
	"  A host-side put of BYTES (default 4096) from a cuMemAlloc buffer (--src host: malloc) on PE 0\n"
	"  into PE 1's symmetric heap (nvshmem_malloc), through NVSHMEM's remote transport\n"
	"  (NVSHMEM_REMOTE_TRANSPORT, NVSHMEM_LIBFABRIC_PROVIDER, ...). --register registers the source\n"
	"  with nvshmemx_buffer_register first. PE 1 checks every byte.\n"
	"  Prints one line: 'seed: <case>: ok (data verified)' | 'error: ...' | 'killed by SIG... in LIB'.\n"
	"  Exit 0 ok, 1 error or wrong data, 2 usage, 77 no GPU or not 2 PEs; a crash exits 128+signal.\n";

static char case_desc[256];

/* Where PE 0 has got to, on stderr as it happens: a case that hangs (killed
 * from outside) is named by its last stage. */
static void stage(int rank, const char *what)
{
	static efab_stopwatch_t since;
	static int started;
	if (!started)
		since = efab_stopwatch_start(), started = 1;
	if (rank == 0) {
		fprintf(stderr, "seed-stage: %s (+%.1f s)\n", what, efab_stopwatch_elapsed_s(since));
		fflush(stderr);
	}
}

/* "seed: <case_desc>: ", the start of the line efab_fault_catch writes */
static char fault_prefix[300];

static void catch_faults(void)
{
	snprintf(fault_prefix, sizeof(fault_prefix), "seed: %s: ", case_desc);
	efab_fault_catch(2, fault_prefix);
}

/* A two-way choice: *out = 0 for first, 1 for second; anything else is a
 * usage error, said in one line. */
static int either(const char *v, const char *opt, const char *first, const char *second, int *out)
{
	if (strcmp(v, first) && strcmp(v, second)) {
		fprintf(stderr, "efab_shmem_seed: %s '%s': expected %s or %s\n", opt, v, first, second);
		return -1;
	}
	*out = !strcmp(v, second);
	return 0;
}

int main(int argc, char **argv)
{
	int reg = 0, on_stream = 0, src_host = 0;
	size_t bytes = 4096;
	static const struct option lo[] = {{"register", no_argument, 0, 'r'}, {"api", required_argument, 0, 'a'},
					   {"size", required_argument, 0, 'm'}, {"src", required_argument, 0, 's'},
					   {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
	for (int c; (c = getopt_long(argc, argv, "ra:m:s:h", lo, NULL)) != -1;) {
		char *end;
		switch (c) {
		case 'r':
			reg = 1;
			break;
		case 'a':
			if (either(optarg, "--api", "putmem", "putmem_nbi_on_stream", &on_stream))
				return EFAB_EUSAGE;
			break;
		case 'm':
			bytes = strtoull(optarg, &end, 0);
			if (*end || !bytes || bytes > (1ull << 30)) {
				fprintf(stderr, "efab_shmem_seed: -m '%s': expected 1 .. 1073741824 bytes\n", optarg);
				return EFAB_EUSAGE;
			}
			break;
		case 's': /* as --api: either() is the shared part, the words differ */
			if (either(optarg, "--src", "cuda", "host", &src_host))
				return EFAB_EUSAGE;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return EFAB_EUSAGE;
		}
	}
	if (optind != argc) {
		fputs(usage, stderr);
		return EFAB_EUSAGE;
	}
	snprintf(case_desc, sizeof(case_desc), "%s from %s (%s), %zu B", on_stream ? "nvshmemx_putmem_nbi_on_stream" : "nvshmem_putmem",
		 src_host ? "malloc host memory" : "cuMemAlloc memory", reg ? "nvshmemx_buffer_register'ed" : "never registered",
		 bytes);
	/* the interposer: EFAB_FITRACE_CLEAR_NIC (NVSHMEM 3.4.5), EFAB_FITRACE_FABRIC,
	 * and the fabric NVSHMEM's domains were opened on, for the outcome line */
	efab_fitrace_read_fn trace = efab_fitrace_up(argv);
	catch_faults();
	MPI_Init(&argc, &argv);
	int rank, size, rc = EFAB_OK, gpu;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (!rank)
			printf("seed: needs exactly 2 PEs (mpirun -np 2), got %d\n", size);
		MPI_Finalize();
		return EFAB_SKIP;
	}
	if (efab_gpu_pick(-1, 0, &gpu) || efab_cuda_set_device(gpu)) {
		if (!rank)
			printf("seed: no GPU here\n");
		MPI_Finalize();
		return EFAB_SKIP;
	}
	stage(rank, "initialising NVSHMEM");
	if (efab_nvshmem_up(rank, size, 1ull << 30)) {
		MPI_Finalize();
		return EFAB_ERR;
	}
	catch_faults(); /* again: NVSHMEM's init installs handlers of its own */
	stage(rank, "NVSHMEM initialised");
	char transport[96], outcome[512] = "";
	efab_nvshmem_transport(transport, sizeof(transport));
	unsigned char *dst = (unsigned char *)nvshmem_malloc(bytes);
	void *src = NULL;
	unsigned char *pat = (unsigned char *)malloc(bytes);
	for (size_t i = 0; i < bytes; i++)
		pat[i] = (unsigned char)(i * 7 + 3);
	if (!dst || !pat) {
		snprintf(outcome, sizeof(outcome), "error: nvshmem_malloc(%zu) failed", bytes);
		rc = EFAB_ERR;
	} else if (rank == 0) {
		if (src_host)
			src = malloc(bytes), memcpy(src, pat, bytes);
		else if (efab_cuda_alloc(0, gpu, bytes, &src) || efab_cuda_copy(src, pat, bytes, 1))
			rc = EFAB_ERR;
		int e = 0;
		if (!rc && reg && (e = nvshmemx_buffer_register(src, bytes))) {
			snprintf(outcome, sizeof(outcome), "error: nvshmemx_buffer_register returned %d", e);
			rc = EFAB_ERR;
		}
		if (!rc && reg)
			stage(rank, "source registered");
		if (!rc && on_stream) {
			cudaStream_t st;
			if (cudaStreamCreate(&st) != cudaSuccess) {
				snprintf(outcome, sizeof(outcome), "error: cudaStreamCreate failed");
				rc = EFAB_ERR;
			} else {
				nvshmemx_putmem_nbi_on_stream(dst, src, bytes, 1, st);
				nvshmemx_quiet_on_stream(st);
				stage(rank, "put and quiet enqueued on the stream; synchronizing the stream");
				cudaError_t ce = cudaStreamSynchronize(st);
				stage(rank, "stream synchronized");
				if (ce != cudaSuccess) {
					snprintf(outcome, sizeof(outcome), "error: the stream failed: %s", cudaGetErrorString(ce));
					rc = EFAB_ERR;
				}
				cudaStreamDestroy(st);
			}
		} else if (!rc) {
			nvshmem_putmem(dst, src, bytes, 1);
			stage(rank, "nvshmem_putmem returned; nvshmem_quiet");
			nvshmem_quiet();
			stage(rank, "nvshmem_quiet returned");
		}
	}
	nvshmem_barrier_all();
	stage(rank, "barrier passed");
	/* PE 1 checks what arrived (the heap may be GPU or host memory) */
	int bad = -1;
	if (rank == 1 && dst) {
		unsigned char *got = (unsigned char *)malloc(bytes);
		const char *hk = getenv("NVSHMEM_HEAP_KIND");
		if (hk && !strcasecmp(hk, "SYSMEM"))
			memcpy(got, dst, bytes);
		else if (efab_cuda_copy(got, dst, bytes, 0))
			memset(got, 0, bytes);
		bad = 0;
		for (size_t i = 0; i < bytes; i++)
			bad += got[i] != pat[i];
		free(got);
	}
	MPI_Bcast(&bad, 1, MPI_INT, 1, MPI_COMM_WORLD);
	int any = rc;
	MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (rank == 0) {
		if (!outcome[0] && bad == 0)
			snprintf(outcome, sizeof(outcome), "ok (data verified, %zu bytes)", bytes);
		else if (!outcome[0])
			snprintf(outcome, sizeof(outcome), "wrong data: %d of %zu bytes differ at PE 1", bad, bytes);
		char fab[128], mrm[32];
		efab_fitrace_fabric(trace, fab, sizeof(fab), mrm, sizeof(mrm));
		printf("seed: %s: transport %s, fabric %s, mr_mode %s: %s\n", case_desc, transport, fab, mrm, outcome);
		fflush(stdout);
	}
	snprintf(case_desc + strlen(case_desc), sizeof(case_desc) - strlen(case_desc), ", at teardown after the put");
	snprintf(fault_prefix, sizeof(fault_prefix), "seed: %s: ", case_desc);
	if (rank == 0 && src && reg && !rc)
		nvshmemx_buffer_unregister(src);
	if (dst)
		nvshmem_free(dst);
	nvshmemx_hostlib_finalize();
	MPI_Finalize();
	free(pat);
	return any ? EFAB_ERR : bad ? EFAB_ERR : EFAB_OK;
}
