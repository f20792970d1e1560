/* NVSHMEM up through the unique-id bootstrap over MPI (rank 0 makes the id,
 * MPI_Bcast hands it out) and the host library alone (no device code, so no
 * device link step), with a symmetric heap of heap_bytes unless the user
 * set NVSHMEM_SYMMETRIC_SIZE. Shared by efab_shmem_reg, efab_shmem_seed and
 * efab_shmem_lat/bw (shmem_put.cc). init: what starts NVSHMEM instead of
 * nvshmemx_hostlib_init_attr (efab_shmem_lat/bw's kernel initiators:
 * nvshmemi_init_thread of libnvshmem_device.a, which also sets up the
 * device state; shmem_kernels.h), or NULL. */
#ifndef EFAB_SHMEM_UP_H
#define EFAB_SHMEM_UP_H
#include <dlfcn.h>
#include <limits.h>
#include <mpi.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvshmem.h>
#include <nvshmemx.h>

#include "efab.h"
#include "efab_fitrace.h"
#include "efab_nvtune.h"
#include "efab_result.h"
#include "efab_select.h"

static inline int efab_nvshmem_up(int rank, int size, unsigned long long heap_bytes,
				  int (*init)(unsigned flags, void *attr) = NULL)
{
	char heap[64];
	int rc = EFAB_OK;
	snprintf(heap, sizeof(heap), "%llu", heap_bytes);
	setenv("NVSHMEM_SYMMETRIC_SIZE", heap, 0); /* a user's setting wins */
	nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
	if (rank == 0 && nvshmemx_get_uniqueid(&id)) {
		efab_log_error("nvshmemx_get_uniqueid failed");
		rc = EFAB_ERR;
	}
	MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
	nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
	nvshmemx_set_attr_uniqueid_args(rank, size, &id, &attr);
	if (!rc && init && init(NVSHMEMX_INIT_WITH_UNIQUEID, &attr)) {
		efab_log_error("nvshmemi_init_thread (unique-id bootstrap, host library and device "
			       "state) failed");
		rc = EFAB_ERR;
	} else if (!rc && !init && nvshmemx_hostlib_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr)) {
		efab_log_error("nvshmemx_hostlib_init_attr (unique-id bootstrap) failed");
		rc = EFAB_ERR;
	}
	return rc;
}
/* The remote transport NVSHMEM really initialised, from what it loaded: its
 * transport plugins (nvshmem_transport_<name>.so.N: libfabric, ibrc, ucx,
 * ibgda, ...) mapped in this process after init, not what
 * NVSHMEM_REMOTE_TRANSPORT asked for; "none" when no plugin was loaded (then
 * registrations never reach a NIC). On a p5en node this says whether
 * nvshmemx_buffer_register went through libfabric. */
static inline void efab_nvshmem_transport(char *out, size_t len)
{
	efab_nv_transports(NULL, out, len); /* bench/ops/nvtune.c: the NVSHMEM libraries mapped */
}

/* The interposer (libefab_fitrace.so, efab_fitrace.h), preloaded: found in
 * this process, or the program started again (before MPI) with
 * ../lib/libefab_fitrace.so beside the binary in LD_PRELOAD; EFAB_FITRACE=0
 * runs without it. Its read function, or NULL. */
