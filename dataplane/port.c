/* SPDX-License-Identifier: BSD-3-Clause */
#include <ctype.h>
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include <rte_bus_pci.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#include "gpucap/gcap_port.h"

#define EAL_ARGS_MAX 128

static bool
is_pci_addr(const char *s)
{
	struct rte_pci_addr a;

	/* dddd:bb:dd.f or bb:dd.f, and nothing else */
	if (strchr(s, ',') != NULL || strlen(s) < 7)
		return false;
	return rte_pci_addr_parse(s, &a) == 0;
}

/* Check the value of key=... in a devargs string (rx_pcap files). */
static int
check_vdev_files(const char *spec, char *errbuf)
{
	const char *p = strchr(spec, ',');

	while (p != NULL) {
		const char *kv = p + 1, *end = strchr(kv, ',');
		size_t len = end ? (size_t)(end - kv) : strlen(kv);

		if (len > 8 && strncmp(kv, "rx_pcap=", 8) == 0) {
			char path[PATH_MAX];
			char perr[PCAP_ERRBUF_SIZE];
			pcap_t *pc;

			if (len - 8 >= sizeof(path))
				return gcap_err(errbuf, ENAMETOOLONG, "file name too long in '%s'", spec);
			memcpy(path, kv + 8, len - 8);
			path[len - 8] = '\0';
			if (access(path, R_OK) != 0)
				return gcap_err(errbuf, errno, "%s: %s", path, strerror(errno));
			pc = pcap_open_offline(path, perr);
			if (pc == NULL)
				return gcap_err(errbuf, EINVAL, "%s: %s", path, perr);
			pcap_close(pc);
		}
		p = end;
	}
	return 0;
}

int
gcap_port_parse(const char *spec, unsigned index, struct gcap_port *p,
		char *errbuf)
{
	size_t n;

	memset(p, 0, sizeof(*p));
	p->index = index;
	p->socket = -1;
	p->nqueues = 1;
	if (spec == NULL || spec[0] == '\0')
		return gcap_err(errbuf, EINVAL, "empty interface name");
	if (strlen(spec) >= sizeof(p->spec))
		return gcap_err(errbuf, ENAMETOOLONG, "interface argument too long");
	snprintf(p->spec, sizeof(p->spec), "%s", spec);
	if (is_pci_addr(spec)) {
		struct rte_pci_addr a;

		rte_pci_addr_parse(spec, &a);
		p->kind = GCAP_PORT_PCI;
		rte_pci_device_name(&a, p->name, sizeof(p->name));
		snprintf(p->devargs, sizeof(p->devargs), "%s", p->name);
		return 0;
	}
	n = strcspn(spec, ",");
	if (strncmp(spec, "net_", 4) == 0 || strncmp(spec, "eth_", 4) == 0) {
		if (n >= sizeof(p->name) || n <= 4)
			return gcap_err(errbuf, EINVAL, "bad virtual device name in '%s'", spec);
		for (size_t i = 0; i < n; i++)
			if (!isalnum((unsigned char)spec[i]) && spec[i] != '_')
				return gcap_err(errbuf, EINVAL,
						"bad virtual device name in '%s'", spec);
		p->kind = GCAP_PORT_VDEV;
		memcpy(p->name, spec, n);
		p->name[n] = '\0';
		snprintf(p->devargs, sizeof(p->devargs), "%s", spec);
		return check_vdev_files(spec, errbuf);
	}
	if (n != strlen(spec) || strlen(spec) >= IF_NAMESIZE)
		return gcap_err(errbuf, EINVAL,
				"'%s' is not a PCI address, a DPDK virtual device (net_...) or an interface name",
				spec);
	if (if_nametoindex(spec) == 0)
		return gcap_err(errbuf, ENOENT, "%s: no such interface (not a PCI address nor a net_ device either)",
				spec);
	p->kind = GCAP_PORT_IFACE;
	snprintf(p->name, sizeof(p->name), "%s", spec);
	return 0;
}

/* Free hugepage memory, in MB, where a hugetlbfs is mounted. */
static unsigned long
free_huge_mb(void)
{
	static const struct {
		const char *path;
		unsigned long mb;
	} sizes[] = {
		{"/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", 2},
		{"/sys/kernel/mm/hugepages/hugepages-1048576kB/free_hugepages", 1024},
	};
	unsigned long total = 0;
	bool mounted = false;
	char line[512];
	FILE *f = fopen("/proc/mounts", "r");

	if (f != NULL) {
		while (fgets(line, sizeof(line), f) != NULL)
			if (strstr(line, " hugetlbfs ") != NULL)
				mounted = true;
		fclose(f);
	}
	if (!mounted)
		return 0;
	for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		unsigned long n = 0;

		f = fopen(sizes[i].path, "r");
		if (f == NULL)
			continue;
		if (fscanf(f, "%lu", &n) != 1)
			n = 0;
		fclose(f);
		total += n * sizes[i].mb;
	}
	return total;
}

