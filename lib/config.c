#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "efab.h"
#include "efab_config.h"
#include "efab_opts.h"

static const struct {
	const char *exe;
	unsigned mask;
	int mpi;
} benches[] = {
	{"efab_put_lat", EFAB_B_PUT_LAT, 1},     {"efab_get_lat", EFAB_B_GET_LAT, 1},
	{"efab_put_bw", EFAB_B_PUT_BW, 1},       {"efab_get_bw", EFAB_B_GET_BW, 1},
	{"efab_atomic_lat", EFAB_B_ATOMIC_LAT, 1}, {"efab_atomic_bw", EFAB_B_ATOMIC_BW, 1},
	{"efab_mr_reg", EFAB_B_MR_REG, 0},       {"efab_shmem_reg", EFAB_B_SHMEM_REG, 1},
	{"efab_probe", EFAB_B_PROBE, 0},
};

unsigned efab_bench_mask(const char *name, const char **exe)
{
	for (size_t i = 0; i < EFAB_ARRAY_SIZE(benches); i++)
		if (!strcmp(name, benches[i].exe) || !strcmp(name, benches[i].exe + 5)) {
			if (exe)
				*exe = benches[i].exe;
			return benches[i].mask;
		}
	return 0;
}

static int bench_mpi(unsigned mask)
{
	for (size_t i = 0; i < EFAB_ARRAY_SIZE(benches); i++)
		if (benches[i].mask == mask)
			return benches[i].mpi;
	return 0;
}

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

static int valid_name(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_' && *s != '.')
			return 0;
	return 1;
}

void efab_config_free(efab_config_t *cfg)
{
	for (size_t i = 0; i < cfg->nsec; i++)
		free(cfg->sec[i].kv);
	free(cfg->sec);
	cfg->sec = NULL;
	cfg->nsec = 0;
}

int efab_config_parse(const char *text, size_t len, const char *path, efab_config_t *out,
		      char *err, size_t errlen)
{
	efab_config_t cfg;
	memset(&cfg, 0, sizeof(cfg));
	snprintf(cfg.path, sizeof(cfg.path), "%s", path);
	size_t pos = 0;
	int lineno = 0;
	char line[1024];

	while (pos < len) {
		size_t end = pos;
		while (end < len && text[end] != '\n')
			end++;
		lineno++;
		size_t n = end - pos;
		if (n >= sizeof(line)) {
			snprintf(err, errlen, "%s:%d: line too long (%zu characters at most)", path,
				 lineno, sizeof(line) - 1);
			goto fail;
		}
		memcpy(line, text + pos, n);
		line[n] = '\0';
		pos = end + 1;
		if (memchr(line, '\0', n)) {
			snprintf(err, errlen, "%s:%d: NUL byte in line", path, lineno);
			goto fail;
		}
		char *s = trim(line);
		if (!*s || *s == '#' || *s == ';')
			continue;
		if (*s == '[') {
			char *close = strchr(s, ']');
			if (!close || *trim(close + 1)) {
				snprintf(err, errlen, "%s:%d: malformed section header '%s'", path,
					 lineno, s);
				goto fail;
			}
			*close = '\0';
			char *name = trim(s + 1);
			if (!valid_name(name) || strlen(name) >= EFAB_CFG_KEY) {
				snprintf(err, errlen,
					 "%s:%d: section name '%s' must be letters, digits, '-', '_', '.'",
					 path, lineno, name);
				goto fail;
			}
			for (size_t i = 0; i < cfg.nsec; i++)
				if (!strcmp(cfg.sec[i].name, name)) {
					snprintf(err, errlen, "%s:%d: section [%s] already defined at line %d",
						 path, lineno, name, cfg.sec[i].line);
					goto fail;
				}
			efab_section_t *ns = realloc(cfg.sec, (cfg.nsec + 1) * sizeof(*ns));
			if (!ns) {
				snprintf(err, errlen, "%s: out of memory", path);
				goto fail;
			}
			cfg.sec = ns;
			memset(&cfg.sec[cfg.nsec], 0, sizeof(cfg.sec[0]));
			snprintf(cfg.sec[cfg.nsec].name, EFAB_CFG_KEY, "%s", name);
			cfg.sec[cfg.nsec].line = lineno;
			cfg.nsec++;
			continue;
		}
		char *eq = strchr(s, '=');
		if (!eq) {
			snprintf(err, errlen, "%s:%d: expected 'key = value' or '[section]', got '%s'",
				 path, lineno, s);
			goto fail;
		}
		*eq = '\0';
		char *key = trim(s), *value = trim(eq + 1);
		if (!valid_name(key) || strlen(key) >= EFAB_CFG_KEY) {
			snprintf(err, errlen, "%s:%d: invalid key '%s'", path, lineno, key);
			goto fail;
		}
		if (strlen(value) >= EFAB_CFG_VAL) {
			snprintf(err, errlen, "%s:%d: value of '%s' too long", path, lineno, key);
			goto fail;
		}
		if (cfg.nsec == 0) {
			snprintf(err, errlen, "%s:%d: key '%s' before any [section]", path, lineno, key);
			goto fail;
		}
		efab_section_t *sec = &cfg.sec[cfg.nsec - 1];
		for (size_t i = 0; i < sec->nkv; i++)
			if (!strcmp(sec->kv[i].key, key)) {
				snprintf(err, errlen, "%s:%d: key '%s' repeated in [%s] (first at line %d)",
					 path, lineno, key, sec->name, sec->kv[i].line);
				goto fail;
			}
		efab_kv_t *nk = realloc(sec->kv, (sec->nkv + 1) * sizeof(*nk));
		if (!nk) {
			snprintf(err, errlen, "%s: out of memory", path);
			goto fail;
		}
		sec->kv = nk;
		efab_kv_t *kv = &sec->kv[sec->nkv++];
		snprintf(kv->key, sizeof(kv->key), "%s", key);
		snprintf(kv->value, sizeof(kv->value), "%s", value);
		kv->line = lineno;
	}
	if (cfg.nsec == 0) {
		snprintf(err, errlen, "%s: no sections: a config needs at least one job", path);
		goto fail;
	}
	*out = cfg;
	return EFAB_OK;
fail:
	efab_config_free(&cfg);
	return EFAB_EUSAGE;
}

