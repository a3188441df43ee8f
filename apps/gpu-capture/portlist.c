/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ports this host can give DPDK, numbered as tcpdump -D numbers its
 * interfaces (-D, and -i N), and the link types of a port (-L, -y): PCI
 * network controllers bound to a driver DPDK drives (vfio-pci, UIO, or
 * mlx5_core beside its kernel driver), then the Linux interfaces
 * (through net_af_packet), read from sysfs under a root (tests give a
 * fake tree with --doctor-root).
 */
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include "app_err.h"
#include "portlist.h"

#define NAME_MAX_LEN 64

struct entry {
	char name[NAME_MAX_LEN];
	char desc[192];
	char flags[64];
};

/* First line of root/path into buf, without its newline ("" if none). */
static void
read_line(const char *root, const char *path, char *buf, size_t size)
{
	char p[PATH_MAX];
	FILE *f;

	buf[0] = '\0';
	snprintf(p, sizeof(p), "%s%s", root, path);
	f = fopen(p, "r");
	if (f == NULL)
		return;
	if (fgets(buf, (int)size, f) == NULL)
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
}

/* The name a link root/path points at ("" if none). */
static void
link_name(const char *root, const char *path, char *buf, size_t size)
{
	char p[PATH_MAX], t[PATH_MAX];
	ssize_t n;

	buf[0] = '\0';
	snprintf(p, sizeof(p), "%s%s", root, path);
	n = readlink(p, t, sizeof(t) - 1);
	if (n <= 0)
		return;
	t[n] = '\0';
	const char *base = strrchr(t, '/') ? strrchr(t, '/') + 1 : t;
	size_t len = strlen(base) < size - 1 ? strlen(base) : size - 1;

	memcpy(buf, base, len);
	buf[len] = '\0';
}

/* The sorted names in root/path (at most max). */
static unsigned
list_dir(const char *root, const char *path, char (*names)[NAME_MAX_LEN], unsigned max)
{
	char p[PATH_MAX];
	DIR *d;
	struct dirent *e;
	unsigned n = 0;

	snprintf(p, sizeof(p), "%s%s", root, path);
	d = opendir(p);
	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL && n < max)
		if (e->d_name[0] != '.' && strlen(e->d_name) < NAME_MAX_LEN)
			snprintf(names[n++], NAME_MAX_LEN, "%s", e->d_name);
	closedir(d);
	qsort(names, n, NAME_MAX_LEN, (int (*)(const void *, const void *))strcmp);
	return n;
}

/* What DPDK does with a PCI NIC on this driver (NULL: nothing). */
static const char *
dpdk_use(const char *drv)
{
	if (strcmp(drv, "vfio-pci") == 0)
		return "DPDK's PMD through VFIO";
	if (strcmp(drv, "uio_pci_generic") == 0 || strcmp(drv, "igb_uio") == 0)
		return "DPDK's PMD through UIO";
	if (strcmp(drv, "mlx5_core") == 0)
		return "DPDK's mlx5 PMD beside the kernel driver";
	return NULL;
}

/* Every port, in -D's order. @return the count (at most max). */
static unsigned
collect(const char *root, struct entry *out, unsigned max)
{
	static char names[APP_PORTLIST_MAX][NAME_MAX_LEN];
	char p[PATH_MAX], v[64], drv[64], pci[NAME_MAX_LEN], ifs[4][NAME_MAX_LEN];
	unsigned n = 0,
		 k = list_dir(root, "/sys/bus/pci/devices", names, APP_PORTLIST_MAX);

	for (unsigned i = 0; i < k && n < max; i++) {
		const char *use;

		snprintf(p, sizeof(p), "/sys/bus/pci/devices/%s/class", names[i]);
		read_line(root, p, v, sizeof(v));
		if (strncmp(v, "0x02", 4) != 0) /* network controllers */
			continue;
		snprintf(p, sizeof(p), "/sys/bus/pci/devices/%s/driver", names[i]);
		link_name(root, p, drv, sizeof(drv));
		use = dpdk_use(drv);
		if (use == NULL)
			continue;
		snprintf(p, sizeof(p), "/sys/bus/pci/devices/%s/net", names[i]);
		snprintf(out[n].name, sizeof(out[n].name), "%s", names[i]);
		if (list_dir(root, p, ifs, 4) > 0)
			snprintf(out[n].desc, sizeof(out[n].desc), "%s: %s, interface %s",
				 drv, use, ifs[0]);
		else
			snprintf(out[n].desc, sizeof(out[n].desc), "%s: %s", drv, use);
		snprintf(out[n].flags, sizeof(out[n].flags), "PCI");
		n++;
	}
	k = list_dir(root, "/sys/class/net", names, APP_PORTLIST_MAX);
	for (unsigned i = 0; i < k && n < max; i++) {
		unsigned long fl = 0;
		char oper[32];
		size_t off = 0;
		struct entry *e = &out[n];

		snprintf(p, sizeof(p), "/sys/class/net/%s/flags", names[i]);
		read_line(root, p, v, sizeof(v));
		fl = strtoul(v, NULL, 0);
		snprintf(p, sizeof(p), "/sys/class/net/%s/operstate", names[i]);
		read_line(root, p, oper, sizeof(oper));
		snprintf(p, sizeof(p), "/sys/class/net/%s/device", names[i]);
		link_name(root, p, pci, sizeof(pci));
		snprintf(p, sizeof(p), "/sys/class/net/%s/device/driver", names[i]);
		link_name(root, p, drv, sizeof(drv));
		snprintf(e->name, sizeof(e->name), "%s", names[i]);
		if (pci[0] != '\0')
			snprintf(e->desc, sizeof(e->desc),
				 "Linux interface through net_af_packet; %s, %s", pci,
				 drv[0] ? drv : "no driver");
		else
			snprintf(e->desc, sizeof(e->desc),
				 "Linux interface through net_af_packet");
		e->flags[0] = '\0';
		/* tcpdump -D's words: IFF_UP, carrier, IFF_LOOPBACK, operstate */
		if (fl & 0x1)
			off += (size_t)snprintf(e->flags + off, sizeof(e->flags) - off,
						"Up, ");
		snprintf(p, sizeof(p), "/sys/class/net/%s/carrier", names[i]);
		read_line(root, p, v, sizeof(v));
		if ((fl & 0x1) && strcmp(v, "1") == 0) /* IFF_RUNNING: a carrier */
			off += (size_t)snprintf(e->flags + off, sizeof(e->flags) - off,
						"Running, ");
		if (fl & 0x8)
			off += (size_t)snprintf(e->flags + off, sizeof(e->flags) - off,
						"Loopback, ");
		else if (strcmp(oper, "up") == 0)
			off += (size_t)snprintf(e->flags + off, sizeof(e->flags) - off,
						"Connected, ");
		else if (strcmp(oper, "down") == 0)
			off += (size_t)snprintf(e->flags + off, sizeof(e->flags) - off,
						"Disconnected, ");
		if (off >= 2)
			e->flags[off - 2] = '\0';
		else
			snprintf(e->flags, sizeof(e->flags), "none");
		n++;
	}
	return n;
}

