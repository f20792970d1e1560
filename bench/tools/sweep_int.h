/* efab_sweep's own interface (private to bench/tools/sweep*.c): the runner
 * (a sweep's jobs, their state and its results directory) and the parts
 * that share it. sweep.c (options, the plan, running the jobs) calls the
 * other two; sweep_record.c calls sweep_cmd.c:
 *   sweep_cmd.c     libfabric installs, each job's command and launcher,
 *                   the file helpers, waiting for a child
 *   sweep_record.c  what the run directory records: meta.json, jobs.tsv,
 *                   resume, the job's rows into <bench>.csv, the probe */
#ifndef SWEEP_INT_H
#define SWEEP_INT_H

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <sys/types.h>

#include "efab_config.h"

#define EFAB_JOB_WORDS (EFAB_JOB_MAXARGS * 2 + 8)

/* One libfabric install of a 'libfabric = A, B' sweep: where its library
 * is, what it is, and its capability probe (probe-lf<N>.json). */
#define EFAB_MAX_INSTALLS 16
typedef struct install {
	char given[EFAB_CFG_VAL]; /* as in the config */
	int line;
	char libdir[PATH_MAX];  /* holds libfabric.so.1 */
	char library[PATH_MAX]; /* its real path */
	char version[32];       /* pkgconfig/libfabric.pc Version, "" if none */
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

/* How a child run by wait_child ended. */
typedef struct child_end {
	int rc;        /* exit status, or 128 + the signal that ended it */
	int killed;    /* SIGTERM sent: limit reached or sweep interrupted */
	int timed_out; /* killed for running over its limit */
	double secs;   /* from wait_child's call to the child's end */
} child_end_t;

/* The SIGINT or SIGTERM the sweep got (0 none): it ends the running job
 * and the sweep between jobs. */
extern volatile sig_atomic_t got_signal;

/* sweep_cmd.c */
int read_file(const char *path, char **out, size_t *len);
void json_field(FILE *f, const char *key, const char *val);
int mkdirs(const char *path);
FILE *open_atomic(const char *path, char *tmp, size_t len);
int close_atomic(FILE *f, const char *tmp, const char *path);
install_t *install_of(runner_t *r, const efab_job_t *j);
int resolve_installs(runner_t *r, char *err, size_t errlen);
int build_argv(runner_t *r, size_t i, char **argv, int max, char *err, size_t errlen);
char *cmdline(efab_job_t *j, const install_t *in, char **argv);
child_end_t wait_child(pid_t pid, double limit_s);

/* The words of one job's command as they are built; push() says in err why
 * one could not be added. */
typedef struct words {
	char **argv;
	int argc, max;
	const efab_job_t *j;
	char *err;
	size_t errlen;
} words_t;
int push(words_t *w, const char *word);
int push_site_launcher(const runner_t *r, const efab_job_t *j, const install_t *in, words_t *w);

/* sweep_record.c */
void write_meta(runner_t *r, int complete);
void write_jobs_tsv(runner_t *r);
void read_resume(runner_t *r);
int merge_csv(runner_t *r, size_t i);
int probe_argv(const runner_t *r, const install_t *in, char **argv, int max);
void record_probe(runner_t *r);

#endif
