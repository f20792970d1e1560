/* libfabric's log, imported once for every tap (efab_filog.h). */
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
#include "efab_filog.h"
#include "efab_select.h"

#if FI_MAJOR_VERSION > 1 || (FI_MAJOR_VERSION == 1 && FI_MINOR_VERSION >= 13)
#define EFAB_HAVE_IMPORT_LOG 1
#include <rdma/fi_ext.h>
#endif

static struct {
	pthread_mutex_t lock;
	efab_filog_tap_t *taps;
	int imported;
	int env_level; /* FI_LOG_LEVEL as libfabric reads it (fi_convert_log_str): -1 = off */
} lg = {.lock = PTHREAD_MUTEX_INITIALIZER, .env_level = -1};

int efab_filog_taps(void)
{
	int n = 0;
	pthread_mutex_lock(&lg.lock);
	for (efab_filog_tap_t *t = lg.taps; t; t = t->next)
		n++;
	pthread_mutex_unlock(&lg.lock);
	return n;
}

#ifdef EFAB_HAVE_IMPORT_LOG
/* what the user's FI_LOG_LEVEL prints, decided in enabled (which sees the
 * provider filter) and used by the log call that follows on this thread */
static __thread int print_next;

static int any_wants(enum fi_log_level level, enum fi_log_subsys subsys)
{
	int w = 0;
	pthread_mutex_lock(&lg.lock);
	for (efab_filog_tap_t *t = lg.taps; t && !w; t = t->next)
		w = t->wants(t->arg, (int)level, (int)subsys);
	pthread_mutex_unlock(&lg.lock);
	return w;
}

static int lg_enabled(const struct fi_provider *prov, enum fi_log_level level,
		      enum fi_log_subsys subsys, uint64_t flags)
{
	(void)prov;
	print_next = (int)level <= lg.env_level && !(flags & FI_LOG_PROV_FILTERED);
	return print_next || any_wants(level, subsys);
}

static int lg_ready(const struct fi_provider *prov, enum fi_log_level level,
		    enum fi_log_subsys subsys, uint64_t flags, uint64_t *showtime)
{
	(void)showtime;
	return lg_enabled(prov, level, subsys, flags);
}

static void lg_log(const struct fi_provider *prov, enum fi_log_level level,
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
	pthread_mutex_lock(&lg.lock);
	for (efab_filog_tap_t *t = lg.taps; t; t = t->next)
		if (t->wants(t->arg, (int)level, (int)subsys))
			t->take(t->arg, (int)level, (int)subsys, func, msg);
	pthread_mutex_unlock(&lg.lock);
}

static struct fi_ops_log lg_ops = {.enabled = lg_enabled, .ready = lg_ready, .log = lg_log};
static struct fid_logging lg_fid = {.ops = &lg_ops};
#endif

int efab_filog_attach(efab_filog_tap_t *t, char *why, size_t len)
{
#ifdef EFAB_HAVE_IMPORT_LOG
	pthread_mutex_lock(&lg.lock);
	for (efab_filog_tap_t *u = lg.taps; u; u = u->next)
		if (u == t) {
			pthread_mutex_unlock(&lg.lock);
			snprintf(why, len, "this capture is attached already");
			return EFAB_ERR;
		}
	if (!lg.imported) {
		static const char *const names[] = {"warn", "trace", "info", "debug"};
		const char *lvl = getenv("FI_LOG_LEVEL");
		lg.env_level = lvl ? 0 : -1; /* an unknown name is warn, as in libfabric */
		for (int i = 0; lvl && i < 4; i++)
			if (!strcasecmp(lvl, names[i]))
				lg.env_level = i;
		/* fi_import_log calls none of our ops: the lock may be held */
		int ret = fi_import_log(EFAB_FI_VERSION, 0, &lg_fid);
		if (ret) {
			pthread_mutex_unlock(&lg.lock);
			snprintf(why, len, "fi_import_log: %s (%d)%s", fi_strerror(-ret), ret,
				 ret == -FI_EALREADY ? ": libfabric's log is imported already (not by "
						       "efabench)" : "");
			return EFAB_ERR;
		}
		lg.imported = 1;
	}
	t->next = lg.taps;
	lg.taps = t;
	pthread_mutex_unlock(&lg.lock);
	return EFAB_OK;
#else
	(void)t;
	snprintf(why, len, "built with libfabric %d.%d headers: no fi_import_log (1.13)",
		 FI_MAJOR_VERSION, FI_MINOR_VERSION);
	return EFAB_ERR;
#endif
}

void efab_filog_detach(efab_filog_tap_t *t)
{
#ifdef EFAB_HAVE_IMPORT_LOG
	int close_it = 0;
	pthread_mutex_lock(&lg.lock);
	for (efab_filog_tap_t **p = &lg.taps; *p; p = &(*p)->next)
		if (*p == t) {
			*p = t->next;
			t->next = NULL;
			break;
		}
	if (!lg.taps && lg.imported) {
		lg.imported = 0;
		close_it = 1;
	}
	pthread_mutex_unlock(&lg.lock);
	if (close_it)
		fi_close(&lg_fid.fid); /* ofi_close_import: libfabric's own ops again */
#else
	(void)t;
#endif
}
