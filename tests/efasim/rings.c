/* efasim: Shared-memory rings: receive queues and completion queues live in files
 * under EFASIM_DIR that every process maps, so an initiator can post into them. */
#include "sim.h"

struct efasim_ring_hdr *ring_create(const char *name, uint32_t want, uint32_t esize, size_t *map_size)
{
	uint32_t n = 16;
	while (n < want)
		n <<= 1;
	char path[PATH_MAX + 80];
	snprintf(path, sizeof(path), "%s/%s", sim.dir, name);
	size_t sz = sizeof(struct efasim_ring_hdr) + (size_t)n * esize;
	struct efasim_ring_hdr *h = map_file(path, sz, 1);
	if (!h)
		return NULL;
	robust_init(&h->lock);
	h->owner = sim.pid;
	h->size = n;
	h->entry_size = esize;
	h->magic = EFASIM_MAGIC;
	*map_size = sz;
	return h;
}

struct efasim_ring_hdr *ring_create_hdr(const char *name, uint32_t entries, uint32_t esize, size_t *map_size)
{
	char path[PATH_MAX + 80];
	snprintf(path, sizeof(path), "%s/%s", sim.dir, name);
	struct efasim_ring_hdr *h = map_file(path, sizeof(*h), 1);
	if (!h)
		return NULL;
	robust_init(&h->lock);
	h->owner = sim.pid;
	h->size = entries;
	h->entry_size = esize;
	h->ext = 1;
	h->magic = EFASIM_MAGIC;
	*map_size = sizeof(*h);
	return h;
}

void *ring_slot(struct efasim_ring_hdr *h, uint64_t i)
{
	return (char *)(h + 1) + (size_t)(i & (h->size - 1)) * h->entry_size;
}

/* Remote rings are mapped once per process and kept (names are never reused:
 * they carry the owner's pid and a counter). */
struct ring_map {
	char name[64];
	struct efasim_ring_hdr *h;
	size_t size;
	struct ring_map *next;
};
static struct ring_map *ring_maps;

struct efasim_ring_hdr *ring_get(const char *name)
{
	pthread_mutex_lock(&sim.lock);
	for (struct ring_map *m = ring_maps; m; m = m->next)
		if (!strcmp(m->name, name)) {
			pthread_mutex_unlock(&sim.lock);
			return m->h;
		}
	char path[PATH_MAX + 80];
	snprintf(path, sizeof(path), "%s/%s", sim.dir, name);
	struct efasim_ring_hdr *h = map_file(path, sizeof(*h), 0);
	struct efasim_ring_hdr *full = NULL;
	size_t sz = 0;
	if (h && h->magic == EFASIM_MAGIC) {
		sz = sizeof(*h) + (h->ext ? 0 : (size_t)h->size * h->entry_size);
		full = map_file(path, sz, 0);
	}
	if (h)
		munmap(h, sizeof(*h));
	if (full) {
		struct ring_map *m = calloc(1, sizeof(*m));
		snprintf(m->name, sizeof(m->name), "%s", name);
		m->h = full;
		m->size = sz;
		m->next = ring_maps;
		ring_maps = m;
	}
	pthread_mutex_unlock(&sim.lock);
	return full;
}

void cq_push(struct efasim_ring_hdr *h, const struct efasim_cqe *e)
{
	char fifo[sizeof(h->chan_fifo)] = "";
	uint64_t handle = 0;
	robust_lock(&h->lock);
	if (!h->direct && h->tail - h->head >= h->size) {
		h->overruns++;
		pthread_mutex_unlock(&h->lock);
		slog("CQ overrun (owner %d)", (int)h->owner);
		return;
	}
	if (h->direct) {
		cq_write_direct(h, e);
	} else {
		memcpy(ring_slot(h, h->tail), e, sizeof(*e));
		atomic_thread_fence(memory_order_release);
		h->tail++;
	}
	if (h->chan_fifo[0] && (h->direct ? cq_direct_event_due(h) : h->armed)) {
		h->armed = 0;
		memcpy(fifo, h->chan_fifo, sizeof(fifo));
		handle = h->owner_handle;
	}
	pthread_mutex_unlock(&h->lock);
	if (fifo[0]) {
		int fd = open(fifo, O_WRONLY | O_NONBLOCK);
		if (fd >= 0) {
			if (write(fd, &handle, sizeof(handle)) != sizeof(handle))
				slog("completion event lost");
			close(fd);
		}
	}
}

