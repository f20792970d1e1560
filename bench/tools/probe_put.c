/* efab_probe --live's put matrix: the question of efab_shmem_seed without
 * NVSHMEM. Per fabric (the probe's column: provider, fabric, domain named in
 * the hints, as efabench's -p/-f/--domain do), host and cuda memory, with and
 * without FI_MR_LOCAL in the hints (NVSHMEM >= 3.5, aws-ofi-nccl and NIXL
 * offer it; efabench's --src-unregistered does not), a PROBE_PUT_BYTES
 * fi_write from rank 0's registered or unregistered source (desc = NULL)
 * into rank 1's registered buffer of the same kind, every byte checked at
 * rank 1.
 *
 * Each case runs in a pair of fresh processes, one per rank: this program
 * again (efab_probe --live-child), started with posix_spawn in a process
 * group of its own, its output into a memory file, never the parent's
 * pipes. Their collectives (address and key exchange, agreements, the
 * progress-driving barriers) go through their parents (lib/rt_relay.c), which
 * carry them over the --live runtime (MPI). A child that crashes names its
 * signal and the faulting library (lib/child.c); one silent for too long is
 * killed with its group; either way the case has a verdict and the probe
 * goes on. The code a child runs is efabench's own: efab_fabric_select,
 * efab_fabric_open, efab_mr_register, efab_mr_exchange, efab_post_write. */
#define _GNU_SOURCE /* memfd_create */
#include <fnmatch.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "efab.h"
#include "efab_child.h"
#include "efab_clock.h"
#include "efab_cuda.h"
#include "efab_endpoint.h"
#include "efab_mem.h"
#include "efab_ops.h"
#include "efab_opts.h"
#include "efab_registration.h"
#include "efab_relay.h"
#include "efab_select.h"
#include "probe_put.h"

#define RMA_CAPS (FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)
#define CHAN_FD 3 /* the child's end of the relay socket */

const probe_put_row_t probe_put_rows[] = {
	{"live_put_host_mrlocal_reg", EFAB_MEM_HOST, 1, 1},
	{"live_put_host_mrlocal_unreg", EFAB_MEM_HOST, 1, 0},
	{"live_put_host_nomrlocal_reg", EFAB_MEM_HOST, 0, 1},
	{"live_put_host_nomrlocal_unreg", EFAB_MEM_HOST, 0, 0},
	{"live_put_cuda_mrlocal_reg", EFAB_MEM_CUDA, 1, 1},
	{"live_put_cuda_mrlocal_unreg", EFAB_MEM_CUDA, 1, 0},
	{"live_put_cuda_nomrlocal_reg", EFAB_MEM_CUDA, 0, 1},
	{"live_put_cuda_nomrlocal_unreg", EFAB_MEM_CUDA, 0, 0},
};
const size_t probe_put_nrows = EFAB_ARRAY_SIZE(probe_put_rows);

int probe_put_is_row(const char *name)
{
	return !strncmp(name, "live_put_host_", 14) || !strncmp(name, "live_put_cuda_", 14) ||
	       !strcmp(name, PROBE_PUT_FIRST_MRLOCAL) || !strcmp(name, PROBE_PUT_FIRST_NOMRLOCAL);
}

/* What a child reports (RESULT frames): its own side of the case. It sends
 * one as soon as it knows the fabric (a crash later still names it), and its
 * last, final one before its teardown. */
typedef struct put_result {
	int final;	 /* its verdict: nothing more comes but its teardown */
	int ok;		 /* this rank's side went well */
	char fabric[96]; /* what fi_getinfo returned, "" before or without an answer */
	char note[400];	 /* the provider's warning during a put that went well */
	char text[1400]; /* "ok (...)", "not offered: ...", "skipped: ...", "error: ..." */
} put_result_t;

/* ---- the child ---- */

