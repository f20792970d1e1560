/* efab_sweep: run a config's jobs, write a results directory with full
 * provenance, resume an interrupted one.
 *
 *   results/<YYYYmmdd-HHMMSS>-<host>-<label>/
 *     <bench>.csv     rows of every job of that benchmark (appended whole, per job)
 *     meta.json       commands, environment, versions, host facts
 *     jobs.tsv        index, job, status (ok|fail|skip|timeout|interrupted), rc, seconds, command
 *     logs/NNN-<job>.log  stdout and stderr of each job
 *     config.conf     the config as run
 *     probe.json      efab_probe --json of this install, taken first (compare two
 *                     runs with efab_probe --diff); probe.log its stderr, if any
 *     INCOMPLETE      present until every job has been attempted
 *
 * A job writes its rows to jobs/NNN.csv; only a job that ended by itself has
 * them appended to <bench>.csv, so an interrupted job leaves no rows and a
 * resumed sweep never duplicates any. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "efab.h"
#include "efab_abi.h"
#include "hostfacts.h"
#include "efab_clock.h"
#include "efab_config.h"
#include "efab_json.h"
#include "efab_rt.h"
#include "efab_opts.h"
#include "efab_topo.h"
#include "rows.h"

#include <rdma/fabric.h>

#define EFAB_JOB_WORDS (EFAB_JOB_MAXARGS * 2 + 8)
static volatile sig_atomic_t got_signal;
static void on_signal(int s)
{
	got_signal = s;
}

/* One libfabric install of a 'libfabric = A, B' sweep: where its library
 * is, what it is, and its capability probe (probe-lf<N>.json). */
#define EFAB_MAX_INSTALLS 16
typedef struct install {
	char given[EFAB_CFG_VAL]; /* as in the config */
	int line;
	char libdir[PATH_MAX];    /* holds libfabric.so.1 */
	char library[PATH_MAX];   /* its real path */
	char version[32];         /* pkgconfig/libfabric.pc Version, "" if none */
	char efa_installer[32];
	char ld_path[PATH_MAX * 2]; /* LD_LIBRARY_PATH for its jobs */
	char probe_file[32];
	char probe_status[16];
	char probe_msg[512];
	double probe_secs;
} install_t;

typedef struct runner {
	const char *config_path;
	char outbase[PATH_MAX];
	char label[128];
	int dry_run;
	char resume[PATH_MAX];
	char dir[PATH_MAX];
	char bindir[PATH_MAX];
	efab_job_t *jobs;
	size_t njobs;
	char (*status)[16];
	int *rcs;
	double *secs;
	char **cmdlines;
	/* efab_probe --json of this install into probe.json (record_probe) */
	char probe_cmd[PATH_MAX + 32];
	char probe_status[16]; /* pending ok fail timeout interrupted kept */
	char probe_msg[512];
	double probe_secs, probe_limit;
	/* key 'libfabric': the installs, in order of first appearance */
	install_t inst[EFAB_MAX_INSTALLS];
	size_t ninst;
	/* the site: one process on the first job node, through the launcher of
	 * the first MPI job; -1 where no job has one (then everything runs here) */
	long site;
	char refusal[1024]; /* an install that does not load there: exit 2 */
} runner_t;

static const char usage[] =
	"Usage: efab_sweep CONFIG [-o DIR] [--label L] [--dry-run] [--resume RUNDIR]\n"
	"Run every job of a sweep config (configs/*.conf) and write a results directory\n"
	"DIR/<YYYYmmdd-HHMMSS>-<host>-<label>/ (DIR default results, label default the config's\n"
	"name) with one CSV per benchmark, meta.json, jobs.tsv and a log per job.\n"
	"  -o, --output DIR   parent directory of the run directory (default results)\n"
	"  -l, --label L      label in the run directory's name\n"
	"  -n, --dry-run      print the plan and the exact commands; run nothing\n"
	"  -r, --resume DIR   continue the run in DIR: jobs already complete are skipped\n"
	"  -h, --help, -V, --version\n"
	"Exit status: 0 every job ok or skipped (77), 1 a job failed or the sweep was\n"
	"interrupted, 2 bad usage or a bad config (file:line: reason).\n";

/* ---- small helpers ---- */

static int read_file(const char *path, char **out, size_t *len)
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
static void json_field(FILE *f, const char *key, const char *val)
{
	efab_json_kv(f, ",\n  ", key, val);
}

static int mkdirs(const char *path)
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
static FILE *open_atomic(const char *path, char *tmp, size_t len)
{
	snprintf(tmp, len, "%s.tmp", path);
	return fopen(tmp, "w");
}

static int close_atomic(FILE *f, const char *tmp, const char *path)
{
	if (fclose(f))
		return -1;
	return rename(tmp, path);
}

/* ---- commands ---- */

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


static install_t *install_of(runner_t *r, const efab_job_t *j)
{
	for (size_t k = 0; j->libfabric[0] && k < r->ninst; k++)
		if (!strcmp(r->inst[k].given, j->libfabric))
			return &r->inst[k];
	return NULL;
}

/* Every install named by a job, in order of first appearance, checked before
 * anything runs. EFAB_OK, or EFAB_EUSAGE with "config:line: ..." in err. */
