/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The GPUs as the CUDA driver API sees them, through the gpu module's
 * loader (gpu/cuda.c: dlopen of libcuda at run time, so an absent driver
 * is a finding, not a crash): model, PCI address, compute capability,
 * integrated or discrete, what gpu-capture needs of a device, and the
 * GPUDirect RDMA attributes. Only this file of the doctor needs cuda.h.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gpucap/gcap_common.h"
#include "cuda_internal.h"
#include "doctor_internal.h"

static int
attr(const struct gcap_cu *cu, CUdevice dev, CUdevice_attribute a)
{
	int v = 0;

	if (cu->DeviceGetAttribute(&v, a, dev) != CUDA_SUCCESS)
		return 0;
	return v;
}

static void
one(const struct gcap_cu *cu, CUdevice dev, int ordinal, struct dr_gpu *g)
{
	char bus[64];
	size_t len, i;

	memset(g, 0, sizeof(*g));
	g->ordinal = ordinal;
	if (cu->DeviceGetName(g->name, sizeof(g->name), dev) != CUDA_SUCCESS)
		snprintf(g->name, sizeof(g->name), "?");
	/* "0000:3B:00.0", the domain maybe 8 digits: sysfs's form */
	if (cu->DeviceGetPCIBusId(bus, sizeof(bus), dev) == CUDA_SUCCESS) {
		len = strlen(bus);
		for (i = 0; i < len; i++)
			bus[i] = (char)tolower((unsigned char)bus[i]);
		snprintf(g->bdf, sizeof(g->bdf), "%s", len > 12 ? bus + len - 12 : bus);
	}
	g->cc_major = attr(cu, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
	g->cc_minor = attr(cu, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
	g->integrated = attr(cu, dev, CU_DEVICE_ATTRIBUTE_INTEGRATED) != 0;
	/* what gcap_gpu_probe() counts as usable */
	g->usable = attr(cu, dev, CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY) &&
		    attr(cu, dev, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING);
	g->rdma = attr(cu, dev, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED) != 0;
	g->flush =
		attr(cu, dev, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS);
	g->ordering = attr(cu, dev, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING);
	if (cu->DeviceTotalMem != NULL) {
		size_t bytes = 0;

		if (cu->DeviceTotalMem(&bytes, dev) == CUDA_SUCCESS)
			g->vram = bytes;
	}
}

int
dr_cuda_gpus(struct dr *d, char *why, size_t n)
{
	char err[GCAP_ERRBUF_SIZE];
	const struct gcap_cu *cu;
	int count = 0, rc;

	d->cuda_built = CUDA_VERSION;
	cu = gcap_cu_load(err);
	if (cu == NULL) {
		rc = -errno;
		snprintf(why, n, "%s", err);
		return rc;
	}
	d->cuda_driver = cu->version;
	rc = gcap_cu_err(cu, cu->DeviceGetCount(&count), err, "cuDeviceGetCount");
	if (rc) {
		snprintf(why, n, "%s", err);
		return rc;
	}
	for (int i = 0; i < count && d->ngpus < DR_MAX_GPUS; i++) {
		CUdevice dev;

		if (cu->DeviceGet(&dev, i) == CUDA_SUCCESS)
			one(cu, dev, i, &d->gpus[d->ngpus++]);
	}
	return 0;
}
