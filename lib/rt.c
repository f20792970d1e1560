#include <signal.h>
#include <string.h>

#include "efab.h"
#include "efab_rt.h"

int efab_rt_agree(efab_rt_t *rt, int rc)
{
	double in = rc, out = 0;
	if (rt->allreduce(rt, &in, &out, 1, EFAB_RT_MAX))
		return EFAB_ERR;
	return (int)out;
}

void efab_catch_stop_signals(void (*handler)(int))
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}