typedef struct put_child {
	efab_rt_t *rt;
	const probe_put_row_t *row;
	const char *provider, *fabric, *domain;
	char label[256]; /* provider/fabric/row: what EFAB_PROBE_LIVE_HOOK matches */
	double timeout_s;
	int gpu;
	struct fi_info *info; /* selected, until efab_fabric_open owns it */
	efab_fabric_t fab;
	efab_mem_t src, dst;
	efab_mr_t src_mr, dst_mr;
	efab_rkey_t rk[2];
	int have_keys;
	int putting; /* in the put's own steps (post, completion) */
	char err[1000]; /* efab_log_capture: the library's words for a failure */
	put_result_t res;
} put_child_t;

#define CHILD_TAG "efab_probe live child: "

/* The stage goes to the parent, and as a line into the child's output: the
 * parent quotes only warnings printed after the last one (the efa provider
 * warns of a missing host id file at every start, no crash's cause). */
static void child_stage(const char *what)
{
	fprintf(stderr, CHILD_TAG "stage %s\n", what);
	fflush(stderr);
	efab_relay_send(CHAN_FD, EFAB_RELAY_STAGE, what, strlen(what));
	efab_provider_log_capture(1, "FI_MR_LOCAL", NULL, 0);
}

/* The first failure of this rank is its verdict. */
static void child_fail(put_child_t *c, const char *fmt, ...) EFAB_PRINTF(2, 3);
static void child_fail(put_child_t *c, const char *fmt, ...)
{
	if (!c->res.ok)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->res.text, sizeof(c->res.text), fmt, ap);
	va_end(ap);
	c->res.ok = 0;
}

/* Heap and stack addresses in the provider's words (0x + 9 or more hex
 * digits) as "0x...": they change from run to run, and efab_probe --diff of
 * two runs of one installation must find nothing. Library offsets and small
 * fault addresses stay. */
static void mask_addresses(char *s)
{
	for (char *p = s; (p = strstr(p, "0x"));) {
		size_t k = strspn(p + 2, "0123456789abcdefABCDEF");
		if (k >= 9) {
			memcpy(p + 2, "...", 3);
			memmove(p + 5, p + 2 + k, strlen(p + 2 + k) + 1);
		}
		p += 2;
	}
}

/* The end of a step: its failure in the library's words and the provider's
 * warning; EFAB_SKIP, where refused names it ("skipped", "not offered"), in
 * the library's words alone; the put's warning when it went well all the
 * same (efa under FI_MR_LOCAL warns of a missing descriptor and registers the
 * buffer itself). Returns rc. */
static int child_step_end(put_child_t *c, int rc, const char *refused)
{
	char said[sizeof(c->res.note)];
	efab_provider_log_capture(0, NULL, said, sizeof(said));
	mask_addresses(said);
	if (rc == EFAB_SKIP && refused)
		child_fail(c, "%s: %s", refused, c->err);
	else if (rc)
		child_fail(c, "error: %s%s%s", c->err[0] ? c->err : "failed without a message",
			   said[0] ? " | provider: " : "", said);
	else if (c->putting && !c->res.note[0])
		snprintf(c->res.note, sizeof(c->res.note), "%s", said);
	return rc;
}

/* Collective: whether every rank is still fine; a rank stopped by another's
 * failure says so. */
static int child_agree(put_child_t *c)
{
	double ok = c->res.ok, all = 0;
	if (c->rt->allreduce(c->rt, &ok, &all, 1, EFAB_RT_MIN)) {
		child_fail(c, "error: the relay to the other rank failed");
		return 0;
	}
	if (!all)
		child_fail(c, "stopped: the other rank failed first");
	return all != 0;
}

static void child_fabric_name(put_child_t *c, const struct fi_info *i)
{
	snprintf(c->res.fabric, sizeof(c->res.fabric), "%s%s", i->fabric_attr->name,
		 i->domain_attr->mr_mode & FI_MR_LOCAL ? " (FI_MR_LOCAL)" : "");
}

