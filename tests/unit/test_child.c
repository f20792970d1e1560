/* A crash is an outcome (bench/cli/child.c): the verdict line on constructed wait
 * statuses, a real fault named by its library, a child apart from its
 * parent (own process group, none of the parent's descriptors, its group
 * killed); and the relay runtime (bench/cli/rt_relay.c) against a fake parent. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "efab.h"
#include "efab_child.h"
#include "efab_relay.h"

static void describe(const efab_child_end_t *e, char *buf, size_t len, int abnormal)
{
	assert_int_equal(efab_child_end_describe(e, buf, len), abnormal);
}

static void test_end_normal(void **state)
{
	char b[256] = "x";
	efab_child_end_t e = {.status = 0, .reported = 1, .stage = "teardown"};
	describe(&e, b, sizeof(b), 0);
	assert_string_equal(b, "");
	e.status = -1; /* reaped elsewhere: the verdict stands */
	describe(&e, b, sizeof(b), 0);
	assert_string_equal(b, "");
}

static void test_end_signals(void **state)
{
	char b[256];
	efab_child_end_t e = {.status = SIGKILL, .stage = "fi_write"};
	describe(&e, b, sizeof(b), 1);
	assert_string_equal(b, "killed by SIGKILL, in fi_write");
	e.status = SIGSEGV | 0x80; /* WCOREDUMP */
	e.stage = NULL;
	describe(&e, b, sizeof(b), 1);
	assert_string_equal(b, "killed by SIGSEGV (core dumped)");
	/* the process's own line beats its status, hint appended */
	e.status = (128 + SIGSEGV) << 8;
	e.fault = "killed by SIGSEGV in libfabric.so.1+0x57207 (fault address 0x28)";
	e.stage = "fi_write";
	e.hint = "libfabric:1:efa:efa_rma_post_write():90 no desc";
	describe(&e, b, sizeof(b), 1);
	assert_string_equal(b, "killed by SIGSEGV in libfabric.so.1+0x57207 (fault address 0x28), in fi_write"
			       " | stderr: libfabric:1:efa:efa_rma_post_write():90 no desc");
	/* 128 + signal without the line (the handler could not write it) */
	e.fault = e.hint = NULL;
	e.stage = "";
	describe(&e, b, sizeof(b), 1);
	assert_string_equal(b, "exited with status 139 (128 + SIGSEGV, its fault line lost)");
	/* reported, then died at teardown */
	e = (efab_child_end_t){.status = SIGBUS, .reported = 1, .stage = "teardown"};
	describe(&e, b, sizeof(b), 1);
	assert_string_equal(b, "killed by SIGBUS, in teardown");
	assert_string_equal(efab_signal_name(SIGABRT), "SIGABRT");
	assert_string_equal(efab_signal_name(63), "signal 63");
}

static void test_end_exit_hang_stop(void **state)
{
	char b[256];
	efab_child_end_t e = {.status = 3 << 8, .stage = "fi_write"};
	describe(&e, b, sizeof(b), 1);
	assert_string_equal(b, "exited with status 3 without a verdict, in fi_write");
	e = (efab_child_end_t){.status = 2 << 8, .reported = 1};
	describe(&e, b, sizeof(b), 1);
	assert_string_equal(b, "exited with status 2");
	e = (efab_child_end_t){.status = SIGKILL, .hung = 1, .hung_s = 7, .stage = "fi_write completion"};
	describe(&e, b, sizeof(b), 1);
	assert_string_equal(b, "hang (killed after 7 s without progress, in fi_write completion)");
	e = (efab_child_end_t){.status = SIGKILL, .hung = 1, .hung_s = 25};
	describe(&e, b, sizeof(b), 1);
	assert_string_equal(b, "hang (killed after 25 s without progress)");
	e = (efab_child_end_t){.status = SIGKILL, .stopped = 1, .stage = "barrier after the put"};
	describe(&e, b, sizeof(b), 1);
	assert_string_equal(b, "stopped: the other rank's process ended first");
	e = (efab_child_end_t){.status = -1};
	describe(&e, b, sizeof(b), 1);
	assert_string_equal(b, "ended, its exit status lost");
	/* a short buffer is cut, never overrun */
	char small[12];
	e = (efab_child_end_t){.status = SIGKILL, .stage = "a long stage name", .hint = "and a hint"};
	describe(&e, small, sizeof(small), 1);
	assert_string_equal(small, "killed by S");
}

