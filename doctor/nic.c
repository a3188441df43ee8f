/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ports: each -i PORT (or every network controller sysfs shows when
 * none is given), the driver it is bound to and whether DPDK can drive it,
 * its PCIe path to each GPU, the GPU gpu-capture would give it, the memory
 * mode --mem auto would choose for it and why, and what keeps GPU-memory
 * capture from working there.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor_internal.h"

#define DEV_DIR "/sys/bus/pci/devices"

enum drv {
	DRV_NONE,
	DRV_MLX5,
	DRV_VFIO,
	DRV_UIO
};

int
dr_ports_collect(struct dr *d)
{
	const struct gcap_doctor_conf *c = d->conf;
	struct dr_pci *l = NULL;
	int n = (int)c->nports;

	if (n == 0) {
		n = dr_pci_scan(d, 0x02, &l);
		if (n < 0)
			n = 0;
	}
	d->ports = calloc(n > 0 ? (size_t)n : 1, sizeof(*d->ports));
	if (d->ports == NULL) {
		free(l);
		return -ENOMEM;
	}
	for (int i = 0; i < n; i++) {
		struct dr_port *p = &d->ports[i];
		char bdf[32];

		p->gpu = -1;
		if (l != NULL) {
			p->dev = l[i];
			p->spec = p->dev.bdf;
			p->pci = p->present = true;
		} else {
			p->spec = c->ports[i];
			p->pci = dr_pci_bdf(p->spec, bdf, sizeof(bdf));
			p->present = p->pci && dr_pci_read(d, bdf, &p->dev) == 0;
		}
	}
	d->nports = (unsigned)n;
	free(l);
	return 0;
}

/* The GPU gpu-capture gives the port: --gpu's, else the first usable one
 * on the port's NUMA node, else GPU 0 (gcap_gpu_pick()). */
static int
pick_gpu(const struct dr *d, unsigned i, const struct dr_port *p)
{
	const struct gcap_doctor_conf *c = d->conf;

	if (d->ngpus == 0)
		return -1;
	if (c->ngpus > 0) {
		for (unsigned k = 0; k < d->ngpus; k++)
			if (d->gpus[k].ordinal == c->gpus[i % c->ngpus])
				return (int)k;
		return -1;
	}
	if (p->present && p->dev.numa >= 0)
		for (unsigned k = 0; k < d->ngpus; k++)
			if (d->gpus[k].usable && d->gpus[k].in_sysfs &&
			    d->gpus[k].pci.numa == p->dev.numa)
				return (int)k;
	return 0;
}

/* List a directory's entries into ev; the first one in first (NULL: not
 * wanted; "" when there is none). */
static int
entries(const struct dr *d, const char *dir, char *ev, size_t n, char *first, size_t fn)
{
	struct dirent **l;
	int k = dr_scan(d, dir, &l);

	if (first != NULL)
		first[0] = '\0';
	for (int i = 0; i < k; i++) {
		dr_cat(ev, n, "%s%s", i ? " " : "", l[i]->d_name);
		if (i == 0 && first != NULL)
			snprintf(first, fn, "%s", l[i]->d_name);
	}
	if (k > 0)
		dr_scan_free(l, k);
	return k > 0 ? k : 0;
}

/* mlx5_core: DPDK's mlx5 PMD runs beside it through rdma-core */
static bool
check_mlx5(const struct dr *d, const struct dr_port *p, char *ev, size_t n, char *fix,
	   size_t fn)
{
	char dir[PATH_MAX], uv[256], lib[PATH_MAX], dev[PATH_MAX];
	bool ok = true, libs = true;

	dr_cat(ev, n,
	       "DPDK's mlx5 PMD drives it beside the kernel driver, "
	       "through rdma-core: RDMA device ");
	snprintf(dir, sizeof(dir), DEV_DIR "/%s/infiniband", p->dev.bdf);
	if (entries(d, dir, ev, n, NULL, 0) == 0) {
		dr_cat(ev, n, "none (%s absent)", dir);
		dr_cat(fix, fn, "%smodprobe mlx5_ib", fix[0] ? "; " : "");
		ok = false;
	} else {
		dr_cat(ev, n, " (%s)", dir);
	}
	snprintf(dir, sizeof(dir), DEV_DIR "/%s/infiniband_verbs", p->dev.bdf);
	dr_cat(ev, n, ", verbs device ");
	if (entries(d, dir, ev, n, uv, sizeof(uv)) == 0) {
		dr_cat(ev, n, "none (%s absent)", dir);
		dr_cat(fix, fn, "%smodprobe ib_uverbs", fix[0] ? "; " : "");
		ok = false;
	} else {
		snprintf(dev, sizeof(dev), "/dev/infiniband/%s", uv);
		if (dr_exists(d, dev)) {
			dr_cat(ev, n, " (%s)", dev);
		} else {
			dr_cat(ev, n, " but no %s", dev);
			dr_cat(fix, fn, "%screate %s (udev, rdma-core)",
			       fix[0] ? "; " : "", dev);
			ok = false;
		}
	}
	if (dr_find_lib(d, "libibverbs.so.1", lib, sizeof(lib))) {
		dr_cat(ev, n, ", %s", lib);
	} else {
		dr_cat(ev, n, ", no libibverbs.so.1");
		libs = false;
	}
	if (dr_find_lib(d, "libmlx5.so.1", lib, sizeof(lib))) {
		dr_cat(ev, n, ", %s", lib);
	} else {
		dr_cat(ev, n, ", no libmlx5.so.1 (rdma-core's mlx5 provider)");
		libs = false;
	}
	if (!libs)
		dr_cat(fix, fn,
		       "%sinstall rdma-core (libibverbs and its mlx5 "
		       "provider)",
		       fix[0] ? "; " : "");
	return ok && libs;
}

