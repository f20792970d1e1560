/* What a run ran on (efab_run_info_t, efab_result.h), filled from the
 * running libfabric and the fi_info a run uses. */
#include <stdio.h>

#include <rdma/fabric.h>

#include "efab_abi.h"
#include "efab_opts.h"
#include "efab_result.h"
#include "efab_select.h"

void efab_run_info_libfabric(efab_run_info_t *ri)
{
	uint32_t v = fi_version(), a = efab_fi_api_version();
	snprintf(ri->libfabric_version, sizeof(ri->libfabric_version), "%u.%u", FI_MAJOR(v),
		 FI_MINOR(v));
	snprintf(ri->libfabric_built, sizeof(ri->libfabric_built), "%d.%d", FI_MAJOR_VERSION,
		 FI_MINOR_VERSION);
	snprintf(ri->libfabric_api, sizeof(ri->libfabric_api), "%u.%u", FI_MAJOR(a), FI_MINOR(a));
	efab_libfabric_path(ri->libfabric_path, sizeof(ri->libfabric_path));
	efab_efa_installer_of(ri->libfabric_path, ri->efa_installer, sizeof(ri->efa_installer));
}

void efab_run_info_ran_on(efab_run_info_t *ri, const char *provider, const char *fabric,
			  const char *domain, const char *provider_version)
{
	efab_run_info_libfabric(ri);
	snprintf(ri->provider_version, sizeof(ri->provider_version), "%s", provider_version);
	snprintf(ri->provider, sizeof(ri->provider), "%s", provider);
	snprintf(ri->fabric, sizeof(ri->fabric), "%s", fabric);
	snprintf(ri->domain, sizeof(ri->domain), "%s", domain);
}

void efab_run_info_from_fi(const struct fi_info *info, efab_run_info_t *ri)
{
	uint32_t pv = info->fabric_attr->prov_version;
	char version[32];
	snprintf(version, sizeof(version), "%u.%u%s", FI_MAJOR(pv), FI_MINOR(pv),
		 efab_info_simulated(info) ? " simulated" : "");
	efab_run_info_ran_on(ri, info->fabric_attr->prov_name, info->fabric_attr->name,
			     info->domain_attr->name, version);
}

void efab_run_info_fabric(efab_run_info_t *ri, const struct fi_info *info, const efab_opts_t *o)
{
	efab_run_info_from_fi(info, ri);
	efab_run_info_request(ri, o->provider, o->fabric);
}