/* ---- expansion ---- */

static const char *const runner_keys[] = {"bench",  "launcher", "np",     "ppn", "nodes",
					  "env",    "matrix",   "repeat", "job_timeout", "libfabric"};

/* Runner keys that take a comma list crossed like a matrix key. */
static int is_list_runner_key(const char *k)
{
	return !strcmp(k, "libfabric");
}

static int is_runner_key(const char *k)
{
	for (size_t i = 0; i < EFAB_ARRAY_SIZE(runner_keys); i++)
		if (!strcmp(k, runner_keys[i]))
			return 1;
	return 0;
}

/* The effective key/value of a job: the job's own, else [global]'s. */
typedef struct eff {
	const efab_kv_t *kv[128];
	size_t n;
} eff_t;

static const efab_kv_t *lookup(const eff_t *e, const char *key)
{
	for (size_t i = 0; i < e->n; i++)
		if (!strcmp(e->kv[i]->key, key))
			return e->kv[i];
	return NULL;
}

static int split_list(const char *v, char items[][EFAB_CFG_VAL], int max)
{
	int n = 0;
	const char *p = v;
	while (n < max) {
		const char *c = strchr(p, ',');
		size_t len = c ? (size_t)(c - p) : strlen(p);
		char tmp[EFAB_CFG_VAL];
		if (len >= sizeof(tmp))
			len = sizeof(tmp) - 1;
		memcpy(tmp, p, len);
		tmp[len] = '\0';
		snprintf(items[n++], EFAB_CFG_VAL, "%s", trim(tmp));
		if (!c)
			break;
		p = c + 1;
	}
	return n;
}

static int parse_int(const char *v, int lo, int hi, int *out)
{
	char *end;
	long x = strtol(v, &end, 10);
	if (!*v || *end || x < lo || x > hi)
		return -1;
	*out = (int)x;
	return 0;
}

#define FAIL(kv, ...)                                                                       \
	do {                                                                                \
		char m_[3000];                                                               \
		snprintf(m_, sizeof(m_), __VA_ARGS__);                                      \
		snprintf(err, errlen, "%s:%d: %s", cfg->path, (kv) ? (kv)->line : sec->line, m_); \
		goto fail;                                                                  \
	} while (0)

void efab_jobs_free(efab_job_t *jobs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (int a = 0; a < jobs[i].argc; a++)
			free(jobs[i].argv[a]);
	free(jobs);
}

