/* Topology on synthetic hwloc XML (tests/topo, made by gen_topo.py): each
 * local rank's GPU, NIC and cpuset; fi_info matching on constructed lists
 * with PCI attributes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "efab_select.h"
#include "efab_topo.h"

#define TOPO(f) EFAB_TEST_DATA "/../topo/" f

static void test_p5_shape(void **state)
{
	(void)state;
	efab_topo_t t;
	assert_int_equal(efab_topo_load(TOPO("p5.xml"), &t), 0);
	assert_int_equal(t.ngpus, 8);
	assert_int_equal(t.nnics, 32);
	int used[32] = {0};
	for (int r = 0; r < 32; r++) {
		efab_pairing_t p;
		assert_int_equal(efab_topo_pair(&t, r, -1, NULL, &p), 0);
		assert_int_equal(p.gpu, r % 8);
		/* the NIC sits on the GPU's own switch: buses gpu+1 .. gpu+4 */
		unsigned gbus, nbus;
		sscanf(p.gpu_busid, "0000:%x:", &gbus);
		sscanf(p.nic_busid, "0000:%x:", &nbus);
		assert_true(nbus >= gbus + 1 && nbus <= gbus + 4);
		assert_int_equal(nbus - gbus - 1, r / 8); /* ranks 0-7 first NICs, 8-15 second ... */
		used[p.nic]++;
		assert_int_equal(p.numa, r % 8 < 4 ? 0 : 1);
		assert_string_equal(p.cpuset, r % 8 < 4 ? "0-7" : "8-15");
		char want[32];
		snprintf(want, sizeof(want), "rdmap%us0", nbus); /* EFA names carry the bus */
		assert_string_equal(p.nic_name, want);
	}
	for (int k = 0; k < 32; k++)
		assert_int_equal(used[k], 1); /* 32 ranks drive 32 NICs, each once */
	/* --gpu 5 and CUDA's bus id select the same GPU */
	efab_pairing_t a, b;
	assert_int_equal(efab_topo_pair(&t, 0, 5, NULL, &a), 0);
	assert_int_equal(efab_topo_pair(&t, 0, -1, "0000:62:00.0", &b), 0);
	assert_int_equal(a.gpu, 5);
	assert_int_equal(b.gpu, 5);
	assert_string_equal(a.nic_name, b.nic_name);
	efab_topo_free(&t);
}

/* p5en as AWS describes it (tests/topo/README.md): 2 GPUs and 4 NICs per
 * switch. --domains local = the 4 NICs of the GPU's switch, gpu-pair = the 2
 * exclusive to it (the first two for the switch's first GPU). */
static void test_p5en_local_and_pair(void **state)
{
	(void)state;
	efab_topo_t t;
	int idx[16];
	assert_int_equal(efab_topo_load(TOPO("p5en.xml"), &t), 0);
	assert_int_equal(t.ngpus, 8);
	assert_int_equal(t.nnics, 16);
	for (int g = 0; g < 8; g++) {
		unsigned gbus, sw;
		sscanf(t.gpus[g].busid, "0000:%x:", &gbus);
		sw = gbus & 0xf0; /* each switch's buses: 0xN2.. 0xN7 */
		int n = efab_topo_gpu_nics(&t, g, EFAB_NICS_LOCAL, idx, 16);
		assert_int_equal(n, 4);
		for (int k = 0; k < n; k++) {
			unsigned nbus;
			sscanf(t.nics[idx[k]].busid, "0000:%x:", &nbus);
			assert_int_equal(nbus, sw + 4 + (unsigned)k); /* the switch's 4, in bus order */
		}
		n = efab_topo_gpu_nics(&t, g, EFAB_NICS_PAIR, idx, 16);
		assert_int_equal(n, 2);
		int first = (gbus & 0xf) == 2; /* the switch's first GPU */
		for (int k = 0; k < n; k++) {
			unsigned nbus;
			sscanf(t.nics[idx[k]].busid, "0000:%x:", &nbus);
			assert_int_equal(nbus, sw + (first ? 4 : 6) + (unsigned)k);
		}
		assert_string_equal(t.gpus[g].cpuset, g < 4 ? "0-7" : "8-15");
	}
	/* the two GPUs of a switch: the same 4 local NICs, disjoint pairs */
	int a[16], b[16];
	assert_int_equal(efab_topo_gpu_nics(&t, 2, EFAB_NICS_PAIR, a, 16), 2);
	assert_int_equal(efab_topo_gpu_nics(&t, 3, EFAB_NICS_PAIR, b, 16), 2);
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2; j++)
			assert_int_not_equal(a[i], b[j]);
	/* out of range, and a max below the count */
	assert_int_equal(efab_topo_gpu_nics(&t, 8, EFAB_NICS_LOCAL, idx, 16), 0);
	assert_int_equal(efab_topo_gpu_nics(&t, 0, EFAB_NICS_LOCAL, idx, 3), 3);
	/* rank r's NIC (efab_topo_pair: --domain auto) is one of its GPU's pair */
	for (int r = 0; r < 16; r++) {
		efab_pairing_t p;
		assert_int_equal(efab_topo_pair(&t, r, -1, NULL, &p), 0);
		assert_int_equal(efab_topo_gpu_nics(&t, p.gpu, EFAB_NICS_PAIR, idx, 16), 2);
		assert_true(p.nic == idx[0] || p.nic == idx[1]);
		assert_int_equal(p.nic, idx[r / 8]);
	}
	efab_topo_free(&t);
}