static bool
check_vfio(const struct dr *d, const struct dr_port *p, char *ev, size_t n, char *fix,
	   size_t fn)
{
	char grp[PATH_MAX], nogrp[PATH_MAX];

	dr_cat(ev, n, "DPDK drives it through VFIO: ");
	if (!dr_exists(d, "/dev/vfio/vfio")) {
		dr_cat(ev, n, "no /dev/vfio/vfio");
		snprintf(fix, fn, "modprobe vfio-pci");
		return false;
	}
	snprintf(grp, sizeof(grp), "/dev/vfio/%d", p->dev.group);
	snprintf(nogrp, sizeof(nogrp), "/dev/vfio/noiommu-%d", p->dev.group);
	if (p->dev.group >= 0 && dr_exists(d, grp)) {
		dr_cat(ev, n, "/dev/vfio/vfio, %s", grp);
		return true;
	}
	if (p->dev.group >= 0 && dr_exists(d, nogrp)) {
		dr_cat(ev, n, "/dev/vfio/vfio, %s (no-IOMMU mode)", nogrp);
		return true;
	}
	dr_cat(ev, n, "/dev/vfio/vfio but no device for its IOMMU group (%d)",
	       p->dev.group);
	snprintf(fix, fn,
		 "turn the IOMMU on (intel_iommu=on iommu=pt), or "
		 "load vfio with enable_unsafe_noiommu_mode=1");
	return false;
}

/* The driver line; returns what kind of driver DPDK would use (DRV_NONE:
 * it cannot start the port) */
static enum drv
check_driver(struct dr *d, const struct dr_port *p, const char *name)
{
	const char *drv = p->dev.driver;
	char ev[DR_TEXT] = "", fix[DR_TEXT] = "";
	enum drv k = DRV_NONE;
	bool ok;

	if (strcmp(drv, "mlx5_core") == 0) {
		k = DRV_MLX5;
		ok = check_mlx5(d, p, ev, sizeof(ev), fix, sizeof(fix));
	} else if (strcmp(drv, "vfio-pci") == 0) {
		k = DRV_VFIO;
		ok = check_vfio(d, p, ev, sizeof(ev), fix, sizeof(fix));
	} else if (strcmp(drv, "uio_pci_generic") == 0 || strcmp(drv, "igb_uio") == 0) {
		k = DRV_UIO;
		ok = true;
		dr_cat(ev, sizeof(ev), "DPDK drives it through UIO");
	} else {
		ok = false;
		dr_cat(ev, sizeof(ev),
		       drv[0] ? "the kernel's driver: DPDK "
				"cannot drive the port while it is bound to it" :
				"no driver bound");
		snprintf(fix, sizeof(fix), "%s",
			 p->dev.vendor == 0x15b3 ?
				 "modprobe mlx5_core (DPDK's mlx5 PMD works beside it)" :
				 "");
		dr_cat(fix, sizeof(fix), "%sdpdk-devbind.py --bind=vfio-pci %s",
		       fix[0] ? "; or " : "", p->dev.bdf);
	}
	dr_check(d, ok ? DR_OK : DR_FAIL, name, ok ? NULL : fix,
		 "%s (%s/%s/"
		 "driver): %s",
		 drv[0] ? drv : "none", DEV_DIR, p->dev.bdf, ev);
	return ok ? k : DRV_NONE;
}