/* EFAB_PROBE_LIVE_HOOK=ACTION:PATTERN[,ACTION:PATTERN...] (tests): rank 0 of
 * a case whose label (provider/fabric/row) matches the fnmatch PATTERN does
 * ACTION where it would post the put: segv (efab_fault_in_libc), abort,
 * hang, exit (status 3, no verdict), or nocomp (returns 1: the put counts as
 * posted but is not, a completion that never comes). */
static int child_hook(const put_child_t *c)
{
	const char *h = getenv("EFAB_PROBE_LIVE_HOOK");
	char one[256];
	for (; h && *h; h += strcspn(h, ",") + (h[strcspn(h, ",")] == ',')) {
		snprintf(one, sizeof(one), "%.*s", (int)strcspn(h, ","), h);
		char *pat = strchr(one, ':');
		if (!pat || fnmatch(pat + 1, c->label, 0))
			continue;
		*pat = '\0';
		if (!strcmp(one, "segv")) {
			efab_fault_in_libc();
		} else if (!strcmp(one, "abort")) {
			abort();
		} else if (!strcmp(one, "hang")) {
			for (;;)
				pause();
		} else if (!strcmp(one, "exit")) {
			_exit(3);
		} else if (!strcmp(one, "nocomp")) {
			return 1;
		}
	}
	return 0;
}

static uint8_t pattern(size_t i)
{
	return (uint8_t)(i * 7 + 3);
}

static int child_memory(put_child_t *c)
{
	uint8_t buf[PROBE_PUT_BYTES];
	int kind = c->row->mem, rc;
	if ((rc = efab_mem_alloc(kind, c->gpu, PROBE_PUT_BYTES, &c->src)) ||
	    (rc = efab_mem_alloc(kind, c->gpu, PROBE_PUT_BYTES, &c->dst)))
		return rc;
	memset(buf, 0, sizeof(buf));
	if (efab_mem_write(&c->dst, 0, buf, sizeof(buf)))
		return EFAB_ERR;
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = pattern(i);
	return efab_mem_write(&c->src, 0, buf, sizeof(buf)) ? EFAB_ERR : EFAB_OK;
}

/* Selection, memory, endpoint: every rank alike. */
static int child_setup(put_child_t *c)
{
	int rc;
	if (efab_mem_is_gpu(c->row->mem)) {
		child_stage("GPU");
		child_step_end(c, efab_gpu_pick(-1, c->rt->local_rank, &c->gpu), "skipped");
		if (!child_agree(c))
			return -1;
	}
	child_stage("fi_getinfo");
	efab_fabric_req_t req = {.provider = c->provider,
				 .fabric = c->fabric,
				 .domain = c->domain,
				 .caps = RMA_CAPS,
				 .hmem = efab_mem_is_gpu(c->row->mem),
				 .mr_mode_off = c->row->mr_local ? 0 : FI_MR_LOCAL};
	rc = efab_fabric_select(&req, &c->info);
	/* EUSAGE: no such fabric for these hints at all (another NIC's view) */
	if (!child_step_end(c, rc == EFAB_EUSAGE ? EFAB_SKIP : rc, "not offered"))
		child_fabric_name(c, c->info);
	efab_relay_send(CHAN_FD, EFAB_RELAY_RESULT, &c->res, sizeof(c->res));
	if (!child_agree(c))
		return -1;
	child_stage("memory");
	child_step_end(c, child_memory(c), "skipped");
	if (!child_agree(c))
		return -1;
	child_stage("endpoint (fi_fabric, fi_domain, fi_endpoint, address exchange)");
	rc = efab_fabric_open(c->info, c->rt, c->timeout_s, &c->fab);
	if (!rc)
		c->info = NULL; /* the endpoint's now */
	if (child_step_end(c, rc, NULL) || !child_agree(c))
		return -1;
	child_stage("fi_mr_regattr");
	uint64_t access = FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
	int iface = efab_mem_iface(c->row->mem);
	rc = efab_mr_register(&c->fab, c->dst.ptr, PROBE_PUT_BYTES, iface, c->gpu, access, &c->dst_mr);
	if (!rc && c->row->registered)
		rc = efab_mr_register(&c->fab, c->src.ptr, PROBE_PUT_BYTES, iface, c->gpu, access,
				      &c->src_mr);
	if (child_step_end(c, rc, NULL) || !child_agree(c))
		return -1;
	child_stage("key exchange");
	if (child_step_end(c, efab_mr_exchange(&c->fab, &c->dst_mr, c->rk), NULL))
		return -1;
	c->have_keys = 1;
	return 0;
}

