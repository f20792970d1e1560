#define _GNU_SOURCE /* dladdr */
#include <ctype.h>
#include <dlfcn.h>
#include <link.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "efab_abi.h"

/* The mirrors must agree with the headers wherever the headers have the field:
 * a build against any libfabric checks them. */
#define SAME_FIELD(mine, theirs, f)                                                          \
	_Static_assert(offsetof(mine, f) == offsetof(theirs, f), #f " of " #theirs " moved")
SAME_FIELD(efab_mr_attr_t, struct fi_mr_attr, mr_iov);
SAME_FIELD(efab_mr_attr_t, struct fi_mr_attr, iov_count);
SAME_FIELD(efab_mr_attr_t, struct fi_mr_attr, access);
SAME_FIELD(efab_mr_attr_t, struct fi_mr_attr, offset);
SAME_FIELD(efab_mr_attr_t, struct fi_mr_attr, requested_key);
SAME_FIELD(efab_mr_attr_t, struct fi_mr_attr, context);
SAME_FIELD(efab_mr_attr_t, struct fi_mr_attr, auth_key_size);
SAME_FIELD(efab_mr_attr_t, struct fi_mr_attr, auth_key);
SAME_FIELD(efab_mr_attr_t, struct fi_mr_attr, iface);
SAME_FIELD(efab_mr_attr_t, struct fi_mr_attr, device);
_Static_assert(sizeof(efab_mr_attr_t) >= sizeof(struct fi_mr_attr), "fi_mr_attr grew");
SAME_FIELD(efab_cq_err_entry_t, struct fi_cq_err_entry, op_context);
SAME_FIELD(efab_cq_err_entry_t, struct fi_cq_err_entry, flags);
SAME_FIELD(efab_cq_err_entry_t, struct fi_cq_err_entry, len);
SAME_FIELD(efab_cq_err_entry_t, struct fi_cq_err_entry, buf);
SAME_FIELD(efab_cq_err_entry_t, struct fi_cq_err_entry, data);
SAME_FIELD(efab_cq_err_entry_t, struct fi_cq_err_entry, tag);
SAME_FIELD(efab_cq_err_entry_t, struct fi_cq_err_entry, olen);
SAME_FIELD(efab_cq_err_entry_t, struct fi_cq_err_entry, err);
SAME_FIELD(efab_cq_err_entry_t, struct fi_cq_err_entry, prov_errno);
SAME_FIELD(efab_cq_err_entry_t, struct fi_cq_err_entry, err_data);
SAME_FIELD(efab_cq_err_entry_t, struct fi_cq_err_entry, err_data_size);
_Static_assert(sizeof(efab_cq_err_entry_t) >= sizeof(struct fi_cq_err_entry),
	       "fi_cq_err_entry grew");
#if FI_MAJOR_VERSION >= 2
SAME_FIELD(efab_mr_attr_t, struct fi_mr_attr, hmem_data);
SAME_FIELD(efab_mr_attr_t, struct fi_mr_attr, page_size);
SAME_FIELD(efab_mr_attr_t, struct fi_mr_attr, base_mr);
SAME_FIELD(efab_mr_attr_t, struct fi_mr_attr, sub_mr_cnt);
SAME_FIELD(efab_cq_err_entry_t, struct fi_cq_err_entry, src_addr);
_Static_assert(FI_OPT_MAX_RMA_SIZE == EFAB_FI_OPT_MAX_RMA_SIZE, "FI_OPT_MAX_RMA_SIZE");
_Static_assert(FI_OPT_INJECT_RMA_SIZE == EFAB_FI_OPT_INJECT_RMA_SIZE, "FI_OPT_INJECT_RMA_SIZE");
_Static_assert(FI_OPT_CUDA_API_PERMITTED == EFAB_FI_OPT_CUDA_API_PERMITTED, "FI_OPT_CUDA_API_PERMITTED");
_Static_assert(FI_PROGRESS_CONTROL_UNIFIED == EFAB_FI_PROGRESS_CONTROL_UNIFIED,
	       "FI_PROGRESS_CONTROL_UNIFIED");
#endif
#ifdef FI_MR_DMABUF
_Static_assert(FI_MR_DMABUF == EFAB_FI_MR_DMABUF, "FI_MR_DMABUF");
#endif

uint32_t efab_fi_api_version(void)
{
	uint32_t v = fi_version();
	return v < EFAB_FI_ABI_MAX ? v : EFAB_FI_ABI_MAX;
}

void efab_libfabric_path(char *buf, size_t len)
{
	Dl_info di;
	buf[0] = '\0';
	if (dladdr((void *)(uintptr_t)fi_version, &di) && di.dli_fname) {
		char real[PATH_MAX];
		snprintf(buf, len, "%s", realpath(di.dli_fname, real) ? real : di.dli_fname);
	}
}

void efab_efa_installer_parse(const char *text, char *buf, size_t len)
{
	buf[0] = '\0';
	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n');
		size_t n = end ? (size_t)(end - line) : strlen(line);
		char one[256];
		snprintf(one, sizeof(one), "%.*s", (int)(n < sizeof(one) ? n : sizeof(one) - 1), line);
		for (char *p = one; *p; p++)
			*p = (char)tolower((unsigned char)*p);
		char *colon = strrchr(one, ':');
		if (strstr(one, "installer version") && colon) {
			char *v = colon + 1;
			while (isspace((unsigned char)*v))
				v++;
			size_t k = strlen(v);
			while (k && isspace((unsigned char)v[k - 1]))
				v[--k] = '\0';
			/* the version as written (digits and dots keep their case) */
			snprintf(buf, len, "%s", line + (v - one));
			buf[k < len ? k : len - 1] = '\0';
			return;
		}
		line = end ? end + 1 : NULL;
	}
}

