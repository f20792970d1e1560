#include <stdio.h>
#include <string.h>

#include "efab.h"

static char log_prefix[128] = "efab";
static int log_verbose;
static char *capture_buf;
static size_t capture_len;
static char last_error[512];

const char *efab_log_last_error(void)
{
	return last_error;
}

void efab_log_capture(char *buf, size_t len)
{
	capture_buf = buf;
	capture_len = len;
	if (buf && len)
		buf[0] = '\0';
}

void efab_log_set_prefix(const char *prefix)
{
	snprintf(log_prefix, sizeof(log_prefix), "%s", prefix);
}

void efab_log_set_verbose(int level)
{
	log_verbose = level;
}

int efab_log_verbose(void)
{
	return log_verbose;
}

/* One message is one write, so lines of several ranks do not interleave. */
static void log_emit(FILE *f, const char *fmt, va_list ap)
{
	char line[2048];
	int n = snprintf(line, sizeof(line), "%s: ", log_prefix);

	if (n < 0 || (size_t)n >= sizeof(line))
		n = 0;
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	size_t len = strlen(line);
	if (len + 1 < sizeof(line)) {
		line[len++] = '\n';
		line[len] = '\0';
	}
	fputs(line, f);
	fflush(f);
}

/* verbose < 0 silences errors too: ranks other than 0 during collective
 * decisions that every rank reaches alike. */
void efab_log_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	if (capture_buf) {
		va_start(ap, fmt);
		vsnprintf(capture_buf, capture_len, fmt, ap);
		va_end(ap);
		return;
	}
	if (log_verbose < 0)
		return;
	va_start(ap, fmt);
	log_emit(stderr, fmt, ap);
	va_end(ap);
}

void efab_log_info(const char *fmt, ...)
{
	va_list ap;
	if (log_verbose < 0)
		return;
	va_start(ap, fmt);
	log_emit(stderr, fmt, ap);
	va_end(ap);
}

void efab_log_debug(const char *fmt, ...)
{
	va_list ap;
	if (log_verbose < 1)
		return;
	va_start(ap, fmt);
	log_emit(stderr, fmt, ap);
	va_end(ap);
}