static inline efab_fitrace_read_fn efab_fitrace_up(char **argv)
{
	efab_fitrace_read_fn rd = (efab_fitrace_read_fn)dlsym(RTLD_DEFAULT, EFAB_FITRACE_READ);
	const char *off = getenv("EFAB_FITRACE");
	if (rd || (off && !strcmp(off, "0")) || getenv("EFAB_FITRACE_STARTED"))
		return rd;
	char exe[PATH_MAX], so[PATH_MAX + 32], pre[2 * PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return NULL;
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = 0;
	snprintf(so, sizeof(so), "%s/../lib/libefab_fitrace.so", exe);
	if (access(so, R_OK))
		return NULL;
	const char *old = getenv("LD_PRELOAD");
	snprintf(pre, sizeof(pre), "%s%s%s", so, old && *old ? ":" : "", old ? old : "");
	setenv("LD_PRELOAD", pre, 1);
	setenv("EFAB_FITRACE_STARTED", "1", 1);
	execv("/proc/self/exe", argv);
	unsetenv("EFAB_FITRACE_STARTED"); /* exec failed: go on without */
	return NULL;
}

/* The fabric and mr_mode of the domains the program's libfabric user opened
 * (outer ones: not a provider's inner domains), as the interposer rd saw
 * them: "efa-direct" and "0x474", several fabrics joined with '+', "-" when
 * none or not traced; with EFAB_FITRACE_FABRIC set, " (EFAB_FITRACE_FABRIC)"
 * added when the interposer applied it (efab_fitrace_claim: it filtered an
 * fi_getinfo call and every domain is of that fabric), else " (EFAB_FITRACE_FABRIC
 * not applied)" and, once, why on stderr: a transport linked to an
 * fi_getinfo version the interposer does not cover is not filtered. */
static inline void efab_fitrace_fabric(efab_fitrace_read_fn rd, char *fab, size_t flen, char *mrm, size_t mlen)
{
	static efab_fitrace_dom_t d[EFAB_FITRACE_MAX_DOMAINS];
	size_t n = rd ? rd(d, EFAB_FITRACE_MAX_DOMAINS) : 0;
	if (n > EFAB_FITRACE_MAX_DOMAINS)
		n = EFAB_FITRACE_MAX_DOMAINS;
	fab[0] = 0;
	snprintf(mrm, mlen, "-");
	for (size_t i = 0; i < n; i++) {
		if (d[i].inner)
			continue;
		if (!fab[0]) {
			snprintf(fab, flen, "%s", d[i].fabric);
			snprintf(mrm, mlen, "%#x", d[i].mr_mode);
		} else if (strcmp(fab, d[i].fabric)) { /* several fabrics: all named */
			size_t o = strlen(fab);
			snprintf(fab + o, flen - o, "+%s", d[i].fabric);
		}
	}
	if (!fab[0])
		snprintf(fab, flen, "-");
	efab_fitrace_filter_fn ff = (efab_fitrace_filter_fn)dlsym(RTLD_DEFAULT, EFAB_FITRACE_FILTER);
	efab_fitrace_filter_t f;
	char why[512];
	static int said;
	if (ff)
		ff(&f);
	int claim = efab_fitrace_claim(rd && ff ? &f : NULL, d, n, why, sizeof(why));
	if (claim) {
		size_t o = strlen(fab);
		snprintf(fab + o, flen - o, "%s",
			 claim > 0 ? " (EFAB_FITRACE_FABRIC)" : " (EFAB_FITRACE_FABRIC not applied)");
	}
	if (claim < 0 && !said++)
		efab_log_info("%s", why);
}

/* NVSHMEM's version from its name ("NVSHMEM v3.8.0" -> "3.8.0"), else
 * major.minor. */
static inline void efab_nvshmem_version_of(const char *name, int maj, int min, char *out, size_t len)
{
	const char *v = strstr(name, " v");
	if (v && v[2] >= '0' && v[2] <= '9')
		snprintf(out, len, "%.*s", (int)strcspn(v + 2, " ()"), v + 2);
	else
		snprintf(out, len, "%d.%d", maj, min);
}

/* What an NVSHMEM run ran on, in the columns every efabench row has:
 * provider "nvshmem", fabric = the remote transport NVSHMEM loaded (and
 * what NVSHMEM_REMOTE_TRANSPORT asked where that differs), domain "gpuN",
 * provider_version = NVSHMEM's name, with " simulated" when the interposer
 * rd saw a simulated NIC (efasim) under it; the running libfabric. After
 * NVSHMEM's init. loaded: the transport alone. */
static inline void efab_nvshmem_ran_on(efab_run_info_t *ri, efab_fitrace_read_fn rd, int gpu,
				       char *loaded, size_t llen)
{
	static efab_fitrace_dom_t doms[EFAB_FITRACE_MAX_DOMAINS];
	const char *asked = getenv("NVSHMEM_REMOTE_TRANSPORT");
	char fabric[128], gpu_name[16], name[NVSHMEM_MAX_NAME_LEN] = "";
	char pv[NVSHMEM_MAX_NAME_LEN + 16];
	efab_nvshmem_transport(loaded, llen);
	if (asked && *asked && strcmp(asked, loaded))
		snprintf(fabric, sizeof(fabric), "%s (asked %s)", loaded, asked);
	else
		snprintf(fabric, sizeof(fabric), "%s", loaded);
	size_t nd = rd ? rd(doms, EFAB_FITRACE_MAX_DOMAINS) : 0;
	if (nd > EFAB_FITRACE_MAX_DOMAINS)
		nd = EFAB_FITRACE_MAX_DOMAINS;
	int sim = 0;
	for (size_t i = 0; i < nd; i++)
		sim |= doms[i].simulated;
	nvshmem_info_get_name(name);
	snprintf(pv, sizeof(pv), "%s%s", name, sim ? " simulated" : "");
	snprintf(gpu_name, sizeof(gpu_name), "gpu%d", gpu);
	efab_run_info_ran_on(ri, "nvshmem", fabric, gpu_name, pv);
}

#endif
