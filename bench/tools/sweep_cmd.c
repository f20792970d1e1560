/* efab_sweep's commands: the libfabric installs of a 'libfabric = A, B'
 * sweep (where each library is, its version, its loader path), each job's
 * argv (launcher, environment, site launcher, placeholders) and its command
 * line as recorded; the small file helpers the records use, and the wait for
 * a child (a job, the probe) with its time limit. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "efab.h"
#include "efab_abi.h"
#include "efab_clock.h"
#include "efab_config.h"
#include "efab_json.h"
#include "efab_opts.h"
#include "sweep_int.h"

volatile sig_atomic_t got_signal;

/* ---- small helpers ---- */

int read_file(const char *path, char **out, size_t *len)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	size_t cap = 4096, n = 0;
	char *b = malloc(cap);
	while (b) {
		size_t k = fread(b + n, 1, cap - n, f);
		n += k;
		if (n < cap)
			break;
		char *nb = realloc(b, cap *= 2);
		if (!nb) {
			free(b);
			b = NULL;
		}
		b = nb;
	}
	fclose(f);
	if (!b)
		return -1;
	*out = b;
	*len = n;
	return 0;
}

/* ,\n  "key": "value": a top-level field of meta.json after its first */
void json_field(FILE *f, const char *key, const char *val)
{
	efab_json_kv(f, ",\n  ", key, val);
}

int mkdirs(const char *path)
{
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			if (mkdir(tmp, 0755) && errno != EEXIST)
				return -1;
			*p = '/';
		}
	return mkdir(tmp, 0755) && errno != EEXIST ? -1 : 0;
}

/* Write path atomically: tmp file + rename. */
FILE *open_atomic(const char *path, char *tmp, size_t len)
{
	snprintf(tmp, len, "%s.tmp", path);
	return fopen(tmp, "w");
}

int close_atomic(FILE *f, const char *tmp, const char *path)
{
	if (fclose(f))
		return -1;
	return rename(tmp, path);
}

/* ---- libfabric installs (key 'libfabric') ---- */

/* The directory of an install that holds libfabric.so.1: the prefix's
 * lib64/, lib/ or lib/<multiarch triplet>/ (Debian's /usr), or the given
 * directory itself. */
static int install_libdir(const char *given, char *out, size_t len)
{
	static const char *const subs[] = {"/lib64", "/lib", "/lib/x86_64-linux-gnu",
					   "/lib/aarch64-linux-gnu", ""};
	for (size_t k = 0; k < EFAB_ARRAY_SIZE(subs); k++) {
		char cand[PATH_MAX + 64];
		snprintf(cand, sizeof(cand), "%s%s/libfabric.so.1", given, subs[k]);
		if (access(cand, R_OK) == 0) {
			snprintf(out, len, "%s%s", given, subs[k]);
			return 0;
		}
	}
	return -1;
}


install_t *install_of(runner_t *r, const efab_job_t *j)
{
	for (size_t k = 0; j->libfabric[0] && k < r->ninst; k++)
		if (!strcmp(r->inst[k].given, j->libfabric))
			return &r->inst[k];
	return NULL;
}

/* Every install named by a job, in order of first appearance, checked before
 * anything runs. EFAB_OK, or EFAB_EUSAGE with "config:line: ..." in err. */
