/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The GPU side of the checklist: the CUDA driver and its version, the
 * kernel driver's version, each GPU (model, compute capability, integrated
 * or discrete, whether gpu-capture can use it), its GPUDirect RDMA
 * attributes, and its BAR1 (sysfs, and NVML's free figure). Without a
 * driver the GPUs sysfs shows are listed with the reason none can be used.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor_internal.h"

#define NVIDIA 0x10de

/* "Model: ..." of /proc/driver/nvidia/gpus/<bdf>/information */
static bool
proc_model(const struct dr *d, const char *bdf, char *buf, size_t n)
{
	char path[PATH_MAX], line[256];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/driver/nvidia/gpus/%s/information", bdf);
	f = dr_fopen(d, path);
	if (f == NULL)
		return false;
	while (!found && fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "Model:", 6) == 0) {
			const char *s = line + 6;

			s += strspn(s, " \t");
			line[strcspn(line, "\n")] = '\0';
			snprintf(buf, n, "%s", s);
			found = true;
		}
	fclose(f);
	return found;
}

static void
check_driver(struct dr *d, int rc, const char *why)
{
	const char *fix = NULL;
	int dv = d->cuda_driver, bv = d->cuda_built;

	if (rc == 0) {
		bool old = dv / 1000 < bv / 1000;

		dr_check(d, old ? DR_WARN : DR_OK, "cuda driver",
			 old ? "a driver for the CUDA major version this build "
			       "used (or later): the embedded kernels may not load" :
			       NULL,
			 "driver API loaded: cuDriverGetVersion %d "
			 "(CUDA %d.%d), %u device(s); this build: cuda.h %d.%d",
			 dv, dv / 1000, dv % 1000 / 10, d->ngpus, bv / 1000,
			 bv % 1000 / 10);
		return;
	}
	if (d->cuda_built == 0)
		fix = "rebuild with the CUDA toolkit (meson setup -Dcuda=enabled)";
	else if (rc == -ENOENT)
		fix = "install the NVIDIA driver (it provides libcuda.so.1); in "
		      "a container, start it with the NVIDIA container runtime";
	else if (rc == -ENOTSUP)
		fix = "install a CUDA 12 (or later) driver";
	else
		fix = "load the nvidia kernel module and check that /dev/nvidia* "
		      "are there and accessible (nvidia-smi)";
	dr_check(d, DR_FAIL, "cuda driver", fix, "%s", why);
}

/* The version in /proc/driver/nvidia/version's first line: the first
 * word after "Kernel Module" made of digits and dots ("... Kernel Module
 * 570.86.15 ...", and the open module's "... Open Kernel Module for
 * x86_64  580.159.04 ..."). NULL when there is none. */
static const char *
driver_version(const char *line)
{
	const char *s = strstr(line, "Kernel Module");

	if (s == NULL)
		return NULL;
	for (s += strlen("Kernel Module"); *s != '\0' && *s != '\n';) {
		size_t n, digits;

		s += strspn(s, " \t");
		n = strcspn(s, " \t\n");
		digits = strspn(s, "0123456789.");
		if (n > 0 && digits == n && s[0] != '.' && memchr(s, '.', n) != NULL)
			return s;
		s += n;
	}
	return NULL;
}

static void
check_kernel_driver(struct dr *d, struct dr_nvml *m)
{
	char line[256], v[96];
	const char *s;

	if (dr_read(d, "/proc/driver/nvidia/version", line, sizeof(line)) == 0 &&
	    (s = driver_version(line)) != NULL) {
		snprintf(v, sizeof(v), "%.*s", (int)strcspn(s, " \t\n"), s);
		dr_check(d, DR_OK, "nvidia driver", NULL,
			 "%s (/proc/driver/nvidia/version)", v);
	} else if (m != NULL && dr_nvml_driver(m, v, sizeof(v)) == 0) {
		dr_check(d, DR_OK, "nvidia driver", NULL,
			 "%s "
			 "(nvmlSystemGetDriverVersion)",
			 v);
	} else {
		dr_check(d, DR_INFO, "nvidia driver", NULL,
			 "not loaded "
			 "(/proc/driver/nvidia/version absent, no NVML)");
	}
}

