/* The runtime of a process whose parent carries its collectives. */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "efab.h"
#include "efab_relay.h"

typedef struct frame_head {
	uint8_t type, zero[3];
	uint32_t len;
} frame_head_t;

int efab_relay_send(int fd, int type, const void *payload, size_t len)
{
	char frame[sizeof(frame_head_t) + EFAB_RELAY_MAX];
	frame_head_t h = {(uint8_t)type, {0, 0, 0}, (uint32_t)len};
	if (len > EFAB_RELAY_MAX)
		return -1;
	memcpy(frame, &h, sizeof(h));
	if (len)
		memcpy(frame + sizeof(h), payload, len);
	for (size_t off = 0, n = sizeof(h) + len; off < n;) {
		/* never SIGPIPE: a parent writing to a child that died lives on */
		ssize_t w = send(fd, frame + off, n - off, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		off += (size_t)w;
	}
	return 0;
}

/* n bytes into p: 0, -1 closed or failed, -2 deadline. */
static int read_full(int fd, void *p, size_t n, efab_deadline_t deadline)
{
	for (size_t off = 0; off < n;) {
		struct pollfd pf = {fd, POLLIN, 0};
		double left = efab_deadline_left_s(deadline);
		int ms = left > 1e6 ? -1 : (int)ceil(left * 1e3);
		int r = poll(&pf, 1, ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			return -2;
		ssize_t k = read(fd, (char *)p + off, n - off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		off += (size_t)k;
	}
	return 0;
}

int efab_relay_recv(int fd, efab_deadline_t deadline, int *type, void *buf, size_t cap, size_t *len)
{
	frame_head_t h;
	int rc = read_full(fd, &h, sizeof(h), deadline);
	if (rc)
		return rc;
	if (h.len > cap)
		return -1;
	if ((rc = read_full(fd, buf, h.len, deadline)))
		return rc;
	*type = h.type;
	*len = h.len;
	return 0;
}

typedef struct relay {
	int fd;
	int pending; /* answers still owed for barriers left unfinished */
	char scratch[EFAB_RELAY_MAX];
} relay_t;

static relay_t relay_state;

static efab_deadline_t never(void)
{
	return efab_deadline_in(INFINITY);
}

/* The answer to one contribution (a GATHER frame); anything else ends it. */
static int recv_answer(relay_t *r, void *out, size_t want)
{
	int type;
	size_t len;
	if (efab_relay_recv(r->fd, never(), &type, r->scratch, sizeof(r->scratch), &len) ||
	    type != EFAB_RELAY_GATHER || (out && len != want))
		return -1;
	if (out)
		memcpy(out, r->scratch, want);
	return 0;
}

/* The answers of barriers given up on (a timeout inside efab_barrier_progress)
 * come first: the parent answers in order. */
static int settle(relay_t *r)
{
	for (; r->pending > 0; r->pending--)
		if (recv_answer(r, NULL, 0))
			return -1;
	return 0;
}

static int relay_allgather(efab_rt_t *rt, const void *in, void *out, size_t len)
{
	relay_t *r = rt->impl;
	if (len * (size_t)rt->size > EFAB_RELAY_MAX || settle(r) ||
	    efab_relay_send(r->fd, EFAB_RELAY_GATHER, in, len))
		return -1;
	return recv_answer(r, out, len * (size_t)rt->size);
}

static int relay_barrier(efab_rt_t *rt)
{
	char in = 0, out[64];
	return rt->size > (int)sizeof(out) ? -1 : relay_allgather(rt, &in, out, 1);
}

static int relay_allreduce(efab_rt_t *rt, const double *in, double *out, size_t n, int op)
{
	double *all = malloc(n * (size_t)rt->size * sizeof(double));
	int rc = all ? relay_allgather(rt, in, all, n * sizeof(double)) : -1;
	for (size_t k = 0; !rc && k < n; k++) {
		double v = all[k];
		for (int q = 1; q < rt->size; q++) {
			double x = all[(size_t)q * n + k];
			v = op == EFAB_RT_SUM ? v + x : op == EFAB_RT_MAX ? (x > v ? x : v) : (x < v ? x : v);
		}
		out[k] = v;
	}
	free(all);
	return rc;
}

static int relay_ibarrier(efab_rt_t *rt, void **req)
{
	relay_t *r = rt->impl;
	char in = 0;
	if (settle(r) || efab_relay_send(r->fd, EFAB_RELAY_GATHER, &in, 1))
		return -1;
	r->pending = 1;
	*req = r;
	return 0;
}

static int relay_ibarrier_test(efab_rt_t *rt, void *req, int *done)
{
	relay_t *r = rt->impl;
	(void)req;
	struct pollfd pf = {r->fd, POLLIN, 0};
	while (r->pending > 0) {
		int k = poll(&pf, 1, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		if (k == 0)
			break;
		if (recv_answer(r, NULL, 0))
			return -1;
		r->pending--;
	}
	*done = r->pending == 0;
	return 0;
}

__attribute__((noreturn)) static void relay_abort(efab_rt_t *rt, int code)
{
	(void)rt;
	_exit(code);
}

efab_rt_t *efab_rt_relay(int fd, int rank, int size, int local_rank, int local_size)
{
	static efab_rt_t rt;
	relay_state.fd = fd;
	relay_state.pending = 0;
	rt = (efab_rt_t){rank,		  size,		   local_rank,	    local_size,
			 &relay_state,	  relay_barrier,   relay_allgather, relay_allreduce,
			 relay_ibarrier, relay_ibarrier_test, relay_abort};
	return &rt;
}
