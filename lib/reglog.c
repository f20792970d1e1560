/* libfabric's MR log, captured around one registration (efab_reglog.h). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_ext.h>

#include "efab.h"
#include "efab_reglog.h"

const char *efab_reglog_path(const char *log, int captured, int explicit_dmabuf, uint32_t lf)
{
	if (explicit_dmabuf)
		return "dmabuf";
	if (!captured || !log)
		return "unknown";
	if (strstr(log, "dmabuf support for") && strstr(log, "was incorrect"))
		return "dmabuf->va";
	if (strstr(log, "Registering dmabuf MR"))
		return "dmabuf";
	if (strstr(log, "Fall back to ibv_reg_mr"))
		return "va";
	/* silent: ibv_reg_mr in every release read (efa_mr.c of 2.1.0, 2.4.0,
	 * 2.6.0, 2.7.0a1) */
	if (FI_VERSION_GE(lf, FI_VERSION(2, 1)) && FI_VERSION_LT(lf, FI_VERSION(2, 8)))
		return "va";
	return "unknown";
}

#ifdef FI_LOG_PROV_FILTERED /* fi_import_log: rdma/fi_ext.h of libfabric >= 1.13 */

static char cap[4096];
static size_t ncap;

static int rl_enabled(const struct fi_provider *prov, enum fi_log_level level, enum fi_log_subsys subsys,
		      uint64_t flags)
{
	(void)prov, (void)flags;
	return level == FI_LOG_WARN || (subsys == FI_LOG_MR && level <= FI_LOG_INFO);
}

static int rl_ready(const struct fi_provider *prov, enum fi_log_level level, enum fi_log_subsys subsys,
		    uint64_t flags, uint64_t *showtime)
{
	(void)showtime;
	return rl_enabled(prov, level, subsys, flags);
}

static void rl_log(const struct fi_provider *prov, enum fi_log_level level, enum fi_log_subsys subsys,
		   const char *func, int line, const char *msg)
{
	if (subsys == FI_LOG_MR && ncap + 1 < sizeof(cap)) {
		int n = snprintf(cap + ncap, sizeof(cap) - ncap, "%s", msg);
		if (n > 0)
			ncap = ncap + (size_t)n < sizeof(cap) ? ncap + (size_t)n : sizeof(cap) - 1;
	}
	if (level == FI_LOG_WARN) /* what libfabric would have printed by default */
		fprintf(stderr, "libfabric:%d::%s:mr:%s():%d<warn> %s", (int)getpid(),
			prov && prov->name ? prov->name : "?", func, line, msg);
}

static struct fi_ops_log rl_ops = {
	.size = sizeof(struct fi_ops_log), .enabled = rl_enabled, .ready = rl_ready, .log = rl_log};
static struct fid_logging rl_fid;
static int rl_on;

int efab_reglog_begin(void)
{
	ncap = 0;
	cap[0] = 0;
	memset(&rl_fid, 0, sizeof(rl_fid));
	rl_fid.ops = &rl_ops;
	rl_on = !fi_import_log(FI_VERSION(1, 13), 0, &rl_fid);
	return rl_on ? EFAB_OK : EFAB_SKIP;
}

void efab_reglog_end(char *buf, size_t len)
{
	if (rl_on) /* closing the imported fid restores libfabric's own logging */
		fi_close(&rl_fid.fid);
	rl_on = 0;
	if (len)
		snprintf(buf, len, "%s", cap);
}

#else

int efab_reglog_begin(void)
{
	return EFAB_SKIP;
}

void efab_reglog_end(char *buf, size_t len)
{
	if (len)
		buf[0] = 0;
}

#endif
