#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "efab.h"
#include "efab_config.h"
#include "efab_opts.h"

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

/* The next line of text into line (NUL-terminated, not trimmed); 0, or -1
 * with "path:line: reason" in err. */
static int next_line(const char *text, size_t len, size_t *pos, char *line, size_t size,
		     const char *path, int lineno, char *err, size_t errlen)
{
	size_t end = *pos;
	while (end < len && text[end] != '\n')
		end++;
	size_t n = end - *pos;
	if (n >= size) {
		snprintf(err, errlen, "%s:%d: line too long (%zu characters at most)", path, lineno,
			 size - 1);
		return -1;
	}
	memcpy(line, text + *pos, n);
	line[n] = '\0';
	*pos = end + 1;
	if (memchr(line, '\0', n)) {
		snprintf(err, errlen, "%s:%d: NUL byte in line", path, lineno);
		return -1;
	}
	return 0;
}

/* Room for element n of *arr (n elements of size each so far), zeroed. */
static int grow(void **arr, size_t n, size_t size, const char *path, char *err, size_t errlen)
{
	char *bigger = realloc(*arr, (n + 1) * size);
	if (!bigger) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -1;
	}
	memset(bigger + n * size, 0, size);
	*arr = bigger;
	return 0;
}

/* '[name]' (s trimmed) opens a new section; names are unique. */
static int add_section(efab_config_t *cfg, const char *path, char *s, int lineno, char *err,
		       size_t errlen)
{
	char *close = strchr(s, ']');
	if (!close || *trim(close + 1)) {
		snprintf(err, errlen, "%s:%d: malformed section header '%s'", path, lineno, s);
		return -1;
	}
	*close = '\0';
	char *name = trim(s + 1);
	if (!valid_name(name) || strlen(name) >= EFAB_CFG_KEY) {
		snprintf(err, errlen, "%s:%d: section name '%s' must be letters, digits, '-', '_', '.'",
			 path, lineno, name);
		return -1;
	}
	for (size_t i = 0; i < cfg->nsec; i++)
		if (!strcmp(cfg->sec[i].name, name)) {
			snprintf(err, errlen, "%s:%d: section [%s] already defined at line %d", path,
				 lineno, name, cfg->sec[i].line);
			return -1;
		}
	if (grow((void **)&cfg->sec, cfg->nsec, sizeof(*cfg->sec), path, err, errlen))
		return -1;
	snprintf(cfg->sec[cfg->nsec].name, EFAB_CFG_KEY, "%s", name);
	cfg->sec[cfg->nsec].line = lineno;
	cfg->nsec++;
	return 0;
}

