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
 * resumed sweep never duplicates any.
 *
 * This file: the options, the config and the plan, running the jobs, the
 * end of the sweep; sweep_int.h names the other parts. */
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
#include <time.h>
#include <unistd.h>

#include "efab.h"
#include "efab_clock.h"
#include "efab_config.h"
#include "efab_rt.h"
#include "rows.h"
#include "sweep_int.h"

static void on_signal(int s)
{
	got_signal = s;
}

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
	/* as jobs.tsv shows a job's: the site job's variables first */
	for (int e = 0; r->site >= 0 && e < r->jobs[r->site].nenv; e++)
		if (k < sizeof(r->probe_cmd))
			k += (size_t)snprintf(r->probe_cmd + k, sizeof(r->probe_cmd) - k, "%s ",
					      r->jobs[r->site].env[e]);
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