/* A real fault, in this executable and in libc, named by its handler. */
static void fault_in(int in_libc, const char *want_lib)
{
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		efab_fault_catch(fds[1], "T: ");
		if (in_libc) {
			efab_fault_in_libc();
		} else {
			int *volatile at = (int *)(uintptr_t)8;
			*at = 1;
		}
		_exit(0);
	}
	close(fds[1]);
	char line[600] = "";
	ssize_t n = read(fds[0], line, sizeof(line) - 1);
	close(fds[0]);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(n > 0);
	line[n] = '\0';
	char want[200];
	snprintf(want, sizeof(want), "T: killed by SIGSEGV in %s+0x", want_lib);
	if (strncmp(line, want, strlen(want)))
		fail_msg("fault line '%s', expected it to start with '%s'", line, want);
	assert_non_null(strstr(line, in_libc ? "(fault address (nil))" : "(fault address 0x8)"));
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 128 + SIGSEGV);
}

static void test_fault_named(void **state)
{
	fault_in(0, "test_child");
	fault_in(1, "libc.so.6");
	char b[128];
	efab_fault_where(NULL, b, sizeof(b));
	assert_string_equal(b, "unknown code at (nil)");
}

/* The spawned child leads its own process group, holds none of the
 * parent's descriptors but 0-3, and a kill of its group takes what it
 * started too. */
static void test_spawn_apart(void **state)
{
	int out[2], chan[2], leak[2];
	assert_int_equal(pipe(out), 0);
	assert_int_equal(pipe(leak), 0); /* without O_CLOEXEC, as mpirun's may be */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, chan), 0);
	char script[300];
	snprintf(script, sizeof(script),
		 "echo pgid $(cut -d' ' -f5 /proc/$$/stat) pid $$; "
		 "for f in /proc/$$/fd/*; do echo fd ${f##*/}; done; sleep 30 & echo grandchild $!; wait");
	char *argv[] = {"sh", "-c", script, NULL};
	pid_t pid;
	assert_int_equal(efab_child_spawn("/bin/sh", argv, NULL, out[1], chan[1], &pid), EFAB_OK);
	close(out[1]);
	char buf[2048] = "";
	size_t n = 0;
	long grand = 0;
	while (!grand && n < sizeof(buf) - 1) {
		ssize_t k = read(out[0], buf + n, sizeof(buf) - 1 - n);
		assert_true(k > 0);
		n += (size_t)k;
		buf[n] = '\0';
		char *g = strstr(buf, "grandchild ");
		if (g && strchr(g, '\n'))
			grand = strtol(g + 11, NULL, 10);
	}
	long pg = 0, self = 0;
	assert_int_equal(sscanf(buf, "pgid %ld pid %ld", &pg, &self), 2);
	assert_int_equal(pg, self);
	assert_int_equal(self, pid);
	char leaked[32];
	snprintf(leaked, sizeof(leaked), "fd %d\n", leak[1]);
	if (strstr(buf, leaked))
		fail_msg("the child holds the parent's fd %d:\n%s", leak[1], buf);
	assert_non_null(strstr(buf, "fd 3\n"));
	int st;
	assert_int_equal(efab_child_reap(pid, 0.05, &st), 0); /* still running */
	efab_child_kill(pid, &st);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	/* the grandchild went with the group (gone, or a zombie of init's) */
	int alive = 1;
	for (int k = 0; k < 200 && alive; k++) {
		char path[64], stat[256] = "";
		snprintf(path, sizeof(path), "/proc/%ld/stat", grand);
		FILE *f = fopen(path, "r");
		alive = f && fgets(stat, sizeof(stat), f) && !strstr(stat, ") Z ");
		if (f)
			fclose(f);
		if (alive)
			usleep(10000);
	}
	assert_false(alive);
	close(out[0]);
	close(leak[0]);
	close(leak[1]);
	close(chan[0]);
	close(chan[1]);
}