int resolve_installs(runner_t *r, char *err, size_t errlen)
{
	const char *old = getenv("LD_LIBRARY_PATH");
	for (size_t i = 0; i < r->njobs; i++) {
		efab_job_t *j = &r->jobs[i];
		if (!j->libfabric[0] || install_of(r, j))
			continue;
		if (r->ninst == EFAB_MAX_INSTALLS) {
			snprintf(err, errlen, "%s:%d: key 'libfabric': at most %d installs",
				 r->config_path, j->libfabric_line, EFAB_MAX_INSTALLS);
			return EFAB_EUSAGE;
		}
		install_t *in = &r->inst[r->ninst];
		memset(in, 0, sizeof(*in));
		snprintf(in->given, sizeof(in->given), "%s", j->libfabric);
		in->line = j->libfabric_line;
		char libdir[PATH_MAX];
		if (install_libdir(j->libfabric, libdir, sizeof(libdir)) &&
		    (r->dry_run || r->site >= 0)) {
			/* an install staged on the job nodes only (/opt/amazon/efa on
			 * p5en nodes, the sweep on a head node): every candidate
			 * directory; the probe on the first job node says whether it
			 * loads there */
			snprintf(
				libdir, sizeof(libdir),
				"%s/lib64:%s/lib:%s/lib/x86_64-linux-gnu:%s/lib/aarch64-linux-gnu:%s",
				j->libfabric, j->libfabric, j->libfabric, j->libfabric,
				j->libfabric);
			snprintf(in->version, sizeof(in->version), "not on this host");
		} else if (install_libdir(j->libfabric, libdir, sizeof(libdir))) {
			snprintf(
				err, errlen,
				"%s:%d: key 'libfabric': '%s' holds no libfabric.so.1 (looked in its lib64/, "
				"lib/, lib/<triplet>/ and the directory itself)",
				r->config_path, in->line, in->given);
			return EFAB_EUSAGE;
		}
		char real[PATH_MAX];
		if (!strchr(libdir, ':') &&
		    realpath(libdir, real)) /* absolute: ranks may start elsewhere */
			memcpy(libdir, real, sizeof(real));
		memcpy(in->libdir, libdir, sizeof(libdir));
		char so[PATH_MAX + 32];
		snprintf(so, sizeof(so), "%s/libfabric.so.1", libdir);
		if (!realpath(so, in->library))
			snprintf(in->library, sizeof(in->library), "%s", so);
		if (!in->version[0])
			efab_libfabric_pc_version(in->libdir, in->version, sizeof(in->version));
		efab_efa_installer_of(in->library, in->efa_installer, sizeof(in->efa_installer));
		snprintf(in->ld_path, sizeof(in->ld_path), "%s%s%s", libdir, old && *old ? ":" : "",
			 old && *old ? old : "");
		snprintf(in->probe_file, sizeof(in->probe_file), "probe-lf%zu.json", r->ninst + 1);
		snprintf(in->probe_status, sizeof(in->probe_status), "pending");
		r->ninst++;
	}
	return EFAB_OK;
}

/* ---- commands ---- */

static int push_word(char **argv, int *argc, int max, const char *w)
{
	if (*argc >= max - 1)
		return -1;
	if (!(argv[*argc] = strdup(w)))
		return -1;
	(*argc)++;
	argv[*argc] = NULL;
	return 0;
}

/* The launcher program: mpirun-like (Open MPI's -x forwards a variable) or
 * srun (--export). */
static const char *launcher_kind(const char *word)
{
	const char *b = strrchr(word, '/');
	b = b ? b + 1 : word;
	if (!strcmp(b, "mpirun") || !strcmp(b, "mpiexec") || !strcmp(b, "orterun") ||
	    !strcmp(b, "oshrun") || !strcmp(b, "prterun"))
		return "mpirun";
	if (!strcmp(b, "srun"))
		return "srun";
	return "";
}

int push(words_t *w, const char *word)
{
	if (push_word(w->argv, &w->argc, w->max, word)) {
		snprintf(w->err, w->errlen, "job [%s]: too many words or out of memory",
			 w->j->section);
		return -1;
	}
	return 0;
}

/* {env_flags}: Open MPI's -x NAME for each of the job's variables. */
static int push_env_flags(words_t *w)
{
	for (int e = 0; e < w->j->nenv; e++) {
		char name[EFAB_CFG_VAL];
		snprintf(name, sizeof(name), "%s", w->j->env[e]);
		name[strcspn(name, "=")] = '\0';
		if (push(w, "-x") || push(w, name))
			return -1;
	}
	return 0;
}

/* The value of placeholder {name} (len characters, braces excluded). */
static int placeholder_value(const efab_job_t *j, const char *name, size_t len, int *val)
{
	if (len == 2 && !strncmp(name, "np", 2))
		*val = j->np;
	else if (len == 3 && !strncmp(name, "ppn", 3))
		*val = j->ppn ? j->ppn : j->np;
	else if (len == 5 && !strncmp(name, "nodes", 5))
		*val = j->nodes;
	else
		return -1;
	return 0;
}

/* One launcher word with {np}, {ppn} and {nodes} filled in. */
static int fill_placeholders(words_t *w, const char *word, char *out, size_t outlen)
{
	size_t o = 0;
	for (const char *p = word; *p && o + 16 < outlen; p++) {
		if (*p != '{') {
			out[o++] = *p;
			continue;
		}
		const char *close = strchr(p, '}');
		if (!close) {
			snprintf(w->err, w->errlen, "launcher of [%s]: unterminated '{' in '%s'",
				 w->j->section, word);
			return -1;
		}
		size_t kl = (size_t)(close - p - 1);
		int val;
		if (placeholder_value(w->j, p + 1, kl, &val)) {
			snprintf(w->err, w->errlen,
				 "launcher of [%s]: unknown placeholder '%.*s' (known: {np} "
				 "{ppn} {nodes} {env_flags})",
				 w->j->section, (int)kl + 2, p);
			return -1;
		}
		o += (size_t)snprintf(out + o, outlen - o, "%d", val);
		p = close;
	}
	out[o] = '\0';
	return 0;
}

