/* A crash is an outcome (child.c): what a process that may die inside a
 * provider needs to turn its end into a verdict. The dying process names
 * its signal and the library of the faulting instruction (efab_fault_catch);
 * its parent runs it in a process group of its own, with its output away
 * from the parent's (efab_child_spawn), kills the group when it hangs
 * (efab_child_kill), and writes one line about how it ended
 * (efab_child_end_describe). No MPI, no libfabric. */
#ifndef EFAB_CHILD_H
#define EFAB_CHILD_H

#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "SIGSEGV", "SIGABRT", ...; "signal N" for one without a name here. */
const char *efab_signal_name(int sig);

/* The library (or executable) holding address pc and pc's offset in it,
 * "libfabric.so.1+0x4f2a1"; "unknown code at 0x..." where dladdr knows none. */
void efab_fault_where(const void *pc, char *out, size_t len);

/* On SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT: write one line to fd,
 * "<prefix>killed by SIGSEGV in <library>+0x<offset> (fault address 0x...)"
 * (no fault address for SIGABRT), then _exit(128 + signal). prefix is read when the signal comes (the caller
 * may change its text later); NULL is "". Call again after a library that
 * installs handlers of its own. */
void efab_fault_catch(int fd, const char *prefix);

/* A fault inside libc (libc.so.6's strlen of NULL, past any sanitizer's
 * interceptor and checks): what tests of the handler and its library naming
 * use. Does not return. */
void efab_fault_in_libc(void) __attribute__((noreturn));

/* Start path with argv in a process group of its own (so that a kill of the
 * group ends everything it started), stdin from /dev/null, stdout and stderr
 * into out_fd, chan_fd as its fd 3, every other descriptor closed, signal
 * dispositions and mask at their defaults; envp NULL = this environment.
 * EFAB_OK with *pid, or EFAB_ERR (logged). */
int efab_child_spawn(const char *path, char *const argv[], char *const envp[], int out_fd,
		     int chan_fd, pid_t *pid);

/* SIGKILL to pid's process group, then reap pid; its wait status in
 * *status (-1 when it was reaped elsewhere). */
void efab_child_kill(pid_t pid, int *status);

/* Once pid has ended (waiting at most wait_s): kill what is left of its
 * process group, reap it, 1 with its wait status in *status (-1 when it was
 * reaped elsewhere). 0: still running. */
int efab_child_reap(pid_t pid, double wait_s, int *status);

/* How a child ended, as its parent saw it. */
typedef struct efab_child_end {
	int status;	   /* wait status (waitpid), -1 unknown */
	int reported;	   /* it sent its verdict before it ended */
	int hung;	   /* killed by the parent: no sign of life for hung_s */
	double hung_s;
	int stopped;	   /* killed by the parent because its peer ended first */
	const char *stage; /* what it said it was doing last ("" or NULL: nothing) */
	const char *fault; /* its efab_fault_catch line, the prefix cut off, or NULL */
	const char *hint;  /* a line of its stderr worth quoting (a warning), or NULL */
} efab_child_end_t;

/* One line on an abnormal end: "killed by SIGSEGV in libfoo.so+0x12 (fault
 * address 0x0), in fi_write", "hang (killed after 7 s without progress, in
 * fi_write)", "exited with status 3 without a verdict, in teardown",
 * "stopped: the other rank's process ended first"; with " | stderr: <hint>"
 * when there is a hint. A child that reported and then exited 0 ended
 * normally: "" (and 0 returned). Returns 1 when the end was abnormal. */
int efab_child_end_describe(const efab_child_end_t *e, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
