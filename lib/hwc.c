/* NIC hardware counters from sysfs (efab_hwc.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "efab.h"
#include "efab_hwc.h"

const char *const efab_hwc_names[EFAB_HWC_N] = {
#define EFAB_HWC_NAME(n) #n,
	EFAB_HWC_LIST(EFAB_HWC_NAME)
#undef EFAB_HWC_NAME
};

int efab_hwc_is_trouble(int id)
{
	switch (id) {
	case EFAB_HWC_rdma_write_wr_err:
	case EFAB_HWC_rdma_read_wr_err:
	case EFAB_HWC_rx_drops:
	case EFAB_HWC_retrans_bytes:
	case EFAB_HWC_retrans_pkts:
	case EFAB_HWC_retrans_timeout_events:
	case EFAB_HWC_unresponsive_remote_events:
	case EFAB_HWC_impaired_remote_conn_events:
		return 1;
	default:
		return 0;
	}
}

/* One counter file: a decimal number and a newline. */
static int read_u64(const char *dir, const char *name, uint64_t *out)
{
	char p[768], buf[32], *end;
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	errno = 0;
	unsigned long long v = strtoull(buf, &end, 10);
	if (end == buf || errno || (*end && *end != '\n'))
		return -1;
	*out = v;
	return 0;
}

int efab_hwc_open(const char *dev, efab_hwc_t *h)
{
	const char *root = getenv("SYSFS_PATH");
	memset(h, 0, sizeof(*h));
	if (!dev || !*dev || strchr(dev, '/'))
		return EFAB_SKIP;
	if (!root || !*root)
		root = "/sys";
	for (int port = 1; port <= 8; port++) {
		char dir[sizeof(h->dir)];
		snprintf(dir, sizeof(dir), "%s/class/infiniband/%s/ports/%d/hw_counters", root, dev, port);
		DIR *d = opendir(dir);
		if (!d)
			continue;
		struct dirent *e;
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.' || !strcmp(e->d_name, "lifespan"))
				continue;
			h->nfiles++;
			for (int k = 0; k < EFAB_HWC_N; k++)
				if (!strcmp(e->d_name, efab_hwc_names[k]))
					h->present |= 1u << k;
		}
		closedir(d);
		if (!h->nfiles)
			continue;
		uint64_t ls = 10;
		if (read_u64(dir, "lifespan", &ls) || ls > 10000)
			ls = 10;
		h->lifespan_ms = (unsigned)ls;
		snprintf(h->dir, sizeof(h->dir), "%s", dir);
		snprintf(h->dev, sizeof(h->dev), "%s", dev);
		return EFAB_OK;
	}
	memset(h, 0, sizeof(*h));
	return EFAB_SKIP;
}

void efab_hwc_read(const efab_hwc_t *h, efab_hwc_snap_t *s)
{
	memset(s, 0, sizeof(*s));
	for (int k = 0; k < EFAB_HWC_N; k++)
		if ((h->present & (1u << k)) && !read_u64(h->dir, efab_hwc_names[k], &s->v[k]))
			s->have |= 1u << k;
}

static int snap_equal(const efab_hwc_snap_t *a, const efab_hwc_snap_t *b)
{
	if (a->have != b->have)
		return 0;
	for (int k = 0; k < EFAB_HWC_N; k++)
		if ((a->have & (1u << k)) && a->v[k] != b->v[k])
			return 0;
	return 1;
}

double efab_hwc_wait_ms(const efab_hwc_t *h)
{
	return (double)h->lifespan_ms + EFAB_HWC_JIFFY_MAX_MS + 1.0;
}