void efab_efa_installer_of(const char *lib_path, char *buf, size_t len)
{
	char p[PATH_MAX];
	buf[0] = '\0';
	snprintf(p, sizeof(p), "%s", lib_path);
	/* <prefix>/lib64/libfabric.so.1 -> <prefix> -> its parent */
	for (int up = 0; up < 3; up++) {
		char *s = strrchr(p, '/');
		if (!s || s == p)
			return;
		*s = '\0';
	}
	char file[PATH_MAX + 32];
	snprintf(file, sizeof(file), "%s/efa_installed_packages", p);
	FILE *f = fopen(file, "r");
	if (!f)
		return;
	char text[4096];
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	efab_efa_installer_parse(text, buf, len);
}

void efab_libfabric_pc_version(const char *libdir, char *out, size_t len)
{
	char path[4200], line[256];
	out[0] = '\0';
	snprintf(path, sizeof(path), "%s/pkgconfig/libfabric.pc", libdir);
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Version:", 8)) {
			char *v = line + 8;
			while (*v == ' ' || *v == '\t')
				v++;
			v[strcspn(v, " \t\r\n")] = '\0';
			snprintf(out, len, "%s", v);
			break;
		}
	fclose(f);
}

void efab_rdma_core_release_of(const char *path, char *out, size_t len)
{
	out[0] = '\0';
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	const char *so = strstr(base, ".so.");
	if (!so)
		return;
	/* .so.1.<abi>.<major>.<minor>: the last two numbers are the release */
	unsigned n[8];
	int k = 0;
	for (const char *p = so + 4; *p && k < 8;) {
		char *end;
		unsigned long v = strtoul(p, &end, 10);
		if (end == p || (*end && *end != '.'))
			return;
		n[k++] = (unsigned)v;
		p = *end ? end + 1 : end;
	}
	if (k == 4)
		snprintf(out, len, "%u.%u", n[2], n[3]);
}

typedef struct loaded_libs {
	char ibverbs[PATH_MAX], efa[PATH_MAX];
} loaded_libs_t;

static int find_loaded(struct dl_phdr_info *info, size_t size, void *arg)
{
	loaded_libs_t *l = arg;
	(void)size;
	const char *name = info->dlpi_name, *base;
	if (!name || !*name)
		return 0;
	base = strrchr(name, '/');
	base = base ? base + 1 : name;
	if (!strncmp(base, "libibverbs.so", 13) && !l->ibverbs[0])
		snprintf(l->ibverbs, sizeof(l->ibverbs), "%s", name);
	else if (!strncmp(base, "libefa.so", 9) && !l->efa[0])
		snprintf(l->efa, sizeof(l->efa), "%s", name);
	return 0;
}

/* The simulated device's libibverbs exports efasim_* (tests/efasim). */
static int is_efasim(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		return 0;
	int sim = dlsym(h, "efasim_is_sim_context") != NULL;
	dlclose(h);
	return sim;
}

void efab_rdma_core_version(char *ver, size_t vlen, char *detail, size_t dlen)
{
	loaded_libs_t l = {{0}, {0}};
	char vi[32] = "", ve[32] = "", ri[PATH_MAX] = "", re[PATH_MAX] = "", v[64] = "";
	dl_iterate_phdr(find_loaded, &l);
	if (l.ibverbs[0] && !realpath(l.ibverbs, ri))
		snprintf(ri, sizeof(ri), "%s", l.ibverbs);
	if (l.efa[0] && !realpath(l.efa, re))
		snprintf(re, sizeof(re), "%s", l.efa);
	efab_rdma_core_release_of(ri, vi, sizeof(vi));
	efab_rdma_core_release_of(re, ve, sizeof(ve));
	if (ri[0] && is_efasim(ri))
		snprintf(v, sizeof(v), "efasim");
	else if (vi[0] && ve[0] && strcmp(vi, ve))
		snprintf(v, sizeof(v), "%s/%s", vi, ve); /* two releases mixed */
	else
		snprintf(v, sizeof(v), "%s", vi[0] ? vi : ve);
	if (ver)
		snprintf(ver, vlen, "%s", v);
	if (detail)
		snprintf(detail, dlen, "%s%s%s", ri[0] ? ri : "no libibverbs loaded",
			 re[0] ? ", " : "", re);
}

static void read_trimmed(const char *path, char *buf, size_t len)
{
	buf[0] = '\0';
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	fclose(f);
	size_t k = strlen(buf);
	while (k && isspace((unsigned char)buf[k - 1]))
		buf[--k] = '\0';
}

static const char *sysfs_root(void)
{
	const char *s = getenv("SYSFS_PATH");
	return s && *s ? s : "/sys";
}

void efab_efa_driver_version(char *buf, size_t len)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/module/efa/version", sysfs_root());
	read_trimmed(p, buf, len);
}

void efab_ib_fw_ver(const char *dev, char *buf, size_t len)
{
	char d[128], p[PATH_MAX];
	snprintf(d, sizeof(d), "%s", dev);
	char *dash = strrchr(d, '-');
	if (dash && (!strcmp(dash, "-rdm") || !strcmp(dash, "-dgrm")))
		*dash = '\0';
	snprintf(p, sizeof(p), "%s/class/infiniband/%s/fw_ver", sysfs_root(), d);
	read_trimmed(p, buf, len);
}
