#!/usr/bin/env python3
"""Writes the synthetic hwloc XML topologies the topology tests load:
  p5.xml       a p5.48xlarge shape: 2 packages/NUMA nodes, 8 PCIe switches (4 per
               package), each with 1 H100 GPU and 4 EFA NICs: 8 GPUs, 32 NICs
  p5en.xml     a p5en.48xlarge shape as AWS describes it: 2 packages/NUMA nodes,
               4 PCIe switches (2 per package), each with 2 H200 GPUs and 4 EFA
               NICs: 8 GPUs, 16 NICs (awsome-distributed-ai PR 1139: 2 GPUs share
               a PCIe switch and NVSHMEM's default policy gives a GPU all the NICs
               on it, the exclusive one a private pair; aws-ofi-nccl PRs 997/1005:
               2 GPUs per switch, "two NICs" there being NCCL's view, 2 EFA NICs
               each). Bus numbers are synthetic, not a p5en's.
  shared.xml   one package, one switch holding 2 GPUs and 2 EFA NICs
Run it to regenerate; the XML files are committed."""
import sys

PU_PER_PKG = 8
gp = [100]


def nid():
    gp[0] += 1
    return gp[0]


def mask(lo, n):
    return "0x%08x" % (((1 << n) - 1) << lo)


def gpu(bus, idx, dev="2330"):
    return (f'<object type="PCIDev" gp_index="{nid()}" pci_busid="0000:{bus:02x}:00.0" '
            f'pci_type="0302 [10de:{dev}] [10de:16c1] a1" pci_link_speed="31.5">'
            f'<object type="OSDev" gp_index="{nid()}" name="cuda{idx}" osdev_type="5" subtype="CUDA">'
            f'<info name="Backend" value="CUDA"/></object></object>')


def nic(bus, dev="efa1"):
    return (f'<object type="PCIDev" gp_index="{nid()}" pci_busid="0000:{bus:02x}:00.0" '
            f'pci_type="0200 [1d0f:{dev}] [1d0f:{dev}] 00" pci_link_speed="31.5">'
            f'<object type="OSDev" gp_index="{nid()}" name="rdmap{bus}s0" osdev_type="3">'
            f'<info name="Backend" value="Linux"/></object></object>')


def switch(first_bus, gpus, nics, gidx, gdev="2330", ndev="efa1"):
    """A host bridge, a switch, then GPUs and NICs on consecutive buses."""
    last = first_bus + 1 + len(gpus) + len(nics)
    inner = []
    bus = first_bus + 2
    for _ in gpus:
        inner.append(gpu(bus, gidx, gdev))
        gidx += 1
        bus += 1
    for _ in nics:
        inner.append(nic(bus, ndev))
        bus += 1
    return (f'<object type="Bridge" gp_index="{nid()}" bridge_type="0-1" depth="0" '
            f'bridge_pci="0000:[{first_bus:02x}-{last:02x}]">'
            f'<object type="Bridge" gp_index="{nid()}" bridge_type="1-1" depth="1" '
            f'pci_busid="0000:{first_bus:02x}:00.0" pci_type="0604 [1000:c030] [0000:0000] 01" '
            f'pci_link_speed="31.5" bridge_pci="0000:[{first_bus + 1:02x}-{last:02x}]">'
            + "".join(inner) + "</object></object>"), gidx


def package(p, switches):
    lo = p * PU_PER_PKG
    cores = "".join(
        f'<object type="Core" os_index="{lo + i}" cpuset="{mask(lo + i, 1)}" '
        f'complete_cpuset="{mask(lo + i, 1)}" nodeset="{mask(p, 1)}" complete_nodeset="{mask(p, 1)}" gp_index="{nid()}">'
        f'<object type="PU" os_index="{lo + i}" cpuset="{mask(lo + i, 1)}" '
        f'complete_cpuset="{mask(lo + i, 1)}" nodeset="{mask(p, 1)}" complete_nodeset="{mask(p, 1)}" gp_index="{nid()}"/></object>'
        for i in range(PU_PER_PKG))
    cs = mask(lo, PU_PER_PKG)
    return (f'<object type="Package" os_index="{p}" cpuset="{cs}" complete_cpuset="{cs}" '
            f'nodeset="{mask(p, 1)}" complete_nodeset="{mask(p, 1)}" gp_index="{nid()}">'
            f'<object type="NUMANode" os_index="{p}" cpuset="{cs}" complete_cpuset="{cs}" '
            f'nodeset="{mask(p, 1)}" complete_nodeset="{mask(p, 1)}" gp_index="{nid()}" local_memory="1073741824"/>'
            + cores + "".join(switches) + "</object>")


def machine(packages, npkg):
    cs = mask(0, PU_PER_PKG * npkg)
    ns = mask(0, npkg)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE topology SYSTEM "hwloc2.dtd">\n'
            '<topology version="2.0">\n'
            f'<object type="Machine" os_index="0" cpuset="{cs}" complete_cpuset="{cs}" '
            f'allowed_cpuset="{cs}" nodeset="{ns}" complete_nodeset="{ns}" allowed_nodeset="{ns}" gp_index="1">'
            + "".join(packages) + "</object>\n</topology>\n")


def p5():
    gidx, bus, pkgs = 0, 0x10, []
    for p in range(2):
        sw = []
        for _ in range(4):
            s, gidx = switch(bus, [0], [0, 0, 0, 0], gidx)
            sw.append(s)
            bus += 0x10
        pkgs.append(package(p, sw))
    return machine(pkgs, 2)


def p5en():
    """2 GPUs then 4 NICs per switch; the PCI ids (10de:2335, 1d0f:efa2) are
    illustrative: efabench reads the vendor, the class and the OS device."""
    gidx, bus, pkgs = 0, 0x10, []
    for p in range(2):
        sw = []
        for _ in range(2):
            s, gidx = switch(bus, [0, 0], [0, 0, 0, 0], gidx, "2335", "efa2")
            sw.append(s)
            bus += 0x10
        pkgs.append(package(p, sw))
    return machine(pkgs, 2)


def shared():
    s, _ = switch(0x40, [0, 0], [0, 0], 0)
    return machine([package(0, [s])], 1)


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    open(f"{out}/p5.xml", "w").write(p5())
    open(f"{out}/shared.xml", "w").write(shared())
    open(f"{out}/p5en.xml", "w").write(p5en())  # after the others: their gp_index unchanged
