#include <errno.h>
#include <rdma/fi_domain.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "efab.h"
#include "efab_cuda.h"
#include "efab_mem.h"

#define HUGE_2M (2ull << 20)

int efab_mem_host_accessible(int kind)
{
	return kind == EFAB_MEM_HOST || kind == EFAB_MEM_HOST_HUGE || kind == EFAB_MEM_CUDA_HOST;
}

int efab_mem_is_gpu(int kind)
{
	return kind == EFAB_MEM_CUDA || kind == EFAB_MEM_CUDA_HOST || kind == EFAB_MEM_CUDA_VMM;
}

int efab_mem_is_device(int kind)
{
	return kind == EFAB_MEM_CUDA || kind == EFAB_MEM_CUDA_VMM;
}

int efab_mem_iface(int kind)
{
	return efab_mem_is_device(kind) ? FI_HMEM_CUDA : FI_HMEM_SYSTEM;
}

int efab_inject_ok(int kind, size_t size, size_t inject_limit)
{
	return efab_mem_iface(kind) == FI_HMEM_SYSTEM && size <= inject_limit;
}

int efab_mem_alloc(int kind, int device, size_t len, efab_mem_t *out)
{
	efab_mem_t m = {kind, device, NULL, len, len};
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	switch (kind) {
	case EFAB_MEM_HOST:
		m.alloc_len = (len + page - 1) / page * page;
		if (posix_memalign(&m.ptr, page, m.alloc_len)) {
			efab_log_error("cannot allocate %zu bytes of host memory", len);
			return EFAB_ERR;
		}
		memset(m.ptr, 0, m.alloc_len); /* first touch outside any timing */
		break;
	case EFAB_MEM_HOST_HUGE:
		m.alloc_len = (len + HUGE_2M - 1) / HUGE_2M * HUGE_2M;
		m.ptr = mmap(NULL, m.alloc_len, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
		if (m.ptr == MAP_FAILED) {
			int e = errno;
			efab_log_error("host-huge: mmap(MAP_HUGETLB, %zu bytes) failed: %s; configure "
				       "huge pages (vm.nr_hugepages, see /proc/meminfo HugePages_Free)",
				       m.alloc_len, strerror(e));
			return e == ENOMEM || e == EINVAL ? EFAB_SKIP : EFAB_ERR;
		}
		memset(m.ptr, 0, m.alloc_len);
		break;
	case EFAB_MEM_CUDA:
	case EFAB_MEM_CUDA_HOST: {
		int rc = efab_cuda_alloc(kind == EFAB_MEM_CUDA_HOST, device, len, &m.ptr);
		if (rc)
			return rc;
		break;
	}
	case EFAB_MEM_CUDA_VMM: {
		int rc = efab_cuda_vmm_alloc(device, len, &m.ptr, &m.alloc_len);
		if (rc)
			return rc;
		break;
	}
	default:
		efab_log_error("unknown memory kind %d", kind);
		return EFAB_EUSAGE;
	}
	*out = m;
	return EFAB_OK;
}

void efab_mem_free(efab_mem_t *m)
{
	if (!m->ptr)
		return;
	switch (m->kind) {
	case EFAB_MEM_HOST:
		free(m->ptr);
		break;
	case EFAB_MEM_HOST_HUGE:
		munmap(m->ptr, m->alloc_len);
		break;
	case EFAB_MEM_CUDA_VMM:
		efab_cuda_vmm_free(m->device, m->ptr, m->alloc_len);
		break;
	default:
		efab_cuda_free(m->kind == EFAB_MEM_CUDA_HOST, m->device, m->ptr);
		break;
	}
	m->ptr = NULL;
}

int efab_mem_write(efab_mem_t *m, size_t off, const void *src, size_t len)
{
	if (efab_mem_host_accessible(m->kind)) {
		memcpy((char *)m->ptr + off, src, len);
		return EFAB_OK;
	}
	if (m->kind == EFAB_MEM_CUDA_VMM)
		return efab_cuda_copy_synced((char *)m->ptr + off, src, len, 1);
	return efab_cuda_copy((char *)m->ptr + off, src, len, 1);
}

int efab_mem_read(const efab_mem_t *m, size_t off, void *dst, size_t len)
{
	if (efab_mem_host_accessible(m->kind)) {
		memcpy(dst, (const char *)m->ptr + off, len);
		return EFAB_OK;
	}
	if (m->kind == EFAB_MEM_CUDA_VMM)
		return efab_cuda_copy_synced(dst, (const char *)m->ptr + off, len, 0);
	return efab_cuda_copy(dst, (const char *)m->ptr + off, len, 0);
}

int efab_cuda_device_count(void)
{
	return efab_cuda_count();
}

int efab_cuda_pci_bus_id(int device, char *buf, size_t len)
{
	return efab_cuda_bus_id(device, buf, len);
}