/* Rank 1: drive progress until every byte is there, or the timeout. */
static int child_check(put_child_t *c)
{
	uint8_t got[PROBE_PUT_BYTES];
	efab_deadline_t end = efab_deadline_in(c->timeout_s);
	size_t bad;
	do {
		if (efab_progress(&c->fab) < 0)
			return EFAB_ERR;
		if (efab_mem_read(&c->dst, 0, got, sizeof(got)))
			return EFAB_ERR;
		bad = 0;
		for (size_t i = 0; i < sizeof(got); i++)
			bad += got[i] != pattern(i);
	} while (bad && !efab_deadline_passed(end));
	if (bad)
		child_fail(c, "completed at rank 0, but %zu of %d bytes differ at rank 1 after %.0f s", bad,
			   PROBE_PUT_BYTES, c->timeout_s);
	return bad ? EFAB_ERR : EFAB_OK;
}

/* The barrier after the put, at both ranks whatever happened to it:
 * efab_barrier_progress waits for this rank's own operations first and
 * skips its barrier when they do not complete; the other rank, in the
 * barrier, then met this rank's next collective (child_agree), the parents
 * stopped both children, and the case's verdict was "rank 1: stopped: the
 * other rank's process ended first" instead of rank 0's error (issue 45). A
 * rank whose put failed or did not complete joins with a plain barrier. */
static void child_barrier(put_child_t *c, const efab_waitfor_t *w)
{
	int rc = c->res.ok ? efab_wait_tx(&c->fab, c->fab.tx_posted, w) : EFAB_ERR;
	if (!rc) {
		child_step_end(c, efab_barrier_progress(&c->fab, w), NULL);
		return;
	}
	if (c->res.ok)
		child_step_end(c, rc, NULL);
	if (c->rt->barrier(c->rt))
		child_fail(c, "error: the relay to the other rank failed");
}

static void child_run(put_child_t *c)
{
	efab_waitfor_t w = {"put completion", "fi_write", PROBE_PUT_BYTES, 1, 0};
	if (child_setup(c))
		return;
	if (c->rt->rank == 0) {
		child_stage("fi_write");
		c->putting = 1;
		int rc = child_hook(c) ? (c->fab.tx_posted++, EFAB_OK)
				       : efab_post_write(&c->fab, 1, c->src.ptr, PROBE_PUT_BYTES,
							 c->row->registered ? c->src_mr.desc : NULL,
							 c->rk[1].base, c->rk[1].key, 0, 0, &w);
		if (!child_step_end(c, rc, NULL)) {
			child_stage("fi_write completion");
			child_step_end(c, efab_wait_tx(&c->fab, c->fab.tx_posted, &w), NULL);
		}
		c->putting = 0;
	}
	child_stage("barrier after the put");
	w.what = "the other rank";
	child_barrier(c, &w);
	if (!child_agree(c))
		return;
	if (c->rt->rank == 1) {
		child_stage("data check");
		child_step_end(c, child_check(c), NULL);
	}
	child_stage("barrier after the data check");
	child_step_end(c, efab_barrier_progress(&c->fab, &w), NULL);
	if (c->res.ok)
		snprintf(c->res.text, sizeof(c->res.text), "%s",
			 c->rt->rank == 0 ? "ok (put completed)" : "ok (data verified)");
}

