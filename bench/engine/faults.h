/* The test hooks (EFAB_FAULT_*): faults a test asks for through the
 * environment, so the tests can prove that checks, limits, credits and
 * timeouts work. All of them are read here, once, at start
 * (efab_faults_read); a run without them set carries none. docs/testing.md
 * lists them with the tests that use them. */
#ifndef EFAB_FAULTS_H
#define EFAB_FAULTS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct efab_faults {
	uint64_t corrupt_every;  /* EFAB_FAULT_CORRUPT=N: every Nth checked message damaged */
	uint64_t signal_every;   /* EFAB_FAULT_SIGNAL=N: every Nth put-signal adds 2, not 1
				  * (efab_shmem_* -o put-signal, stream initiator); every
				  * Nth --signal-send message carries the next message's
				  * number (efab_put_lat/bw) */
	int inject_rma_set;      /* EFAB_FAULT_INJECT_RMA=N: act as if the endpoint's */
	uint64_t inject_rma;     /* RMA inject limit were N (efa-direct's is 0) */
	int stall_rank;          /* EFAB_FAULT_STALL=R: rank R stops answering; -1 none */
	uint64_t confirm_extra;  /* EFAB_FAULT_CONFIRM_EXTRA=N: a stream's end flag claims
				 * N operations more than were posted */
	int slow_rank;           /* EFAB_FAULT_SLOW=R:US: rank R sleeps US microseconds */
	unsigned slow_us;        /* after each of its stream windows (0: none) */
	uint64_t gda_rx_slow_ns; /* EFAB_FAULT_GDA_RX_SLOW_NS=N: the GPU writedata target
				 * waits N ns after each receive CQE (a slow consumer) */
	int gda_no_rx_bound;     /* EFAB_FAULT_GDA_NO_RX_BOUND=1: launches not cut to the
				 * receive ring (shows the lap the bound prevents) */
	unsigned rx_pause_ms;    /* EFAB_FAULT_RX_PAUSE_MS=N: a writedata stream's target
				  * stops reading its CQ for N ms once per size, halfway
				  * through its remote CQ data (--time: at the first; a
				  * descheduled reader) */
	int no_credits;          /* EFAB_FAULT_NO_CREDITS=1: writedata streams without
				  * credits (shows the CQ lap they prevent; --signal-send:
				  * the RNR they prevent) */
	double link_gbps;        /* EFAB_FAULT_LINK_GBPS=G: as if libfabric had reported a
				 * G Gb/s port (a driver reporting a wrong speed); 0: none */
} efab_faults_t;

/* Read every EFAB_FAULT_* variable of the environment into f. */
void efab_faults_read(efab_faults_t *f);

#ifdef __cplusplus
}
#endif

#endif