int
gcap_eal_init(const struct gcap_eal_conf *c, char *errbuf)
{
	static char store[EAL_ARGS_MAX][4200];
	char *argv[EAL_ARGS_MAX + 1];
	int argc = 0;
	unsigned cpus[CPU_SETSIZE], ncpus = 0, nmain, rx[RTE_MAX_LCORE];
	unsigned rxcpu[RTE_MAX_LCORE];
	int nrx_cpus = 0;
	cpu_set_t set;
	char lc[4096];
	size_t off = 0;
	bool any_pci = false;
	/* drivers carried as plugins (a devbundle's env.sh sets the first) */
	const char *plugins = getenv("GPUCAP_EAL_PLUGINS") ?: getenv("GCAP_EAL_PLUGINS");
	char *extra = NULL;
	int r;

#define ARG(...) do { \
		if (argc >= EAL_ARGS_MAX) \
			return gcap_err(errbuf, E2BIG, "too many EAL arguments"); \
		snprintf(store[argc], sizeof(store[argc]), __VA_ARGS__); \
		argv[argc] = store[argc]; \
		argc++; \
	} while (0)

	if (c->nlcores < 2 || c->nlcores > RTE_MAX_LCORE)
		return gcap_err(errbuf, EINVAL, "need between 1 and %d RX lcores",
				RTE_MAX_LCORE - 1);
	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return gcap_err(errbuf, errno, "sched_getaffinity: %s", strerror(errno));
	for (unsigned i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &set))
			cpus[ncpus++] = i;
	if (c->cpus != NULL) {
		nrx_cpus = gcap_cpulist_parse(c->cpus, rx, RTE_MAX_LCORE);
		if (nrx_cpus <= 0)
			return gcap_err(errbuf, EINVAL, "bad CPU list '%s'", c->cpus);
		for (int i = 0; i < nrx_cpus; i++)
			if (!CPU_ISSET(rx[i], &set))
				return gcap_err(errbuf, EINVAL, "CPU %u is not available", rx[i]);
	}
	ARG("%s", c->prog ? c->prog : "gpu-capture");
	/* RX lcores are pinned: to the given CPUs, else one CPU each,
	 * skipping the first while there are CPUs enough (more lcores than
	 * CPUs share). Lcore 0 (main: control, stats, and the writer threads
	 * it starts) floats over the allowed CPUs that no RX lcore has, so
	 * that it never takes a polling core from under its lcore; over all
	 * of them where the RX lcores have every one. */
	for (unsigned i = 1; i < c->nlcores; i++) {
		if (nrx_cpus > 0)
			rxcpu[i] = rx[(i - 1) % (unsigned)nrx_cpus];
		else if (ncpus > c->nlcores - 1)
			rxcpu[i] = cpus[1 + (i - 1) % (ncpus - 1)];
		else
			rxcpu[i] = cpus[(i - 1) % ncpus];
		CPU_CLR(rxcpu[i], &set);
	}
	nmain = 0;
	for (unsigned i = 0; i < ncpus; i++)
		if (CPU_ISSET(cpus[i], &set))
			cpus[nmain++] = cpus[i];
	if (nmain == 0) /* every allowed CPU polls: share them all */
		nmain = ncpus;
	off += (size_t)snprintf(lc + off, sizeof(lc) - off, "0@(");
	for (unsigned i = 0; i < nmain && off < sizeof(lc) - 16; i++)
		off += (size_t)snprintf(lc + off, sizeof(lc) - off, "%s%u",
					i ? "," : "", cpus[i]);
	off += (size_t)snprintf(lc + off, sizeof(lc) - off, ")");
	for (unsigned i = 1; i < c->nlcores && off < sizeof(lc) - 32; i++)
		off += (size_t)snprintf(lc + off, sizeof(lc) - off, ",%u@%u", i,
					rxcpu[i]);
	ARG("--lcores");
	ARG("%s", lc);
	ARG("--main-lcore");
	ARG("0");
	/* no shared files under /var/run: several instances can run at once */
	if (free_huge_mb() < c->mem_mb / 2) {
		ARG("--no-huge");
		ARG("--no-shconf");
		ARG("-m");
		ARG("%u", c->mem_mb);
	} else {
		ARG("--in-memory");
	}
	if (!c->verbose) {
		ARG("--log-level=*:error");
		ARG("--log-level=gpucap.*:notice");
	}
	if (plugins != NULL && plugins[0] != '\0') {
		ARG("-d");
		ARG("%s", plugins);
	}
	for (unsigned i = 0; i < c->nports; i++) {
		struct gcap_port *p = &c->ports[i];

		switch (p->kind) {
		case GCAP_PORT_PCI:
			any_pci = true;
			ARG("-a");
			ARG("%s", p->devargs);
			break;
		case GCAP_PORT_VDEV:
			ARG("--vdev");
			ARG("%s", p->devargs);
			break;
		case GCAP_PORT_IFACE:
			snprintf(p->devargs, sizeof(p->devargs),
				 "net_af_packet%u,iface=%s,qpairs=%u", i, p->name,
				 p->nqueues ? p->nqueues : 1);
			ARG("--vdev");
			ARG("%s", p->devargs);
			break;
		}
	}
	if (!any_pci)
		ARG("--no-pci");
	if (c->extra != NULL) {
		char *save = NULL, *tok;

		extra = strdup(c->extra);
		if (extra == NULL)
			return gcap_err(errbuf, ENOMEM, "out of memory");
		for (tok = strtok_r(extra, " \t", &save); tok != NULL;
		     tok = strtok_r(NULL, " \t", &save))
			ARG("%s", tok);
		free(extra);
	}