static void child_teardown(put_child_t *c)
{
	if (c->have_keys)
		efab_rkeys_release(&c->fab, c->rk, 2);
	efab_mr_dereg(&c->src_mr);
	efab_mr_dereg(&c->dst_mr);
	if (c->fab.ep)
		efab_fabric_close(&c->fab);
	fi_freeinfo(c->info);
	efab_mem_free(&c->src);
	efab_mem_free(&c->dst);
}

int probe_put_child_main(int argc, char **argv)
{
	/* efab_probe --live-child RANK LOCAL_RANK LOCAL_SIZE PROVIDER FABRIC DOMAIN ROW TIMEOUT */
	static char prefix[] = CHILD_TAG;
	static put_child_t c;
	char *end = NULL, *end_row = NULL;
	long rank = argc == 10 ? strtol(argv[2], &end, 10) : -1;
	long row = argc == 10 ? strtol(argv[8], &end_row, 10) : -1;
	efab_log_set_prefix("efab_probe");
	if (argc != 10 || *end || *end_row || rank < 0 || rank > 1 || row < 0 ||
	    (size_t)row >= probe_put_nrows) {
		efab_log_error("--live-child: a case of efab_probe --live's put matrix, started by "
			       "--live itself with its arguments, not by hand");
		return EFAB_EUSAGE;
	}
	efab_fault_catch(2, prefix);
	c.rt = efab_rt_relay(CHAN_FD, (int)rank, 2, atoi(argv[3]), atoi(argv[4]));
	c.provider = argv[5];
	c.fabric = argv[6];
	c.domain = argv[7];
	c.row = &probe_put_rows[row];
	c.timeout_s = strtod(argv[9], NULL);
	c.res.ok = 1;
	snprintf(c.label, sizeof(c.label), "%s/%s/%s", c.provider, c.fabric, c.row->name);
	char lp[64];
	snprintf(lp, sizeof(lp), "efab_probe live child rank %ld", rank);
	efab_log_set_prefix(lp);
	efab_log_capture(c.err, sizeof(c.err));
	child_run(&c);
	efab_log_capture(NULL, 0);
	c.res.final = 1;
	efab_relay_send(CHAN_FD, EFAB_RELAY_RESULT, &c.res, sizeof(c.res));
	child_stage("teardown");
	child_teardown(&c);
	return EFAB_OK;
}

/* ---- the parent ---- */

/* One relay round: what each parent brings to the collective. */
enum { END_GATHER = 1, END_DONE };
typedef struct put_round {
	int state;
	int len;
	char payload[EFAB_RELAY_MAX];
} put_round_t;

/* How a child ended, as its parent saw it: shared by both parents. */
typedef struct put_end {
	put_result_t res;
	int reported; /* its final result arrived */
	int status, hung, stopped;
	double hung_s;
	char stage[96];
	char fault[400]; /* its fault line, the prefix cut off */
	char hint[400];	 /* the last warning or assertion in its output */
} put_end_t;

typedef struct put_parent {
	efab_rt_t *rt;
	pid_t pid;
	int chan, out; /* relay socket, the child's output (a memory file) */
	int running;
	double quiet_s; /* silence that makes a child hung */
	efab_deadline_t quiet;
	put_end_t me;
} put_parent_t;

static void parent_kill(put_parent_t *p, int hung, int stopped)
{
	efab_child_kill(p->pid, &p->me.status);
	p->me.hung = hung;
	p->me.hung_s = p->quiet_s;
	p->me.stopped = stopped;
	p->running = 0;
}

/* The child closed its end: it is ending. */
static void parent_reap(put_parent_t *p)
{
	if (!efab_child_reap(p->pid, 2, &p->me.status))
		parent_kill(p, 0, 0);
	p->running = 0;
}

