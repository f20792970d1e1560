/* Which path a registration took, from libfabric's own log.
 *
 * libfabric reports the path of a registration nowhere but in its log: the
 * fi_mr_attr and the MR say nothing. The efa provider's efa_mr_reg_ibv_mr
 * (prov/efa/src/efa_mr.c) logs, subsystem FI_LOG_MR:
 *   2.6.0, 2.7.0a1  info "Registering dmabuf MR: fd=%d offset=%lu len=%zu"
 *                         before ibv_reg_dmabuf_mr of an address-only buffer;
 *                   info "Unable to get dmabuf fd for %s device buffer, Fall
 *                         back to ibv_reg_mr" (the export failed, fallback on);
 *                   info "assumed dmabuf support for %s was incorrect" /
 *                   warn "Explicit dmabuf support for %s was incorrect"
 *                         (efa_mark_dmabuf_fail: ibv_reg_dmabuf_mr failed;
 *                         dma-buf off for the rest of the process; with the
 *                         fallback on, ibv_reg_mr takes the buffer);
 *                   info "FI_MR_DMABUF: fd=..." (the application's dma-buf);
 *   2.4.0           the same fallback line, for Neuron only; CUDA memory
 *                   goes to ibv_reg_mr without a word;
 *   2.1.0           CUDA memory to ibv_reg_mr without a word;
 *   all four        info "Registered memory ..." after the verbs call
 *                   succeeded (efa_mr_reg_impl).
 * For CUDA memory 2.6.0 decides once, when the provider loads
 * (efa_hmem_info_check_p2p_support_cuda, efa_hmem.c, logged under FI_LOG_CORE):
 * a working dma-buf makes every registration "Registering dmabuf MR"; a failed
 * one (or FI_HMEM_CUDA_USE_DMABUF=0) sends every registration to ibv_reg_mr,
 * with only "Registered memory" said. Hence "Registered memory" with no
 * dma-buf line, for GPU memory, is ibv_reg_mr on the device address: peer
 * memory (nvidia-peermem, or the EFA driver's efa-nv-peermem path). Nothing is
 * taken from the libfabric version.
 *
 * The log is taken through efabench's one importer of it (filog.c:
 * fi_import_log, rdma/fi_ext.h, API >= 1.13) as a tap attached around the
 * registration and detached after it; the last tap detached gives libfabric
 * its own logging back (src/log.c ofi_close_import; same in 1.17.1 and 2.x). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <rdma/fabric.h>
#include <rdma/fi_ext.h> /* FI_LOG_MR, FI_LOG_INFO (rdma/providers/fi_log.h) */

#include "efab.h"
#include "efab_abi.h"
#include "efab_reglog.h"
#include "efab_select.h"

void efab_reglog_add(efab_reglog_t *l, const char *msg)
{
	if (l->n >= EFAB_REGLOG_LINES)
		return;
	snprintf(l->line[l->n], sizeof(l->line[0]), "%s", msg);
	l->line[l->n][strcspn(l->line[l->n], "\n")] = '\0';
	l->n++;
}

static const char *find(const efab_reglog_t *l, const char *a, const char *b)
{
	for (size_t i = 0; i < l->n; i++)
		if (strstr(l->line[i], a) && (!b || strstr(l->line[i], b)))
			return l->line[i];
	return NULL;
}

#define ATTEMPT(l) find(l, "Registering dmabuf MR", NULL)
#define FD_FALLBACK(l) find(l, "Unable to get dmabuf fd", "Fall back to ibv_reg_mr")
#define INCORRECT(l) find(l, "dmabuf support for", "was incorrect")
#define REGISTERED(l) find(l, "Registered memory", NULL)
#define EXPLICIT(l) find(l, "FI_MR_DMABUF: fd=", NULL)

int efab_reglog_nic_provider(const char *prov)
{
	static const char *const hw[] = {"efa", "verbs", "psm3", "cxi", "opx", "usnic"};
	for (size_t i = 0; i < sizeof(hw) / sizeof(hw[0]); i++)
		if (efab_prov_matches(hw[i], prov))
			return 1;
	return 0;
}

