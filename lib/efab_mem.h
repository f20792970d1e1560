/* Memory kinds: host, host-huge, cuda, cuda-host, cuda-vmm. CUDA is loaded
 * (dlopen of the driver library) only when a cuda kind is asked for. */
#ifndef EFAB_MEM_H
#define EFAB_MEM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The memory a buffer lives in (--mem). */
enum efab_mem_kind {
	EFAB_MEM_HOST = 0,
	EFAB_MEM_HOST_HUGE,
	EFAB_MEM_CUDA,
	EFAB_MEM_CUDA_HOST,
	EFAB_MEM_CUDA_VMM,
	EFAB_MEM_N_KINDS /* count: a new kind goes above this line */
};

typedef struct efab_mem {
	int kind;      /* enum efab_mem_kind */
	int device;    /* CUDA ordinal for cuda kinds */
	void *ptr;
	size_t len;    /* what was asked for */
	size_t alloc_len;
} efab_mem_t;

/* EFAB_OK, EFAB_SKIP (kind unavailable here: no huge pages, no CUDA, no GPU;
 * the message names the missing piece) or EFAB_ERR. */
int efab_mem_alloc(int kind, int device, size_t len, efab_mem_t *out);
void efab_mem_free(efab_mem_t *m);

/* CPU load/store works on this kind (host, host-huge, cuda-host). */
int efab_mem_host_accessible(int kind);
/* libfabric iface for registration: FI_HMEM_SYSTEM or FI_HMEM_CUDA. */
int efab_mem_iface(int kind);
int efab_mem_is_gpu(int kind);
/* GPU device memory (cuda, cuda-vmm): registered with FI_HMEM_CUDA, reached
 * with CUDA copies, exportable as a dma-buf. */
int efab_mem_is_device(int kind);
/* Whether this rank may inject (fi_inject_write) size bytes from its memory
 * of this kind: within the endpoint's RMA inject limit, and only from memory
 * registered as host memory. An inject copies the source with the CPU and
 * takes no descriptor (efa's RDM path memcpys it), and the spec forbids
 * device-memory inject buffers under FI_MR_HMEM. */
int efab_inject_ok(int kind, size_t size, size_t inject_limit);

/* Copies between a host buffer and mem at offset (cudaMemcpy for cuda). */
int efab_mem_write(efab_mem_t *m, size_t off, const void *src, size_t len);
int efab_mem_read(const efab_mem_t *m, size_t off, void *dst, size_t len);

/* Number of visible CUDA devices, or a negative efab status (logged). */
int efab_cuda_device_count(void);
/* PCI bus id "0000:53:00.0" of a CUDA device. */
int efab_cuda_pci_bus_id(int device, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