static int resolve_installs(runner_t *r, char *err, size_t errlen)
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
		if (install_libdir(j->libfabric, libdir, sizeof(libdir)) && (r->dry_run || r->site >= 0)) {
			/* an install staged on the job nodes only (/opt/amazon/efa on
			 * p5en nodes, the sweep on a head node): every candidate
			 * directory; the probe on the first job node says whether it
			 * loads there */
			snprintf(libdir, sizeof(libdir), "%s/lib64:%s/lib:%s/lib/x86_64-linux-gnu:%s/lib/aarch64-linux-gnu:%s",
				 j->libfabric, j->libfabric, j->libfabric, j->libfabric, j->libfabric);
			snprintf(in->version, sizeof(in->version), "not on this host");
		} else if (install_libdir(j->libfabric, libdir, sizeof(libdir))) {
			snprintf(err, errlen,
				 "%s:%d: key 'libfabric': '%s' holds no libfabric.so.1 (looked in its lib64/, "
				 "lib/, lib/<triplet>/ and the directory itself)", r->config_path, in->line,
				 in->given);
			return EFAB_EUSAGE;
		}
		char real[PATH_MAX];
		if (!strchr(libdir, ':') && realpath(libdir, real)) /* absolute: ranks may start elsewhere */
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

/* The words of one job's command as they are built; push() says in err why
 * one could not be added. */
typedef struct words {
	char **argv;
	int argc, max;
	const efab_job_t *j;
	char *err;
	size_t errlen;
} words_t;

static int push(words_t *w, const char *word)
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
				 "{ppn} {nodes} {env_flags})", w->j->section, (int)kl + 2, p);
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
			 "launcher (a word naming LD_LIBRARY_PATH)", w->j->section, w->argv[0]);
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
static int push_site_launcher(const runner_t *r, const efab_job_t *j, const install_t *in, words_t *w)
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
static int build_argv(runner_t *r, size_t i, char **argv, int max, char *err, size_t errlen)
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

static char *cmdline(efab_job_t *j, const install_t *in, char **argv)
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

/* ---- provenance ---- */

/* jobs/NNN.nodes.json of job i (written by the benchmark's rank 0 with
 * --nodes-json), trailing newline removed; NULL when absent or not an object. */
static char *job_nodes(runner_t *r, size_t i)
{
	char path[PATH_MAX], *text;
	size_t len;
	snprintf(path, sizeof(path), "%s/jobs/%03zu.nodes.json", r->dir, i + 1);
	if (read_file(path, &text, &len))
		return NULL;
	while (len && (text[len - 1] == '\n' || text[len - 1] == ' '))
		text[--len] = '\0';
	if (len < 2 || text[0] != '{' || text[len - 1] != '}') {
		free(text);
		return NULL;
	}
	return text;
}

/* This host: kernel, CPU, libfabric, EFA, GPUs, MPI, topology, clock. */
/* The "host" object of probe JSON text: its members ("{" and "}" excluded)
 * into out; 0, or -1 when there is none. Strings may hold braces. */
static int probe_host_members(const char *text, char *out, size_t len)
{
	const char *p = strstr(text, "\"host\": {");
	if (!p)
		return -1;
	p = strchr(p, '{') + 1;
	int depth = 1, in_str = 0;
	const char *q = p;
	for (; *q && depth; q++) {
		if (in_str) {
			if (*q == '\\' && q[1])
				q++;
			else if (*q == '"')
				in_str = 0;
		} else if (*q == '"') {
			in_str = 1;
		} else if (*q == '{') {
			depth++;
		} else if (*q == '}') {
			depth--;
		}
	}
	if (depth || (size_t)(q - 1 - p) >= len)
		return -1;
	snprintf(out, len, "%.*s", (int)(q - 1 - p), p);
	return 0;
}

/* The measured node's facts: those the probe wrote on the first job node
 * where it ran there, else this host's; "facts_from" says which and
 * "sweep_host" names the host efab_sweep ran on. */
static void write_meta_host(FILE *f, const runner_t *r)
{
	struct utsname u;
	uname(&u);
	char path[PATH_MAX + 64], *text = NULL, members[16384];
	size_t len = 0;
	const char *file = r->ninst ? r->inst[0].probe_file : "probe.json";
	snprintf(path, sizeof(path), "%s/%s", r->dir, file);
	int remote = r->site >= 0 && !read_file(path, &text, &len);
	if (remote) {
		char *t = realloc(text, len + 1);
		if (t) {
			text = t;
			text[len] = '\0';
		}
		remote = t && !probe_host_members(text, members, sizeof(members));
	}
	free(text);
	if (remote) {
		fprintf(f, ",\n  %s", members);
		json_field(f, "facts_from", "the first job node (efab_probe --json through the launcher)");
	} else {
		efab_host_facts_json(f, ",\n  ", ",\n  ");
		json_field(f, "facts_from", r->site >= 0 ? "the sweep's own host (the probe on the first job "
							  "node gave none)"
							: "the sweep's own host (no job has an MPI launcher)");
	}
	json_field(f, "sweep_host", u.nodename);
}

/* "probe" (one object, older readers: the first install's) and, key
 * 'libfabric', every install the jobs ran against, with its probe. */
static void write_meta_probes(FILE *f, const runner_t *r)
{
	efab_json_kv(f, ",\n  \"probe\": {", "status", r->probe_status);
	efab_json_kv(f, ", ", "file",
		     !strcmp(r->probe_status, "ok") || !strcmp(r->probe_status, "kept")
			 ? (r->ninst ? r->inst[0].probe_file : "probe.json") : "");
	efab_json_kv(f, ", ", "command", r->probe_cmd);
	fprintf(f, ", \"seconds\": %.2f, \"timeout_s\": %g", r->probe_secs, r->probe_limit);
	efab_json_kv(f, ", ", "message", r->probe_msg);
	fprintf(f, "}");
	fprintf(f, ",\n  \"libfabric_installs\": [");
	for (size_t k = 0; k < r->ninst; k++) {
		const install_t *in = &r->inst[k];
		fprintf(f, "%s\n    {\"index\": %zu", k ? "," : "", k + 1);
		efab_json_kv(f, ", ", "libfabric", in->given);
		efab_json_kv(f, ", ", "libdir", in->libdir);
		efab_json_kv(f, ", ", "library", in->library);
		efab_json_kv(f, ", ", "version", in->version);
		efab_json_kv(f, ", ", "efa_installer", in->efa_installer);
		efab_json_kv(f, ", ", "LD_LIBRARY_PATH", in->ld_path);
		efab_json_kv(f, ",\n     \"probe\": {", "status", in->probe_status);
		efab_json_kv(f, ", ", "file",
			     !strcmp(in->probe_status, "ok") || !strcmp(in->probe_status, "kept")
				 ? in->probe_file : "");
		fprintf(f, ", \"seconds\": %.2f", in->probe_secs);
		efab_json_kv(f, ", ", "message", in->probe_msg);
		fprintf(f, "}}");
	}
	fprintf(f, "%s]", r->ninst ? "\n  " : "");
}

