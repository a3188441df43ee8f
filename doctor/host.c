/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The host's side of the checklist, apart from GPUs and NICs: the peer
 * memory module that lets an RDMA NIC register GPU memory, the IOMMU
 * (sysfs and the kernel command line), and hugepages (per size, and the
 * hugetlbfs mounts).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor_internal.h"

/* loaded, or built in; where it was seen */
static bool
module(const struct dr *d, const char *name, char *where, size_t n)
{
	char line[512], path[PATH_MAX];
	size_t len = strlen(name);
	bool found = false;
	FILE *f = dr_fopen(d, "/proc/modules");

	if (f != NULL) {
		while (!found && fgets(line, sizeof(line), f) != NULL)
			found = strncmp(line, name, len) == 0 && line[len] == ' ';
		fclose(f);
	}
	if (found) {
		snprintf(where, n, "/proc/modules");
		return true;
	}
	/* built into the kernel: no line in /proc/modules */
	snprintf(path, sizeof(path), "/sys/module/%s", name);
	if (dr_exists(d, path)) {
		snprintf(where, n, "%s", path);
		return true;
	}
	return false;
}

void
dr_check_peermem(struct dr *d)
{
	static const char *const mods[] = {
		"nvidia_peermem",
		"nv_peer_mem",
		"nvidia_p2p",
	};
	char where[PATH_MAX];

	for (size_t i = 0; i < sizeof(mods) / sizeof(mods[0]); i++)
		if (module(d, mods[i], where, sizeof(where))) {
			d->peermem = mods[i];
			dr_check(d, DR_OK, "peermem", NULL, "%s loaded (%s)", mods[i],
				 where);
			return;
		}
	dr_check(d, DR_FAIL, "peermem",
		 "modprobe nvidia-peermem (part of the "
		 "NVIDIA driver since R470; MLNX_OFED's nv_peer_mem before it)",
		 "none of nvidia_peermem, nv_peer_mem, nvidia_p2p loaded "
		 "(/proc/modules, /sys/module): an RDMA NIC cannot register GPU "
		 "memory");
}

/* the group type of one device ("DMA", "DMA-FQ", "identity", ...) */
static void
group_type(const struct dr *d, const struct dr_pci *p, char *ev, size_t n, bool *dma,
	   bool *identity)
{
	char path[PATH_MAX], t[32];

	if (p->group < 0)
		return;
	snprintf(path, sizeof(path), "/sys/kernel/iommu_groups/%d/type", p->group);
	if (dr_read(d, path, t, sizeof(t)) < 0)
		return;
	dr_cat(ev, n, "; %s: %s (%s)", p->bdf, t, path);
	if (strncmp(t, "DMA", 3) == 0)
		*dma = true;
	else if (strcmp(t, "identity") == 0)
		*identity = true;
}

void
dr_check_iommu(struct dr *d)
{
	static const char fix[] =
		"boot with iommu=pt (Intel: intel_iommu=on "
		"iommu=pt) or with the IOMMU off: the NIC's writes to the GPU "
		"must reach it untranslated";
	char cmd[4096], ev[DR_TEXT] = "", opts[512] = "", *save = NULL, *tok;
	bool pt = false, dma = false, identity = false;
	struct dirent **l;
	int units, groups;

	if (dr_read(d, "/proc/cmdline", cmd, sizeof(cmd)) == 0)
		for (tok = strtok_r(cmd, " \t", &save); tok != NULL;
		     tok = strtok_r(NULL, " \t", &save)) {
			if (strncmp(tok, "intel_iommu=", 12) != 0 &&
			    strncmp(tok, "amd_iommu=", 10) != 0 &&
			    strncmp(tok, "iommu=", 6) != 0 &&
			    strncmp(tok, "iommu.", 6) != 0)
				continue;
			dr_cat(opts, sizeof(opts), " %s", tok);
			if (strcmp(tok, "iommu=pt") == 0 ||
			    strcmp(tok, "iommu.passthrough=1") == 0)
				pt = true;
		}
	units = dr_scan(d, "/sys/class/iommu", &l);
	if (units > 0) {
		dr_cat(ev, sizeof(ev), "/sys/class/iommu:");
		for (int i = 0; i < units; i++)
			dr_cat(ev, sizeof(ev), " %s", l[i]->d_name);
		dr_scan_free(l, units);
	} else {
		dr_cat(ev, sizeof(ev), "no unit in /sys/class/iommu");
	}
	groups = dr_scan(d, "/sys/kernel/iommu_groups", &l);
	if (groups > 0)
		dr_scan_free(l, groups);
	dr_cat(ev, sizeof(ev), "; %d group(s) in /sys/kernel/iommu_groups",
	       groups > 0 ? groups : 0);
	for (unsigned i = 0; i < d->ngpus; i++)
		if (d->gpus[i].in_sysfs)
			group_type(d, &d->gpus[i].pci, ev, sizeof(ev), &dma, &identity);
	for (unsigned i = 0; i < d->nports; i++)
		if (d->ports[i].present)
			group_type(d, &d->ports[i].dev, ev, sizeof(ev), &dma, &identity);
	dr_cat(ev, sizeof(ev), "; /proc/cmdline:%s", opts[0] ? opts : " no IOMMU option");
	if (units <= 0 && groups <= 0) {
		d->iommu = DR_IOMMU_OFF;
		dr_check(d, DR_OK, "iommu", NULL, "off (%s)", ev);
	} else if (dma) {
		d->iommu = DR_IOMMU_ON;
		dr_check(d, DR_FAIL, "iommu", fix,
			 "enforcing: DMA is translated "
			 "(%s)",
			 ev);
	} else if (identity || pt) {
		d->iommu = DR_IOMMU_PT;
		dr_check(d, DR_OK, "iommu", NULL, "passthrough (%s)", ev);
	} else {
		d->iommu = DR_IOMMU_ON;
		dr_check(d, DR_FAIL, "iommu", fix,
			 "enforcing: an IOMMU is on and "
			 "nothing says passthrough (%s)",
			 ev);
	}
}

