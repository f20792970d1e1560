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
 * The log is taken with fi_import_log (rdma/fi_ext.h, API >= 1.13) and given
 * back by closing the imported fid (src/log.c ofi_close_import resets the ops
 * to libfabric's own; same in 1.17.1 and 2.x); libfabric refuses a second
 * import while one is live (ofi_open_log: -FI_EALREADY). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include "efab.h"
#include "efab_abi.h"
#include "efab_reglog.h"
#include "efab_select.h"

#if FI_MAJOR_VERSION > 1 || (FI_MAJOR_VERSION == 1 && FI_MINOR_VERSION >= 13)
#define EFAB_HAVE_IMPORT_LOG 1
#include <rdma/fi_ext.h>
#endif

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

#ifdef EFAB_HAVE_IMPORT_LOG
static struct {
	pthread_mutex_t lock;
	efab_reglog_t *cur;
	int env_level; /* FI_LOG_LEVEL as libfabric reads it (fi_convert_log_str): -1 = off */
} cap = {.lock = PTHREAD_MUTEX_INITIALIZER, .env_level = -1};

/* what the user's FI_LOG_LEVEL prints, decided in enabled (which sees the
 * provider filter) and used by the log call that follows on this thread */
static __thread int print_next;

static int cap_enabled(const struct fi_provider *prov, enum fi_log_level level,
		       enum fi_log_subsys subsys, uint64_t flags)
{
	(void)prov;
	print_next = (int)level <= cap.env_level && !(flags & FI_LOG_PROV_FILTERED);
	return print_next || (subsys == FI_LOG_MR && level <= FI_LOG_INFO);
}

static int cap_ready(const struct fi_provider *prov, enum fi_log_level level,
		     enum fi_log_subsys subsys, uint64_t flags, uint64_t *showtime)
{
	(void)showtime;
	return cap_enabled(prov, level, subsys, flags);
}

static void cap_log(const struct fi_provider *prov, enum fi_log_level level,
		    enum fi_log_subsys subsys, const char *func, int line, const char *msg)
{
	static const char *const lv[] = {"warn", "trace", "info", "debug"};
	static const char *const ss[] = {"core", "fabric", "domain", "ep_ctrl", "ep_data",
					 "av",   "cq",     "eq",     "mr",      "cntr"};
	if (print_next) /* as libfabric's ofi_log prints it */
		fprintf(stderr, "libfabric:%d:%ld::%s:%s:%s():%d<%s> %s", (int)getpid(),
			(long)time(NULL), prov && prov->name ? prov->name : "core",
			(unsigned)subsys < 10 ? ss[subsys] : "?", func, line,
			(unsigned)level < 4 ? lv[level] : "?", msg);
	if (subsys != FI_LOG_MR || level > FI_LOG_INFO)
		return;
	pthread_mutex_lock(&cap.lock);
	if (cap.cur)
		efab_reglog_add(cap.cur, msg);
	pthread_mutex_unlock(&cap.lock);
}

static struct fi_ops_log cap_ops = {.enabled = cap_enabled, .ready = cap_ready, .log = cap_log};
static struct fid_logging cap_fid = {.ops = &cap_ops};
#endif

int efab_reglog_begin(efab_reglog_t *l)
{
	memset(l, 0, sizeof(*l));
#ifdef EFAB_HAVE_IMPORT_LOG
	static const char *const names[] = {"warn", "trace", "info", "debug"};
	const char *lvl = getenv("FI_LOG_LEVEL");
	cap.env_level = lvl ? 0 : -1; /* an unknown name is warn, as in libfabric */
	for (int i = 0; lvl && i < 4; i++)
		if (!strcasecmp(lvl, names[i]))
			cap.env_level = i;
	int ret = fi_import_log(EFAB_FI_VERSION, 0, &cap_fid);
	if (ret) { /* a live capture (another's) keeps its lines */
		snprintf(l->why, sizeof(l->why), "fi_import_log: %s (%d)%s", fi_strerror(-ret), ret,
			 ret == -FI_EALREADY ? ": libfabric's log is imported already" : "");
		return EFAB_ERR;
	}
	pthread_mutex_lock(&cap.lock);
	cap.cur = l;
	pthread_mutex_unlock(&cap.lock);
	l->captured = 1;
	return EFAB_OK;
#else
	snprintf(l->why, sizeof(l->why), "built with libfabric %d.%d headers: no fi_import_log (1.13)",
		 FI_MAJOR_VERSION, FI_MINOR_VERSION);
	return EFAB_ERR;
#endif
}

void efab_reglog_end(efab_reglog_t *l)
{
#ifdef EFAB_HAVE_IMPORT_LOG
	if (!l->captured)
		return;
	fi_close(&cap_fid.fid); /* ofi_close_import: libfabric's own ops again */
	pthread_mutex_lock(&cap.lock);
	cap.cur = NULL;
	pthread_mutex_unlock(&cap.lock);
#else
	(void)l;
#endif
}