/* 'key = value' (s trimmed) joins the last section; keys are unique in it. */
static int add_key(efab_config_t *cfg, const char *path, char *s, int lineno, char *err,
		   size_t errlen)
{
	char *eq = strchr(s, '=');
	if (!eq) {
		snprintf(err, errlen, "%s:%d: expected 'key = value' or '[section]', got '%s'", path,
			 lineno, s);
		return -1;
	}
	*eq = '\0';
	char *key = trim(s), *value = trim(eq + 1);
	if (!valid_name(key) || strlen(key) >= EFAB_CFG_KEY) {
		snprintf(err, errlen, "%s:%d: invalid key '%s'", path, lineno, key);
		return -1;
	}
	if (strlen(value) >= EFAB_CFG_VAL) {
		snprintf(err, errlen, "%s:%d: value of '%s' too long", path, lineno, key);
		return -1;
	}
	if (cfg->nsec == 0) {
		snprintf(err, errlen, "%s:%d: key '%s' before any [section]", path, lineno, key);
		return -1;
	}
	efab_section_t *sec = &cfg->sec[cfg->nsec - 1];
	for (size_t i = 0; i < sec->nkv; i++)
		if (!strcmp(sec->kv[i].key, key)) {
			snprintf(err, errlen, "%s:%d: key '%s' repeated in [%s] (first at line %d)", path,
				 lineno, key, sec->name, sec->kv[i].line);
			return -1;
		}
	if (grow((void **)&sec->kv, sec->nkv, sizeof(*sec->kv), path, err, errlen))
		return -1;
	efab_kv_t *kv = &sec->kv[sec->nkv++];
	snprintf(kv->key, sizeof(kv->key), "%s", key);
	snprintf(kv->value, sizeof(kv->value), "%s", value);
	kv->line = lineno;
	return 0;
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
		if (next_line(text, len, &pos, line, sizeof(line), path, ++lineno, err, errlen))
			goto fail;
		char *s = trim(line);
		if (!*s || *s == '#' || *s == ';')
			continue;
		if (*s == '[' ? add_section(&cfg, path, s, lineno, err, errlen)
			      : add_key(&cfg, path, s, lineno, err, errlen))
			goto fail;
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

/* The expansion's state: the config, where errors go, the jobs so far. */
typedef struct expand {
	const efab_config_t *cfg;
	const efab_bench_row_t *rows;
	size_t nrows;
	unsigned any_options; /* the groups of every row: what [global] may set */
	const efab_section_t *global;
	char *err;
	size_t errlen;
	efab_job_t *jobs;
	size_t njobs;
	int max_repeat;
} expand_t;

/* "path:line: message" with the line of kv, else of sec; returns EFAB_EUSAGE. */
static int fail_at(expand_t *x, const efab_kv_t *kv, const efab_section_t *sec, const char *fmt,
		   ...) EFAB_PRINTF(4, 5);
static int fail_at(expand_t *x, const efab_kv_t *kv, const efab_section_t *sec, const char *fmt,
		   ...)
{
	char m[3000];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m, sizeof(m), fmt, ap);
	va_end(ap);
	snprintf(x->err, x->errlen, "%s:%d: %s", x->cfg->path, kv ? kv->line : sec ? sec->line : 0, m);
	return EFAB_EUSAGE;
}

/* The runner writes one CSV per benchmark: a config cannot name one. */
static int csv_refused(expand_t *x, const efab_kv_t *kv, const efab_section_t *sec)
{
	const char *runner = x->cfg->runner ? x->cfg->runner : "the sweep";
	return fail_at(x, kv, sec, "key 'csv' is set by %s (one CSV per benchmark)", runner);
}

static const efab_kv_t *section_key(const efab_section_t *sec, const char *key)
{
	for (size_t i = 0; sec && i < sec->nkv; i++)
		if (!strcmp(sec->kv[i].key, key))
			return &sec->kv[i];
	return NULL;
}

/* ---- key resolution ---- */

/* [global] keys: runner keys or options of at least one benchmark; and the
 * largest repeat of any section (the expansion runs repeat outermost). */
static int check_global(expand_t *x)
{
	const efab_section_t *g = x->global;
	for (size_t i = 0; g && i < g->nkv; i++) {
		const efab_kv_t *kv = &g->kv[i];
		if (!is_runner_key(kv->key) && !efab_opts_find(x->any_options, kv->key))
			return fail_at(x, kv, g, "unknown key '%s' in [global]", kv->key);
		if (!strcmp(kv->key, "csv"))
			return csv_refused(x, kv, g);
	}
	x->max_repeat = 1;
	for (size_t s = 0; s < x->cfg->nsec; s++) {
		const efab_kv_t *kv = section_key(&x->cfg->sec[s], "repeat");
		int r;
		if (!kv)
			continue;
		if (parse_int(kv->value, 1, 1000, &r))
			return fail_at(x, kv, &x->cfg->sec[s], "key 'repeat': expected 1..1000, got '%s'",
				       kv->value);
		x->max_repeat = r > x->max_repeat ? r : x->max_repeat;
	}
	return EFAB_OK;
}

/* A job section's effective keys: its own, then [global]'s that apply to its
 * bench (or the runner); the bench; its own keys validated. */