void
dr_check_hugepages(struct dr *d)
{
	char ev[DR_TEXT] = "", mounts[512] = "", path[PATH_MAX], line[512];
	unsigned long long free_kb = 0;
	struct dirent **l;
	int n = dr_scan(d, "/sys/kernel/mm/hugepages", &l);
	FILE *f;

	for (int i = 0; i < n; i++) {
		const char *sz = l[i]->d_name;
		long long nr = 0, fr = 0, kb = 0;

		if (strncmp(sz, "hugepages-", 10) != 0)
			continue;
		sz += 10;
		kb = atoll(sz);
		snprintf(path, sizeof(path),
			 "/sys/kernel/mm/hugepages/%s/"
			 "nr_hugepages",
			 l[i]->d_name);
		dr_read_ll(d, path, &nr);
		snprintf(path, sizeof(path),
			 "/sys/kernel/mm/hugepages/%s/"
			 "free_hugepages",
			 l[i]->d_name);
		dr_read_ll(d, path, &fr);
		dr_cat(ev, sizeof(ev), "%s%s: %lld reserved, %lld free",
		       ev[0] ? "; " : "", sz, nr, fr);
		if (fr > 0 && kb > 0)
			free_kb += (unsigned long long)fr * (unsigned long long)kb;
	}
	if (n > 0)
		dr_scan_free(l, n);
	else
		dr_cat(ev, sizeof(ev), "no /sys/kernel/mm/hugepages");
	dr_cat(ev, sizeof(ev), " (/sys/kernel/mm/hugepages)");
	f = dr_fopen(d, "/proc/meminfo");
	if (f != NULL) {
		unsigned long long tot = 0, fr = 0, kb = 0, v;

		while (fgets(line, sizeof(line), f) != NULL)
			if (sscanf(line, "HugePages_Total: %llu", &v) == 1)
				tot = v;
			else if (sscanf(line, "HugePages_Free: %llu", &v) == 1)
				fr = v;
			else if (sscanf(line, "Hugepagesize: %llu", &v) == 1)
				kb = v;
		fclose(f);
		dr_cat(ev, sizeof(ev),
		       "; default size %llukB: %llu reserved, "
		       "%llu free (/proc/meminfo)",
		       kb, tot, fr);
		/* a kernel without the per-size directories */
		if (n <= 0)
			free_kb = fr * kb;
	}
	f = dr_fopen(d, "/proc/mounts");
	if (f != NULL) {
		while (fgets(line, sizeof(line), f) != NULL) {
			char dev[128], mnt[256], type[64], o[256];

			if (sscanf(line, "%127s %255s %63s %255s", dev, mnt, type, o) ==
				    4 &&
			    strcmp(type, "hugetlbfs") == 0)
				dr_cat(mounts, sizeof(mounts), "%s%s (%s)",
				       mounts[0] ? ", " : "", mnt, o);
		}
		fclose(f);
	}
	dr_cat(ev, sizeof(ev), "; hugetlbfs: %s (/proc/mounts)",
	       mounts[0] ? mounts : "not mounted");
	d->huge = free_kb > 0 && mounts[0] != '\0';
	if (d->huge)
		dr_check(d, DR_OK, "hugepages", NULL, "%s", ev);
	else
		dr_check(
			d, DR_FAIL, "hugepages",
			free_kb == 0 ?
				"reserve some: echo 1024 > /sys/kernel/mm/hugepages/"
				"hugepages-2048kB/nr_hugepages (or hugepages=N on the "
				"kernel command line), and mount a hugetlbfs if none is" :
				"mount -t hugetlbfs nodev /dev/hugepages",
			"%s; without "
			"free hugepages in a hugetlbfs gpu-capture runs DPDK with "
			"--no-huge (ordinary pages)",
			ev);
}