static int add_arg(efab_job_t *j, const char *s)
{
	if (j->argc >= EFAB_JOB_MAXARGS - 1)
		return -1;
	j->argv[j->argc] = strdup(s);
	if (!j->argv[j->argc])
		return -1;
	j->argc++;
	j->argv[j->argc] = NULL;
	return 0;
}

#define MAX_MATRIX 4 /* keys a user may name, 'libfabric' not counted */
#define MAX_VALUES 16

int efab_config_expand(const efab_config_t *cfg, efab_job_t **out, size_t *nout, char *err,
		       size_t errlen)
{
	const efab_section_t *global = NULL, *sec = NULL;
	efab_job_t *jobs = NULL;
	size_t njobs = 0;
	int max_repeat = 1;
	/* one slot more than allowed, so that split_list can tell "too many" (found by fuzz_config) */
	static char vals[MAX_MATRIX + 2][MAX_VALUES + 1][EFAB_CFG_VAL];

	for (size_t i = 0; i < cfg->nsec; i++)
		if (!strcmp(cfg->sec[i].name, "global"))
			global = &cfg->sec[i];
	/* global keys: runner keys or options of at least one benchmark */
	sec = global;
	for (size_t i = 0; global && i < global->nkv; i++) {
		const efab_kv_t *kv = &global->kv[i];
		if (!is_runner_key(kv->key) && !efab_opts_find(EFAB_B_ALL, kv->key))
			FAIL(kv, "unknown key '%s' in [global]", kv->key);
		if (!strcmp(kv->key, "csv"))
			FAIL(kv, "key 'csv' is set by efab_sweep (one CSV per benchmark)");
	}
	/* repeat is global or per job; expansion order needs the largest first */
	for (size_t s = 0; s < cfg->nsec; s++)
		for (size_t i = 0; i < cfg->sec[s].nkv; i++)
			if (!strcmp(cfg->sec[s].kv[i].key, "repeat")) {
				int r;
				sec = &cfg->sec[s];
				if (parse_int(cfg->sec[s].kv[i].value, 1, 1000, &r))
					FAIL(&cfg->sec[s].kv[i], "key 'repeat': expected 1..1000, got '%s'",
					     cfg->sec[s].kv[i].value);
				max_repeat = r > max_repeat ? r : max_repeat;
			}
	int any_job = 0;
	for (int rep = 1; rep <= max_repeat; rep++) {
		for (size_t s = 0; s < cfg->nsec; s++) {
			sec = &cfg->sec[s];
			if (sec == global)
				continue;
			any_job = 1;
			eff_t e = {.n = 0};
			for (size_t i = 0; i < sec->nkv && e.n < 128; i++)
				e.kv[e.n++] = &sec->kv[i];
			const efab_kv_t *bk = lookup(&e, "bench");
			if (!bk && global)
				for (size_t i = 0; i < global->nkv; i++)
					if (!strcmp(global->kv[i].key, "bench"))
						bk = &global->kv[i];
			if (!bk)
				FAIL((const efab_kv_t *)NULL, "job [%s] has no 'bench' key", sec->name);
			const char *exe = NULL;
			unsigned mask = efab_bench_mask(bk->value, &exe);
			if (!mask)
				FAIL(bk, "key 'bench': unknown benchmark '%s'", bk->value);
			/* global keys that apply to this bench (or the runner) */
			for (size_t i = 0; global && i < global->nkv && e.n < 128; i++) {
				const efab_kv_t *kv = &global->kv[i];
				if (lookup(&e, kv->key))
					continue;
				if (is_runner_key(kv->key) || efab_opts_find(mask, kv->key))
					e.kv[e.n++] = kv;
			}
			int rep_here = 1;
			const efab_kv_t *rk = lookup(&e, "repeat");
			if (rk)
				parse_int(rk->value, 1, 1000, &rep_here);
			if (rep > rep_here)
				continue;
			/* job keys must be runner keys or options of this bench */
			for (size_t i = 0; i < sec->nkv; i++) {
				const efab_kv_t *kv = &sec->kv[i];
				if (!strcmp(kv->key, "csv"))
					FAIL(kv, "key 'csv' is set by efab_sweep (one CSV per benchmark)");
				if (!is_runner_key(kv->key) && !efab_opts_find(mask, kv->key))
					FAIL(kv, "key '%s' is not an option of %s", kv->key, exe);
			}
			/* matrix: keys whose comma lists are crossed */
			const efab_kv_t *mk = lookup(&e, "matrix");
			char mkeys[MAX_MATRIX + 2][EFAB_CFG_VAL];
			int nm = 0, nv[MAX_MATRIX + 2], total = 1;
			if (mk) {
				nm = split_list(mk->value, mkeys, MAX_MATRIX + 2);
				int named = 0;
				for (int m = 0; m < nm; m++)
					named += !is_list_runner_key(mkeys[m]);
				if (named > MAX_MATRIX || nm > MAX_MATRIX + 1)
					FAIL(mk, "key 'matrix': at most %d keys (and libfabric)", MAX_MATRIX);
				/* [global]'s matrix, like its other keys, applies where it fits */
				int from_global = 0;
				/* compare element by element: global->kv is NULL when [global]
				 * has no keys, and NULL + 0 is undefined (found by fuzz_config) */
				for (size_t i = 0; global && i < global->nkv; i++)
					from_global |= mk == &global->kv[i];
				for (int m = 0; from_global && m < nm; m++)
					if (!efab_opts_find(mask, mkeys[m]) && !is_list_runner_key(mkeys[m])) {
						memmove(mkeys[m], mkeys[m + 1], (size_t)(nm - m - 1) * sizeof(mkeys[0]));
						nm--;
						m--;
					}
			}
			/* libfabric = A, B is crossed even when 'matrix' does not name it:
			 * first, so that it varies fastest (the installs of a job back to back) */
			const efab_kv_t *lfk = lookup(&e, "libfabric");
			int lf_named = 0;
			for (int m = 0; m < nm; m++)
				lf_named |= !strcmp(mkeys[m], "libfabric");
			if (lfk && !lf_named) {
				memmove(mkeys[1], mkeys[0], (size_t)nm * sizeof(mkeys[0]));
				snprintf(mkeys[0], EFAB_CFG_VAL, "libfabric");
				nm++;
			}
			for (int m = 0; m < nm; m++) {
				const efab_kv_t *kv = lookup(&e, mkeys[m]);
				int list_key = is_list_runner_key(mkeys[m]);
				if (!*mkeys[m] || (!list_key && (is_runner_key(mkeys[m]) ||
								 !efab_opts_find(mask, mkeys[m]))))
					FAIL(mk, "key 'matrix': '%s' is not an option of %s", mkeys[m], exe);
				if (!kv)
					FAIL(mk, "key 'matrix': '%s' has no values in [%s] or [global]",
					     mkeys[m], sec->name);
				nv[m] = split_list(kv->value, vals[m], MAX_VALUES + 1);
				if (nv[m] > MAX_VALUES)
					FAIL(kv, "key '%s': at most %d matrix values", kv->key, MAX_VALUES);
				for (int a = 0; a < m; a++)
					if (!strcmp(mkeys[a], mkeys[m]))
						FAIL(mk, "key 'matrix': '%s' named twice", mkeys[m]);
				for (int a = 0; list_key && a < nv[m]; a++) {
					if (!vals[m][a][0])
						FAIL(kv, "key '%s': empty item in '%s'", kv->key, kv->value);
					for (int b = 0; b < a; b++)
						if (!strcmp(vals[m][a], vals[m][b]))
							FAIL(kv, "key '%s': '%s' listed twice", kv->key,
							     vals[m][a]);
				}
				total *= nv[m];
			}
			for (int combo = 0; combo < total; combo++) {
				efab_job_t *nj = realloc(jobs, (njobs + 1) * sizeof(*nj));
				if (!nj)
					FAIL((const efab_kv_t *)NULL, "out of memory");
				jobs = nj;
				efab_job_t *j = &jobs[njobs++];
				memset(j, 0, sizeof(*j));
				snprintf(j->section, sizeof(j->section), "%s", sec->name);
				snprintf(j->bench, sizeof(j->bench), "%s", exe);
				j->mask = mask;
				j->rep = rep;
				j->mpi = bench_mpi(mask);
				j->np = 2;
				j->ppn = 0;
				j->nodes = 1;
				j->timeout_s = 1800;
				snprintf(j->launcher, sizeof(j->launcher), "mpirun -np {np}");
				efab_opts_t check;
				efab_opts_init(&check);
				char label[160] = "";
				size_t ll = 0;
				int idx = combo;
				const char *mval[MAX_MATRIX];
				for (int m = 0; m < nm; m++) {
					mval[m] = vals[m][idx % nv[m]];
					idx /= nv[m];
					/* the label may be cut short; the offset must never pass
					 * its end (found by fuzz_config) */
					if (ll + 1 < sizeof(label)) {
						int k = snprintf(label + ll, sizeof(label) - ll, "%s%s=%s",
								 ll ? "," : "", mkeys[m], mval[m]);
						ll = k < 0 ? ll : ll + (size_t)k;
						if (ll >= sizeof(label))
							ll = sizeof(label) - 1;
					}
				}
				if (nm)
					snprintf(j->name, sizeof(j->name), "%s[%s]", sec->name, label);
				else
					snprintf(j->name, sizeof(j->name), "%s", sec->name);
				for (size_t i = 0; i < e.n; i++) {
					const efab_kv_t *kv = e.kv[i];
					const char *v = kv->value;
					for (int m = 0; m < nm; m++)
						if (!strcmp(kv->key, mkeys[m]))
							v = mval[m];
					if (!strcmp(kv->key, "np") || !strcmp(kv->key, "ppn") ||
					    !strcmp(kv->key, "nodes")) {
						int x;
						if (parse_int(v, 1, 100000, &x))
							FAIL(kv, "key '%s': expected a positive integer, got '%s'",
							     kv->key, v);
						*(!strcmp(kv->key, "np") ? &j->np
						  : !strcmp(kv->key, "ppn") ? &j->ppn : &j->nodes) = x;
					} else if (!strcmp(kv->key, "job_timeout")) {
						int x;
						if (parse_int(v, 1, 86400 * 7, &x))
							FAIL(kv, "key 'job_timeout': expected seconds, got '%s'", v);
						j->timeout_s = x;
					} else if (!strcmp(kv->key, "libfabric")) {
						snprintf(j->libfabric, sizeof(j->libfabric), "%s", v);
						j->libfabric_line = kv->line;
					} else if (!strcmp(kv->key, "launcher")) {
						if (!strcmp(v, "none"))
							j->mpi = 0;
						else {
							j->mpi = 1;
							snprintf(j->launcher, sizeof(j->launcher), "%s", v);
						}
					} else if (!strcmp(kv->key, "env")) {
						/* NAME=VALUE words separated by spaces */
						char tmp[EFAB_CFG_VAL];
						snprintf(tmp, sizeof(tmp), "%s", v);
						for (char *sv = NULL, *w = strtok_r(tmp, " \t", &sv); w;
						     w = strtok_r(NULL, " \t", &sv)) {
							char *q = strchr(w, '=');
							if (!q || q == w || j->nenv >= EFAB_JOB_MAXENV)
								FAIL(kv, "key 'env': expected NAME=VALUE words, got '%s'", w);
							snprintf(j->env[j->nenv++], EFAB_CFG_VAL, "%s", w);
						}
					} else if (!is_runner_key(kv->key)) {
						char e2[300];
						const efab_optdef_t *d = efab_opts_find(mask, kv->key);
						if (efab_opts_set(&check, mask, kv->key, v, e2, sizeof(e2)))
							FAIL(kv, "key '%s': %s", kv->key, e2);
						if (d->type == EFAB_OT_FLAG || d->type == EFAB_OT_COUNT) {
							int on = *(int *)((char *)&check + d->offset);
							for (int k = 0; k < on && k < 9; k++) {
								char flag[80];
								snprintf(flag, sizeof(flag), "--%s", kv->key);
								if (add_arg(j, flag))
									FAIL(kv, "too many options");
								if (d->type == EFAB_OT_FLAG)
									break;
							}
						} else {
							char flag[80];
							snprintf(flag, sizeof(flag), "--%s", kv->key);
							if (add_arg(j, flag) || add_arg(j, v))
								FAIL(kv, "too many options");
						}
					}
				}
				if (rep_here > 1 || max_repeat > 1) {
					size_t nl = strlen(j->name);
					snprintf(j->name + nl, sizeof(j->name) - nl, "#%d", rep);
				}
			}
		}
	}
	sec = global;
	if (!any_job)
		FAIL((const efab_kv_t *)NULL, "no job sections (only [global])");
	*out = jobs;
	*nout = njobs;
	return EFAB_OK;
fail:
	efab_jobs_free(jobs, njobs);
	return EFAB_EUSAGE;
}