/* The variables that steer libfabric, NCCL, NVSHMEM, Open MPI and CUDA. */
static void write_meta_environment(FILE *f)
{
	extern char **environ;
	int first = 1;
	fprintf(f, ",\n  \"environment\": {");
	for (char **e = environ; *e; e++) {
		if (strncmp(*e, "FI_", 3) && strncmp(*e, "NCCL_", 5) && strncmp(*e, "NVSHMEM_", 8) &&
		    strncmp(*e, "OMPI_MCA_", 9) && strncmp(*e, "CUDA_VISIBLE", 12))
			continue;
		char name[256];
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(*e, "="), *e);
		efab_json_kv(f, first ? "\n    " : ",\n    ", name, *e + strlen(name) + 1);
		first = 0;
	}
	fprintf(f, "\n  }");
}

/* Every job as it stands; returns how many saw their nodes differ. */
static int write_meta_jobs(FILE *f, runner_t *r)
{
	int mismatch = 0;
	fprintf(f, ",\n  \"jobs\": [");
	for (size_t i = 0; i < r->njobs; i++) {
		fprintf(f, "%s\n    {\"index\": %zu", i ? "," : "", i + 1);
		efab_json_kv(f, ", ", "name", r->jobs[i].name);
		efab_json_kv(f, ", ", "bench", r->jobs[i].bench);
		efab_json_kv(f, ", ", "libfabric", r->jobs[i].libfabric);
		fprintf(f, ", \"repeat\": %d", r->jobs[i].rep);
		efab_json_kv(f, ", ", "status", r->status[i]);
		fprintf(f, ", \"rc\": %d, \"seconds\": %.2f", r->rcs[i], r->secs[i]);
		efab_json_kv(f, ", ", "command", r->cmdlines[i]);
		char *nodes = job_nodes(r, i);
		if (nodes) { /* the job's own JSON: its nodes and what differs between them */
			fprintf(f, ",\n     \"nodes\": %s", nodes);
			if (!strstr(nodes, "\"mismatch\": \"\""))
				mismatch++;
			free(nodes);
		}
		fprintf(f, "}");
	}
	fprintf(f, "\n  ]");
	return mismatch;
}

static void write_meta(runner_t *r, int complete)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	snprintf(path, sizeof(path), "%s/meta.json", r->dir);
	FILE *f = open_atomic(path, tmp, sizeof(tmp));
	if (!f)
		return;
	fprintf(f, "{\n  \"efabench\": \"%s\",\n  \"schema\": %d", EFAB_VERSION, EFAB_CSV_SCHEMA);
	json_field(f, "config", r->config_path);
	json_field(f, "label", r->label);
	fprintf(f, ",\n  \"complete\": %s", complete ? "true" : "false");
	write_meta_host(f, r);
	write_meta_probes(f, r);
	write_meta_environment(f);
	int mismatch = write_meta_jobs(f, r);
	fprintf(f, ",\n  \"node_mismatch_jobs\": %d\n}\n", mismatch);
	close_atomic(f, tmp, path);
}

static void write_jobs_tsv(runner_t *r)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	snprintf(path, sizeof(path), "%s/jobs.tsv", r->dir);
	FILE *f = open_atomic(path, tmp, sizeof(tmp));
	if (!f)
		return;
	fprintf(f, "index\tjob\tstatus\trc\tseconds\tcommand\n");
	for (size_t i = 0; i < r->njobs; i++)
		fprintf(f, "%zu\t%s\t%s\t%d\t%.2f\t%s\n", i + 1, r->jobs[i].name, r->status[i], r->rcs[i],
			r->secs[i], r->cmdlines[i] ? r->cmdlines[i] : "");
	close_atomic(f, tmp, path);
}

static void read_resume(runner_t *r)
{
	char path[PATH_MAX], *text;
	size_t len;
	snprintf(path, sizeof(path), "%s/jobs.tsv", r->dir);
	if (read_file(path, &text, &len))
		return;
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[256], status[32];
		size_t idx;
		if (sscanf(line, "%zu\t%255[^\t]\t%31[^\t]", &idx, name, status) != 3)
			continue;
		if (idx >= 1 && idx <= r->njobs && !strcmp(r->jobs[idx - 1].name, name) &&
		    (!strcmp(status, "ok") || !strcmp(status, "skip") || !strcmp(status, "fail") ||
		     !strcmp(status, "timeout")))
			snprintf(r->status[idx - 1], 16, "%s", status);
	}
	free(text);
}

/* Move a finished job's rows into <bench>.csv: header once, rows in one
 * write; a header that differs is refused. */