static void test_shared_switch_splits_nics(void **state)
{
	(void)state;
	efab_topo_t t;
	efab_pairing_t p0, p1;
	assert_int_equal(efab_topo_load(TOPO("shared.xml"), &t), 0);
	assert_int_equal(t.ngpus, 2);
	assert_int_equal(t.nnics, 2);
	assert_int_equal(efab_topo_pair(&t, 0, -1, NULL, &p0), 0);
	assert_int_equal(efab_topo_pair(&t, 1, -1, NULL, &p1), 0);
	assert_string_equal(p0.nic_name, "rdmap68s0");
	assert_string_equal(p1.nic_name, "rdmap69s0");
	assert_string_equal(p0.cpuset, "0-7");
	assert_int_equal(t.gpus[0].nnear, 1);
	int idx[4];
	assert_int_equal(efab_topo_gpu_nics(&t, 0, EFAB_NICS_LOCAL, idx, 4), 2);
	assert_int_equal(efab_topo_gpu_nics(&t, 1, EFAB_NICS_PAIR, idx, 4), 1);
	assert_string_equal(t.nics[idx[0]].name, "rdmap69s0");
	efab_topo_free(&t);
	assert_int_not_equal(efab_topo_load(TOPO("missing.xml"), &t), 0);
}

/* fi_info for an EFA domain, with or without PCI attributes. */
static struct fi_info *efa_info(struct fi_info *prev, const char *fabric, const char *domain,
				struct fid_nic *nic)
{
	struct fi_info *i = fi_allocinfo();
	i->fabric_attr->prov_name = strdup("efa");
	i->fabric_attr->name = strdup(fabric);
	i->domain_attr->name = strdup(domain);
	i->ep_attr->type = FI_EP_RDM;
	i->nic = nic;
	if (prev)
		prev->next = i;
	return i;
}

static void test_info_matching(void **state)
{
	(void)state;
	static struct fi_bus_attr bus[2];
	static struct fid_nic nic[2];
	for (int k = 0; k < 2; k++) {
		bus[k].bus_type = FI_BUS_PCI;
		bus[k].attr.pci.domain_id = 0;
		bus[k].attr.pci.bus_id = (uint8_t)(0x13 + k);
		nic[k].bus_attr = &bus[k];
	}
	/* libfabric >= 2.1 order: efa-direct then efa, per NIC */
	struct fi_info *head = efa_info(NULL, "efa-direct", "rdmap19s0-rdm", &nic[0]);
	struct fi_info *t = efa_info(head, "efa", "rdmap19s0-rdm", &nic[0]);
	t = efa_info(t, "efa-direct", "rdmap20s0-rdm", &nic[1]);
	t = efa_info(t, "efa", "rdmap20s0-rdm", &nic[1]);
	struct fi_info *nonic = efa_info(t, "efa", "rdmap21s0-rdm", NULL);

	assert_true(efab_info_is_nic(head, "0000:13:00.0", "rdmap19s0"));
	assert_false(efab_info_is_nic(head, "0000:14:00.0", "rdmap20s0"));
	/* no PCI attributes: the domain name prefix decides */
	assert_true(efab_info_is_nic(nonic, NULL, "rdmap21s0"));
	assert_false(efab_info_is_nic(nonic, NULL, "rdmap2"));

	efab_fabric_req_t req = {.provider = "efa", .fabric = "efa", .domain = "auto",
				 .nic_busid = "0000:14:00.0", .nic_name = "rdmap20s0"};
	const struct fi_info *m = efab_info_match(head, &req);
	assert_non_null(m);
	assert_string_equal(m->domain_attr->name, "rdmap20s0-rdm");
	assert_string_equal(m->fabric_attr->name, "efa");
	req.fabric = "efa-direct";
	req.nic_busid = "0000:13:00.0";
	m = efab_info_match(head, &req);
	assert_string_equal(m->domain_attr->name, "rdmap19s0-rdm");
	assert_string_equal(m->fabric_attr->name, "efa-direct");
	req.nic_busid = "0000:99:00.0";
	req.nic_name = "rdmap153s0";
	assert_null(efab_info_match(head, &req));
	for (struct fi_info *i = head; i; i = i->next)
		i->nic = NULL; /* ours, not libfabric's to close */
	fi_freeinfo(head);
}

static void test_line_rate(void **state)
{
	(void)state;
	static struct fi_link_attr link = {.speed = 200000000000ull}; /* 200 Gb/s, as EFA reports */
	static struct fid_nic nic = {.link_attr = &link};
	struct fi_info *i = efa_info(NULL, "efa-direct", "rdmap19s0-rdm", &nic);
	assert_true(efab_info_link_gbps(i) == 200.0);
	/* 12500 MB/s = 100 Gb/s: half of one link, a quarter of two */
	assert_true(efab_pct_of_link(12500.0, 200.0) == 50.0);
	assert_true(efab_pct_of_link(12500.0, 400.0) == 25.0);
	assert_true(efab_pct_of_link(12500.0, 0.0) == 0.0);
	i->nic = NULL;
	assert_true(efab_info_link_gbps(i) == 0.0);
	fi_freeinfo(i);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_p5_shape),
		cmocka_unit_test(test_p5en_local_and_pair),
		cmocka_unit_test(test_shared_switch_splits_nics),
		cmocka_unit_test(test_info_matching),
		cmocka_unit_test(test_line_rate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
