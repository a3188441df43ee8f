/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PCI functions as sysfs lays them out (/sys/bus/pci/devices/<BDF>: class,
 * vendor, device, numa_node, driver, iommu_group, resource) and the PCIe
 * path between two of them, classified as `nvidia-smi topo -m` does, from
 * where each one's sysfs directory sits under /sys/devices.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_pci.h>

#include "doctor_internal.h"

#define DEV_DIR "/sys/bus/pci/devices"
#define MAX_DEPTH 32

bool
dr_pci_bdf(const char *spec, char *bdf, size_t n)
{
	struct rte_pci_addr a;

	/* dddd:bb:dd.f or bb:dd.f, as gpu-capture's -i takes them */
	if (n < PCI_PRI_STR_SIZE || strchr(spec, ',') != NULL || strlen(spec) < 7 ||
	    rte_pci_addr_parse(spec, &a) != 0)
		return false;
	rte_pci_device_name(&a, bdf, n);
	return true;
}

int
dr_pci_read(const struct dr *d, const char *bdf, struct dr_pci *p)
{
	char path[PATH_MAX], s[64];
	long long v;

	memset(p, 0, sizeof(*p));
	snprintf(p->bdf, sizeof(p->bdf), "%s", bdf);
	p->numa = -1;
	p->group = -1;
	snprintf(path, sizeof(path), DEV_DIR "/%s", bdf);
	if (dr_real(d, path, p->path, sizeof(p->path)) < 0)
		return -ENOENT;
	snprintf(path, sizeof(path), DEV_DIR "/%s/class", bdf);
	if (dr_read_ll(d, path, &v) == 0)
		p->cls = (unsigned)v;
	snprintf(path, sizeof(path), DEV_DIR "/%s/vendor", bdf);
	if (dr_read_ll(d, path, &v) == 0)
		p->vendor = (unsigned)v;
	snprintf(path, sizeof(path), DEV_DIR "/%s/device", bdf);
	if (dr_read_ll(d, path, &v) == 0)
		p->device = (unsigned)v;
	snprintf(path, sizeof(path), DEV_DIR "/%s/numa_node", bdf);
	if (dr_read_ll(d, path, &v) == 0)
		p->numa = (int)v;
	snprintf(path, sizeof(path), DEV_DIR "/%s/driver", bdf);
	dr_link_base(d, path, p->driver, sizeof(p->driver));
	snprintf(path, sizeof(path), DEV_DIR "/%s/iommu_group", bdf);
	if (dr_link_base(d, path, s, sizeof(s)) == 0)
		p->group = atoi(s);
	return 0;
}

int
dr_pci_scan(const struct dr *d, unsigned cls, struct dr_pci **list)
{
	struct dirent **ents;
	struct dr_pci *l;
	int n = dr_scan(d, DEV_DIR, &ents), k = 0;

	*list = NULL;
	if (n < 0)
		return n;
	l = calloc(n > 0 ? (size_t)n : 1, sizeof(*l));
	if (l == NULL) {
		dr_scan_free(ents, n);
		return -ENOMEM;
	}
	for (int i = 0; i < n; i++)
		if (dr_pci_read(d, ents[i]->d_name, &l[k]) == 0 && l[k].cls >> 16 == cls)
			k++;
	dr_scan_free(ents, n);
	*list = l;
	return k;
}

uint64_t
dr_pci_bar(const struct dr *d, const char *bdf, int bar)
{
	char path[PATH_MAX], line[256];
	unsigned long long start, end, flags;
	uint64_t size = 0;
	FILE *f;

	snprintf(path, sizeof(path), DEV_DIR "/%s/resource", bdf);
	f = dr_fopen(d, path);
	if (f == NULL)
		return 0;
	/* one line per resource, "start end flags"; line n is BAR n */
	for (int i = 0; fgets(line, sizeof(line), f) != NULL; i++)
		if (i == bar) {
			if (sscanf(line, "%llx %llx %llx", &start, &end, &flags) == 3 &&
			    end > start)
				size = end - start + 1;
			break;
		}
	fclose(f);
	return size;
}