static void test_reap_exit(void **state)
{
	int out[2], chan[2];
	assert_int_equal(pipe(out), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, chan), 0);
	char *argv[] = {"sh", "-c", "exit 5", NULL};
	pid_t pid;
	assert_int_equal(efab_child_spawn("/bin/sh", argv, NULL, out[1], chan[1], &pid), EFAB_OK);
	int st = 0;
	assert_int_equal(efab_child_reap(pid, 10, &st), 1);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 5);
	for (int k = 0; k < 2; k++) {
		close(out[k]);
		close(chan[k]);
	}
}

/* A fake parent of two ranks whose other rank brings what this one does:
 * each contribution is answered with itself twice; other frames are read
 * and not answered. */
static void fake_parent(int fd)
{
	for (;;) {
		int type;
		size_t len;
		unsigned char in[EFAB_RELAY_MAX], out[EFAB_RELAY_MAX];
		if (efab_relay_recv(fd, efab_deadline_in(10), &type, in, sizeof(in), &len))
			_exit(0);
		if (type != EFAB_RELAY_GATHER)
			continue;
		memcpy(out, in, len);
		memcpy(out + len, in, len);
		if (efab_relay_send(fd, EFAB_RELAY_GATHER, out, 2 * len))
			_exit(1);
	}
}

static void test_relay_runtime(void **state)
{
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(sv[0]);
		fake_parent(sv[1]);
	}
	close(sv[1]);
	efab_rt_t *rt = efab_rt_relay(sv[0], 0, 2, 0, 1);
	assert_int_equal(rt->rank, 0);
	assert_int_equal(rt->size, 2);
	unsigned char in[3] = {1, 2, 3}, out[6];
	assert_int_equal(rt->allgather(rt, in, out, 3), 0);
	unsigned char want[6] = {1, 2, 3, 1, 2, 3};
	assert_memory_equal(out, want, 6);
	/* a barrier given up on: its answer is consumed before the next one */
	void *req;
	assert_int_equal(rt->ibarrier(rt, &req), 0);
	/* the stage and result frames are the parent's to read, never answered */
	assert_int_equal(efab_relay_send(sv[0], EFAB_RELAY_STAGE, "x", 1), 0);
	assert_int_equal(rt->allgather(rt, in, out, 3), 0);
	assert_memory_equal(out, want, 6);
	/* a barrier waited for */
	int done = 0;
	assert_int_equal(rt->ibarrier(rt, &req), 0);
	for (int k = 0; k < 1000 && !done; k++) {
		assert_int_equal(rt->ibarrier_test(rt, req, &done), 0);
		if (!done)
			usleep(1000);
	}
	assert_true(done);
	double v[2] = {3, -1}, r[2];
	assert_int_equal(rt->allreduce(rt, v, r, 2, EFAB_RT_MAX), 0);
	assert_true(r[0] == 3.0 && r[1] == -1.0);
	assert_int_equal(rt->allreduce(rt, v, r, 2, EFAB_RT_SUM), 0);
	assert_true(r[0] == 6.0 && r[1] == -2.0);
	assert_int_equal(rt->barrier(rt), 0);
	/* more than a frame holds is refused, not sent */
	static unsigned char big[EFAB_RELAY_MAX];
	assert_int_equal(rt->allgather(rt, big, big, EFAB_RELAY_MAX), -1);
	/* a parent that is gone fails the collective (no SIGPIPE) */
	close(sv[0]);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	int sv2[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv2), 0);
	close(sv2[1]);
	rt = efab_rt_relay(sv2[0], 1, 2, 0, 1);
	assert_int_not_equal(rt->allgather(rt, in, out, 3), 0);
	close(sv2[0]);
	/* a frame cut short by the deadline */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv2), 0);
	int type;
	size_t len;
	assert_int_equal(efab_relay_recv(sv2[0], efab_deadline_in(0.05), &type, out, sizeof(out), &len), -2);
	close(sv2[0]);
	close(sv2[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_end_normal),	  cmocka_unit_test(test_end_signals),
		cmocka_unit_test(test_end_exit_hang_stop), cmocka_unit_test(test_fault_named),
		cmocka_unit_test(test_spawn_apart),	  cmocka_unit_test(test_reap_exit),
		cmocka_unit_test(test_relay_runtime),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