/* srun's own --export word carries the install's LD_LIBRARY_PATH too. */
static int push_export_with_ld_path(words_t *w, const char *export, const install_t *in)
{
	char *x = malloc(strlen(export) + strlen(in->ld_path) + 32);
	if (!x)
		return -1;
	sprintf(x, "%s,LD_LIBRARY_PATH=%s", export, in->ld_path);
	int rc = push(w, x);
	free(x);
	return rc;
}

/* The launcher's words, placeholders filled; *forwarded is set once a word
 * forwards LD_LIBRARY_PATH to the ranks. */
static int push_launcher(words_t *w, const install_t *in, int *forwarded)
{
	char tmp[EFAB_CFG_VAL];
	snprintf(tmp, sizeof(tmp), "%s", w->j->launcher);
	for (char *sv = NULL, *word = strtok_r(tmp, " \t", &sv); word;
	     word = strtok_r(NULL, " \t", &sv)) {
		if (!strcmp(word, "{env_flags}")) {
			if (push_env_flags(w))
				return -1;
			continue;
		}
		char out[EFAB_CFG_VAL] = "";
		if (fill_placeholders(w, word, out, sizeof(out)))
			return -1;
		int srun_export = !strncmp(out, "--export", 8) &&
				  !strcmp(launcher_kind(w->argv[0] ? w->argv[0] : ""), "srun");
		if (!*forwarded && srun_export) {
			if (push_export_with_ld_path(w, out, in))
				return -1;
			*forwarded = 1;
			continue;
		}
		if (push(w, out))
			return -1;
	}
	return 0;
}

/* A launcher whose words do not forward LD_LIBRARY_PATH gets, right after
 * its program, -x LD_LIBRARY_PATH (mpirun) or --export=ALL,... (srun). */
static int insert_ld_path_forward(words_t *w, const install_t *in)
{
	const char *kind = launcher_kind(w->argv[0]);
	char *x = NULL;
	if (!strcmp(kind, "mpirun")) {
		x = strdup("LD_LIBRARY_PATH");
	} else if (!strcmp(kind, "srun")) {
		x = malloc(strlen(in->ld_path) + 40);
		if (x)
			sprintf(x, "--export=ALL,LD_LIBRARY_PATH=%s", in->ld_path);
	} else {
		snprintf(w->err, w->errlen,
			 "launcher of [%s]: key 'libfabric' needs LD_LIBRARY_PATH on every "
			 "rank, and '%s' is neither mpirun nor srun: forward it in the "
			 "launcher (a word naming LD_LIBRARY_PATH)",
			 w->j->section, w->argv[0]);
		return -1;
	}
	if (!x || w->argc + 2 >= w->max) {
		free(x);
		snprintf(w->err, w->errlen, "job [%s]: too many words", w->j->section);
		return -1;
	}
	int add = !strcmp(kind, "mpirun") ? 2 : 1;
	memmove(w->argv + 1 + add, w->argv + 1, (size_t)w->argc * sizeof(*w->argv));
	if (add == 2) {
		w->argv[1] = strdup("-x");
		w->argv[2] = x;
	} else {
		w->argv[1] = x;
	}
	w->argc += add;
	w->argv[w->argc] = NULL;
	return 0;
}

/* The site's launcher words (the first MPI job's launcher with {np},
 * {ppn} and {nodes} = 1: one process, on the first node of its host list or
 * allocation), with the variables of job j (NULL: the site job's own) and,
 * for an install, LD_LIBRARY_PATH forwarded. Nothing where there is no site. */
int push_site_launcher(const runner_t *r, const efab_job_t *j, const install_t *in, words_t *w)
{
	if (r->site < 0)
		return 0;
	efab_job_t one = r->jobs[r->site];
	one.np = one.ppn = one.nodes = 1;
	if (j) {
		memcpy(one.env, j->env, sizeof(one.env));
		one.nenv = j->nenv;
		snprintf(one.section, sizeof(one.section), "%s", j->section);
	}
	words_t sw = *w;
	sw.j = &one;
	int forwarded = !in || strstr(one.launcher, "LD_LIBRARY_PATH") != NULL;
	int rc = push_launcher(&sw, in, &forwarded);
	if (!rc && !forwarded && sw.argc > 0)
		rc = insert_ld_path_forward(&sw, in);
	w->argc = sw.argc;
	return rc;
}

