#include <hwloc.h>
#include <stdio.h>
#include <string.h>

#include "efab.h"
#include "efab_topo.h"

static int load(hwloc_topology_t *t)
{
	if (hwloc_topology_init(t))
		return -1;
	hwloc_topology_set_io_types_filter(*t, HWLOC_TYPE_FILTER_KEEP_ALL);
	if (hwloc_topology_load(*t)) {
		hwloc_topology_destroy(*t);
		return -1;
	}
	return 0;
}

void efab_topo_summary(char *buf, size_t len)
{
	hwloc_topology_t t;
	if (load(&t)) {
		snprintf(buf, len, "unknown (hwloc failed)");
		return;
	}
	int gpus = 0, nics = 0;
	for (hwloc_obj_t o = NULL; (o = hwloc_get_next_osdev(t, o));) {
		if (o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS)
			nics++;
		else if (o->attr->osdev.type == HWLOC_OBJ_OSDEV_COPROC ||
			 (o->attr->osdev.type == HWLOC_OBJ_OSDEV_GPU && o->name &&
			  !strncmp(o->name, "nvml", 4)))
			gpus++;
	}
	snprintf(buf, len, "%d packages, %d NUMA nodes, %d cores, %d PUs; %d GPUs; %d OpenFabrics NICs",
		 hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE),
		 hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE),
		 hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE), hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU),
		 gpus, nics);
	hwloc_topology_destroy(t);
}