static int merge_csv(runner_t *r, size_t i)
{
	char jpath[PATH_MAX], bpath[PATH_MAX], *text, *old;
	size_t len, olen;
	snprintf(jpath, sizeof(jpath), "%s/jobs/%03zu.csv", r->dir, i + 1);
	snprintf(bpath, sizeof(bpath), "%s/%s.csv", r->dir, r->jobs[i].bench + 5);
	if (read_file(jpath, &text, &len))
		return 0; /* the job wrote no rows (skipped early) */
	char *nl = memchr(text, '\n', len);
	if (!nl || len == 0 || text[len - 1] != '\n') {
		free(text);
		return 0;
	}
	size_t hlen = (size_t)(nl - text) + 1;
	int fd = open(bpath, O_RDWR | O_CREAT | O_APPEND, 0644);
	if (fd < 0) {
		free(text);
		return -1;
	}
	int rc = 0;
	struct stat st;
	fstat(fd, &st);
	if (st.st_size == 0) {
		rc = write(fd, text, len) == (ssize_t)len ? 0 : -1;
	} else if (!read_file(bpath, &old, &olen)) {
		if (olen < hlen || memcmp(old, text, hlen)) {
			efab_log_error("job %zu: its CSV columns differ from %s; rows kept in %s", i + 1,
				       bpath, jpath);
			rc = -1;
		} else if (len > hlen) {
			rc = write(fd, text + hlen, len - hlen) == (ssize_t)(len - hlen) ? 0 : -1;
		}
		free(old);
	}
	close(fd);
	free(text);
	if (!rc)
		unlink(jpath);
	return rc;
}

/* How a child run by wait_child ended. */
typedef struct child_end {
	int rc;        /* exit status, or 128 + the signal that ended it */
	int killed;    /* SIGTERM sent: limit reached or sweep interrupted */
	int timed_out; /* killed for running over its limit */
	double secs;   /* from wait_child's call to the child's end */
} child_end_t;

/* Wait for pid, the leader of its own process group, to end. At limit_s
 * seconds, or when the sweep itself gets SIGINT/SIGTERM, the group gets
 * SIGTERM, and SIGKILL 5 s later if it is still there. */
static child_end_t wait_child(pid_t pid, double limit_s)
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

