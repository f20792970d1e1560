/* NVSHMEM's tuning knobs as options (efab_nvtune.h). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "efab.h"
#include "efab_nvtune.h"

static const struct knob {
	const char *env;    /* the variable NVSHMEM reads */
	const char *option; /* efabench's option */
	const char *column; /* the CSV column */
	const char *where;  /* which NVSHMEM reads it (its libraries' tables, 3.4.5 to 3.8.0) */
} knobs[EFAB_NV_N_KNOBS] = {
	[EFAB_NV_DISABLE_BATCH_RMA] = {"NVSHMEM_LIBFABRIC_DISABLE_BATCH_RMA", "--nv-batch-rma",
				       "nv_disable_batch_rma", "NVSHMEM >= 3.7's libfabric transport"},
	[EFAB_NV_TRANSPORT_BATCH_MAX_OPS] = {"NVSHMEM_TRANSPORT_BATCH_MAX_OPS", "--nv-batch-ops",
					     "nv_batch_max_ops", "NVSHMEM >= 3.7's host library"},
	[EFAB_NV_PROXY_REQUEST_BATCH_MAX] = {"NVSHMEM_PROXY_REQUEST_BATCH_MAX", "--nv-proxy-batch",
					     "nv_proxy_batch_max", "NVSHMEM's host library (3.4.5 and later)"},
	[EFAB_NV_LF_PROXY_REQUEST_BATCH_MAX] = {"NVSHMEM_LIBFABRIC_PROXY_REQUEST_BATCH_MAX",
						"--nv-lf-proxy-batch", "nv_lf_proxy_batch_max",
						"NVSHMEM >= 3.7's libfabric transport"},
};

static int valid(int k)
{
	return k >= 0 && k < EFAB_NV_N_KNOBS;
}

const char *efab_nv_knob_env(int k)
{
	return valid(k) ? knobs[k].env : "?";
}

const char *efab_nv_knob_option(int k)
{
	return valid(k) ? knobs[k].option : "?";
}

const char *efab_nv_knob_column(int k)
{
	return valid(k) ? knobs[k].column : "?";
}

void efab_nv_knob_asked(const efab_opts_t *o, int k, char *v, size_t len)
{
	uint64_t n = 0;
	v[0] = 0;
	switch (k) {
	case EFAB_NV_DISABLE_BATCH_RMA:
		/* tristate: 1 on (batching kept: DISABLE=0), 2 off (DISABLE=1) */
		if (o->nv_batch_rma == 1 || o->nv_batch_rma == 2)
			snprintf(v, len, "%d", o->nv_batch_rma == 2);
		return;
	case EFAB_NV_TRANSPORT_BATCH_MAX_OPS: n = o->nv_batch_ops; break;
	case EFAB_NV_PROXY_REQUEST_BATCH_MAX: n = o->nv_proxy_batch; break;
	case EFAB_NV_LF_PROXY_REQUEST_BATCH_MAX: n = o->nv_lf_proxy_batch; break;
	default: return;
	}
	if (n)
		snprintf(v, len, "%llu", (unsigned long long)n);
}

int efab_nv_tune_apply(const efab_opts_t *o, char *err, size_t len)
{
	char v[32];
	for (int k = 0; k < EFAB_NV_N_KNOBS; k++) {
		efab_nv_knob_asked(o, k, v, sizeof(v));
		if (!v[0])
			continue;
		const char *had = getenv(knobs[k].env);
		if (had && strcmp(had, v)) {
			snprintf(err, len, "%s asks %s=%s, but the environment already has %s=%s: "
				 "unset one of them", knobs[k].option, knobs[k].env, v, knobs[k].env, had);
			return EFAB_EUSAGE;
		}
		if (setenv(knobs[k].env, v, 1)) {
			snprintf(err, len, "setenv %s: out of memory", knobs[k].env);
			return EFAB_ERR;
		}
	}
	return EFAB_OK;
}

static const char transport_tag[] = "nvshmem_transport_";

