/* libfabric's log, taken in-process (filog.c). libfabric lets one importer
 * hold its log at a time (fi_import_log, rdma/fi_ext.h, API >= 1.13;
 * ofi_open_log answers -FI_EALREADY to a second), so efabench imports it once
 * and hands each line to the taps attached: the probe's warning capture
 * (select.c efab_provider_log_capture) and the registration-path capture
 * (reglog.c). While any tap is attached every line FI_LOG_LEVEL asks for is
 * still printed to stderr as libfabric prints it (its provider filter
 * honoured); the last detach closes the import, and libfabric's own logging
 * is back (src/log.c ofi_close_import). */
#ifndef EFAB_FILOG_H
#define EFAB_FILOG_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct efab_filog_tap {
	/* the lines this tap takes (called under the log's lock) */
	int (*wants)(void *arg, int level, int subsys); /* enum fi_log_level, fi_log_subsys */
	/* one line, msg as the provider formatted it (a newline at its end) */
	void (*take)(void *arg, int level, int subsys, const char *func, const char *msg);
	void *arg;
	struct efab_filog_tap *next; /* the log's list; set by attach */
} efab_filog_tap_t;

/* Attach t (importing the log if no tap is attached yet). EFAB_OK, or
 * EFAB_ERR with why: the libfabric headers have no fi_import_log, or another
 * importer holds the log. Attaching a tap twice is refused too. */
int efab_filog_attach(efab_filog_tap_t *t, char *why, size_t len);
/* Detach t; the last one gives libfabric its own logging back. */
void efab_filog_detach(efab_filog_tap_t *t);
/* Taps attached now (tests). */
int efab_filog_taps(void);

#ifdef __cplusplus
}
#endif

#endif
