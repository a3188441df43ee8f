/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The GPUs the executor can use: the probe (a device that maps host memory
 * with unified addressing), the choice by NUMA node, and the context
 * current on each thread. The bottom of the executor's parts, with the
 * module's log type: every other part may call it, it calls none of them.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_log.h>

#include "gpucap/gcap_gpu.h"
#include "exec_gpu_internal.h"

int gcap_gpu_logtype = -1;

RTE_INIT(gpu_log_init)
{
	gcap_gpu_logtype =
		rte_log_register_type_and_pick_level("gpucap.gpu", RTE_LOG_INFO);
}

__thread CUcontext gcap_gpu_tls_ctx;

int
gcap_gpu_ctx_on(struct gcap_exec *ex, struct gpu_dev *d, char *errbuf)
{
	int rc = gcap_cu_err(ex->cu, ex->cu->CtxSetCurrent(d->ctx), errbuf,
			     "cuCtxSetCurrent");

	gcap_gpu_tls_ctx = rc ? NULL : d->ctx;
	return rc;
}

int
gcap_gpu_dev_usable(const struct gcap_cu *cu, CUdevice d)
{
	int map = 0, uva = 0;

	cu->DeviceGetAttribute(&map, CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, d);
	cu->DeviceGetAttribute(&uva, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, d);
	return map && uva;
}

int
gcap_gpu_probe(int *ndev, char *errbuf)
{
	const struct gcap_cu *cu = gcap_cu_load(errbuf);
	int n = 0, i, ok = 0, rc;

	if (ndev)
		*ndev = 0;
	if (cu == NULL)
		return -errno;
	rc = gcap_cu_err(cu, cu->DeviceGetCount(&n), errbuf, "cuDeviceGetCount");
	if (rc)
		return -ENODEV;
	for (i = 0; i < n; i++) {
		CUdevice d;

		if (cu->DeviceGet(&d, i) == CUDA_SUCCESS && gcap_gpu_dev_usable(cu, d))
			ok++;
	}
	if (ok == 0)
		return gcap_err(errbuf, ENODEV,
				"no usable GPU (%d CUDA devices, "
				"none with mapped host memory and unified "
				"addressing)",
				n);
	if (ndev)
		*ndev = ok;
	return 0;
}

static int
dev_numa_node(const struct gcap_cu *cu, CUdevice d)
{
	char bus[64], path[128], lower[64];
	FILE *f;
	int node = -1;
	size_t i;

	if (cu->DeviceGetPCIBusId(bus, sizeof(bus), d) != CUDA_SUCCESS)
		return -1;
	for (i = 0; bus[i] && i < sizeof(lower) - 1; i++)
		lower[i] = (char)((bus[i] >= 'A' && bus[i] <= 'F') ? bus[i] - 'A' + 'a' :
								     bus[i]);
	lower[i] = '\0';
	/* cuDeviceGetPCIBusId gives "0000:3b:00.0" (domain may be 8 digits) */
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/numa_node",
		 strlen(lower) > 12 ? lower + strlen(lower) - 12 : lower);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	if (fscanf(f, "%d", &node) != 1)
		node = -1;
	fclose(f);
	return node;
}

int
gcap_gpu_pick(int socket)
{
	const struct gcap_cu *cu;
	int n = 0, i, rc;

	rc = gcap_gpu_probe(&n, NULL);
	if (rc)
		return rc;
	cu = gcap_cu_load(NULL);
	if (socket < 0)
		return 0;
	cu->DeviceGetCount(&n);
	for (i = 0; i < n; i++) {
		CUdevice d;

		if (cu->DeviceGet(&d, i) == CUDA_SUCCESS && gcap_gpu_dev_usable(cu, d) &&
		    dev_numa_node(cu, d) == socket)
			return i;
	}
	return 0;
}