/* The child's next contribution into r (END_GATHER), or its end (END_DONE):
 * its verdict and exit, a crash, or silence for quiet_s (hung: killed). */
static void parent_next(put_parent_t *p, put_round_t *r)
{
	r->state = END_DONE;
	r->len = 0;
	while (p->running) {
		int type;
		size_t len = 0;
		int rc = efab_relay_recv(p->chan, p->quiet, &type, r->payload, sizeof(r->payload), &len);
		if (rc == -2) {
			parent_kill(p, 1, 0);
		} else if (rc) {
			parent_reap(p);
		} else if (type == EFAB_RELAY_STAGE) {
			snprintf(p->me.stage, sizeof(p->me.stage), "%.*s", (int)len, r->payload);
			p->quiet = efab_deadline_in(p->quiet_s);
		} else if (type == EFAB_RELAY_RESULT && len == sizeof(put_result_t)) {
			memcpy(&p->me.res, r->payload, sizeof(put_result_t));
			p->me.reported = p->me.res.final;
			p->quiet = efab_deadline_in(p->quiet_s);
		} else if (type == EFAB_RELAY_GATHER && !p->me.reported) {
			r->state = END_GATHER;
			r->len = (int)len;
			return;
		} else {
			parent_kill(p, 0, 0); /* a frame out of turn: not this program */
		}
	}
}

/* Carry the children's collectives until both have ended: every round both
 * parents bring the next event of their child; two contributions are
 * answered, anything else ends the case (a child still waiting in a
 * collective is stopped: its peer will not come). */
static void parent_relay(put_parent_t *p)
{
	static put_round_t mine, both[2];
	char answer[EFAB_RELAY_MAX];
	for (;;) {
		parent_next(p, &mine);
		if (p->rt->allgather(p->rt, &mine, both, sizeof(mine))) {
			if (p->running)
				parent_kill(p, 0, 1);
			return;
		}
		if (both[0].state == END_GATHER && both[1].state == END_GATHER &&
		    both[0].len == both[1].len && 2 * (size_t)both[0].len <= sizeof(answer)) {
			memcpy(answer, both[0].payload, (size_t)both[0].len);
			memcpy(answer + both[0].len, both[1].payload, (size_t)both[1].len);
			if (efab_relay_send(p->chan, EFAB_RELAY_GATHER, answer, 2 * (size_t)both[0].len))
				parent_reap(p);
			p->quiet = efab_deadline_in(p->quiet_s);
			continue;
		}
		if (p->running)
			parent_kill(p, 0, 1);
		return;
	}
}

/* A libfabric log line after "libfabric:", without its pid and timestamp
 * (libfabric's own format "PID:TIME::prov:...", efabench's "PID:prov:..."). */
static const char *log_words(const char *s)
{
	for (int field = 0; field < 2 && s[strspn(s, "0123456789")] == ':'; field++)
		s += strspn(s, "0123456789") + 1;
	return s + (*s == ':');
}

/* Its fault line, and the last warning or assertion, from its output. */
static void parent_read_output(put_parent_t *p)
{
	static const char fault_tag[] = CHILD_TAG;
	struct stat st;
	char buf[32768];
	if (fstat(p->out, &st) || st.st_size <= 0)
		return;
	off_t from = st.st_size > (off_t)sizeof(buf) - 1 ? st.st_size - (off_t)sizeof(buf) + 1 : 0;
	ssize_t n = pread(p->out, buf, sizeof(buf) - 1, from);
	if (n <= 0)
		return;
	buf[n] = '\0';
	for (char *line = buf, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (!strncmp(line, fault_tag, sizeof(fault_tag) - 1) && strstr(line, "killed by"))
			snprintf(p->me.fault, sizeof(p->me.fault), "%s", line + sizeof(fault_tag) - 1);
		else if (!strncmp(line, fault_tag, sizeof(fault_tag) - 1))
			p->me.hint[0] = '\0'; /* a stage began: what came before is not its story */
		else if (!strncmp(line, "libfabric:", 10))
			snprintf(p->me.hint, sizeof(p->me.hint), "libfabric:%s", log_words(line + 10));
		else if (strstr(line, "Assertion") || strstr(line, "assert"))
			snprintf(p->me.hint, sizeof(p->me.hint), "%s", line);
	}
	mask_addresses(p->me.fault);
	mask_addresses(p->me.hint);
}