/* The path to each GPU; returns the class of the path to the port's GPU */
static const char *
check_paths(struct dr *d, const struct dr_port *p)
{
	const char *mine = NULL;
	char name[96], why[DR_TEXT];

	for (unsigned k = 0; k < d->ngpus; k++) {
		const struct dr_gpu *g = &d->gpus[k];
		const char *kind, *fix = NULL;
		enum dr_status st = DR_INFO;

		snprintf(name, sizeof(name), "port %s path to gpu %d", p->spec,
			 g->ordinal);
		if (!g->in_sysfs) {
			dr_check(d, (int)k == p->gpu ? DR_WARN : DR_INFO, name, NULL,
				 "unknown: the GPU is not in %s", DEV_DIR);
			continue;
		}
		kind = dr_pci_path(&p->dev, &g->pci, why, sizeof(why));
		if ((int)k == p->gpu) {
			mine = kind;
			if (strcmp(kind, "PIX") == 0 || strcmp(kind, "PXB") == 0) {
				st = DR_OK;
			} else if (strcmp(kind, "SYS") == 0) {
				st = DR_FAIL;
				fix = "use a GPU on the NIC's NUMA node (--gpu N), "
				      "or put the NIC and the GPU under one PCIe "
				      "switch";
			} else {
				st = DR_WARN;
				dr_cat(why, sizeof(why), "%s",
				       kind[0] == '?' ?
					       "" :
					       ": peer-to-peer between host bridges, or "
					       "through one, depends on the CPU");
			}
		}
		dr_check(d, st, name, fix, "%s (%s; %s -> %s)", kind, why, p->dev.path,
			 g->pci.path);
	}
	return mine;
}

/* What --mem auto would choose (gpu_pool_create: GPU memory when the GPU
 * has GPUDirect RDMA and the port's device DMA-maps it, else host). */
static const char *
predict(const struct dr *d, struct dr_port *p, enum drv k, bool software, bool exists)
{
	const struct dr_gpu *g = p->gpu >= 0 ? &d->gpus[p->gpu] : NULL;

	if (!exists) {
		snprintf(p->why, sizeof(p->why), "the port does not exist");
		return "none";
	}
	if (g == NULL && d->ngpus > 0) {
		snprintf(p->why, sizeof(p->why), "--gpu %d: no such GPU",
			 d->conf->gpus[(unsigned)(p - d->ports) % d->conf->ngpus]);
		return "none";
	}
	if (g == NULL) {
		snprintf(p->why, sizeof(p->why),
			 "no usable GPU: --backend auto "
			 "runs the cpu backend, packets in ordinary DPDK memory");
		return "none";
	}
	if (software) {
		snprintf(p->why, sizeof(p->why),
			 "a software port (DPDK's vdev "
			 "bus): its driver copies packets with the CPU, and "
			 "gpu-capture never gives it GPU memory");
		return "host";
	}
	if (k == DRV_NONE) {
		snprintf(p->why, sizeof(p->why), "the port cannot start (above)");
		return "none";
	}
	if (!g->rdma) {
		snprintf(p->why, sizeof(p->why), "GPU %d has no GPUDirect RDMA",
			 g->ordinal);
		return "host";
	}
	if (k == DRV_VFIO || k == DRV_UIO) {
		snprintf(p->why, sizeof(p->why),
			 "under %s the port's DMA mapping "
			 "(rte_dev_dma_map) cannot take GPU memory: NIC-to-GPU "
			 "DMA needs a ConnectX on mlx5_core with nvidia-peermem",
			 p->dev.driver);
		return "host";
	}
	if (d->peermem == NULL) {
		snprintf(p->why, sizeof(p->why),
			 "mlx5 cannot register GPU memory "
			 "without a peer memory module (nvidia-peermem)");
		return "host";
	}
	snprintf(p->why, sizeof(p->why),
		 "GPU %d has GPUDirect RDMA and mlx5 "
		 "registers its memory through %s",
		 g->ordinal, d->peermem);
	return "gpu";
}

