/* The facts of the host this process runs on (hostfacts.h). */
#include <rdma/fabric.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "efab_abi.h"
#include "efab_clock.h"
#include "efab_json.h"
#include "efab_topo.h"
#include "hostfacts.h"

static void first_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	buf[0] = '\0';
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

static void command_output(const char *cmd, char *buf, size_t len)
{
	buf[0] = '\0';
	FILE *p = popen(cmd, "r");
	if (!p)
		return;
	size_t n = fread(buf, 1, len - 1, p);
	buf[n] = '\0';
	pclose(p);
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
}

static void field(FILE *f, const char **next, const char *sep, const char *key, const char *val)
{
	efab_json_kv(f, *next, key, val);
	*next = sep;
}

void efab_host_facts_json(FILE *f, const char *first, const char *sep)
{
	const char *next = first;
	char buf[4096];
	struct utsname u;
	uname(&u);
	uint32_t v = fi_version();
	field(f, &next, sep, "hostname", u.nodename);
	snprintf(buf, sizeof(buf), "%s %s %s", u.sysname, u.release, u.machine);
	field(f, &next, sep, "kernel", buf);
	command_output("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'", buf,
		       sizeof(buf));
	field(f, &next, sep, "cpu", buf);
	first_line("/sys/devices/virtual/dmi/id/product_name", buf, sizeof(buf));
	field(f, &next, sep, "instance_type", buf);
	snprintf(buf, sizeof(buf), "%u.%u", FI_MAJOR(v), FI_MINOR(v));
	field(f, &next, sep, "libfabric_version", buf);
	snprintf(buf, sizeof(buf), "%d.%d", FI_MAJOR_VERSION, FI_MINOR_VERSION);
	field(f, &next, sep, "libfabric_headers", buf);
	efab_libfabric_path(buf, sizeof(buf));
	field(f, &next, sep, "libfabric_path", buf);
	command_output("cat /opt/amazon/efa_installed_packages 2>/dev/null | grep -i 'installer' | head -1",
		       buf, sizeof(buf));
	field(f, &next, sep, "efa_installer", buf);
	/* tests/efasim/run sets EFASIM_SIMULATED: every NIC of this sweep is simulated */
	field(f, &next, sep, "simulated", getenv("EFASIM_SIMULATED") ? "efasim (simulated EFA device: figures "
							       "measure the simulator, not EFA)" : "no");
	efab_efa_driver_version(buf, sizeof(buf));
	field(f, &next, sep, "efa_driver", buf);
	/* loaded by a fabric query (efab_probe asks before it writes) */
	efab_rdma_core_version(buf, 64, NULL, 0);
	field(f, &next, sep, "rdma_core", buf);
	command_output("nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null "
		       "| sort | uniq -c | sed 's/^ *//' | paste -sd ';'", buf, sizeof(buf));
	field(f, &next, sep, "gpus", buf);
	command_output("nvidia-smi 2>/dev/null | grep -o 'CUDA Version: [0-9.]*' | cut -d' ' -f3",
		       buf, sizeof(buf));
	field(f, &next, sep, "cuda_driver_version", buf);
	command_output("mpirun --version 2>/dev/null | head -1", buf, sizeof(buf));
	field(f, &next, sep, "mpi", buf);
	command_output("ls -d $NVSHMEM_HOME/lib/libnvshmem_host.so* 2>/dev/null | head -1", buf,
		       sizeof(buf));
	field(f, &next, sep, "nvshmem", buf);
	efab_topo_summary(buf, sizeof(buf));
	field(f, &next, sep, "topology", buf);
	efab_clock_init(); /* the clock the benchmarks of this host time with */
	efab_clock_describe(buf, sizeof(buf));
	field(f, &next, sep, "clock", buf);
}