/* The child's environment: the provider's warnings on its stderr unless the
 * user chose a log level. */
static char **child_env(void)
{
	extern char **environ;
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = calloc(n + 2, sizeof(*env));
	if (!env)
		return NULL;
	memcpy(env, environ, n * sizeof(*env));
	if (!getenv("FI_LOG_LEVEL"))
		env[n] = "FI_LOG_LEVEL=warn";
	return env;
}

/* One side of one case: start this rank's child, relay, collect its end. */
static void parent_case(efab_rt_t *rt, const struct fi_info *col, size_t row, double timeout_s,
			put_end_t *out)
{
	put_parent_t p;
	memset(&p, 0, sizeof(p));
	p.rt = rt;
	p.chan = p.out = -1;
	p.me.status = -1;
	p.quiet_s = 2 * timeout_s + 5;
	char self[PATH_MAX], a_rank[16], a_lrank[16], a_lsize[16], a_row[16], a_to[32];
	ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int sv[2] = {-1, -1};
	char **env = child_env();
	snprintf(a_rank, sizeof(a_rank), "%d", rt->rank);
	snprintf(a_lrank, sizeof(a_lrank), "%d", rt->local_rank);
	snprintf(a_lsize, sizeof(a_lsize), "%d", rt->local_size);
	snprintf(a_row, sizeof(a_row), "%zu", row);
	snprintf(a_to, sizeof(a_to), "%.17g", timeout_s);
	char *argv[] = {self, "--live-child", a_rank, a_lrank, a_lsize,
			col->fabric_attr->prov_name, col->fabric_attr->name, col->domain_attr->name,
			a_row, a_to, NULL};
	if (sl > 0)
		self[sl] = '\0';
	p.out = memfd_create("efab_probe-live-child", MFD_CLOEXEC);
	if (sl <= 0 || !env || p.out < 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		snprintf(p.me.res.text, sizeof(p.me.res.text), "error: cannot start a child (%m)");
		p.me.reported = 1;
	} else if (efab_child_spawn(self, argv, env, p.out, sv[1], &p.pid)) {
		snprintf(p.me.res.text, sizeof(p.me.res.text), "error: cannot start %s", self);
		p.me.reported = 1;
	} else {
		p.running = 1;
	}
	free(env);
	if (sv[1] >= 0)
		close(sv[1]); /* the child's end: only the child holds it, its exit is our EOF */
	p.chan = sv[0];
	p.quiet = efab_deadline_in(p.quiet_s);
	parent_relay(&p);
	if (p.running)
		parent_kill(&p, 0, 0);
	if (p.out >= 0) {
		parent_read_output(&p);
		close(p.out);
	}
	if (p.chan >= 0)
		close(p.chan);
	*out = p.me;
}

static size_t cat(char *buf, size_t len, size_t n, const char *fmt, ...) EFAB_PRINTF(4, 5);
static size_t cat(char *buf, size_t len, size_t n, const char *fmt, ...)
{
	if (n >= len)
		return n;
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
	return k < 0 ? n : n + (size_t)k;
}

/* Whether e's end was abnormal, described in how. */
static int end_abnormal(const put_end_t *e, char *how, size_t len)
{
	efab_child_end_t ce = {e->status, e->reported, e->hung, e->hung_s, e->stopped,
			       e->stage,  e->fault,    e->hint};
	return efab_child_end_describe(&ce, how, len);
}

