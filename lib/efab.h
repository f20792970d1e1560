/* efabench core definitions: status codes, logging, timing.
 *
 * Contract of every efab_* function that can fail: it returns an efab_status
 * (0 on success), logs the error once where it is born, and sets its output
 * parameters only on success. */
#ifndef EFAB_H
#define EFAB_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

#define EFAB_VERSION "0.1.0"
/* The CSV schema (docs/csv.md): 2 numbers the column set schema 1 grew to.
 * A column added, removed, reordered or given another meaning is a new
 * number, with docs/csv.md, efab_plot and tests/csvcheck.py taught it. */
#define EFAB_CSV_SCHEMA 2

/* Exit codes (automake convention for SKIP). */
enum efab_status {
	EFAB_OK = 0,
	EFAB_ERR = 1,    /* runtime failure: fabric error, validation mismatch, timeout */
	EFAB_EUSAGE = 2, /* bad option, bad value, bad config */
	EFAB_SKIP = 77,  /* requested operation/memory/fabric not supported here */
};

#define EFAB_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* Prefix for every message: the program, e.g. "NAME" or "NAME[rank 1]". */
void efab_log_set_prefix(const char *prefix);
void efab_log_set_verbose(int level);
int efab_log_verbose(void);
void efab_log_error(const char *fmt, ...) EFAB_PRINTF(1, 2);
/* While buf is set, error messages are stored there (the last one wins)
 * instead of printed: the probe records exact error strings this way. */
void efab_log_capture(char *buf, size_t len);
/* The text of the last efab_log_error (printed or captured), "" before any:
 * the evidence efab_scan keeps for a pair that failed. */
const char *efab_log_last_error(void);
void efab_log_info(const char *fmt, ...) EFAB_PRINTF(1, 2);
void efab_log_debug(const char *fmt, ...) EFAB_PRINTF(1, 2);

#define EFAB_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#ifdef __cplusplus
}
#endif

#endif