int
app_portlist_print(const char *root)
{
	static struct entry e[APP_PORTLIST_MAX];
	unsigned n = collect(root ? root : "", e, APP_PORTLIST_MAX);

	if (n == 0)
		return app_err(
			"no port DPDK can open found (PCI NICs on vfio-pci, UIO or "
			"mlx5_core; Linux interfaces)");
	for (unsigned i = 0; i < n; i++)
		printf("%u.%s (%s) [%s]\n", i + 1, e[i].name, e[i].desc, e[i].flags);
	return fflush(stdout) == 0 ? 0 : 1;
}

int
app_portlist_resolve(const char *root, const char *spec, char **name)
{
	static struct entry e[APP_PORTLIST_MAX];
	char p[PATH_MAX], v[16];
	unsigned long k;
	unsigned n;

	*name = NULL;
	for (const char *s = spec; *s != '\0'; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	/* an interface of that name comes first, as in tcpdump */
	snprintf(p, sizeof(p), "/sys/class/net/%s/flags", spec);
	read_line(root ? root : "", p, v, sizeof(v));
	if (v[0] != '\0')
		return 0;
	k = strtoul(spec, NULL, 10);
	n = collect(root ? root : "", e, APP_PORTLIST_MAX);
	if (k == 0 || k > n)
		return -app_err("-i %s: there are %u ports (see -D)", spec, n);
	*name = strdup(e[k - 1].name);
	return *name != NULL ? 0 : -app_err("out of memory");
}

/* A net_pcap port's rx_pcap file's link type into *dlt (else unchanged). */
static int
pcap_file_linktype(const char *spec, int *dlt)
{
	const char *s = strstr(spec, "rx_pcap=");
	char path[PATH_MAX], eb[PCAP_ERRBUF_SIZE];
	pcap_t *p;

	if (strncmp(spec, "net_pcap", 8) != 0 || s == NULL)
		return 0;
	s += 8;
	snprintf(path, sizeof(path), "%.*s", (int)strcspn(s, ","), s);
	p = pcap_open_offline(path, eb);
	if (p == NULL)
		return -app_err("%s: %s", spec, eb);
	*dlt = pcap_datalink(p);
	pcap_close(p);
	return 0;
}

int
app_portlist_linktype(const char *spec, int *dlt)
{
	*dlt = DLT_EN10MB; /* every DPDK port gives Ethernet frames ... */
	return pcap_file_linktype(spec, dlt); /* ... net_pcap its file's */
}

int
app_portlist_print_linktypes(const char *const *specs, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		int dlt;

		if (app_portlist_linktype(specs[i], &dlt) < 0)
			return 1;
		printf("Data link types for %s (use option -y to set):\n  %s (%s)\n",
		       specs[i], pcap_datalink_val_to_name(dlt) ?: "?",
		       pcap_datalink_val_to_description(dlt) ?: "?");
	}
	return fflush(stdout) == 0 ? 0 : 1;
}

int
app_portlist_check_linktype(const char *name, const char *const *specs, unsigned n)
{
	int want = pcap_datalink_name_to_val(name);

	if (want < 0)
		return -app_err("invalid data link type %s", name);
	for (unsigned i = 0; i < n; i++) {
		int dlt;

		if (app_portlist_linktype(specs[i], &dlt) < 0)
			return -1;
		if (dlt != want)
			return -app_err("-y %s: %s gives %s only (see -L)", name,
					specs[i], pcap_datalink_val_to_name(dlt) ?: "?");
	}
	return 0;
}