const char *efab_reglog_classify(const efab_reglog_t *l, int cuda, int efab_dmabuf, int nic)
{
	if (efab_dmabuf)
		return EFAB_REGPATH_EFAB_DMABUF;
	if (!nic)
		return EFAB_REGPATH_NONE;
	if (!cuda) /* a dma-buf of host memory only where libfabric says so */
		return l->captured && ATTEMPT(l) && !INCORRECT(l) ? EFAB_REGPATH_DMABUF
								   : EFAB_REGPATH_HOST;
	if (!l->captured)
		return EFAB_REGPATH_UNKNOWN;
	if (FD_FALLBACK(l)) /* never tried ibv_reg_dmabuf_mr: ibv_reg_mr */
		return EFAB_REGPATH_PEERMEM;
	if (ATTEMPT(l))
		return INCORRECT(l) ? EFAB_REGPATH_FALLBACK : EFAB_REGPATH_DMABUF;
	if (REGISTERED(l)) /* registered through verbs, no dma-buf said: ibv_reg_mr */
		return EFAB_REGPATH_PEERMEM;
	return EFAB_REGPATH_UNKNOWN;
}

const char *efab_reglog_evidence(const efab_reglog_t *l)
{
	const char *s = FD_FALLBACK(l);
	if (!s && (s = ATTEMPT(l)) && INCORRECT(l))
		s = INCORRECT(l);
	if (!s)
		s = EXPLICIT(l);
	if (!s)
		s = REGISTERED(l);
	return s ? s : "";
}

/* The registration path's tap on libfabric's log (filog.c): MR-subsystem
 * lines at info and above, into the reglog being watched. */
static int reg_wants(void *arg, int level, int subsys)
{
	(void)arg;
	return subsys == FI_LOG_MR && level <= FI_LOG_INFO;
}

static void reg_take(void *arg, int level, int subsys, const char *func,
		     const char *msg)
{
	(void)level, (void)subsys, (void)func;
	efab_reglog_add((efab_reglog_t *)arg, msg);
}

int efab_reglog_begin(efab_reglog_t *l)
{
	memset(l, 0, sizeof(*l));
	l->tap.wants = reg_wants;
	l->tap.take = reg_take;
	l->tap.arg = l;
	if (efab_filog_attach(&l->tap, l->why, sizeof(l->why)))
		return EFAB_ERR;
	l->captured = 1;
	return EFAB_OK;
}

void efab_reglog_end(efab_reglog_t *l)
{
	if (!l->captured)
		return;
	efab_filog_detach(&l->tap);
}

/* ---- GDRCopy (efab_reglog.h) ----
 * libfabric's lines, FI_LOG_CORE (src/hmem.c ofi_hmem_init, src/hmem_cuda.c
 * cuda_hmem_init, src/hmem_cuda_gdrcopy.c; read in 2.1.0, 2.4.0, 2.6.0,
 * 2.7.0a1):
 *   info "Hmem iface %s not supported" / warn "Failed to initialize hmem iface
 *        %s: %s" (ofi_hmem_init, for every interface it tries: our marker
 *        that the initialisation ran under the tap; for FI_HMEM_CUDA, no CUDA
 *        hmem and so no GDRCopy)
 *   info "Loaded GDRCopy library: %s" (2.4.0+, ENABLE_GDRCOPY_DLOPEN builds,
 *        after every symbol was found; gdr_open follows)
 *   info "Failed to find usable libgdrapi.so" (2.4.0+) / "Failed to dlopen
 *        libgdrapi.so" (2.1.0); warn "gdrcopy_dl_hmem_init failed!",
 *        "gdr_open failed!", "gdrcopy initialization failed! gdrcopy will not
 *        be used." (use_gdrcopy false)
 * A build linking libgdrapi directly (no dlopen), 2.1.0's dlopen, and a
 * build without GDRCopy say nothing when they succeed or skip. */
#define G_FIND(g, a) gfind(g, a)

static const char *gfind(const efab_gdrlog_t *g, const char *a)
{
	for (size_t i = 0; i < g->n; i++)
		if (strstr(g->line[i], a))
			return g->line[i];
	return NULL;
}

void efab_gdrlog_add(efab_gdrlog_t *g, const char *msg)
{
	if (strstr(msg, "Hmem iface"))
		g->saw_hmem = 1;
	if (!(strstr(msg, "gdrcopy") || strstr(msg, "GDRCopy") || strstr(msg, "gdrapi") ||
	      strstr(msg, "gdr_") || strstr(msg, "FI_HMEM_CUDA")) || g->n >= EFAB_GDRLOG_LINES)
		return;
	snprintf(g->line[g->n], sizeof(g->line[0]), "%s", msg);
	g->line[g->n][strcspn(g->line[g->n], "\n")] = '\0';
	g->n++;
}