static int run_job(runner_t *r, size_t i, char **argv)
{
	efab_job_t *j = &r->jobs[i];
	char logpath[PATH_MAX], runid[PATH_MAX + 64], jpath[PATH_MAX];
	char safe[160];
	snprintf(safe, sizeof(safe), "%s", j->name);
	for (char *p = safe; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_' && *p != '.')
			*p = '_';
	snprintf(logpath, sizeof(logpath), "%s/logs/%03zu-%s.log", r->dir, i + 1, safe);
	snprintf(jpath, sizeof(jpath), "%s/jobs/%03zu.csv", r->dir, i + 1);
	unlink(jpath); /* a resumed job starts clean */
	char npath[PATH_MAX + 16];
	snprintf(npath, sizeof(npath), "%s/jobs/%03zu.nodes.json", r->dir, i + 1);
	unlink(npath);
	const char *base = strrchr(r->dir, '/');
	snprintf(runid, sizeof(runid), "%s:%s", base ? base + 1 : r->dir, j->name);
	pid_t child = fork();
	if (child < 0) {
		efab_log_error("fork: %s", strerror(errno));
		return -1;
	}
	if (child == 0) {
		setpgid(0, 0);
		int fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
			close(fd);
		}
		for (int e = 0; e < j->nenv; e++)
			putenv(j->env[e]);
		const install_t *in = install_of(r, j);
		if (in)
			setenv("LD_LIBRARY_PATH", in->ld_path, 1);
		setenv("EFAB_RUN_ID", runid, 1);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execvp(argv[0], argv);
		fprintf(stderr, "efab_sweep: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	setpgid(child, child);
	child_end_t end = wait_child(child, j->timeout_s);
	int timed_out = end.timed_out, rc = end.rc;
	r->secs[i] = end.secs;
	r->rcs[i] = rc;
	if (got_signal) {
		snprintf(r->status[i], 16, "interrupted");
		unlink(jpath);
		return 0;
	}
	snprintf(r->status[i], 16, "%s", timed_out ? "timeout" : rc == 0 ? "ok" : rc == 77 ? "skip" : "fail");
	if (!timed_out && merge_csv(r, i))
		snprintf(r->status[i], 16, "fail");
	if (timed_out)
		unlink(jpath);
	return 0;
}

/* The probe's child: stdout into tmp, stderr into logp, then efab_probe --json. */
static void exec_probe(char *const *argv, const char *tmp, const char *logp, const char *ld_path)
{
	setpgid(0, 0);
	int out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int err = open(logp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0 || err < 0)
		_exit(126);
	dup2(out, 1);
	dup2(err, 2);
	close(out);
	close(err);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	if (ld_path)
		setenv("LD_LIBRARY_PATH", ld_path, 1);
	execvp(argv[0], argv);
	fprintf(stderr, "efab_sweep: cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* The last line the probe said on stderr into last ("" if none); a log
 * with nothing in it is removed. */
static void last_log_line(const char *logp, char *last, size_t size)
{
	char *text = NULL;
	size_t len = 0;
	last[0] = '\0';
	if (!read_file(logp, &text, &len)) {
		while (len && (text[len - 1] == '\n' || text[len - 1] == ' '))
			len--;
		size_t s = len;
		while (s && text[s - 1] != '\n')
			s--;
		snprintf(last, size, "%.*s", (int)(len - s), text + s);
		free(text);
	}
	if (!len)
		unlink(logp);
}

/* What meta.json says about the probe: its last words, or how it ended. */
static void probe_message(const runner_t *r, const child_end_t *end, int ok, const char *last,
			  char *message, size_t mlen)
{
	if (ok)
		snprintf(message, mlen, "%s", last);
	else if (end->timed_out)
		snprintf(message, mlen,
			 "efab_probe --json ran over %g s (EFAB_SWEEP_PROBE_TIMEOUT) and was stopped%s%s",
			 r->probe_limit, last[0] ? "; it said: " : "", last);
	else if (end->killed)
		snprintf(message, mlen, "stopped by signal %d", (int)got_signal);
	else
		snprintf(message, mlen, "efab_probe --json exit %d%s%s", end->rc,
			 last[0] ? ": " : " (no message; empty output)", last);
}

/* The probe's command: efab_probe --json beside efab_sweep, through the
 * site's launcher (one process on the first job node) where there is one.
 * argc, or -1. */
static int probe_argv(const runner_t *r, const install_t *in, char **argv, int max)
{
	char err[512], exe[PATH_MAX + 16];
	efab_job_t none;
	memset(&none, 0, sizeof(none));
	snprintf(none.section, sizeof(none.section), "probe");
	words_t w = {argv, 0, max, &none, err, sizeof(err)};
	argv[0] = NULL;
	snprintf(exe, sizeof(exe), "%s/efab_probe", r->bindir);
	if (push_site_launcher(r, NULL, in, &w) || push(&w, exe) || push(&w, "--json")) {
		efab_log_error("probe: %s", err);
		for (char **a = argv; *a; a++)
			free(*a);
		argv[0] = NULL;
		return -1;
	}
	return w.argc;
}

/* The dynamic loader's refusal in a log ("version `EFA_1.7' not found
 * (required by .../libfabric.so.1)", "cannot open shared object file"): a
 * libfabric built against a newer rdma-core than the node's. 1 and the line
 * in out, or 0. */
static int loader_refusal(const char *logp, char *out, size_t len)
{
	FILE *f = fopen(logp, "r");
	char line[1024];
	int found = 0;
	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		if ((strstr(line, "version `") && strstr(line, "not found")) ||
		    strstr(line, "cannot open shared object file")) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(out, len, "%s", line);
			found = 1;
		}
	fclose(f);
	return found;
}

/* An install not on this host: the probe on the first job node must have
 * loaded it there (its host facts' libfabric_path under the prefix), else
 * the jobs would silently run the node's default libfabric. */
static void probe_loaded_install(runner_t *r, const install_t *in, const char *probe_json)
{
	char *text = NULL, *t;
	size_t len = 0;
	if (read_file(probe_json, &text, &len) || !(t = realloc(text, len + 1))) {
		free(text);
		return;
	}
	text = t;
	text[len] = '\0';
	const char *k = strstr(text, "\"libfabric_path\": \""), *v = k ? k + 19 : NULL;
	char loaded[PATH_MAX] = "";
	if (v)
		snprintf(loaded, sizeof(loaded), "%.*s", (int)strcspn(v, "\""), v);
	size_t gl = strlen(in->given);
	while (gl > 1 && in->given[gl - 1] == '/')
		gl--;
	if (strncmp(loaded, in->given, gl) || (loaded[gl] && loaded[gl] != '/'))
		snprintf(r->refusal, sizeof(r->refusal),
			 "libfabric '%s' does not load on the first job node: no libfabric.so.1 under it "
			 "there (the probe loaded %s)", in->given, loaded[0] ? loaded : "an unknown library");
	free(text);
}

/* The capability matrix of the install this sweep runs on: efab_probe --json
 * (the one beside efab_sweep) into probe.json, so that two sweeps can be
 * compared with efab_probe --diff. Bounded by EFAB_SWEEP_PROBE_TIMEOUT seconds
 * (default 120); a failure is recorded in meta.json and the sweep goes on. A
 * resumed run keeps the probe.json it has. */
static void record_probe_one(runner_t *r, const install_t *in, const char *file, char *pstatus,
			     size_t slen, char *message, size_t mlen, double *secs)
{
	char path[PATH_MAX + 64], tmp[PATH_MAX + 80], logp[PATH_MAX + 64];
	const char *ld_path = in ? in->ld_path : NULL;
	char *argv[EFAB_JOB_WORDS];
	snprintf(path, sizeof(path), "%s/%s", r->dir, file);
	snprintf(tmp, sizeof(tmp), "%s/%s.tmp", r->dir, file);
	snprintf(logp, sizeof(logp), "%s/%.*s.log", r->dir, (int)strcspn(file, "."), file);
	if (r->resume[0] && access(path, F_OK) == 0) {
		snprintf(pstatus, slen, "kept");
		snprintf(message, mlen, "%s of the run being resumed", file);
		return;
	}
	if (probe_argv(r, in, argv, EFAB_JOB_WORDS) < 0) {
		snprintf(pstatus, slen, "fail");
		snprintf(message, mlen, "cannot build the probe's command");
		return;
	}
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(pstatus, slen, "fail");
		snprintf(message, mlen, "fork: %s", strerror(errno));
		for (char **a = argv; *a; a++)
			free(*a);
		return;
	}
	if (pid == 0)
		exec_probe(argv, tmp, logp, ld_path);
	for (char **a = argv; *a; a++)
		free(*a);
	setpgid(pid, pid);
	child_end_t end = wait_child(pid, r->probe_limit);
	int timed_out = end.timed_out, killed = end.killed, rc = end.rc;
	*secs = end.secs;
	char last[400], ld[1024];
	if (in && !end.timed_out && !end.killed && end.rc && loader_refusal(logp, ld, sizeof(ld)))
		snprintf(r->refusal, sizeof(r->refusal),
			 "libfabric '%s' does not load %s: %s", in->given,
			 r->site >= 0 ? "on the first job node" : "here", ld);
	last_log_line(logp, last, sizeof(last));
	struct stat st;
	int ok = !killed && rc == 0 && !stat(tmp, &st) && st.st_size > 0;
	if (ok && rename(tmp, path)) {
		ok = 0;
		snprintf(last, sizeof(last), "rename to %s: %s", file, strerror(errno));
	}
	if (ok && in && !strcmp(in->version, "not on this host"))
		probe_loaded_install(r, in, path);
	if (!ok)
		unlink(tmp);
	snprintf(pstatus, slen, "%s",
		 ok ? "ok" : timed_out ? "timeout" : killed ? "interrupted" : "fail");
	probe_message(r, &end, ok, last, message, mlen);
	if (!ok && (timed_out || !killed) && !r->refusal[0]) /* a refusal is said once, at the end */
		efab_log_error("no %s (%s); the sweep goes on", file, message);
}

/* probe.json of the sweep's own libfabric, or with key 'libfabric' one
 * probe-lf<N>.json per install (its LD_LIBRARY_PATH), so that the report's
 * capability diff compares the installs. */
static void record_probe(runner_t *r)
{
	if (!r->ninst) {
		record_probe_one(r, NULL, "probe.json", r->probe_status, sizeof(r->probe_status),
				 r->probe_msg, sizeof(r->probe_msg), &r->probe_secs);
		return;
	}
	for (size_t k = 0; k < r->ninst && !got_signal; k++) {
		install_t *in = &r->inst[k];
		record_probe_one(r, in, in->probe_file, in->probe_status,
				 sizeof(in->probe_status), in->probe_msg, sizeof(in->probe_msg),
				 &in->probe_secs);
	}
	/* meta.json's "probe" (one object, older readers) describes the first */
	snprintf(r->probe_status, sizeof(r->probe_status), "%s", r->inst[0].probe_status);
	snprintf(r->probe_msg, sizeof(r->probe_msg), "%s", r->inst[0].probe_msg);
	r->probe_secs = r->inst[0].probe_secs;
}

static void progress(size_t i, size_t n, const char *name, double elapsed, double eta, int tty)
{
	if (tty)
		fprintf(stderr, "\r\033[K[%zu/%zu] %s  elapsed %.0fs  ETA %s", i, n, name, elapsed,
			eta < 0 ? "?" : "");
	else
		fprintf(stderr, "efab_sweep: [%zu/%zu] %s (elapsed %.0fs", i, n, name, elapsed);
	if (eta >= 0)
		fprintf(stderr, tty ? "%.0fs" : ", ETA %.0fs", eta);
	fprintf(stderr, tty ? "" : ")\n");
	fflush(stderr);
}

static void runner_free(runner_t *r)
{
	for (size_t i = 0; r->cmdlines && i < r->njobs; i++)
		free(r->cmdlines[i]);
	free(r->cmdlines);
	free(r->status);
	free(r->rcs);
	free(r->secs);
	efab_jobs_free(r->jobs, r->njobs);
	r->jobs = NULL;
	r->cmdlines = NULL;
	r->status = NULL;
	r->rcs = NULL;
	r->secs = NULL;
}

/* Every command is built (and checked) before anything runs. */
#define EFAB_SWEEP_MAX_JOBS 4096
static char *job_argvs[EFAB_SWEEP_MAX_JOBS][EFAB_JOB_WORDS];

/* parse_args's answer when the sweep goes on (anything else is an exit status). */
#define SWEEP_GO_ON (-1)

static int parse_args(runner_t *r, int argc, char **argv)
{
	static const struct option lo[] = {{"output", required_argument, 0, 'o'},
					   {"label", required_argument, 0, 'l'},
					   {"dry-run", no_argument, 0, 'n'},
					   {"resume", required_argument, 0, 'r'},
					   {"help", no_argument, 0, 'h'},
					   {"version", no_argument, 0, 'V'},
					   {0, 0, 0, 0}};
	int c;
	snprintf(r->outbase, sizeof(r->outbase), "results");
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:l:nr:hV", lo, NULL)) != -1) {
		switch (c) {
		case 'o': snprintf(r->outbase, sizeof(r->outbase), "%s", optarg); break;
		case 'l': snprintf(r->label, sizeof(r->label), "%s", optarg); break;
		case 'n': r->dry_run = 1; break;
		case 'r': snprintf(r->resume, sizeof(r->resume), "%s", optarg); break;
		case 'h': fputs(usage, stdout); return 0;
		case 'V': printf("efab_sweep (efabench) %s\n", EFAB_VERSION); return 0;
		case ':':
			efab_log_error("option '%s' needs a value (see --help)", argv[optind - 1]);
			return EFAB_EUSAGE;
		default:
			efab_log_error("unknown option '%s' (see --help)", argv[optind - 1]);
			return EFAB_EUSAGE;
		}
	}
	if (optind != argc - 1) {
		efab_log_error("expected one CONFIG file (see --help)");
		return EFAB_EUSAGE;
	}
	r->config_path = argv[optind];
	for (char *p = r->label; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_' && *p != '.') {
			efab_log_error("--label '%s': letters, digits, '-', '_' and '.' only", r->label);
			return EFAB_EUSAGE;
		}
	return SWEEP_GO_ON;
}

/* The config's text (kept for config.conf) and its jobs. */
static int load_config(runner_t *r, char **text, size_t *len, efab_config_t *cfg)
{
	char err[1024];
	if (read_file(r->config_path, text, len)) {
		efab_log_error("cannot read config '%s': %s", r->config_path, strerror(errno));
		return EFAB_EUSAGE;
	}
	int rc = efab_config_parse(*text, *len, r->config_path, cfg, err, sizeof(err));
	if (!rc) {
		cfg->runner = "efab_sweep";
		rc = efab_config_expand(cfg, efab_bench_rows, efab_n_bench_rows, &r->jobs, &r->njobs,
					err, sizeof(err));
	}
	if (rc) {
		efab_log_error("%s", err);
		return EFAB_EUSAGE;
	}
	return EFAB_OK;
}

/* Without --label, the config's file name without its extension. */
static void default_label(runner_t *r)
{
	if (r->label[0])
		return;
	const char *b = strrchr(r->config_path, '/');
	snprintf(r->label, sizeof(r->label), "%s", b ? b + 1 : r->config_path);
	char *dot = strrchr(r->label, '.');
	if (dot)
		*dot = '\0';
}

/* The executables live beside efab_sweep. */
static void find_bindir(runner_t *r)
{
	ssize_t n = readlink("/proc/self/exe", r->bindir, sizeof(r->bindir) - 1);
	if (n <= 0) {
		snprintf(r->bindir, sizeof(r->bindir), ".");
		return;
	}
	r->bindir[n] = '\0';
	char *slash = strrchr(r->bindir, '/');
	if (slash)
		*slash = '\0';
}

static int runner_alloc(runner_t *r)
{
	r->status = calloc(r->njobs, sizeof(*r->status));
	r->rcs = calloc(r->njobs, sizeof(int));
	r->secs = calloc(r->njobs, sizeof(double));
	r->cmdlines = calloc(r->njobs, sizeof(char *));
	return r->status && r->rcs && r->secs && r->cmdlines ? 0 : -1;
}

/* A new run's directory: OUTBASE/<YYYYmmdd-HHMMSS>-<host>-<label>. */
static void name_run_dir(runner_t *r)
{
	char host[64] = "host", ts[32];
	gethostname(host, sizeof(host) - 1);
	host[strcspn(host, ".")] = '\0';
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	strftime(ts, sizeof(ts), "%Y%m%d-%H%M%S", &tm);
	snprintf(r->dir, sizeof(r->dir), "%s/%s-%s-%s", r->outbase, ts, host, r->label);
}

static int build_commands(runner_t *r)
{
	char err[1024];
	for (size_t i = 0; i < r->njobs; i++) {
		if (build_argv(r, i, job_argvs[i], EFAB_JOB_WORDS, err, sizeof(err)) < 0) {
			efab_log_error("%s: %s", r->config_path, err);
			return EFAB_EUSAGE;
		}
		r->cmdlines[i] = cmdline(&r->jobs[i], install_of(r, &r->jobs[i]), job_argvs[i]);
		snprintf(r->status[i], 16, "pending");
	}
	return EFAB_OK;
}

/* Everything decided before anything runs: label, paths, installs, commands. */
static int plan_sweep(runner_t *r)
{
	char err[1024];
	default_label(r);
	find_bindir(r);
	const char *plim = getenv("EFAB_SWEEP_PROBE_TIMEOUT");
	r->probe_limit = plim && atof(plim) > 0 ? atof(plim) : 120;
	snprintf(r->probe_status, sizeof(r->probe_status), "pending");
	if (runner_alloc(r)) {
		efab_log_error("out of memory");
		return EFAB_ERR;
	}
	if (r->resume[0])
		snprintf(r->dir, sizeof(r->dir), "%s", r->resume);
	if (r->njobs > EFAB_SWEEP_MAX_JOBS) {
		efab_log_error("%s: %zu jobs; at most 4096", r->config_path, r->njobs);
		return EFAB_EUSAGE;
	}
	if (!r->dry_run && !r->resume[0])
		name_run_dir(r);
	r->site = -1;
	for (size_t i = 0; i < r->njobs && r->site < 0; i++)
		if (r->jobs[i].mpi)
			r->site = (long)i;
	if (resolve_installs(r, err, sizeof(err))) {
		efab_log_error("%s", err);
		return EFAB_EUSAGE;
	}
	/* the jobs first: a bad launcher is reported once, for the job naming it */
	int rc = build_commands(r);
	char *pv[EFAB_JOB_WORDS];
	if (rc || probe_argv(r, NULL, pv, EFAB_JOB_WORDS) < 0)
		return rc ? rc : EFAB_EUSAGE;
	size_t k = 0;
	r->probe_cmd[0] = '\0';
	for (char **a = pv; *a; a++) {
		if (k < sizeof(r->probe_cmd))
			k += (size_t)snprintf(r->probe_cmd + k, sizeof(r->probe_cmd) - k, "%s%s",
					      a == pv ? "" : " ", *a);
		free(*a);
	}
	return EFAB_OK;
}

/* --dry-run: the plan and the exact commands. */
static void print_plan(const runner_t *r)
{
	printf("# %s: %zu jobs (label %s)\n", r->config_path, r->njobs, r->label);
	printf("# probe, host facts and launcher = none jobs: %s\n",
	       r->site >= 0 ? "on the first job node, through the first MPI job's launcher "
			      "({np} {ppn} {nodes} = 1)" : "here (no job has an MPI launcher)");
	if (!r->ninst)
		printf("# probe: %s > RUNDIR/probe.json (at most %g s)\n", r->probe_cmd,
		       r->probe_limit);
	for (size_t k = 0; k < r->ninst; k++)
		printf("# libfabric %zu: %s (%s%s%s%s%s); probe: LD_LIBRARY_PATH=%s %s > RUNDIR/%s\n",
		       k + 1, r->inst[k].given, r->inst[k].library,
		       r->inst[k].version[0] ? ", version " : "", r->inst[k].version,
		       r->inst[k].efa_installer[0] ? ", EFA installer " : "",
		       r->inst[k].efa_installer, r->inst[k].ld_path, r->probe_cmd,
		       r->inst[k].probe_file);
	for (size_t i = 0; i < r->njobs; i++)
		printf("# [%zu/%zu] %s\n%s\n", i + 1, r->njobs, r->jobs[i].name, r->cmdlines[i]);
}

/* INCOMPLETE stays until every job has been attempted; it says how to resume. */
static int mark_incomplete(const runner_t *r)
{
	char path[PATH_MAX + 16];
	snprintf(path, sizeof(path), "%s/INCOMPLETE", r->dir);
	FILE *inc = fopen(path, "w");
	if (!inc) {
		efab_log_error("cannot write to results directory '%s': %s", r->dir, strerror(errno));
		return EFAB_EUSAGE;
	}
	fprintf(inc, "sweep in progress or interrupted; resume with: efab_sweep %s --resume %s\n",
		r->config_path, r->dir);
	fclose(inc);
	return EFAB_OK;
}

/* The results directory (an existing one under --resume, its state read
 * back), its logs/ and jobs/, INCOMPLETE and the config as run. */
static int prepare_run_dir(runner_t *r, const char *text, size_t len)
{
	char sub[PATH_MAX + 16];
	if (r->resume[0]) {
		struct stat st;
		if (stat(r->dir, &st) || !S_ISDIR(st.st_mode)) {
			efab_log_error("--resume: '%s' is not a results directory", r->dir);
			return EFAB_EUSAGE;
		}
		read_resume(r);
	}
	snprintf(sub, sizeof(sub), "%s/logs", r->dir);
	if (mkdirs(sub)) {
		efab_log_error("cannot create results directory '%s': %s", r->dir, strerror(errno));
		return EFAB_EUSAGE;
	}
	snprintf(sub, sizeof(sub), "%s/jobs", r->dir);
	mkdirs(sub);
	if (mark_incomplete(r))
		return EFAB_EUSAGE;
	snprintf(sub, sizeof(sub), "%s/config.conf", r->dir);
	FILE *cf = fopen(sub, "w");
	if (cf) {
		fwrite(text, 1, len, cf);
		fclose(cf);
	}
	return EFAB_OK;
}

/* SIGINT and SIGTERM end the sweep between jobs (run_job ends the running one). */
static void catch_signals(void)
{
	efab_catch_stop_signals(on_signal);
}

/* The jobs still pending, in order, with progress and an ETA on stderr. */
static void run_pending_jobs(runner_t *r)
{
	int tty = isatty(2);
	efab_stopwatch_t sw = efab_stopwatch_start();
	size_t ran = 0, todo = 0;
	for (size_t i = 0; i < r->njobs; i++)
		todo += !strcmp(r->status[i], "pending");
	for (size_t i = 0; i < r->njobs && !got_signal; i++) {
		if (strcmp(r->status[i], "pending"))
			continue; /* complete in the run being resumed */
		double el = efab_stopwatch_elapsed_s(sw);
		progress(i + 1, r->njobs, r->jobs[i].name, el, ran ? el / (double)ran * (double)(todo - ran) : -1,
			 tty);
		run_job(r, i, job_argvs[i]);
		ran++;
		write_jobs_tsv(r);
	}
	if (tty)
		fprintf(stderr, "\n");
}

/* The final meta.json and summary; a complete run loses INCOMPLETE and jobs/. */
static int finish_sweep(runner_t *r)
{
	char sub[PATH_MAX + 16];
	size_t nok = 0, nskip = 0, nfail = 0, nint = 0;
	for (size_t i = 0; i < r->njobs; i++) {
		nok += !strcmp(r->status[i], "ok");
		nskip += !strcmp(r->status[i], "skip");
		nfail += !strcmp(r->status[i], "fail") || !strcmp(r->status[i], "timeout");
		nint += !strcmp(r->status[i], "interrupted") || !strcmp(r->status[i], "pending");
	}
	int complete = nint == 0;
	write_meta(r, complete);
	if (complete) {
		snprintf(sub, sizeof(sub), "%s/INCOMPLETE", r->dir);
		unlink(sub);
		snprintf(sub, sizeof(sub), "%s/jobs", r->dir);
		rmdir(sub);
	}
	fprintf(stderr, "efab_sweep: %zu ok, %zu skipped, %zu failed%s; results in %s\n", nok, nskip,
		nfail, complete ? "" : ", interrupted (resume with --resume)", r->dir);
	for (size_t i = 0; i < r->njobs; i++)
		if (!strcmp(r->status[i], "fail") || !strcmp(r->status[i], "timeout"))
			fprintf(stderr, "efab_sweep: job %zu %s: %s (exit %d), log in %s/logs/\n", i + 1,
				r->jobs[i].name, r->status[i], r->rcs[i], r->dir);
	return (nfail || !complete) ? EFAB_ERR : EFAB_OK;
}

static int run_sweep(runner_t *r, const char *text, size_t len)
{
	int rc = prepare_run_dir(r, text, len);
	if (rc)
		return rc;
	write_meta(r, 0);
	write_jobs_tsv(r);
	catch_signals();
	record_probe(r);
	write_meta(r, 0);
	if (r->refusal[0]) { /* no job of that install could start */
		efab_log_error("%s", r->refusal);
		return EFAB_EUSAGE;
	}
	run_pending_jobs(r);
	return finish_sweep(r);
}

int efab_sweep_main(int argc, char **argv)
{
	static runner_t R;
	runner_t *r = &R;
	efab_log_set_prefix("efab_sweep");
	int rc = parse_args(r, argc, argv);
	if (rc != SWEEP_GO_ON)
		return rc;
	char *text = NULL;
	size_t len = 0;
	efab_config_t cfg;
	memset(&cfg, 0, sizeof(cfg)); /* efab_config_parse leaves it untouched on failure */
	rc = load_config(r, &text, &len, &cfg);
	if (!rc)
		rc = plan_sweep(r);
	if (!rc && r->dry_run)
		print_plan(r);
	else if (!rc)
		rc = run_sweep(r, text, len);
	for (size_t i = 0; i < r->njobs && i < EFAB_SWEEP_MAX_JOBS; i++)
		for (char **a = job_argvs[i]; *a; a++)
			free(*a);
	runner_free(r);
	free(text);
	efab_config_free(&cfg);
	return rc;
}