/* No device from the driver API: what sysfs shows, and why it is unusable */
static void
sysfs_gpus(struct dr *d, const char *why)
{
	struct dr_pci *l;
	char model[128], name[64];
	int n = dr_pci_scan(d, 0x03, &l), k = 0;

	for (int i = 0; i < n; i++) {
		if (l[i].vendor != NVIDIA)
			continue;
		if (!proc_model(d, l[i].bdf, model, sizeof(model)))
			snprintf(model, sizeof(model), "NVIDIA %04x:%04x", l[i].vendor,
				 l[i].device);
		snprintf(name, sizeof(name), "gpu %s", l[i].bdf);
		dr_check(d, DR_FAIL, name,
			 "make the CUDA driver work (cuda "
			 "driver, above)",
			 "%s in /sys/bus/pci/devices (driver %s), "
			 "not usable: %s",
			 model, l[i].driver[0] ? l[i].driver : "none", why);
		k++;
	}
	free(l);
	if (k == 0)
		dr_check(d, DR_FAIL, "gpus",
			 "GPU-memory capture needs an NVIDIA "
			 "GPU (the cpu backend needs none)",
			 "no CUDA device, and "
			 "no NVIDIA GPU (vendor 0x10de, class 0x03) in "
			 "/sys/bus/pci/devices");
}

static void
check_rdma(struct dr *d, const struct dr_gpu *g, const char *name)
{
	static const char *const flush[] = {
		"none",
		"host: cuFlushGPUDirectRDMAWrites",
		"memops",
		"host: cuFlushGPUDirectRDMAWrites, memops",
	};
	char found[DR_TEXT];

	snprintf(found, sizeof(found),
		 "CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_"
		 "SUPPORTED=%d, GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS=0x%x (%s), "
		 "GPU_DIRECT_RDMA_WRITES_ORDERING=%d (%s)",
		 g->rdma, g->flush, flush[g->flush & 3], g->ordering,
		 g->ordering >= 200 ? "all devices" :
		 g->ordering >= 100 ? "owner" :
				      "none");
	if (!g->rdma && g->integrated)
		dr_check(d, DR_FAIL, name,
			 "use --mem host: on a unified-memory "
			 "GPU host memory is the GPU's memory",
			 "%s; an integrated "
			 "GPU (unified memory): no NIC-to-VRAM DMA",
			 found);
	else if (!g->rdma)
		dr_check(d, DR_FAIL, name,
			 "use --mem host or --mem copy, or a GPU "
			 "that supports GPUDirect RDMA (datacenter GPUs do)",
			 "%s", found);
	else if (g->ordering < 100 && !(g->flush & 1))
		dr_check(d, DR_FAIL, name, "use --mem host or --mem copy",
			 "%s; NIC writes are neither ordered for the GPU nor "
			 "flushable, a batch could be read before its packets",
			 found);
	else
		dr_check(d, DR_OK, name, NULL, "%s", found);
}

