/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What `-i` names: the table of port kinds (a PCI address, a DPDK virtual
 * device string, the emulated GPUDirect NIC of port_gpunic.c, a Linux
 * interface), a row each with how the string is recognised, checked and
 * named, and gcap_port_parse(), which tries them
 * in order. Everything here runs before the EAL exists; eal.c and port.c
 * read the rows (port_internal.h).
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include <rte_bus_pci.h>

#include "port_internal.h"

/* ---------------------------------------------------------------- PCI */

static bool
pci_match(const char *s)
{
	struct rte_pci_addr a;

	/* dddd:bb:dd.f or bb:dd.f, and nothing else */
	if (strchr(s, ',') != NULL || strlen(s) < 7)
		return false;
	return rte_pci_addr_parse(s, &a) == 0;
}

static int
pci_parse(const char *spec, struct gcap_port *p, char *errbuf)
{
	struct rte_pci_addr a;

	rte_pci_addr_parse(spec, &a);
	rte_pci_device_name(&a, p->name, sizeof(p->name));
	snprintf(p->devargs, sizeof(p->devargs), "%s", p->name);
	return 0;
}

/* -------------------------------------------------- DPDK virtual device */

static bool
vdev_match(const char *s)
{
	return strncmp(s, "net_", 4) == 0 || strncmp(s, "eth_", 4) == 0;
}

/* Check the value of key=... in a devargs string (rx_pcap files); the
 * port's link type is their files' (all the same). */
static int
check_vdev_files(const char *spec, int *linktype, char *errbuf)
{
	int first = -1;

	const char *p = strchr(spec, ',');

	while (p != NULL) {
		const char *kv = p + 1, *end = strchr(kv, ',');
		size_t len = end ? (size_t)(end - kv) : strlen(kv);

		if (len > 8 && strncmp(kv, "rx_pcap=", 8) == 0) {
			char path[PATH_MAX];
			char perr[PCAP_ERRBUF_SIZE];
			pcap_t *pc;

			if (len - 8 >= sizeof(path))
				return gcap_err(errbuf, ENAMETOOLONG,
						"file name too long in '%s'", spec);
			memcpy(path, kv + 8, len - 8);
			path[len - 8] = '\0';
			if (access(path, R_OK) != 0)
				return gcap_err(errbuf, errno, "%s: %s", path,
						strerror(errno));
			pc = pcap_open_offline(path, perr);
			if (pc == NULL)
				return gcap_err(errbuf, EINVAL, "%s: %s", path, perr);
			if (first >= 0 && pcap_datalink(pc) != first) {
				pcap_close(pc);
				return gcap_err(
					errbuf, EINVAL,
					"%s: link type %s, another file of the "
					"port has %s",
					path,
					pcap_datalink_val_to_name(pcap_datalink(pc)) ?:
										       "?",
					pcap_datalink_val_to_name(first) ?: "?");
			}
			first = pcap_datalink(pc);
			*linktype = first;
			pcap_close(pc);
		}
		p = end;
	}
	return 0;
}

static int
vdev_parse(const char *spec, struct gcap_port *p, char *errbuf)
{
	size_t n = strcspn(spec, ",");

	if (n >= sizeof(p->name) || n <= 4)
		return gcap_err(errbuf, EINVAL, "bad virtual device name in '%s'", spec);
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)spec[i]) && spec[i] != '_')
			return gcap_err(errbuf, EINVAL, "bad virtual device name in '%s'",
					spec);
	memcpy(p->name, spec, n);
	p->name[n] = '\0';
	snprintf(p->devargs, sizeof(p->devargs), "%s", spec);
	return check_vdev_files(spec, &p->linktype, errbuf);
}

/* ---------------------------------------------- Linux interface */

static bool
iface_match(const char *s)
{
	return strchr(s, ',') == NULL && strlen(s) < IF_NAMESIZE;
}

/* A Linux interface's link type (its ARPHRD_* type in sysfs) and
 * whether it is a loopback. */
static int
iface_info(struct gcap_port *p, char *errbuf)
{
	char path[96];
	unsigned type = 1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/type", p->name);
	f = fopen(path, "re");
	if (f != NULL) {
		if (fscanf(f, "%u", &type) != 1)
			type = 1;
		fclose(f);
	}
	switch (type) {
	case 1: /* ARPHRD_ETHER */ break;
	case 772: /* ARPHRD_LOOPBACK: Ethernet headers, as libpcap says */
		p->loopback = true;
		break;
	case 65534: /* ARPHRD_NONE (tun): IP packets */ p->linktype = DLT_RAW; break;
	default:
		return gcap_err(errbuf, ENOTSUP,
				"%s: interface type %u is not Ethernet, loopback nor "
				"IP: not supported",
				p->name, type);
	}
	return 0;
}