typedef struct resolved {
	eff_t e;
	const efab_bench_row_t *row;
	int repeat;
} resolved_t;

static int resolve_keys(expand_t *x, const efab_section_t *sec, resolved_t *r)
{
	memset(r, 0, sizeof(*r));
	for (size_t i = 0; i < sec->nkv && r->e.n < 128; i++)
		r->e.kv[r->e.n++] = &sec->kv[i];
	const efab_kv_t *bk = lookup(&r->e, "bench");
	if (!bk)
		bk = section_key(x->global, "bench");
	if (!bk)
		return fail_at(x, NULL, sec, "job [%s] has no 'bench' key", sec->name);
	r->row = efab_bench_row_find(x->rows, x->nrows, bk->value);
	if (!r->row)
		return fail_at(x, bk, sec, "key 'bench': unknown benchmark '%s'", bk->value);
	if (r->row->no_sweep)
		return fail_at(x, bk, sec,
			       "key 'bench': '%s' cannot be a sweep job (its output is not result rows)",
			       bk->value);
	for (size_t i = 0; x->global && i < x->global->nkv && r->e.n < 128; i++) {
		const efab_kv_t *kv = &x->global->kv[i];
		if (!lookup(&r->e, kv->key) && (is_runner_key(kv->key) || efab_opts_find(r->row->options, kv->key)))
			r->e.kv[r->e.n++] = kv;
	}
	r->repeat = 1;
	const efab_kv_t *rk = lookup(&r->e, "repeat");
	if (rk)
		parse_int(rk->value, 1, 1000, &r->repeat);
	for (size_t i = 0; i < sec->nkv; i++) {
		const efab_kv_t *kv = &sec->kv[i];
		if (!strcmp(kv->key, "csv"))
			return csv_refused(x, kv, sec);
		if (!is_runner_key(kv->key) && !efab_opts_find(r->row->options, kv->key))
			return fail_at(x, kv, sec, "key '%s' is not an option of %s", kv->key,
				       r->row->name);
	}
	return EFAB_OK;
}

/* ---- matrix expansion ---- */

/* The keys crossed for a job, their values and the number of combinations.
 * One slot more than allowed, so that split_list can tell "too many". */
typedef struct matrix {
	char keys[MAX_MATRIX + 2][EFAB_CFG_VAL];
	char vals[MAX_MATRIX + 2][MAX_VALUES + 1][EFAB_CFG_VAL];
	int nkeys, nvals[MAX_MATRIX + 2], total;
} matrix_t;

static int matrix_names(const efab_kv_t *mk, const resolved_t *r, const expand_t *x)
{
	/* [global]'s matrix, like its other keys, applies where it fits; compare
	 * element by element: global->kv is NULL when [global] has no keys */
	for (size_t i = 0; x->global && i < x->global->nkv; i++)
		if (mk == &x->global->kv[i])
			return 1;
	(void)r;
	return 0;
}

static int matrix_keys(expand_t *x, const efab_section_t *sec, const resolved_t *r, matrix_t *mx)
{
	const efab_kv_t *mk = lookup(&r->e, "matrix");
	mx->nkeys = 0;
	if (mk) {
		mx->nkeys = split_list(mk->value, mx->keys, MAX_MATRIX + 2);
		int named = 0;
		for (int m = 0; m < mx->nkeys; m++)
			named += !is_list_runner_key(mx->keys[m]);
		if (named > MAX_MATRIX || mx->nkeys > MAX_MATRIX + 1)
			return fail_at(x, mk, sec, "key 'matrix': at most %d keys (and libfabric)",
				       MAX_MATRIX);
		int from_global = matrix_names(mk, r, x);
		for (int m = 0; from_global && m < mx->nkeys; m++) {
			if (efab_opts_find(r->row->options, mx->keys[m]) || is_list_runner_key(mx->keys[m]))
				continue;
			memmove(mx->keys[m], mx->keys[m + 1], (size_t)(mx->nkeys - m - 1) * sizeof(mx->keys[0]));
			mx->nkeys--;
			m--;
		}
	}
	/* libfabric = A, B is crossed even when 'matrix' does not name it: first,
	 * so that it varies fastest (the installs of a job back to back) */
	int lf_named = 0;
	for (int m = 0; m < mx->nkeys; m++)
		lf_named |= !strcmp(mx->keys[m], "libfabric");
	if (lookup(&r->e, "libfabric") && !lf_named) {
		memmove(mx->keys[1], mx->keys[0], (size_t)mx->nkeys * sizeof(mx->keys[0]));
		snprintf(mx->keys[0], EFAB_CFG_VAL, "libfabric");
		mx->nkeys++;
	}
	return EFAB_OK;
}

