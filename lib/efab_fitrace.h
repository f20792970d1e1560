/* libefab_fitrace.so (bench/tools/fitrace.c): an LD_PRELOAD interposer
 * around libfabric that counts, below whoever uses libfabric (NVSHMEM's
 * libfabric transport, NCCL's OFI plugin), the memory registrations each
 * domain receives (fi_mr_reg, fi_mr_regv, fi_mr_regattr) and records the
 * fabric, provider and mr_mode each domain was opened with. A program reads
 * it through efab_fitrace_read, found with dlsym(RTLD_DEFAULT, ...): absent
 * when the interposer is not preloaded. */
#ifndef EFAB_FITRACE_H
#define EFAB_FITRACE_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __cplusplus
extern "C" {
#endif
#define EFAB_FITRACE_MAX_DOMAINS 64
typedef struct efab_fitrace_dom {
	const void *fid;   /* the struct fid_domain (identity only) */
	char fabric[64];   /* fabric_attr->name of the domain's fi_info */
	char prov[32];     /* fabric_attr->prov_name */
	char name[64];     /* domain_attr->name */
	int mr_mode;       /* domain_attr->mr_mode */
	int simulated;     /* the NIC is efasim's (fi_info nic firmware "efasim...") */
	int inner;         /* opened by a provider while it opened another domain
			    * (rxm's core domain, the efa fabric's shm peer domain):
			    * its registrations are the provider's own */
	uint64_t regs;     /* fi_mr_reg + fi_mr_regv + fi_mr_regattr calls on it */
	uint64_t regattr;  /* of which fi_mr_regattr */
	uint64_t failed;   /* of which returned an error */
} efab_fitrace_dom_t;
/* Copies up to max domains (in the order they were opened) into out; returns
 * how many domains were opened in all. */
typedef size_t (*efab_fitrace_read_fn)(efab_fitrace_dom_t *out, size_t max);
#define EFAB_FITRACE_READ "efab_fitrace_read"

/* What the interposer did with EFAB_FITRACE_FABRIC, read through
 * efab_fitrace_filter (dlsym(RTLD_DEFAULT, EFAB_FITRACE_FILTER); absent in an
 * interposer older than this report). It interposes fi_getinfo at
 * EFAB_FITRACE_GETINFO_VERSIONS; a caller linked to another version (1.0-1.2,
 * or one newer than 1.10) goes past it unfiltered, and only these counts can
 * tell. */
#define EFAB_FITRACE_GETINFO_VERSIONS "FABRIC_1.3 1.7 1.8 1.9 1.10"
typedef struct efab_fitrace_filter {
	char want[64];       /* EFAB_FITRACE_FABRIC as the interposer read it; "" never set */
	uint64_t calls;      /* fi_getinfo calls through an interposed entry, every version */
	uint64_t applied;    /* of which returned a list with EFAB_FITRACE_FABRIC set: the
			      * filter walked it (only want's entries kept, or -FI_ENODATA) */
	uint64_t refused;    /* of which refused (-FI_ENOSYS): the loaded libfabric lacks
			      * the caller's version, whose fi_info it cannot fill */
	uint32_t versions;   /* bit m: fi_getinfo@FABRIC_1.m was called through the interposer */
	char uncovered[32];  /* the newest fi_getinfo@FABRIC_1.m (m > 10) the loaded
			      * libfabric exports, which the interposer does not interpose; "" */
} efab_fitrace_filter_t;
typedef void (*efab_fitrace_filter_fn)(efab_fitrace_filter_t *out);
#define EFAB_FITRACE_FILTER "efab_fitrace_filter"

/* Whether a run may say it ran with EFAB_FITRACE_FABRIC: 0 when the variable
 * is not set (nothing to claim); 1 when the interposer's report f says the
 * filter was applied to at least one fi_getinfo call and every domain the
 * program's libfabric user opened (d[0..n), outer ones) is of that fabric;
 * -1 otherwise (f NULL: no interposer, or one without the report), with the
 * reason in why. */
static inline int efab_fitrace_claim(const efab_fitrace_filter_t *f, const efab_fitrace_dom_t *d, size_t n,
				     char *why, size_t len)
{
	const char *want = getenv("EFAB_FITRACE_FABRIC");
	size_t outer = 0;
	snprintf(why, len, "%s", "");
	if (!want || !*want)
		return 0;
	if (!f) {
		snprintf(why, len, "EFAB_FITRACE_FABRIC=%s: libefab_fitrace.so is not preloaded or does not "
			 "report its filter", want);
		return -1;
	}
	if (!f->calls) {
		snprintf(why, len, "EFAB_FITRACE_FABRIC=%s: no fi_getinfo call went through the interposer "
			 "(it interposes %s%s%s)", want, EFAB_FITRACE_GETINFO_VERSIONS,
			 f->uncovered[0] ? "; this libfabric also exports " : "", f->uncovered);
		return -1;
	}
	if (strcmp(f->want, want)) {
		snprintf(why, len, "EFAB_FITRACE_FABRIC=%s: the interposer saw it %s%s", want,
			 f->want[0] ? "as " : "unset", f->want);
		return -1;
	}
	if (!f->applied) {
		if (f->refused)
			snprintf(why, len, "EFAB_FITRACE_FABRIC=%s: fi_getinfo refused %llu time(s): the loaded "
				 "libfabric lacks the caller's version", want, (unsigned long long)f->refused);
		else
			snprintf(why, len, "EFAB_FITRACE_FABRIC=%s: no fi_getinfo call returned entries to filter",
				 want);
		return -1;
	}
	for (size_t i = 0; d && i < n; i++) {
		if (d[i].inner)
			continue;
		outer++;
		if (strcmp(d[i].fabric, want)) {
			snprintf(why, len, "EFAB_FITRACE_FABRIC=%s: a domain of fabric %s was opened (from an "
				 "fi_getinfo the interposer did not filter%s%s)", want, d[i].fabric,
				 f->uncovered[0] ? ": this libfabric also exports " : "", f->uncovered);
			return -1;
		}
	}
	if (d && !outer) {
		snprintf(why, len, "EFAB_FITRACE_FABRIC=%s: no domain was opened", want);
		return -1;
	}
	return 1;
}

/* struct fi_info as libfabric's 1.3 ABI lays it out (src/abi_1_0.c, struct
 * fi_info_1_3): today's first fields, nic last. Every ABI from 1.2 to 1.10
 * lays fi_info out so (1.7-1.10 grew the attr structs it points to, not it). */
typedef struct efab_fi_info_1_3 {
	void *next;
	uint64_t caps, mode;
	uint32_t addr_format;
	size_t src_addrlen, dest_addrlen;
	void *src_addr, *dest_addr, *handle;
	void *tx_attr, *rx_attr, *ep_attr, *domain_attr, *fabric_attr;
	void *nic;
} efab_fi_info_1_3_t;
#ifdef __cplusplus
}
#endif
#endif