#undef ARG
	argv[argc] = NULL;
	r = rte_eal_init(argc, argv);
	if (r < 0) {
		int e = rte_errno ? rte_errno : EINVAL;

		return gcap_err(errbuf, e,
				"DPDK initialisation failed: %s (a port's driver or arguments may be wrong; --verbose shows DPDK's log)",
				rte_strerror(e));
	}
	return 0;
}

int
gcap_port_find(struct gcap_port *p, char *errbuf)
{
	char name[RTE_ETH_NAME_MAX_LEN];
	uint16_t id;

	if (p->kind == GCAP_PORT_IFACE)
		snprintf(name, sizeof(name), "net_af_packet%u", p->index);
	else
		snprintf(name, sizeof(name), "%s", p->name);
	if (rte_eth_dev_get_port_by_name(name, &id) != 0)
		return gcap_err(errbuf, ENODEV,
				"%s: no such port (unknown driver, bad arguments, or no such device)",
				p->spec);
	p->port_id = id;
	p->socket = rte_eth_dev_socket_id(id);
	return 0;
}

int
gcap_port_configure(struct gcap_port *p, uint16_t nqueues, uint16_t nb_rxd,
		    struct rte_mempool *const *pools, char *errbuf)
{
	struct rte_eth_dev_info info;
	struct rte_eth_conf conf;
	uint16_t nb_txd = 0;
	int r;

	r = rte_eth_dev_info_get(p->port_id, &info);
	if (r != 0)
		return gcap_err(errbuf, -r, "%s: cannot get device info: %s", p->spec,
				rte_strerror(-r));
	if (nqueues == 0 || nqueues > info.max_rx_queues)
		return gcap_err(errbuf, EINVAL, "%s: %u RX queues asked, the port has at most %u",
				p->spec, nqueues, info.max_rx_queues);
	memset(&conf, 0, sizeof(conf));
	if (nqueues > 1 && info.flow_type_rss_offloads != 0) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_hf =
			(RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP) &
			info.flow_type_rss_offloads;
	}
	/* receive only: no TX queue (drivers that insist get one) */
	r = rte_eth_dev_configure(p->port_id, nqueues, 0, &conf);
	if (r != 0)
		return gcap_err(errbuf, -r, "%s: cannot configure %u RX queues: %s",
				p->spec, nqueues, rte_strerror(-r));
	r = rte_eth_dev_adjust_nb_rx_tx_desc(p->port_id, &nb_rxd, &nb_txd);
	if (r != 0)
		return gcap_err(errbuf, -r, "%s: cannot size the RX ring: %s", p->spec,
				rte_strerror(-r));
	for (uint16_t q = 0; q < nqueues; q++) {
		r = rte_eth_rx_queue_setup(p->port_id, q, nb_rxd, (unsigned)p->socket < RTE_MAX_NUMA_NODES ? (unsigned)p->socket : SOCKET_ID_ANY,
					   NULL, pools[q]);
		if (r != 0)
			return gcap_err(errbuf, -r, "%s: cannot set up RX queue %u: %s",
					p->spec, q, rte_strerror(-r));
	}
	p->nqueues = nqueues;
	return 0;
}

int
gcap_port_start(struct gcap_port *p, char *errbuf)
{
	int r = rte_eth_dev_start(p->port_id);

	if (r != 0)
		return gcap_err(errbuf, -r, "%s: cannot start: %s", p->spec, rte_strerror(-r));
	p->started = true;
	/* not every driver has a promiscuous mode (virtual ones) */
	(void)rte_eth_promiscuous_enable(p->port_id);
	rte_eth_stats_reset(p->port_id);
	return 0;
}

void
gcap_port_close(struct gcap_port *p)
{
	if (p->started) {
		rte_eth_dev_stop(p->port_id);
		p->started = false;
	}
	rte_eth_dev_close(p->port_id);
}

int
gcap_port_stats(const struct gcap_port *p, struct gcap_port_stats *st)
{
	struct rte_eth_stats s;
	int r = rte_eth_stats_get(p->port_id, &s);

	memset(st, 0, sizeof(*st));
	if (r != 0)
		return r;
	st->ipackets = s.ipackets;
	st->ibytes = s.ibytes;
	st->imissed = s.imissed;
	st->ierrors = s.ierrors;
	st->rx_nombuf = s.rx_nombuf;
	return 0;
}

unsigned
gcap_rx_lcores(unsigned *ids, unsigned max)
{
	unsigned n = 0, lc;

	RTE_LCORE_FOREACH_WORKER(lc) {
		if (n == max)
			break;
		ids[n++] = lc;
	}
	return n;
}