/* Items of a list runner key ('libfabric'): none empty, none twice. */
static int check_list_items(expand_t *x, const efab_section_t *sec, const efab_kv_t *kv,
			    const matrix_t *mx, int m)
{
	for (int a = 0; a < mx->nvals[m]; a++) {
		if (!mx->vals[m][a][0])
			return fail_at(x, kv, sec, "key '%s': empty item in '%s'", kv->key, kv->value);
		for (int b = 0; b < a; b++)
			if (!strcmp(mx->vals[m][a], mx->vals[m][b]))
				return fail_at(x, kv, sec, "key '%s': '%s' listed twice", kv->key,
					       mx->vals[m][a]);
	}
	return EFAB_OK;
}

static int matrix_values(expand_t *x, const efab_section_t *sec, const resolved_t *r, matrix_t *mx)
{
	const efab_kv_t *mk = lookup(&r->e, "matrix");
	mx->total = 1;
	for (int m = 0; m < mx->nkeys; m++) {
		const char *key = mx->keys[m];
		const efab_kv_t *kv = lookup(&r->e, key);
		int list_key = is_list_runner_key(key);
		if (!*key || (!list_key && (is_runner_key(key) || !efab_opts_find(r->row->options, key))))
			return fail_at(x, mk, sec, "key 'matrix': '%s' is not an option of %s", key,
				       r->row->name);
		if (!kv)
			return fail_at(x, mk, sec, "key 'matrix': '%s' has no values in [%s] or [global]",
				       key, sec->name);
		mx->nvals[m] = split_list(kv->value, mx->vals[m], MAX_VALUES + 1);
		if (mx->nvals[m] > MAX_VALUES)
			return fail_at(x, kv, sec, "key '%s': at most %d matrix values", kv->key, MAX_VALUES);
		for (int a = 0; a < m; a++)
			if (!strcmp(mx->keys[a], key))
				return fail_at(x, mk, sec, "key 'matrix': '%s' named twice", key);
		if (list_key && check_list_items(x, sec, kv, mx, m))
			return EFAB_EUSAGE;
		mx->total *= mx->nvals[m];
	}
	return EFAB_OK;
}

/* ---- job building ---- */

static int set_int_key(expand_t *x, const efab_section_t *sec, efab_job_t *j, const efab_kv_t *kv,
		       const char *v)
{
	int n;
	if (!strcmp(kv->key, "job_timeout")) {
		if (parse_int(v, 1, 86400 * 7, &n))
			return fail_at(x, kv, sec, "key 'job_timeout': expected seconds, got '%s'", v);
		j->timeout_s = n;
		return EFAB_OK;
	}
	if (parse_int(v, 1, 100000, &n))
		return fail_at(x, kv, sec, "key '%s': expected a positive integer, got '%s'", kv->key, v);
	*(!strcmp(kv->key, "np") ? &j->np : !strcmp(kv->key, "ppn") ? &j->ppn : &j->nodes) = n;
	return EFAB_OK;
}