int efab_nv_libs(const char *maps, char paths[][EFAB_NV_PATH], int max)
{
	FILE *f = fopen(maps ? maps : "/proc/self/maps", "r");
	char line[4096];
	int n = 0;
	if (!f)
		return -1;
	while (n < max && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		const char *path = strchr(line, '/');
		if (!path)
			continue;
		const char *base = strrchr(path, '/') + 1;
		if (strncmp(base, "libnvshmem_host.so", 18) && strncmp(base, transport_tag, sizeof(transport_tag) - 1))
			continue;
		int dup = 0;
		for (int i = 0; i < n; i++)
			dup |= !strncmp(paths[i], path, EFAB_NV_PATH - 1);
		if (!dup)
			snprintf(paths[n++], EFAB_NV_PATH, "%s", path);
	}
	fclose(f);
	return n;
}

void efab_nv_transports(const char *maps, char *out, size_t len)
{
	char paths[16][EFAB_NV_PATH];
	int n = efab_nv_libs(maps, paths, 16);
	size_t used = 0;
	out[0] = 0;
	for (int i = 0; i < n; i++) {
		const char *base = strrchr(paths[i], '/') + 1;
		if (strncmp(base, transport_tag, sizeof(transport_tag) - 1))
			continue;
		base += sizeof(transport_tag) - 1;
		char name[64];
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(base, "."), base);
		/* the same transport twice (two versions' files): named once */
		int dup = 0;
		for (const char *t = out; *t; t += strcspn(t, "+"), t += *t == '+')
			dup |= strcspn(t, "+") == strlen(name) && !strncmp(t, name, strlen(name));
		if (name[0] && !dup && used < len)
			used += (size_t)snprintf(out + used, len - used, "%s%s", used ? "+" : "", name);
	}
	if (!out[0])
		snprintf(out, len, "none");
}

/* Which of the knobs' names (NUL, name, NUL: the table's names lack the
 * "NVSHMEM_" prefix) the file holds: each library mapped once, all names
 * searched in it. */
static void file_names(const char *path, int known[EFAB_NV_N_KNOBS])
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && st.st_size > 0) {
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		for (int k = 0; m != MAP_FAILED && k < EFAB_NV_N_KNOBS; k++) {
			char needle[128];
			const char *name = knobs[k].env + 8;
			size_t n = strlen(name);
			if (known[k] || n + 2 > sizeof(needle))
				continue;
			needle[0] = 0;
			memcpy(needle + 1, name, n);
			needle[n + 1] = 0;
			known[k] = memmem(m, (size_t)st.st_size, needle, n + 2) != NULL;
		}
		if (m != MAP_FAILED)
			munmap(m, (size_t)st.st_size);
	}
	close(fd);
}

int efab_nv_tune_scan(const char *maps, int known[EFAB_NV_N_KNOBS], char *libs, size_t len)
{
	char paths[16][EFAB_NV_PATH];
	int n = efab_nv_libs(maps, paths, 16);
	size_t used = 0;
	for (int k = 0; k < EFAB_NV_N_KNOBS; k++)
		known[k] = 0;
	if (len)
		libs[0] = 0;
	for (int i = 0; i < n; i++) {
		if (used < len) /* else the list is full: searched, not named */
			used += (size_t)snprintf(libs + used, len - used, "%s%s", used ? "+" : "",
						 strrchr(paths[i], '/') + 1);
		file_names(paths[i], known);
	}
	return n;
}

int efab_nv_tune_check(const efab_opts_t *o, const int known[EFAB_NV_N_KNOBS], const char *libs,
		       const char *nv_version, char *err, size_t len)
{
	char v[32];
	for (int k = 0; k < EFAB_NV_N_KNOBS; k++) {
		efab_nv_knob_asked(o, k, v, sizeof(v));
		if (!v[0] || known[k])
			continue;
		snprintf(err, len, "%s: NVSHMEM %s does not read %s (not in %s), so it would change "
			 "nothing (%s reads it)",
			 knobs[k].option, nv_version && *nv_version ? nv_version : "?", knobs[k].env,
			 libs && *libs ? libs : "any NVSHMEM library mapped here", knobs[k].where);
		return EFAB_SKIP;
	}
	return EFAB_OK;
}

void efab_nv_knob_cell(int k, const int known[EFAB_NV_N_KNOBS], char *out, size_t len)
{
	const char *v = valid(k) ? getenv(knobs[k].env) : NULL;
	if (!v)
		snprintf(out, len, "default");
	else
		snprintf(out, len, "%s%s", known[k] ? "" : "unread:", v);
}
