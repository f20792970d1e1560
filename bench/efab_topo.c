/* efab_topo: the NIC <-> GPU map efabench uses for --domain auto, and the
 * libfabric domain each NIC carries. No MPI. HWLOC_XMLFILE=file.xml (or
 * --xml FILE) reads a saved topology instead of this host. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "efab.h"
#include "efab_select.h"
#include "efab_topo.h"

int main(int argc, char **argv)
{
	static const struct option lo[] = {{"xml", required_argument, 0, 'x'},
					   {"save-xml", required_argument, 0, 's'},
					   {"help", no_argument, 0, 'h'},
					   {"version", no_argument, 0, 'V'},
					   {0, 0, 0, 0}};
	const char *xml = NULL, *save = NULL;
	int c;
	efab_log_set_prefix("efab_topo");
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":x:s:hV", lo, NULL)) != -1) {
		if (c == 'x') {
			xml = optarg;
		} else if (c == 's') {
			save = optarg;
		} else if (c == 'h') {
			printf("Usage: efab_topo [--xml FILE] [--save-xml FILE]\n--save-xml writes the topology "
			       "(this host's, or --xml's) as hwloc XML\nwith its I/O objects, as lstopo --of "
			       "xml would, for machines without lstopo.\nPrint every GPU with the NICs efabench pairs "
			       "it with (nearest by PCI hierarchy, split\nevenly among GPUs sharing "
			       "them), NUMA nodes and cpusets, the placement of each local\nrank, and the "
			       "libfabric RDM domain found on each NIC.\n");
			return 0;
		} else if (c == 'V') {
			printf("efab_topo (efabench) %s\n", EFAB_VERSION);
			return 0;
		} else {
			efab_log_error("unknown option or missing value '%s' (see --help)",
				       argv[optind - 1]);
			return EFAB_EUSAGE;
		}
	}
	if (optind < argc) {
		efab_log_error("unexpected argument '%s' (see --help)", argv[optind]);
		return EFAB_EUSAGE;
	}
	efab_topo_t t;
	if (efab_topo_load(xml, &t))
		return xml ? EFAB_EUSAGE : EFAB_ERR;
	if (save && efab_topo_save_xml(&t, save)) {
		efab_topo_free(&t);
		return EFAB_ERR;
	}
	efab_topo_print(stdout, &t);
	int ranks = t.ngpus * (t.ngpus && t.gpus[0].nnear ? t.gpus[0].nnear : 1);
	if (!t.ngpus)
		ranks = t.nnics;
	for (int r = 0; r < ranks; r++) {
		efab_pairing_t p;
		if (efab_topo_pair(&t, r, -1, NULL, &p))
			break;
		printf("local rank %d: GPU %s NIC %s (%s) NUMA %d cpuset %s\n", r,
		       p.gpu_busid[0] ? p.gpu_busid : "-", p.nic_name[0] ? p.nic_name : "-",
		       p.nic_busid[0] ? p.nic_busid : "-", p.numa, p.cpuset);
	}
	struct fi_info *all = NULL;
	if (!xml && efab_getinfo_all(&all) == 0) {
		for (int k = 0; k < t.nnics; k++)
			for (struct fi_info *i = all; i; i = i->next)
				if (efab_info_is_nic(i, t.nics[k].busid, t.nics[k].name))
					printf("NIC %s: provider %s fabric %s domain %s\n", t.nics[k].name,
					       i->fabric_attr->prov_name, i->fabric_attr->name,
					       i->domain_attr->name);
		fi_freeinfo(all);
	}
	efab_topo_free(&t);
	return 0;
}
