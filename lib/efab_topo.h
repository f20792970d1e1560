/* Topology (hwloc): the host's shape, and the local rank -> GPU -> NIC map. */
#ifndef EFAB_TOPO_H
#define EFAB_TOPO_H

#include <stddef.h>

/* "2 packages, 2 NUMA nodes, 96 cores, 192 PUs; 8 GPUs; 32 OpenFabrics NICs" */
void efab_topo_summary(char *buf, size_t len);

#endif
