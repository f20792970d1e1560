#include "efab.h"
#include "efab_rt.h"

int efab_rt_agree(efab_rt_t *rt, int rc)
{
	double in = rc, out = 0;
	if (rt->allreduce(rt, &in, &out, 1, EFAB_RT_MAX))
		return EFAB_ERR;
	return (int)out;
}
