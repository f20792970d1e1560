/* efab_mr_reg's own interface (private to bench/ops/mr_reg*.c): what
 * mr_reg_setup.c (the NIC fan-out, placement, bring-up, header and main)
 * takes from mr_reg.c (the operations, their timing and the rows). */
#ifndef MR_REG_INT_H
#define MR_REG_INT_H

#include "reg.h"

/* The registration operations efab_mr_reg times (--regime, --components). */
extern const efab_regop_t efab_mr_ops[4];

/* Whether prov drives a NIC (its registrations pin pages or import a dmabuf). */
int efab_mr_nic_provider(const char *prov);

/* GDRCopy as libfabric set it up in this process (efab_reglog.h), taken
 * around the first fi_getinfo; efab_mr_gdr_applies: this run's
 * registrations take the step when it is on (efa fabric, CUDA memory, no
 * --dmabuf). */
extern int efab_mr_gdr_state, efab_mr_gdr_applies;
extern char efab_mr_gdr_why[240];

#endif