static bool
is_bdf(const char *s)
{
	unsigned dom, bus, dev, fn;
	char end;

	return sscanf(s, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &end) == 4;
}

bool
dr_pci_owner(const char *path, char *bdf, size_t n)
{
	char buf[PATH_MAX], *save = NULL, *tok;
	bool found = false;

	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, "/", &save); tok != NULL;
	     tok = strtok_r(NULL, "/", &save))
		if (is_bdf(tok)) {
			snprintf(bdf, n, "%s", tok);
			found = true;
		}
	return found;
}

/* A sysfs device path split: the host bridge ("pci0000:00" and what comes
 * before it) and the PCI functions below it, the device itself last. */
struct hier {
	char root[PATH_MAX];
	const char *fn[MAX_DEPTH];
	int n;
	char buf[PATH_MAX];
};

static int
split(const char *path, struct hier *h)
{
	char *save = NULL, *tok;
	bool below = false;

	h->n = 0;
	h->root[0] = '\0';
	snprintf(h->buf, sizeof(h->buf), "%s", path);
	for (tok = strtok_r(h->buf, "/", &save); tok != NULL;
	     tok = strtok_r(NULL, "/", &save)) {
		if (!below) {
			dr_cat(h->root, sizeof(h->root), "/%s", tok);
			below = strncmp(tok, "pci", 3) == 0 && strchr(tok, ':') != NULL;
		} else if (is_bdf(tok) && h->n < MAX_DEPTH) {
			h->fn[h->n++] = tok;
		}
	}
	return below && h->n > 0 ? 0 : -EINVAL;
}

const char *
dr_pci_path(const struct dr_pci *a, const struct dr_pci *b, char *why, size_t n)
{
	struct hier *ha = malloc(sizeof(*ha)), *hb = malloc(sizeof(*hb));
	const char *kind;
	int l = 0, hops;

	if (ha == NULL || hb == NULL || split(a->path, ha) || split(b->path, hb)) {
		snprintf(why, n, "unknown (no PCIe hierarchy in %s, %s)", a->path,
			 b->path);
		kind = "?";
		goto out;
	}
	if (strcmp(ha->root, hb->root) != 0) {
		const char *ra = strrchr(ha->root, '/') + 1;
		const char *rb = strrchr(hb->root, '/') + 1;

		if (a->numa >= 0 && b->numa >= 0 && a->numa != b->numa) {
			snprintf(why, n,
				 "host bridges %s and %s on NUMA nodes "
				 "%d and %d: across sockets",
				 ra, rb, a->numa, b->numa);
			kind = "SYS";
		} else {
			snprintf(why, n,
				 "host bridges %s and %s, one NUMA node "
				 "(%d)",
				 ra, rb, a->numa >= 0 ? a->numa : b->numa);
			kind = "NODE";
		}
		goto out;
	}
	/* the bridges above each device (the last function is the device) */
	while (l < ha->n - 1 && l < hb->n - 1 && strcmp(ha->fn[l], hb->fn[l]) == 0)
		l++;
	if (l == 0) {
		snprintf(why, n, "no common PCIe bridge below host bridge %s",
			 strrchr(ha->root, '/') + 1);
		kind = "PHB";
		goto out;
	}
	/* below the deepest common bridge (a switch's upstream port) each
	 * side has a downstream port, then two bridges per further switch:
	 * three bridges in all is one switch */
	hops = (ha->n - 1 - l) + (hb->n - 1 - l) + 1;
	if (hops <= 3) {
		snprintf(why, n, "one PCIe switch, common bridge %s", ha->fn[l - 1]);
		kind = "PIX";
	} else {
		snprintf(why, n, "%d PCIe bridges, common bridge %s", hops,
			 ha->fn[l - 1]);
		kind = "PXB";
	}
out:
	free(ha);
	free(hb);
	return kind;
}
