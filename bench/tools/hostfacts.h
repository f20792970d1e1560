/* The facts of the host a process runs on (hostfacts.c): what meta.json
 * records of the node a sweep measured. efab_probe --json writes them under
 * "host", so that efab_sweep, started on a login or head node, can record the
 * first job node's facts from the probe it runs there through the launcher. */
#ifndef EFAB_HOSTFACTS_H
#define EFAB_HOSTFACTS_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The facts as JSON members, each "sep""key": "value" (the first with first,
 * the rest with sep): hostname, kernel, cpu, instance_type, libfabric
 * (version, headers, path), efa_installer, simulated, efa_driver, rdma_core,
 * gpus, cuda_driver_version, mpi, nvshmem, topology, clock. */
void efab_host_facts_json(FILE *f, const char *first, const char *sep);

#ifdef __cplusplus
}
#endif

#endif
