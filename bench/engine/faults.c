/* The test hooks, read once (faults.h). */
#include <stdlib.h>
#include <string.h>

#include "faults.h"

void efab_faults_read(efab_faults_t *f)
{
	const char *v = getenv("EFAB_FAULT_CORRUPT");
	f->corrupt_every = v ? strtoull(v, NULL, 10) : 0;
	v = getenv("EFAB_FAULT_SIGNAL");
	f->signal_every = v ? strtoull(v, NULL, 10) : 0;
	v = getenv("EFAB_FAULT_INJECT_RMA");
	f->inject_rma_set = v && *v;
	f->inject_rma = f->inject_rma_set ? strtoull(v, NULL, 10) : 0;
	v = getenv("EFAB_FAULT_STALL");
	f->stall_rank = v && *v ? atoi(v) : -1;
	v = getenv("EFAB_FAULT_CONFIRM_EXTRA");
	f->confirm_extra = v ? strtoull(v, NULL, 10) : 0;
	v = getenv("EFAB_FAULT_SLOW");
	f->slow_rank = -1;
	f->slow_us = 0;
	if (v && *v && strchr(v, ':')) {
		f->slow_rank = atoi(v);
		f->slow_us = (unsigned)strtoul(strchr(v, ':') + 1, NULL, 10);
	}
	v = getenv("EFAB_FAULT_GDA_RX_SLOW_NS");
	f->gda_rx_slow_ns = v ? strtoull(v, NULL, 10) : 0;
	v = getenv("EFAB_FAULT_GDA_NO_RX_BOUND");
	f->gda_no_rx_bound = v && !strcmp(v, "1");
	v = getenv("EFAB_FAULT_RX_PAUSE_MS");
	f->rx_pause_ms = v ? (unsigned)strtoul(v, NULL, 10) : 0;
	v = getenv("EFAB_FAULT_NO_CREDITS");
	f->no_credits = v && !strcmp(v, "1");
	v = getenv("EFAB_FAULT_LINK_GBPS");
	f->link_gbps = v && *v ? strtod(v, NULL) : 0;
}