/* env = NAME=VALUE words separated by blanks */
static int set_env_key(expand_t *x, const efab_section_t *sec, efab_job_t *j, const efab_kv_t *kv,
		       const char *v)
{
	char tmp[EFAB_CFG_VAL];
	snprintf(tmp, sizeof(tmp), "%s", v);
	for (char *sv = NULL, *w = strtok_r(tmp, " \t", &sv); w; w = strtok_r(NULL, " \t", &sv)) {
		char *q = strchr(w, '=');
		if (!q || q == w || j->nenv >= EFAB_JOB_MAXENV)
			return fail_at(x, kv, sec, "key 'env': expected NAME=VALUE words, got '%s'", w);
		snprintf(j->env[j->nenv++], EFAB_CFG_VAL, "%s", w);
	}
	return EFAB_OK;
}

/* A benchmark option, checked through the option table, as --key [value]
 * (a counted flag repeated). */
static int set_option(expand_t *x, const efab_section_t *sec, efab_job_t *j, efab_opts_t *check,
		      const efab_kv_t *kv, const char *v)
{
	char e2[300], flag[80];
	const efab_optdef_t *d = efab_opts_find(j->row->options, kv->key);
	if (efab_opts_set(check, j->row->options, kv->key, v, e2, sizeof(e2)))
		return fail_at(x, kv, sec, "key '%s': %s", kv->key, e2);
	snprintf(flag, sizeof(flag), "--%s", kv->key);
	if (d->type != EFAB_OT_FLAG && d->type != EFAB_OT_COUNT)
		return add_arg(j, flag) || add_arg(j, v) ? fail_at(x, kv, sec, "too many options")
							 : EFAB_OK;
	int on = *(int *)((char *)check + d->offset);
	int times = d->type == EFAB_OT_FLAG ? (on ? 1 : 0) : (on < 9 ? on : 9);
	for (int k = 0; k < times; k++)
		if (add_arg(j, flag))
			return fail_at(x, kv, sec, "too many options");
	return EFAB_OK;
}

static int apply_key(expand_t *x, const efab_section_t *sec, efab_job_t *j, efab_opts_t *check,
		     const efab_kv_t *kv, const char *v)
{
	const char *k = kv->key;
	if (!strcmp(k, "np") || !strcmp(k, "ppn") || !strcmp(k, "nodes") || !strcmp(k, "job_timeout"))
		return set_int_key(x, sec, j, kv, v);
	if (!strcmp(k, "env"))
		return set_env_key(x, sec, j, kv, v);
	if (!strcmp(k, "libfabric")) {
		snprintf(j->libfabric, sizeof(j->libfabric), "%s", v);
		j->libfabric_line = kv->line;
	} else if (!strcmp(k, "launcher")) {
		j->mpi = strcmp(v, "none") != 0;
		if (j->mpi)
			snprintf(j->launcher, sizeof(j->launcher), "%s", v);
	} else if (!is_runner_key(k)) {
		return set_option(x, sec, j, check, kv, v);
	}
	return EFAB_OK;
}

/* "section[key=value,...]#rep" and the matrix values of combination combo. */
static void job_name(efab_job_t *j, const efab_section_t *sec, const matrix_t *mx, int combo,
		     const char **mval, int numbered)
{
	char label[160] = "";
	size_t ll = 0;
	for (int m = 0; m < mx->nkeys; m++) {
		mval[m] = mx->vals[m][combo % mx->nvals[m]];
		combo /= mx->nvals[m];
		if (ll + 1 >= sizeof(label)) /* the label may be cut short, never overrun */
			continue;
		int k = snprintf(label + ll, sizeof(label) - ll, "%s%s=%s", ll ? "," : "", mx->keys[m],
				 mval[m]);
		ll = k < 0 ? ll : ll + (size_t)k;
		ll = ll >= sizeof(label) ? sizeof(label) - 1 : ll;
	}
	if (mx->nkeys)
		snprintf(j->name, sizeof(j->name), "%s[%s]", sec->name, label);
	else
		snprintf(j->name, sizeof(j->name), "%s", sec->name);
	if (numbered) {
		size_t nl = strlen(j->name);
		snprintf(j->name + nl, sizeof(j->name) - nl, "#%d", j->rep);
	}
}