static void
check_bar1(struct dr *d, const struct dr_gpu *g, const char *name, struct dr_nvml *m,
	   const char *nvml_why)
{
	char found[DR_TEXT] = "", a[32], b[32];
	uint64_t bar1 = 0, total = 0, avail = 0, size;
	bool nv = m != NULL && g->bdf[0] && dr_nvml_bar1(m, g->bdf, &total, &avail) == 0;

	if (g->in_sysfs)
		bar1 = dr_pci_bar(d, g->bdf, 1);
	if (bar1)
		dr_cat(found, sizeof(found),
		       "%s (BAR 1 in /sys/bus/pci/devices/"
		       "%s/resource)",
		       dr_size(a, sizeof(a), bar1), g->bdf);
	else
		dr_cat(found, sizeof(found), "no BAR 1 size in sysfs (%s)",
		       g->in_sysfs ? "resource: none" : "not a PCI device there");
	if (nv && total == 0)
		dr_cat(found, sizeof(found), "; none (nvmlDeviceGetBAR1MemoryInfo)");
	else if (nv)
		dr_cat(found, sizeof(found),
		       "; %s free of %s "
		       "(nvmlDeviceGetBAR1MemoryInfo)",
		       dr_size(a, sizeof(a), avail), dr_size(b, sizeof(b), total));
	else
		dr_cat(found, sizeof(found), "; free: unknown (NVML: %s)",
		       m != NULL ? "no such device" : nvml_why);
	if (g->vram)
		dr_cat(found, sizeof(found),
		       "; VRAM %s (cuDeviceTotalMem, not "
		       "BAR1)",
		       dr_size(a, sizeof(a), g->vram));
	size = nv ? total : bar1;
	if (g->integrated || !g->rdma)
		dr_check(d, DR_INFO, name, NULL, "%s", found);
	else if (size == 0)
		dr_check(d, DR_WARN, name, NULL, "%s", found);
	else if (g->vram && size < g->vram)
		dr_check(d, DR_WARN, name,
			 "enable a large BAR1 (Resizable BAR, "
			 "Above 4G decoding) in the firmware",
			 "%s; GPU memory the "
			 "NIC writes (every GPU-memory queue's packet pool) must "
			 "fit in BAR1",
			 found);
	else
		dr_check(d, DR_OK, name, NULL, "%s", found);
}

void
dr_check_gpus(struct dr *d)
{
	char why[DR_TEXT], nvml_why[DR_TEXT], name[64], found[DR_TEXT];
	int rc = dr_cuda_gpus(d, why, sizeof(why));
	struct dr_nvml *m;

	check_driver(d, rc, why);
	m = dr_nvml_open(nvml_why, sizeof(nvml_why));
	check_kernel_driver(d, m);
	if (d->ngpus == 0)
		sysfs_gpus(d,
			   rc ? "no working CUDA driver" : "the driver lists no device");
	for (unsigned i = 0; i < d->ngpus; i++) {
		struct dr_gpu *g = &d->gpus[i];
		char sz[32];

		g->in_sysfs = g->bdf[0] && dr_pci_read(d, g->bdf, &g->pci) == 0;
		snprintf(found, sizeof(found),
			 "%s at %s, compute capability "
			 "%d.%d, %s (CU_DEVICE_ATTRIBUTE_INTEGRATED=%d)",
			 g->name, g->bdf[0] ? g->bdf : "?", g->cc_major, g->cc_minor,
			 g->integrated ? "integrated" : "discrete", g->integrated);
		if (g->vram)
			dr_cat(found, sizeof(found), ", %s",
			       dr_size(sz, sizeof(sz), g->vram));
		if (g->in_sysfs)
			dr_cat(found, sizeof(found), ", NUMA node %d", g->pci.numa);
		else
			dr_cat(found, sizeof(found), ", not in /sys/bus/pci/devices");
		snprintf(name, sizeof(name), "gpu %d", g->ordinal);
		if (g->usable)
			dr_check(d, DR_OK, name, NULL, "%s", found);
		else
			dr_check(d, DR_FAIL, name,
				 "gpu-capture needs a GPU with "
				 "mapped host memory and unified addressing",
				 "%s; "
				 "no CAN_MAP_HOST_MEMORY or UNIFIED_ADDRESSING",
				 found);
		snprintf(name, sizeof(name), "gpu %d gpudirect rdma", g->ordinal);
		check_rdma(d, g, name);
		snprintf(name, sizeof(name), "gpu %d bar1", g->ordinal);
		check_bar1(d, g, name, m, nvml_why);
	}
	dr_nvml_close(m);
}