/* The benchmark, its options, and where it writes its rows (and, for a
 * benchmark that reports them, every node's facts, into meta.json). */
static int push_bench(runner_t *r, size_t i, words_t *w)
{
	const efab_job_t *j = w->j;
	const char *dir = r->dry_run ? "RUNDIR" : r->dir;
	char buf[PATH_MAX + 64];
	snprintf(buf, sizeof(buf), "%s/%s", r->bindir, j->bench);
	if (push(w, buf))
		return -1;
	for (int a = 0; a < j->argc; a++)
		if (push(w, j->argv[a]))
			return -1;
	snprintf(buf, sizeof(buf), "%s/jobs/%03zu.csv", dir, i + 1);
	if (push(w, "--csv") || push(w, buf))
		return -1;
	if (!efab_opts_find(j->row->options, "nodes-json"))
		return 0;
	snprintf(buf, sizeof(buf), "%s/jobs/%03zu.nodes.json", dir, i + 1);
	return push(w, "--nodes-json") || push(w, buf) ? -1 : 0;
}

/* argv of a job (every word its own allocation: runner_free frees them):
 * launcher words (placeholders filled; with an install, LD_LIBRARY_PATH
 * forwarded to every rank: -x for mpirun, --export for srun), the benchmark,
 * its options, --csv. Returns argc, or -1 with a reason in err. */
int build_argv(runner_t *r, size_t i, char **argv, int max, char *err, size_t errlen)
{
	efab_job_t *j = &r->jobs[i];
	install_t *in = install_of(r, j);
	words_t w = {argv, 0, max, j, err, errlen};
	argv[0] = NULL;
	if (j->mpi) {
		int forwarded = !in || strstr(j->launcher, "LD_LIBRARY_PATH") != NULL;
		if (push_launcher(&w, in, &forwarded))
			return -1;
		if (!forwarded && w.argc > 0 && insert_ld_path_forward(&w, in))
			return -1;
	} else if (push_site_launcher(r, j, in, &w)) { /* launcher = none: on the first job node */
		return -1;
	}
	if (push_bench(r, i, &w))
		return -1;
	return w.argc;
}

char *cmdline(efab_job_t *j, const install_t *in, char **argv)
{
	size_t cap = 256, n = 0;
	char *s = malloc(cap);
	if (!s)
		return NULL;
	s[0] = '\0';
	for (int e = 0; e < j->nenv + (in != NULL); e++) {
		char ld[PATH_MAX * 2 + 32];
		const char *w = j->env[e];
		if (e == j->nenv) {
			snprintf(ld, sizeof(ld), "LD_LIBRARY_PATH=%s", in->ld_path);
			w = ld;
		}
		size_t need = n + strlen(w) + 2;
		if (need >= cap && !(s = realloc(s, cap = need * 2)))
			return NULL;
		n += (size_t)sprintf(s + n, "%s ", w);
	}
	for (int a = 0; argv[a]; a++) {
		int quote = strpbrk(argv[a], " ;&|$'\"") != NULL;
		size_t need = n + strlen(argv[a]) + 4;
		if (need >= cap && !(s = realloc(s, cap = need * 2)))
			return NULL;
		n += (size_t)sprintf(s + n, a ? (quote ? " '%s'" : " %s") : (quote ? "'%s'" : "%s"),
				     argv[a]);
	}
	return s;
}

/* Wait for pid, the leader of its own process group, to end. At limit_s
 * seconds, or when the sweep itself gets SIGINT/SIGTERM, the group gets
 * SIGTERM, and SIGKILL 5 s later if it is still there. */
child_end_t wait_child(pid_t pid, double limit_s)
{
	child_end_t e = {0};
	int status = 0;
	efab_stopwatch_t sw = efab_stopwatch_start();
	efab_deadline_t sigkill_at = {0};
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid || (w < 0 && errno != EINTR))
			break;
		if (!e.killed && (got_signal || efab_stopwatch_elapsed_s(sw) > limit_s)) {
			e.timed_out = !got_signal;
			kill(-pid, SIGTERM);
			sigkill_at = efab_deadline_in(5);
			e.killed = 1;
		} else if (e.killed && efab_deadline_passed(sigkill_at)) {
			kill(-pid, SIGKILL);
		}
		usleep(20000);
	}
	e.secs = efab_stopwatch_elapsed_s(sw);
	e.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return e;
}