static int build_job(expand_t *x, const efab_section_t *sec, const resolved_t *r,
		     const matrix_t *mx, int combo, int rep)
{
	efab_job_t *grown = realloc(x->jobs, (x->njobs + 1) * sizeof(*grown));
	if (!grown)
		return fail_at(x, NULL, sec, "out of memory");
	x->jobs = grown;
	efab_job_t *j = &x->jobs[x->njobs++];
	memset(j, 0, sizeof(*j));
	snprintf(j->section, sizeof(j->section), "%s", sec->name);
	snprintf(j->bench, sizeof(j->bench), "%s", r->row->name);
	j->row = r->row;
	j->rep = rep;
	j->mpi = r->row->mpi;
	j->np = 2;
	j->nodes = 1;
	j->timeout_s = 1800;
	snprintf(j->launcher, sizeof(j->launcher), "mpirun -np {np}");
	const char *mval[MAX_MATRIX + 2];
	job_name(j, sec, mx, combo, mval, r->repeat > 1 || x->max_repeat > 1);
	efab_opts_t check;
	efab_opts_init(&check);
	for (size_t i = 0; i < r->e.n; i++) {
		const efab_kv_t *kv = r->e.kv[i];
		const char *v = kv->value;
		for (int m = 0; m < mx->nkeys; m++)
			if (!strcmp(kv->key, mx->keys[m]))
				v = mval[m];
		if (apply_key(x, sec, j, &check, kv, v))
			return EFAB_EUSAGE;
	}
	return EFAB_OK;
}

/* One job section in repeat rep: its combinations as jobs. */
static int expand_section(expand_t *x, const efab_section_t *sec, int rep, matrix_t *mx)
{
	resolved_t r;
	if (resolve_keys(x, sec, &r))
		return EFAB_EUSAGE;
	if (rep > r.repeat)
		return EFAB_OK;
	if (matrix_keys(x, sec, &r, mx) || matrix_values(x, sec, &r, mx))
		return EFAB_EUSAGE;
	for (int combo = 0; combo < mx->total; combo++)
		if (build_job(x, sec, &r, mx, combo, rep))
			return EFAB_EUSAGE;
	return EFAB_OK;
}

int efab_config_expand(const efab_config_t *cfg, const efab_bench_row_t *rows, size_t nrows,
		       efab_job_t **out, size_t *nout, char *err, size_t errlen)
{
	expand_t x = {.cfg = cfg, .rows = rows, .nrows = nrows, .err = err, .errlen = errlen};
	int any_job = 0, rc;
	matrix_t *mx = malloc(sizeof(*mx));
	if (!mx) {
		snprintf(err, errlen, "%s: out of memory", cfg->path);
		return EFAB_EUSAGE;
	}
	for (size_t i = 0; i < nrows; i++)
		x.any_options |= rows[i].options;
	for (size_t i = 0; i < cfg->nsec; i++)
		if (!strcmp(cfg->sec[i].name, "global"))
			x.global = &cfg->sec[i];
	rc = check_global(&x);
	/* repeat outermost (A B A B), then sections in file order, then combinations */
	for (int rep = 1; !rc && rep <= x.max_repeat; rep++)
		for (size_t s = 0; !rc && s < cfg->nsec; s++) {
			if (&cfg->sec[s] == x.global)
				continue;
			any_job = 1;
			rc = expand_section(&x, &cfg->sec[s], rep, mx);
		}
	if (!rc && !any_job)
		rc = fail_at(&x, NULL, x.global, "no job sections (only [global])");
	free(mx);
	if (rc) {
		efab_jobs_free(x.jobs, x.njobs);
		return rc;
	}
	*out = x.jobs;
	*nout = x.njobs;
	return EFAB_OK;
}
