/* A crash is an outcome: the dying process names its signal and the faulting
 * library; its parent runs it apart (own process group, own output), kills
 * the group when it hangs, and describes how it ended. */
#define _GNU_SOURCE /* dladdr, REG_RIP */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "efab.h"
#include "efab_child.h"
#include "efab_clock.h"

extern char **environ;

static const int fault_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};

const char *efab_signal_name(int sig)
{
	static const struct {
		int sig;
		const char *name;
	} names[] = {{SIGSEGV, "SIGSEGV"}, {SIGBUS, "SIGBUS"},   {SIGILL, "SIGILL"},   {SIGFPE, "SIGFPE"},
		     {SIGABRT, "SIGABRT"}, {SIGKILL, "SIGKILL"}, {SIGTERM, "SIGTERM"}, {SIGINT, "SIGINT"},
		     {SIGPIPE, "SIGPIPE"}, {SIGTRAP, "SIGTRAP"}, {SIGSYS, "SIGSYS"},   {SIGHUP, "SIGHUP"},
		     {SIGQUIT, "SIGQUIT"}, {SIGXCPU, "SIGXCPU"}};
	static __thread char other[24];
	for (size_t k = 0; k < EFAB_ARRAY_SIZE(names); k++)
		if (names[k].sig == sig)
			return names[k].name;
	snprintf(other, sizeof(other), "signal %d", sig);
	return other;
}

void efab_fault_where(const void *pc, char *out, size_t len)
{
	Dl_info di;
	if (pc && dladdr(pc, &di) && di.dli_fname) {
		const char *base = strrchr(di.dli_fname, '/');
		snprintf(out, len, "%s+%#lx", base ? base + 1 : di.dli_fname,
			 (unsigned long)((const char *)pc - (const char *)di.dli_fbase));
	} else {
		snprintf(out, len, "unknown code at %p", pc);
	}
}

static int fault_fd = 2;
static const char *fault_prefix;

static void on_fault(int sig, siginfo_t *si, void *uc_)
{
	const ucontext_t *uc = uc_;
	const void *pc = NULL;
#if defined(__x86_64__)
	pc = (const void *)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	pc = (const void *)uc->uc_mcontext.pc;
#else
	(void)uc;
#endif
	char lib[512], addr[64] = "", line[1024];
	efab_fault_where(pc, lib, sizeof(lib));
	/* si_addr means an address for the faults only (SIGABRT: the sender's pid) */
	if (si && sig != SIGABRT)
		snprintf(addr, sizeof(addr), " (fault address %p)", si->si_addr);
	int n = snprintf(line, sizeof(line), "%skilled by %s in %s%s\n", fault_prefix ? fault_prefix : "",
			 efab_signal_name(sig), lib, addr);
	if (n > 0 && write(fault_fd, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1) < 0) {
	}
	_exit(128 + sig);
}

void efab_fault_catch(int fd, const char *prefix)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
	fault_fd = fd;
	fault_prefix = prefix;
	for (size_t k = 0; k < EFAB_ARRAY_SIZE(fault_signals); k++)
		sigaction(fault_signals[k], &sa, NULL);
}

void efab_fault_in_libc(void)
{
	/* libc's own strlen, not a sanitizer's interceptor of it, called through
	 * a pointer (no nonnull check at the call) */
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	size_t (*len)(const char *) = libc ? (size_t(*)(const char *))dlsym(libc, "strlen") : NULL;
	const char *volatile nowhere = NULL;
	if (len)
		printf("%zu\n", len(nowhere));
	raise(SIGSEGV); /* no libc.so.6 to fault in */
	abort();
}

int efab_child_spawn(const char *path, char *const argv[], char *const envp[], int out_fd,
		     int chan_fd, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, all;
	int rc;
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	/* glibc's posix_spawn runs no atfork handlers (the efa provider's refuse
	 * a fork) and the child execs at once: nothing of this process's CUDA,
	 * MPI or libfabric state is used there */
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
					      POSIX_SPAWN_SETSIGDEF);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &all);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
	posix_spawn_file_actions_adddup2(&fa, out_fd, 2);
	posix_spawn_file_actions_adddup2(&fa, chan_fd, 3);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
	/* none of the parent's pipes (mpirun's output) stays open in the child */
	posix_spawn_file_actions_addclosefrom_np(&fa, 4);
