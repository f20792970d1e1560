/* Topology (hwloc): local rank -> GPU -> nearest NIC(s) -> libfabric domain,
 * and the CPU binding near the GPU. hwloc loads I/O objects (KEEP_ALL), from
 * this host or from an XML file (tests, or HWLOC_XMLFILE). */
#ifndef EFAB_TOPO_H
#define EFAB_TOPO_H

#include <stddef.h>
#include <stdio.h>

#include <rdma/fabric.h>

#ifdef __cplusplus
extern "C" {
#endif

#define EFAB_TOPO_MAX 64

typedef struct efab_topo_dev {
	char busid[16]; /* 0000:53:00.0 */
	char name[32];  /* rdmap79s0, cuda0 */
	int numa;       /* NUMA node of its non-I/O ancestor, -1 unknown */
	char cpuset[128]; /* list form, e.g. 0-47 */
	int nnear;      /* GPUs: the NICs assigned (indices into nics): this GPU's
			 * share of its switch's NICs, exclusive to it (gpu-pair) */
	int near[16];
	int nlocal;     /* GPUs: every NIC on the GPU's switch (the closest PCI
			 * ancestor holding NICs), shared with the GPUs beside it */
	int local[16];
} efab_topo_dev_t;

typedef struct efab_topo {
	void *hw; /* hwloc_topology_t */
	efab_topo_dev_t gpus[EFAB_TOPO_MAX];
	int ngpus;
	efab_topo_dev_t nics[EFAB_TOPO_MAX * 4];
	int nnics;
} efab_topo_t;

/* xml NULL: this host (hwloc itself honours HWLOC_XMLFILE). GPUs (NVIDIA 3D
 * controllers) and NICs (PCI devices with an OpenFabrics OS device) are
 * sorted by bus id; each GPU gets the NICs nearest to it by PCI hierarchy:
 * all of them (local: a p5en switch's 4 NICs for each of its 2 GPUs) and its
 * even share of them in bus order (near: 2 each on a p5en, exclusive). */
int efab_topo_load(const char *xml, efab_topo_t *out);
void efab_topo_free(efab_topo_t *t);
/* Write t's topology as hwloc XML (I/O objects included): what lstopo --of
 * xml writes, for a machine without lstopo. EFAB_OK or EFAB_ERR (logged). */
int efab_topo_save_xml(const efab_topo_t *t, const char *path);

typedef struct efab_pairing {
	int gpu;          /* index into gpus, -1 none */
	int nic;          /* index into nics, -1 none */
	char gpu_busid[16];
	char nic_name[32];
	char nic_busid[16];
	int numa;
	char cpuset[128];
} efab_pairing_t;

/* The pairing of one local rank: its GPU (gpu_busid when CUDA knows it, else
 * GPU index gpu, else local_rank modulo GPUs) and, of that GPU's NICs, number
 * (local_rank / GPUs) modulo their count. Without GPUs: NIC local_rank modulo
 * NICs. EFAB_OK, or EFAB_SKIP when the topology has neither. */
int efab_topo_pair(const efab_topo_t *t, int local_rank, int gpu, const char *gpu_busid,
		   efab_pairing_t *out);

/* The NICs of GPU g a --domains set names: EFAB_NICS_LOCAL every NIC on
 * its switch (what NVSHMEM's default NIC policy gives a PE that has the
 * switch's NICs to itself), EFAB_NICS_PAIR its exclusive share (NVSHMEM's
 * EXTERNAL_SHARING_PCIE_SWITCH_NIC_EXCLUSIVE). Indices into t->nics, bus
 * order; the count (0 when g has none or is out of range). */
enum { EFAB_NICS_LOCAL, EFAB_NICS_PAIR };
int efab_topo_gpu_nics(const efab_topo_t *t, int g, int which, int *idx, int max);

/* Bind this process to the pairing's cpuset. */
int efab_topo_bind(const efab_topo_t *t, const efab_pairing_t *p);

/* Does info's NIC sit at busid (nic->bus_attr), or does its domain name start
 * with the NIC's OS name (fallback: "rdmap79s0-rdm")? */
int efab_info_is_nic(const struct fi_info *info, const char *busid, const char *name);

/* "2 packages, 2 NUMA nodes, 96 cores, 192 PUs; 8 GPUs; 32 OpenFabrics NICs" */
void efab_topo_summary(char *buf, size_t len);
/* The whole map: every GPU with its NICs, NUMA node and cpuset. */
void efab_topo_print(FILE *f, const efab_topo_t *t);

#ifdef __cplusplus
}
#endif

#endif
