/* libefab on its own: open a fabric, register a buffer (CUDA memory when asked
 * and there), time one RMA write and check what landed. One process writes
 * into its own registered buffer through its own endpoint, so no launcher
 * is needed; nothing of bench/ is used, only lib/ (libefab.a).
 *
 *   lib_write [-p PROVIDER] [-f FABRIC] [-m host|cuda] [-s BYTES]
 *
 * Exit 0 when the bytes landed, 77 when the provider or the memory is not
 * here (the reason on stderr), 1 on a failure, 2 on a bad argument. Built by
 * `make example` and run by `make check` (tests/integration/t_layers.sh) on
 * tcp; on a GPU machine, -m cuda registers device memory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/fi_domain.h>

#include "efab.h"
#include "efab_clock.h"
#include "efab_endpoint.h"
#include "efab_mem.h"
#include "efab_ops.h"
#include "efab_registration.h"
#include "efab_rt.h"
#include "efab_select.h"

int main(int argc, char **argv)
{
	const char *prov = "tcp", *fabric = NULL, *mem = "host";
	size_t size = 4096;
	int opt;
	while ((opt = getopt(argc, argv, "p:f:m:s:")) != -1) {
		switch (opt) {
		case 'p': prov = optarg; break;
		case 'f': fabric = optarg; break;
		case 'm': mem = optarg; break;
		case 's': size = strtoull(optarg, NULL, 0); break;
		default: fprintf(stderr, "usage: lib_write [-p PROV] [-f FABRIC] [-m host|cuda] [-s BYTES]\n"); return 2;
		}
	}
	int kind = !strcmp(mem, "cuda") ? EFAB_MEM_CUDA : !strcmp(mem, "host") ? EFAB_MEM_HOST : -1;
	if (kind < 0 || size == 0) {
		fprintf(stderr, "lib_write: -m host|cuda and -s > 0\n");
		return 2;
	}
	efab_log_set_prefix("lib_write");
	efab_clock_init();

	/* 1. selection: what the run needs, in libefab's own request */
	efab_fabric_req_t req = {.provider = prov, .fabric = fabric, .caps = FI_RMA | FI_WRITE |
								   FI_REMOTE_WRITE,
				 .hmem = efab_mem_is_gpu(kind)};
	struct fi_info *info;
	int rc = efab_fabric_select(&req, &info);
	if (rc)
		return rc;

	/* 2. fabric, domain, CQ, AV and endpoint; the one-rank runtime puts this
	 * process's own address in the AV as peer 0 */
	efab_fabric_t fab;
	if ((rc = efab_fabric_open(info, efab_rt_single(), 10.0, &fab)))
		return rc;

	/* 3. memory and registration: a source and a target half */
	efab_mem_t m;
	if ((rc = efab_mem_alloc(kind, 0, 2 * size, &m))) {
		efab_fabric_close(&fab);
		return rc;
	}
	unsigned char *pattern = malloc(size), *back = malloc(size);
	for (size_t i = 0; i < size; i++)
		pattern[i] = (unsigned char)(i * 7 + 1);
	efab_mr_t mr;
	efab_rkey_t key;
	rc = efab_mem_write(&m, 0, pattern, size);
	if (!rc)
		rc = efab_mem_write(&m, size, memset(back, 0, size), size);
	if (!rc)
		rc = efab_mr_register(&fab, m.ptr, 2 * size, efab_mem_iface(kind), 0,
				      FI_WRITE | FI_REMOTE_WRITE, &mr);
	if (rc)
		goto out_mem;
	if ((rc = efab_mr_exchange(&fab, &mr, &key)))
		goto out_mr;

	/* 4. one write, timed from the post to its completion */
	efab_waitfor_t w = {.what = "write completion", .op = "write", .size = size};
	uint64_t t0 = efab_ticks();
	rc = efab_post_write(&fab, 0, m.ptr, size, mr.desc, key.base + size, key.key, 0, 0, &w);
	if (!rc)
		rc = efab_wait_tx(&fab, fab.tx_posted, &w);
	uint64_t t1 = efab_ticks();

	/* 5. what landed (the provider's completion says the write is done at
	 * the target for a write into this process's own memory) */
	if (!rc && !(rc = efab_mem_read(&m, size, back, size))) {
		if (memcmp(back, pattern, size)) {
			efab_log_error("the %zu bytes written differ from the source", size);
			rc = EFAB_ERR;
		} else {
			printf("lib_write: %s on %s (%s), %zu B from %s memory: one write %.2f us "
			       "(post to completion, %s clock), data checked\n",
			       info->fabric_attr->prov_name, info->fabric_attr->name,
			       info->domain_attr->name, size, mem, efab_ticks_us(t1 - t0),
			       efab_clock_info()->name);
		}
	}
	efab_rkeys_release(&fab, &key, 1);
out_mr:
	efab_mr_dereg(&mr);
out_mem:
	efab_mem_free(&m);
	free(pattern);
	free(back);
	efab_fabric_close(&fab);
	return rc;
}
