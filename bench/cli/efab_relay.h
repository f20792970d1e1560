/* A runtime for a process whose collectives its parent carries (rt_relay.c).
 * The parent holds the other end of a stream socket; for each contribution
 * the child sends, it answers with every rank's contribution in rank order
 * (efab_probe --live runs each case of its put matrix in such a child, and
 * its parent carries the collectives over MPI). The child may also tell the
 * parent what it is doing (a stage: the parent's evidence when it hangs) and
 * its verdict. No MPI here.
 *
 * A frame: one type byte, three zero bytes, a 32-bit payload length (host
 * order: both ends are one binary on one host), the payload. */
#ifndef EFAB_RELAY_H
#define EFAB_RELAY_H

#include <stddef.h>

#include "efab_clock.h"
#include "efab_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
	EFAB_RELAY_GATHER = 'G', /* child: my contribution; parent: everybody's */
	EFAB_RELAY_STAGE = 'S',	 /* child: what I do next (text) */
	EFAB_RELAY_RESULT = 'R', /* child: my verdict (the caller's struct) */
};
/* The largest payload either end sends (an endpoint name exchange is 264 B). */
#define EFAB_RELAY_MAX 4096

/* One frame (fd: a stream socket). 0, or -1 when the other end is gone. */
int efab_relay_send(int fd, int type, const void *payload, size_t len);

/* The next frame into buf (cap bytes): 0; -1 when the other end closed or
 * sent a frame larger than cap; -2 when deadline passed first (what was read
 * of a frame is lost: the caller ends the exchange). */
int efab_relay_recv(int fd, efab_deadline_t deadline, int *type, void *buf, size_t cap, size_t *len);

/* The runtime over fd (this process's end). Collectives block until the
 * parent answers; a parent that is gone makes them fail. abort() is _exit. */
efab_rt_t *efab_rt_relay(int fd, int rank, int size, int local_rank, int local_size);

#ifdef __cplusplus
}
#endif

#endif