/* One side's story: its verdict, then how it ended when that was abnormal. */
static size_t side(const put_end_t *e, char *buf, size_t len, size_t n)
{
	char how[1000];
	int abnormal = end_abnormal(e, how, sizeof(how));
	if (e->reported)
		n = cat(buf, len, n, "%s", e->res.text);
	if (abnormal)
		n = cat(buf, len, n, "%s%s", e->reported ? ", then " : "", how);
	return n;
}

/* The case's verdict from both sides: rank 0's (the initiator's), unless it
 * went well or was stopped by rank 1's end; then rank 1's. */
static void case_verdict(const put_end_t *e, char *buf, size_t len)
{
	const put_end_t *r0 = &e[0], *r1 = &e[1];
	const char *fabric = r0->res.fabric[0] ? r0->res.fabric : r1->res.fabric;
	char how[1000];
	int r0_fine = r0->reported && r0->res.ok && !end_abnormal(r0, how, sizeof(how));
	int r1_fine = r1->reported && r1->res.ok && !end_abnormal(r1, how, sizeof(how));
	int r1_abnormal = end_abnormal(r1, how, sizeof(how)) && !r1->stopped;
	int r0_stopped = r0->stopped || (r0->reported && !strncmp(r0->res.text, "stopped:", 8));
	size_t n = 0;
	buf[0] = '\0';
	if (fabric[0])
		n = cat(buf, len, n, "%s: ", fabric);
	if (r0_fine && r1_fine) {
		cat(buf, len, n, "%s%s%s", r1->res.text, r0->res.note[0] ? " | provider: " : "",
		    r0->res.note);
	} else if (r0_fine || r0_stopped) {
		n = cat(buf, len, n, "rank 1: ");
		side(r1, buf, len, n);
	} else {
		n = side(r0, buf, len, n);
		if (r1_abnormal) {
			n = cat(buf, len, n, "; rank 1: ");
			side(r1, buf, len, n);
		}
	}
}

/* The fabric fi_getinfo lists first for col's provider and domain, with or
 * without FI_MR_LOCAL, the hints naming no fabric. */
static void first_fabric(const struct fi_info *col, int mr_local, char *buf, size_t len)
{
	char err[600];
	struct fi_info *info = NULL;
	efab_fabric_req_t req = {.provider = col->fabric_attr->prov_name,
				 .domain = col->domain_attr->name,
				 .caps = RMA_CAPS,
				 .mr_mode_off = mr_local ? 0 : FI_MR_LOCAL};
	efab_log_capture(err, sizeof(err));
	int rc = efab_fabric_select(&req, &info);
	efab_log_capture(NULL, 0);
	if (rc)
		snprintf(buf, len, "none: %s", err);
	else
		snprintf(buf, len, "%s%s", info->fabric_attr->name,
			 info->domain_attr->mr_mode & FI_MR_LOCAL ? " (FI_MR_LOCAL)" : "");
	fi_freeinfo(info);
}

void probe_put_matrix(efab_rt_t *rt, const struct fi_info *col, double timeout_s,
		      void (*add)(void *arg, const char *name, const char *value), void *arg)
{
	static put_end_t mine, both[2];
	char v[2 * sizeof(put_result_t)];
	first_fabric(col, 1, v, sizeof(v));
	add(arg, PROBE_PUT_FIRST_MRLOCAL, v);
	first_fabric(col, 0, v, sizeof(v));
	add(arg, PROBE_PUT_FIRST_NOMRLOCAL, v);
	for (size_t k = 0; k < probe_put_nrows; k++) {
		parent_case(rt, col, k, timeout_s, &mine);
		if (rt->allgather(rt, &mine, both, sizeof(mine)))
			snprintf(v, sizeof(v), "error: the ranks could not share the case's ends");
		else
			case_verdict(both, v, sizeof(v));
		add(arg, probe_put_rows[k].name, v);
	}
}