static int gdr_wants(void *arg, int level, int subsys)
{
	(void)arg;
	return subsys == FI_LOG_CORE && level <= FI_LOG_INFO;
}

static void gdr_take(void *arg, int level, int subsys, const char *func, const char *msg)
{
	(void)level, (void)subsys, (void)func;
	efab_gdrlog_add((efab_gdrlog_t *)arg, msg);
}

int efab_gdrlog_begin(efab_gdrlog_t *g)
{
	memset(g, 0, sizeof(*g));
	g->tap.wants = gdr_wants;
	g->tap.take = gdr_take;
	g->tap.arg = g;
	if (efab_filog_attach(&g->tap, g->why, sizeof(g->why)))
		return EFAB_ERR;
	g->captured = 1;
	return EFAB_OK;
}

void efab_gdrlog_end(efab_gdrlog_t *g)
{
	if (g->captured)
		efab_filog_detach(&g->tap);
	g->captured = g->captured ? 2 : 0; /* 2: was taken, now given back */
}

int efab_gdr_state(const efab_gdrlog_t *g, const char *env, int mapped, char *why, size_t len)
{
	static const char *const fails[] = {"gdrcopy will not be used", "gdr_open failed",
					    "gdrcopy_dl_hmem_init failed",
					    "Failed to find usable libgdrapi", "Failed to dlopen libgdrapi"};
	const char *s;
	if (env && (!strcmp(env, "0") || !strcasecmp(env, "false") || !strcasecmp(env, "no") ||
		    !strcasecmp(env, "off"))) {
		snprintf(why, len, "FI_HMEM_CUDA_USE_GDRCOPY=%s: cuda_hmem_init leaves GDRCopy unloaded",
			 env);
		return EFAB_GDR_OFF;
	}
	for (size_t i = 0; i < EFAB_ARRAY_SIZE(fails); i++)
		if ((s = G_FIND(g, fails[i]))) {
			snprintf(why, len, "libfabric said \"%s\"", s);
			return EFAB_GDR_OFF;
		}
	if ((s = G_FIND(g, "iface FI_HMEM_CUDA"))) { /* not supported / failed to initialize */
		snprintf(why, len, "libfabric said \"%s\"", s);
		return EFAB_GDR_OFF;
	}
	if ((s = G_FIND(g, "Loaded GDRCopy library"))) {
		snprintf(why, len, "libfabric said \"%s\"", s);
		return EFAB_GDR_ON;
	}
	if (mapped == 0) {
		snprintf(why, len, "no libgdrapi in this process after libfabric initialised: no "
				   "gdr_pin_buffer can run");
		return EFAB_GDR_OFF;
	}
	snprintf(why, len, "%s", !g->captured ? "libfabric's log was not ours when it initialised"
			       : !g->saw_hmem ? "libfabric initialised before its log was taken"
					      : "libfabric said nothing of GDRCopy (a build that links "
						"libgdrapi, or 2.1.0, is silent when it works) and "
						"libgdrapi is loaded");
	return EFAB_GDR_UNKNOWN;
}

int efab_libgdrapi_mapped(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int found = 0;
	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, "/libgdrapi.so") != NULL;
	fclose(f);
	return found;
}

int efab_gdr_applies(const char *prov, const char *fabric, int cuda, int fi_mr_dmabuf)
{
	return cuda && !fi_mr_dmabuf && prov && efab_prov_matches("efa", prov) && fabric &&
	       strcmp(fabric, "efa-direct") != 0;
}

const char *efab_reglog_gdr_suffix(const efab_reglog_t *l, int applies, int state)
{
	if (!applies || state == EFAB_GDR_OFF)
		return "";
	if (state == EFAB_GDR_UNKNOWN)
		return "+gdrcopy-unknown";
	/* efa_rdm_mr_hmem_setup / efa_mr_hmem_setup, FI_LOG_MR warn */
	return find(l, "Unable to register handle for GPU memory", NULL) ? "+gdrcopy-failed"
									 : "+gdrcopy";
}
