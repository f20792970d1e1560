/* efab_sweep's records: what the run directory holds besides the logs --
 * meta.json (hosts, environment, each job's command, nodes and status, the
 * probes), jobs.tsv and the resume read from it, a job's rows appended whole
 * to <bench>.csv, and the capability probe of each libfabric install
 * (probe.json, probe-lf<N>.json) taken before the first job. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "efab.h"
#include "hostfacts.h"
#include "efab_config.h"
#include "efab_json.h"
#include "sweep_int.h"

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
		json_field(f, "facts_from",
			   "the first job node (efab_probe --json through the launcher)");
	} else {
		efab_host_facts_json(f, ",\n  ", ",\n  ");
		json_field(f, "facts_from",
			   r->site >= 0 ? "the sweep's own host (the probe on the first job "
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
			     ? (r->ninst ? r->inst[0].probe_file : "probe.json")
			     : "");
	efab_json_kv(f, ", ", "command", r->probe_cmd);
	fprintf(f, ", \"seconds\": %.2f, \"timeout_s\": %g", r->probe_secs, r->probe_limit);
	efab_json_kv(f, ", ", "message", r->probe_msg);
	fprintf(f, "}");
	fprintf(f, ",\n  \"libfabric_installs\": [");
	/* (A run of efab_json_kv like provenance.c's write_nodes_json: the same
	 * shape, not the same logic -- each writes its own record's members
	 * under the names meta.json's readers know; nothing to share but the
	 * call.) */
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
				     ? in->probe_file
				     : "");
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
		if (strncmp(*e, "FI_", 3) && strncmp(*e, "NCCL_", 5) &&
		    strncmp(*e, "NVSHMEM_", 8) && strncmp(*e, "OMPI_MCA_", 9) &&
		    strncmp(*e, "CUDA_VISIBLE", 12))
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

void write_meta(runner_t *r, int complete)
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

void write_jobs_tsv(runner_t *r)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	snprintf(path, sizeof(path), "%s/jobs.tsv", r->dir);
	FILE *f = open_atomic(path, tmp, sizeof(tmp));
	if (!f)
		return;
	fprintf(f, "index\tjob\tstatus\trc\tseconds\tcommand\n");
	for (size_t i = 0; i < r->njobs; i++)
		fprintf(f, "%zu\t%s\t%s\t%d\t%.2f\t%s\n", i + 1, r->jobs[i].name, r->status[i],
			r->rcs[i], r->secs[i], r->cmdlines[i] ? r->cmdlines[i] : "");
	close_atomic(f, tmp, path);
}

void read_resume(runner_t *r)
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
int merge_csv(runner_t *r, size_t i)
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
			efab_log_error("job %zu: its CSV columns differ from %s; rows kept in %s",
				       i + 1, bpath, jpath);
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

static void exec_probe(const runner_t *r, char *const *argv, const char *tmp, const char *logp,
		       const char *ld_path)
{
	setpgid(0, 0);
	/* the site job's variables (env =), as its jobs get them (run_job) */
	for (int e = 0; r->site >= 0 && e < r->jobs[r->site].nenv; e++)
		putenv(r->jobs[r->site].env[e]);
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
		snprintf(
			message, mlen,
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
int probe_argv(const runner_t *r, const install_t *in, char **argv, int max)
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
		snprintf(
			r->refusal, sizeof(r->refusal),
			"libfabric '%s' does not load on the first job node: no libfabric.so.1 under it "
			"there (the probe loaded %s)",
			in->given, loaded[0] ? loaded : "an unknown library");
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
		exec_probe(r, argv, tmp, logp, ld_path);
	for (char **a = argv; *a; a++)
		free(*a);
	setpgid(pid, pid);
	child_end_t end = wait_child(pid, r->probe_limit);
	int timed_out = end.timed_out, killed = end.killed, rc = end.rc;
	*secs = end.secs;
	char last[400], ld[1024];
	if (in && !end.timed_out && !end.killed && end.rc && loader_refusal(logp, ld, sizeof(ld)))
		snprintf(r->refusal, sizeof(r->refusal), "libfabric '%s' does not load %s: %s",
			 in->given, r->site >= 0 ? "on the first job node" : "here", ld);
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
		 ok          ? "ok"
		 : timed_out ? "timeout"
		 : killed    ? "interrupted"
			     : "fail");
	probe_message(r, &end, ok, last, message, mlen);
	if (!ok && (timed_out || !killed) &&
	    !r->refusal[0]) /* a refusal is said once, at the end */
		efab_log_error("no %s (%s); the sweep goes on", file, message);
}

/* probe.json of the sweep's own libfabric, or with key 'libfabric' one
 * probe-lf<N>.json per install (its LD_LIBRARY_PATH), so that the report's
 * capability diff compares the installs. */
void record_probe(runner_t *r)
{
	if (!r->ninst) {
		record_probe_one(r, NULL, "probe.json", r->probe_status, sizeof(r->probe_status),
				 r->probe_msg, sizeof(r->probe_msg), &r->probe_secs);
		return;
	}
	for (size_t k = 0; k < r->ninst && !got_signal; k++) {
		install_t *in = &r->inst[k];
		record_probe_one(r, in, in->probe_file, in->probe_status, sizeof(in->probe_status),
				 in->probe_msg, sizeof(in->probe_msg), &in->probe_secs);
	}
	/* meta.json's "probe" (one object, older readers) describes the first */
	snprintf(r->probe_status, sizeof(r->probe_status), "%s", r->inst[0].probe_status);
	snprintf(r->probe_msg, sizeof(r->probe_msg), "%s", r->inst[0].probe_msg);
	r->probe_secs = r->inst[0].probe_secs;
}
