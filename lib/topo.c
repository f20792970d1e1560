#include <errno.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "efab.h"
#include "efab_topo.h"

static int load(hwloc_topology_t *t, const char *xml)
{
	if (hwloc_topology_init(t))
		return -1;
	hwloc_topology_set_io_types_filter(*t, HWLOC_TYPE_FILTER_KEEP_ALL);
	if ((xml && hwloc_topology_set_xml(*t, xml)) || hwloc_topology_load(*t)) {
		hwloc_topology_destroy(*t);
		return -1;
	}
	return 0;
}

void efab_topo_summary(char *buf, size_t len)
{
	efab_topo_t t;
	if (efab_topo_load(NULL, &t)) {
		snprintf(buf, len, "unknown (hwloc failed)");
		return;
	}
	hwloc_topology_t h = t.hw;
	snprintf(buf, len, "%d packages, %d NUMA nodes, %d cores, %d PUs; %d GPUs; %d OpenFabrics NICs",
		 hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_PACKAGE),
		 hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_NUMANODE),
		 hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_CORE), hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_PU),
		 t.ngpus, t.nnics);
	efab_topo_free(&t);
}

static void busid_of(hwloc_obj_t pci, char *buf, size_t len)
{
	snprintf(buf, len, "%04x:%02x:%02x.%x", pci->attr->pcidev.domain, pci->attr->pcidev.bus,
		 pci->attr->pcidev.dev, pci->attr->pcidev.func);
}

static int is_gpu(hwloc_obj_t o)
{
	unsigned cls = o->attr->pcidev.class_id;
	return o->attr->pcidev.vendor_id == 0x10de && (cls == 0x0302 || cls == 0x0300);
}

static hwloc_obj_t openfabrics_child(hwloc_obj_t pci)
{
	for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling)
		if (c->type == HWLOC_OBJ_OS_DEVICE && c->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS)
			return c;
	return NULL;
}

static void locality(hwloc_topology_t h, hwloc_obj_t pci, efab_topo_dev_t *d)
{
	hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(h, pci);
	char *s = NULL;
	d->numa = anc && anc->nodeset ? hwloc_bitmap_first(anc->nodeset) : -1;
	if (anc && anc->cpuset && hwloc_bitmap_list_asprintf(&s, anc->cpuset) >= 0) {
		snprintf(d->cpuset, sizeof(d->cpuset), "%s", s);
		free(s);
	}
}

static int cmp_dev(const void *a, const void *b)
{
	return strcmp(((const efab_topo_dev_t *)a)->busid, ((const efab_topo_dev_t *)b)->busid);
}

/* hwloc_obj_is_in_subtree() compares cpusets, which I/O objects lack: walk up. */
static int under(hwloc_obj_t o, hwloc_obj_t anc)
{
	for (; o; o = o->parent)
		if (o == anc)
			return 1;
	return 0;
}