static void
blockers(const struct dr *d, struct dr_port *p, const char *path)
{
	const struct dr_gpu *g = p->gpu >= 0 ? &d->gpus[p->gpu] : NULL;
	char *b = p->blockers;
	size_t n = sizeof(p->blockers);

#define BLOCK(...)                                    \
	do {                                          \
		dr_cat(b, n, "%s", b[0] ? "; " : ""); \
		dr_cat(b, n, __VA_ARGS__);            \
	} while (0)
	if (strcmp(p->mem, "gpu") != 0)
		BLOCK("--mem auto: %s (%s)", p->mem, p->why);
	if (g != NULL && !g->usable)
		BLOCK("GPU %d is not usable", g->ordinal);
	if (g != NULL && g->rdma && g->ordering < 100 && !(g->flush & 1))
		BLOCK("GPU %d cannot order or flush NIC writes", g->ordinal);
	if (path != NULL && strcmp(path, "SYS") == 0)
		BLOCK("NIC and GPU %d across sockets (SYS)", g->ordinal);
	if (d->iommu == DR_IOMMU_ON)
		BLOCK("IOMMU enforcing");
	if (!d->huge)
		BLOCK("no hugepages");
#undef BLOCK
	p->ready = b[0] == '\0';
}

/* A port that is not a PCI address: a DPDK vdev or a Linux interface;
 * false when there is no such interface */
static bool
check_software(struct dr *d, const struct dr_port *p, const char *name)
{
	char path[PATH_MAX], dev[PATH_MAX], bdf[32];

	if (strncmp(p->spec, "net_", 4) == 0 || strncmp(p->spec, "eth_", 4) == 0) {
		dr_check(d, DR_INFO, name, NULL, "a DPDK virtual device");
		return true;
	}
	snprintf(path, sizeof(path), "/sys/class/net/%s", p->spec);
	if (!dr_exists(d, path)) {
		dr_check(d, DR_FAIL, name,
			 "give a PCI address, a net_ device or "
			 "an existing interface",
			 "no such interface (%s absent)", path);
		return false;
	}
	snprintf(path, sizeof(path), "/sys/class/net/%s/device", p->spec);
	if (dr_real(d, path, dev, sizeof(dev)) == 0 &&
	    dr_pci_owner(dev, bdf, sizeof(bdf)))
		dr_check(d, DR_INFO, name, NULL,
			 "a Linux interface, opened "
			 "through net_af_packet (a software port); its device is "
			 "on PCI %s (%s -> %s): -i %s gives it DPDK's PCI driver",
			 bdf, path, dev, bdf);
	else
		dr_check(d, DR_INFO, name, NULL,
			 "a Linux interface without a "
			 "PCI device (%s), opened through net_af_packet",
			 path);
	return true;
}

void
dr_check_ports(struct dr *d)
{
	char name[96];

	if (d->nports == 0)
		dr_check(d, DR_FAIL, "ports", "GPU-memory capture needs a NIC",
			 "no network controller (class 0x02) in %s", DEV_DIR);
	for (unsigned i = 0; i < d->nports; i++) {
		struct dr_port *p = &d->ports[i];
		const char *path = NULL;
		enum drv k = DRV_NONE;
		bool software = !p->pci, exists = p->present;

		p->gpu = pick_gpu(d, i, p);
		snprintf(name, sizeof(name), "port %s", p->spec);
		if (software) {
			exists = check_software(d, p, name);
		} else if (!p->present) {
			dr_check(d, DR_FAIL, name,
				 "give the PCI address of a NIC "
				 "(lspci -D; /sys/class/net/*/device)",
				 "no such "
				 "PCI device (%s/%s absent)",
				 DEV_DIR, p->spec);
		} else {
			bool nic = p->dev.cls >> 16 == 0x02;

			dr_check(d, nic ? DR_INFO : DR_FAIL, name, NULL,
				 "PCI %s, "
				 "%04x:%04x, class 0x%06x%s, NUMA node %d (%s)",
				 p->dev.bdf, p->dev.vendor, p->dev.device, p->dev.cls,
				 nic ? "" : " (not a network controller)", p->dev.numa,
				 p->dev.path);
			snprintf(name, sizeof(name), "port %s driver", p->spec);
			k = check_driver(d, p, name);
			if (!nic)
				k = DRV_NONE;
			path = check_paths(d, p);
		}
		p->mem = predict(d, p, k, software, exists);
		snprintf(name, sizeof(name), "port %s --mem auto", p->spec);
		if (p->gpu >= 0 && strcmp(p->mem, "none") != 0)
			dr_check(d, strcmp(p->mem, "gpu") ? DR_FAIL : DR_OK, name, NULL,
				 "%s on GPU %d: %s", p->mem, d->gpus[p->gpu].ordinal,
				 p->why);
		else
			dr_check(d, DR_FAIL, name, NULL, "%s: %s", p->mem, p->why);
		blockers(d, p, path);
	}
}