#endif
	rc = posix_spawn(pid, path, &fa, &at, argv, envp ? envp : environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (rc) {
		efab_log_error("cannot start %s: %s", path, strerror(rc));
		return EFAB_ERR;
	}
	return EFAB_OK;
}

int efab_child_reap(pid_t pid, double wait_s, int *status)
{
	struct timespec nap = {0, 2000000};
	efab_deadline_t end = efab_deadline_in(wait_s);
	for (;;) {
		siginfo_t si;
		memset(&si, 0, sizeof(si));
		/* ended, but left a zombie: its process group id is still its own,
		 * so what it left running in the group can be killed safely */
		int r = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT);
		if (r == 0 && si.si_pid == pid) {
			kill(-pid, SIGKILL);
			while (waitpid(pid, status, 0) < 0)
				if (errno != EINTR) {
					*status = -1;
					break;
				}
			return 1;
		}
		if (r < 0 && errno != EINTR) { /* ECHILD: reaped elsewhere (SIGCHLD ignored) */
			*status = -1;
			return 1;
		}
		if (efab_deadline_passed(end))
			return 0;
		nanosleep(&nap, NULL);
	}
}

void efab_child_kill(pid_t pid, int *status)
{
	int st = -1;
	kill(-pid, SIGKILL); /* the group: whatever it started goes too */
	kill(pid, SIGKILL);  /* in case it left the group */
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (status)
		*status = st;
}

/* How the process ended, from its wait status and its own fault line. */
static size_t describe_status(const efab_child_end_t *e, char *buf, size_t len)
{
	int st = e->status;
	if (e->fault && e->fault[0])
		return (size_t)snprintf(buf, len, "%s", e->fault);
	if (st == -1)
		return (size_t)snprintf(buf, len, "ended, its exit status lost");
	if (WIFSIGNALED(st))
		return (size_t)snprintf(buf, len, "killed by %s%s", efab_signal_name(WTERMSIG(st)),
					WCOREDUMP(st) ? " (core dumped)" : "");
	if (WIFEXITED(st) && WEXITSTATUS(st) > 128 && WEXITSTATUS(st) < 128 + 65)
		return (size_t)snprintf(buf, len, "exited with status %d (128 + %s, its fault line lost)",
					WEXITSTATUS(st), efab_signal_name(WEXITSTATUS(st) - 128));
	return (size_t)snprintf(buf, len, "exited with status %d%s", WIFEXITED(st) ? WEXITSTATUS(st) : st,
				e->reported ? "" : " without a verdict");
}

int efab_child_end_describe(const efab_child_end_t *e, char *buf, size_t len)
{
	const char *stage = e->stage && e->stage[0] ? e->stage : NULL;
	size_t n;
	if (!len)
		return 0;
	buf[0] = '\0';
	if (e->stopped)
		n = (size_t)snprintf(buf, len, "stopped: the other rank's process ended first");
	else if (e->hung)
		n = (size_t)snprintf(buf, len, "hang (killed after %.0f s without progress%s%s)", e->hung_s,
				     stage ? ", in " : "", stage ? stage : "");
	else if (e->reported && !(e->fault && e->fault[0]) &&
		 (e->status == -1 || (WIFEXITED(e->status) && WEXITSTATUS(e->status) == 0)))
		return 0; /* its verdict stands (a status reaped elsewhere says nothing more) */
	else {
		n = describe_status(e, buf, len);
		if (stage && n < len)
			n += (size_t)snprintf(buf + n, len - n, ", in %s", stage);
	}
	if (e->hint && e->hint[0] && n < len)
		snprintf(buf + n, len - n, " | stderr: %s", e->hint);
	return 1;
}