static hwloc_obj_t pci_at(hwloc_topology_t h, const char *busid)
{
	unsigned dom, bus, dev, fn;
	if (sscanf(busid, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4)
		return NULL;
	return hwloc_get_pcidev_by_busid(h, dom, bus, dev, fn);
}

/* NICs nearest each GPU: the closest ancestor of the GPU that holds NICs
 * (local: all of them); GPUs under that same ancestor split its NICs evenly,
 * in bus order (near). */
static void assign_nics(efab_topo_t *t)
{
	hwloc_topology_t h = t->hw;
	for (int g = 0; g < t->ngpus; g++) {
		hwloc_obj_t gp = pci_at(h, t->gpus[g].busid);
		for (hwloc_obj_t anc = gp ? gp->parent : NULL; anc; anc = anc->parent) {
			int nn[EFAB_TOPO_MAX * 4], n = 0, mine = 0, share = 0;
			for (int k = 0; k < t->nnics; k++) {
				hwloc_obj_t np = pci_at(h, t->nics[k].busid);
				if (under(np, anc))
					nn[n++] = k;
			}
			if (!n)
				continue;
			for (int k = 0; k < n && k < 16; k++)
				t->gpus[g].local[t->gpus[g].nlocal++] = nn[k];
			for (int o = 0; o < t->ngpus; o++) {
				hwloc_obj_t op = pci_at(h, t->gpus[o].busid);
				if (under(op, anc)) {
					if (o == g)
						mine = share;
					share++;
				}
			}
			if (n >= share) {
				int per = n / share;
				for (int k = 0; k < per && k < 16; k++)
					t->gpus[g].near[t->gpus[g].nnear++] = nn[mine * per + k];
			} else {
				t->gpus[g].near[t->gpus[g].nnear++] = nn[mine % n];
			}
			break;
		}
	}
}

int efab_topo_load(const char *xml, efab_topo_t *out)
{
	efab_topo_t t;
	hwloc_topology_t h;
	memset(&t, 0, sizeof(t));
	if (load(&h, xml)) {
		efab_log_error("hwloc could not load the topology%s%s", xml ? " from " : "",
			       xml ? xml : "");
		return EFAB_ERR;
	}
	t.hw = h;
	for (hwloc_obj_t o = NULL; (o = hwloc_get_next_pcidev(h, o));) {
		hwloc_obj_t of = openfabrics_child(o);
		efab_topo_dev_t *d = NULL;
		if (is_gpu(o) && t.ngpus < EFAB_TOPO_MAX)
			d = &t.gpus[t.ngpus++];
		else if (of && t.nnics < EFAB_TOPO_MAX * 4)
			d = &t.nics[t.nnics++];
		if (!d)
			continue;
		busid_of(o, d->busid, sizeof(d->busid));
		snprintf(d->name, sizeof(d->name), "%s", of ? of->name : "");
		locality(h, o, d);
	}
	qsort(t.gpus, (size_t)t.ngpus, sizeof(t.gpus[0]), cmp_dev);
	qsort(t.nics, (size_t)t.nnics, sizeof(t.nics[0]), cmp_dev);
	assign_nics(&t);
	*out = t;
	return EFAB_OK;
}

void efab_topo_free(efab_topo_t *t)
{
	if (t->hw)
		hwloc_topology_destroy(t->hw);
	t->hw = NULL;
}

int efab_topo_pair(const efab_topo_t *t, int local_rank, int gpu, const char *gpu_busid,
		   efab_pairing_t *out)
{
	efab_pairing_t p;
	memset(&p, 0, sizeof(p));
	p.gpu = p.nic = p.numa = -1;
	if (t->ngpus) {
		int g = -1;
		if (gpu_busid && *gpu_busid)
			for (int i = 0; i < t->ngpus; i++)
				if (!strcasecmp(t->gpus[i].busid, gpu_busid))
					g = i;
		if (g < 0)
			g = gpu >= 0 ? gpu % t->ngpus : local_rank % t->ngpus;
		const efab_topo_dev_t *d = &t->gpus[g];
		p.gpu = g;
		snprintf(p.gpu_busid, sizeof(p.gpu_busid), "%s", d->busid);
		p.numa = d->numa;
		snprintf(p.cpuset, sizeof(p.cpuset), "%s", d->cpuset);
		if (d->nnear)
			p.nic = d->near[(local_rank / t->ngpus) % d->nnear];
	} else if (t->nnics) {
		p.nic = local_rank % t->nnics;
		p.numa = t->nics[p.nic].numa;
		snprintf(p.cpuset, sizeof(p.cpuset), "%s", t->nics[p.nic].cpuset);
	} else {
		return EFAB_SKIP;
	}
	if (p.nic >= 0) {
		snprintf(p.nic_name, sizeof(p.nic_name), "%s", t->nics[p.nic].name);
		snprintf(p.nic_busid, sizeof(p.nic_busid), "%s", t->nics[p.nic].busid);
	}
	*out = p;
	return EFAB_OK;
}

int efab_topo_gpu_nics(const efab_topo_t *t, int g, int which, int *idx, int max)
{
	if (g < 0 || g >= t->ngpus)
		return 0;
	const efab_topo_dev_t *d = &t->gpus[g];
	int n = which == EFAB_NICS_PAIR ? d->nnear : d->nlocal;
	const int *src = which == EFAB_NICS_PAIR ? d->near : d->local;
	for (int k = 0; k < n && k < max; k++)
		idx[k] = src[k];
	return n < max ? n : max;
}

int efab_topo_bind(const efab_topo_t *t, const efab_pairing_t *p)
{
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	int rc = EFAB_OK;
	if (!set)
		return EFAB_ERR;
	if (!p->cpuset[0] || hwloc_bitmap_list_sscanf(set, p->cpuset) ||
	    hwloc_set_cpubind(t->hw, set, HWLOC_CPUBIND_PROCESS)) {
		efab_log_error("cannot bind to cpuset %s near the GPU", p->cpuset);
		rc = EFAB_ERR;
	}
	hwloc_bitmap_free(set);
	return rc;
}

int efab_info_is_nic(const struct fi_info *info, const char *busid, const char *name)
{
	if (info->nic && info->nic->bus_attr && info->nic->bus_attr->bus_type == FI_BUS_PCI) {
		const struct fi_pci_attr *a = &info->nic->bus_attr->attr.pci;
		char b[16];
		snprintf(b, sizeof(b), "%04x:%02x:%02x.%x", a->domain_id, a->bus_id, a->device_id,
			 a->function_id);
		return busid && !strcasecmp(b, busid);
	}
	size_t n = name ? strlen(name) : 0;
	const char *dom = info->domain_attr ? info->domain_attr->name : NULL;
	return n && dom && !strncmp(dom, name, n) && (dom[n] == '\0' || dom[n] == '-');
}

void efab_topo_print(FILE *f, const efab_topo_t *t)
{
	fprintf(f, "# %d GPUs, %d NICs (OpenFabrics devices)\n", t->ngpus, t->nnics);
	for (int g = 0; g < t->ngpus; g++) {
		const efab_topo_dev_t *d = &t->gpus[g];
		fprintf(f, "GPU %d %s NUMA %d cpuset %s NICs:", g, d->busid, d->numa, d->cpuset);
		for (int k = 0; k < d->nnear; k++)
			fprintf(f, " %s (%s)", t->nics[d->near[k]].name, t->nics[d->near[k]].busid);
		fprintf(f, "%s", d->nnear ? "" : " none");
		if (d->nlocal > d->nnear) { /* the switch's NICs it shares with other GPUs */
			fprintf(f, "; its switch's NICs:");
			for (int k = 0; k < d->nlocal; k++)
				fprintf(f, " %s", t->nics[d->local[k]].name);
		}
		fprintf(f, "\n");
	}
	for (int k = 0; k < t->nnics; k++)
		fprintf(f, "NIC %s %s NUMA %d cpuset %s\n", t->nics[k].name, t->nics[k].busid,
			t->nics[k].numa, t->nics[k].cpuset);
}

int efab_topo_save_xml(const efab_topo_t *t, const char *path)
{
	if (hwloc_topology_export_xml((hwloc_topology_t)t->hw, path, 0)) {
		efab_log_error("cannot write the topology to '%s': %s", path, strerror(errno));
		return EFAB_ERR;
	}
	return EFAB_OK;
}
