/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The EAL set-up: the command line that DPDK gets, built from the ports
 * and options (users never write EAL syntax): the lcores and the CPUs
 * they are pinned to, hugepages when enough are free (else --no-huge),
 * each port as its kind creates it (port_internal.h), --eal's extra
 * arguments. And the RX lcores the EAL then has.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>

#include "gpucap/gcap_thread.h"
#include "port_internal.h"

#define EAL_ARGS_MAX 128

/* Free hugepage memory, in MB, where a hugetlbfs is mounted. */
static unsigned long
free_huge_mb(void)
{
	static const struct {
		const char *path;
		unsigned long mb;
	} sizes[] = {
		{ "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", 2 },
		{ "/sys/kernel/mm/hugepages/hugepages-1048576kB/free_hugepages", 1024 },
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
	mode_t old_mask;
	cpu_set_t set;
	char lc[4096];
	size_t off = 0;
	bool any_pci = false;
	/* drivers carried as plugins (a devbundle's env.sh sets the first) */
	const char *plugins = getenv("GPUCAP_EAL_PLUGINS") ?: getenv("GCAP_EAL_PLUGINS");
	char *extra = NULL;
	int r;

#define ARG(...)                                                                  \
	do {                                                                      \
		if (argc >= EAL_ARGS_MAX)                                         \
			return gcap_err(errbuf, E2BIG, "too many EAL arguments"); \
		snprintf(store[argc], sizeof(store[argc]), __VA_ARGS__);          \
		argv[argc] = store[argc];                                         \
		argc++;                                                           \
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
				return gcap_err(errbuf, EINVAL, "CPU %u is not available",
						rx[i]);
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
		off += (size_t)snprintf(lc + off, sizeof(lc) - off, "%s%u", i ? "," : "",
					cpus[i]);
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
		const struct gcap_port_kind_ops *k = gcap_port_kind(p->kind);

		if (k->eal_devargs != NULL)
			k->eal_devargs(p, i);
		any_pci |= k->pci;
		if (k->eal_opt == NULL) /* made after the EAL (k->create) */
			continue;
		ARG("%s", k->eal_opt);
		ARG("%s", p->devargs);
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
	/* what the EAL creates (its runtime directory, the telemetry socket
	 * that answers anyone who can connect) is the owner's alone,
	 * whatever the umask: a socket's mode is the umask's */
	old_mask = umask(077);
	/* its threads (lcores, interrupts, telemetry) leave the program its
	 * signals (gcap_thread.h) */
	sigset_t old_sigs;

	gcap_sigs_hold(&old_sigs);
	r = rte_eal_init(argc, argv);
	gcap_sigs_restore(&old_sigs);
	umask(old_mask);
	if (r < 0) {
		int e = rte_errno ? rte_errno : EINVAL;

		return gcap_err(errbuf, e,
				"DPDK initialisation failed: %s (a port's driver or "
				"arguments may be wrong; --verbose shows DPDK's log)",
				rte_strerror(e));
	}
	return 0;
}

unsigned
gcap_rx_lcores(unsigned *ids, unsigned max)
{
	unsigned n = 0, lc;

	RTE_LCORE_FOREACH_WORKER(lc)
	{
		if (n == max)
			break;
		ids[n++] = lc;
	}
	return n;
}