static int
iface_parse(const char *spec, struct gcap_port *p, char *errbuf)
{
	/* tcpdump's -i any is libpcap's cooked pseudo-device, no port */
	if (strcmp(spec, "any") == 0)
		return gcap_err(errbuf, ENOENT,
				"any: libpcap's pseudo-interface of all interfaces is "
				"not a port here: give -i once for each interface");
	if (if_nametoindex(spec) == 0)
		return gcap_err(errbuf, ENOENT,
				"%s: no such interface (not a PCI address nor a net_ "
				"device either)",
				spec);
	snprintf(p->name, sizeof(p->name), "%s", spec);
	return iface_info(p, errbuf);
}

/*
 * Through DPDK's af_packet driver, with as many queue pairs as RX queues;
 * a loopback interface through net_pcap (libpcap), which takes each
 * packet once: af_packet would give the outgoing copy too, which libpcap
 * skips on loopback as tcpdump users expect.
 */
static void
iface_eal_devargs(struct gcap_port *p, unsigned nth)
{
	if (p->loopback)
		snprintf(p->devargs, sizeof(p->devargs), "net_pcap_lo%u,rx_iface=%s", nth,
			 p->name);
	else
		snprintf(p->devargs, sizeof(p->devargs),
			 "net_af_packet%u,iface=%s,qpairs=%u", nth, p->name,
			 p->nqueues ? p->nqueues : 1);
}

static void
iface_ethdev_name(const struct gcap_port *p, char *name, size_t size)
{
	snprintf(name, size, p->loopback ? "net_pcap_lo%u" : "net_af_packet%u", p->index);
}

/* ------------------------------------------------------------ the table */

/* In the order they are tried (enum gcap_port_kind's): a virtual device's
 * name would pass for an interface's. */
static const struct gcap_port_kind_ops kinds[] = {
	[GCAP_PORT_PCI] = {
		.what = "a PCI address",
		.match = pci_match,
		.parse = pci_parse,
		.eal_opt = "-a",
		.pci = true,
	},
	[GCAP_PORT_VDEV] = {
		.what = "a DPDK virtual device (net_...)",
		.match = vdev_match,
		.parse = vdev_parse,
		.eal_opt = "--vdev",
	},
	/* before IFACE: "gpunic0" alone would pass for an interface name */
	[GCAP_PORT_GPUNIC] = {
		.what = "an emulated GPUDirect NIC (gpunic0,rx_pcap=FILE)",
		.match = gcap_gpunic_match,
		.parse = gcap_gpunic_parse,
		.create = gcap_gpunic_port_create,
		.attach = gcap_gpunic_port_attach,
		.start = gcap_gpunic_port_start,
		.stop = gcap_gpunic_port_stop,
		.close = gcap_gpunic_port_close,
		.max_frame = gcap_gpunic_port_max_frame,
	},
	[GCAP_PORT_IFACE] = {
		.what = "an interface name",
		.match = iface_match,
		.parse = iface_parse,
		.eal_opt = "--vdev",
		.eal_devargs = iface_eal_devargs,
		.ethdev_name = iface_ethdev_name,
	},
};

#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

const struct gcap_port_kind_ops *
gcap_port_kind(enum gcap_port_kind kind)
{
	return &kinds[kind];
}

int
gcap_port_parse(const char *spec, unsigned index, struct gcap_port *p, char *errbuf)
{
	char list[256];
	size_t off = 0;

	memset(p, 0, sizeof(*p));
	p->index = index;
	p->socket = -1;
	p->nqueues = 1;
	p->linktype = DLT_EN10MB;
	if (spec == NULL || spec[0] == '\0')
		return gcap_err(errbuf, EINVAL, "empty interface name");
	if (strlen(spec) >= sizeof(p->spec))
		return gcap_err(errbuf, ENAMETOOLONG, "interface argument too long");
	snprintf(p->spec, sizeof(p->spec), "%s", spec);
	for (unsigned k = 0; k < NKINDS; k++)
		if (kinds[k].match(spec)) {
			p->kind = (enum gcap_port_kind)k;
			return kinds[k].parse(spec, p, errbuf);
		}
	/* "a, b or c": the kinds in the table's words */
	for (unsigned k = 0; k < NKINDS && off < sizeof(list); k++)
		off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s",
					k == 0         ? "" :
					k + 1 < NKINDS ? ", " :
							 " or ",
					kinds[k].what);
	return gcap_err(errbuf, EINVAL, "'%s' is not %s", spec, list);
}