int efab_hwc_settle(const efab_hwc_t *h, int tries, int (*wait)(void *arg, double ms), void *arg,
		    efab_hwc_snap_t *s, int *settled)
{
	efab_hwc_snap_t prev, cur;
	double ms = efab_hwc_wait_ms(h);
	*settled = 0;
	/* no read before the first wait: one then could be a cache older than
	 * the call, and two such reads agree */
	for (int t = 0; t < (tries > 1 ? tries : 2); t++) {
		int rc = wait(arg, ms);
		if (rc)
			return rc;
		efab_hwc_read(h, &cur);
		if (t > 0 && snap_equal(&prev, &cur)) {
			*settled = 1;
			break;
		}
		prev = cur;
	}
	*s = cur;
	return 0;
}

void efab_hwc_delta(const efab_hwc_snap_t *a, const efab_hwc_snap_t *b, efab_hwc_snap_t *d,
		    char *note, size_t len)
{
	const char *gone = NULL, *back = NULL;
	int ngone = 0, nback = 0;
	memset(d, 0, sizeof(*d));
	for (int k = 0; k < EFAB_HWC_N; k++) {
		uint32_t bit = 1u << k;
		int in_a = (a->have & bit) != 0, in_b = (b->have & bit) != 0;
		if (!in_a && !in_b)
			continue;
		if (!in_a || !in_b) {
			gone = gone ? gone : efab_hwc_names[k];
			ngone++;
			continue;
		}
		if (b->v[k] < a->v[k]) {
			back = back ? back : efab_hwc_names[k];
			nback++;
			continue;
		}
		d->v[k] = b->v[k] - a->v[k];
		d->have |= bit;
	}
	if (!note || !len)
		return;
	note[0] = 0;
	if (back)
		snprintf(note, len, "%s%s went backwards (reset/wrap)", back, nback > 1 ? " etc." : "");
	else if (gone)
		snprintf(note, len, "%s%s unreadable mid-run", gone, ngone > 1 ? " etc." : "");
}

const char *efab_hwc_path(const efab_hwc_snap_t *t, double payload, double *ratio)
{
	static const int cat[3] = {EFAB_HWC_rdma_write_bytes, EFAB_HWC_rdma_read_bytes,
				   EFAB_HWC_send_bytes};
	static const char *const name[3] = {"device-write", "device-read", "emulated-send"};
	double b[3], sum = 0;
	int valid = 0, hits = 0, hit = -1;
	*ratio = 0;
	for (int i = 0; i < 3; i++) {
		b[i] = (t->have & (1u << cat[i])) ? (double)t->v[cat[i]] : 0;
		valid |= (t->have & (1u << cat[i])) != 0;
		sum += b[i];
	}
	if (!valid || payload <= 0)
		return "-";
	for (int i = 0; i < 3; i++)
		if (b[i] >= 0.9 * payload) {
			hits++;
			hit = i;
		}
	if (hits == 1) {
		*ratio = b[hit] / payload;
		return name[hit];
	}
	*ratio = sum / payload;
	return hits > 1 || sum >= 0.9 * payload ? "mixed" : "none";
}

void efab_hwc_list(const efab_hwc_t *h, char *buf, size_t len)
{
	size_t n = 0;
	if (!len)
		return;
	buf[0] = 0;
	DIR *d = h->dir[0] ? opendir(h->dir) : NULL;
	if (!d)
		return;
	struct dirent *e;
	char *names[128];
	int nn = 0;
	while ((e = readdir(d)) && nn < 128)
		if (e->d_name[0] != '.' && strcmp(e->d_name, "lifespan"))
			names[nn++] = strdup(e->d_name);
	closedir(d);
	/* sorted, so that two listings compare */
	for (int i = 1; i < nn; i++)
		for (int j = i; j > 0 && names[j] && names[j - 1] && strcmp(names[j - 1], names[j]) > 0; j--) {
			char *x = names[j];
			names[j] = names[j - 1];
			names[j - 1] = x;
		}
	for (int i = 0; i < nn; i++) {
		if (names[i] && n + strlen(names[i]) + 2 < len)
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? " " : "", names[i]);
		free(names[i]);
	}
}
