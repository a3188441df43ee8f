/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A fake CUDA driver and NVML for the doctor's tests, loaded through
 * GCAP_CUDA_LIB and GCAP_NVML_LIB: the GPUs it shows come from the file
 * GCAP_FAKE_CUDA names, one line each,
 *
 *   gpu NAME|BUS ID|CC|INTEGRATED|RDMA|FLUSH|ORDERING|VRAM|BAR1|BAR1 FREE
 *
 * plus "driver N" (cuDriverGetVersion) and "nvml VERSION" (NVML's driver
 * version; without it NVML does not initialise). No file, or no gpu line:
 * cuInit says CUDA_ERROR_NO_DEVICE, as a driver without GPUs does.
 * The loader (gpu/cuda.c) resolves every entry point through
 * cuGetProcAddress; those the doctor never calls share one function that
 * fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cuda.h>

#define MAX_GPUS 8

struct fake_gpu {
	char name[128], bus[32];
	int major, minor, integrated, rdma, flush, ordering;
	unsigned long long vram, bar1, bar1_free;
};

static struct fake_gpu gpus[MAX_GPUS];
static int ngpus;
static int driver = 12080;
static char nvml_version[64];
static int loaded;

static void
load(void)
{
	const char *path = getenv("GCAP_FAKE_CUDA");
	char line[512];
	FILE *f;

	if (loaded++)
		return;
	f = path != NULL ? fopen(path, "r") : NULL;
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		struct fake_gpu *g = &gpus[ngpus];

		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "driver %d", &driver) == 1)
			continue;
		if (sscanf(line, "nvml %63s", nvml_version) == 1)
			continue;
		if (strncmp(line, "gpu ", 4) == 0 && ngpus < MAX_GPUS &&
		    sscanf(line + 4, "%127[^|]|%31[^|]|%d.%d|%d|%d|%d|%d|%llu|%llu|%llu",
			   g->name, g->bus, &g->major, &g->minor, &g->integrated,
			   &g->rdma, &g->flush, &g->ordering, &g->vram, &g->bar1,
			   &g->bar1_free) == 11)
			ngpus++;
	}
	fclose(f);
}

static CUresult
fake_init(unsigned flags)
{
	load();
	return ngpus > 0 ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE;
}

static CUresult
fake_driver_version(int *v)
{
	load();
	*v = driver;
	return CUDA_SUCCESS;
}

static CUresult
fake_error_name(CUresult r, const char **s)
{
	*s = r == CUDA_ERROR_NO_DEVICE      ? "CUDA_ERROR_NO_DEVICE" :
	     r == CUDA_ERROR_INVALID_DEVICE ? "CUDA_ERROR_INVALID_DEVICE" :
					      "CUDA_ERROR_NOT_SUPPORTED";
	return CUDA_SUCCESS;
}

static CUresult
fake_error_string(CUresult r, const char **s)
{
	*s = "fake driver";
	return CUDA_SUCCESS;
}

static CUresult
fake_count(int *n)
{
	*n = ngpus;
	return CUDA_SUCCESS;
}

static CUresult
fake_get(CUdevice *d, int i)
{
	if (i < 0 || i >= ngpus)
		return CUDA_ERROR_INVALID_DEVICE;
	*d = i;
	return CUDA_SUCCESS;
}

static CUresult
fake_attr(int *v, CUdevice_attribute a, CUdevice d)
{
	const struct fake_gpu *g;

	if (d < 0 || d >= ngpus)
		return CUDA_ERROR_INVALID_DEVICE;
	g = &gpus[d];
	switch (a) {
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = g->major; break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = g->minor; break;
	case CU_DEVICE_ATTRIBUTE_INTEGRATED: *v = g->integrated; break;
	case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: *v = 1; break;
	case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: *v = 1; break;
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED: *v = g->rdma; break;
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS:
		*v = g->flush;
		break;
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING: *v = g->ordering; break;
	default: *v = 0; break;
	}
	return CUDA_SUCCESS;
}

static CUresult
fake_name(char *s, int n, CUdevice d)
{
	if (d < 0 || d >= ngpus)
		return CUDA_ERROR_INVALID_DEVICE;
	snprintf(s, (size_t)n, "%s", gpus[d].name);
	return CUDA_SUCCESS;
}

static CUresult
fake_bus(char *s, int n, CUdevice d)
{
	if (d < 0 || d >= ngpus)
		return CUDA_ERROR_INVALID_DEVICE;
	snprintf(s, (size_t)n, "%s", gpus[d].bus);
	return CUDA_SUCCESS;
}

static CUresult
fake_total_mem(size_t *b, CUdevice d)
{
	if (d < 0 || d >= ngpus)
		return CUDA_ERROR_INVALID_DEVICE;
	*b = (size_t)gpus[d].vram;
	return CUDA_SUCCESS;
}

/* every entry point the doctor does not call (never called: the loader
 * only needs them to exist) */
static CUresult
fake_unsupported(void)
{
	return CUDA_ERROR_NOT_SUPPORTED;
}

static const struct {
	const char *name;
	void *fn;
} table[] = {
	{ "cuInit", (void *)fake_init },
	{ "cuDriverGetVersion", (void *)fake_driver_version },
	{ "cuGetErrorName", (void *)fake_error_name },
	{ "cuGetErrorString", (void *)fake_error_string },
	{ "cuDeviceGetCount", (void *)fake_count },
	{ "cuDeviceGet", (void *)fake_get },
	{ "cuDeviceGetAttribute", (void *)fake_attr },
	{ "cuDeviceGetName", (void *)fake_name },
	{ "cuDeviceGetPCIBusId", (void *)fake_bus },
	{ "cuDeviceTotalMem", (void *)fake_total_mem },
	{ "cuDevicePrimaryCtxRetain", (void *)fake_unsupported },
	{ "cuDevicePrimaryCtxRelease", (void *)fake_unsupported },
	{ "cuCtxSetCurrent", (void *)fake_unsupported },
	{ "cuMemHostAlloc", (void *)fake_unsupported },
	{ "cuMemFreeHost", (void *)fake_unsupported },
	{ "cuMemHostGetDevicePointer", (void *)fake_unsupported },
	{ "cuMemAlloc", (void *)fake_unsupported },
	{ "cuMemFree", (void *)fake_unsupported },
	{ "cuMemcpyHtoD", (void *)fake_unsupported },
	{ "cuMemcpyHtoDAsync", (void *)fake_unsupported },
	{ "cuMemsetD8", (void *)fake_unsupported },
	{ "cuPointerSetAttribute", (void *)fake_unsupported },
	{ "cuModuleLoadData", (void *)fake_unsupported },
	{ "cuModuleUnload", (void *)fake_unsupported },
	{ "cuModuleGetFunction", (void *)fake_unsupported },
	{ "cuLaunchKernel", (void *)fake_unsupported },
	{ "cuStreamCreate", (void *)fake_unsupported },
	{ "cuStreamDestroy", (void *)fake_unsupported },
	{ "cuStreamQuery", (void *)fake_unsupported },
	{ "cuStreamSynchronize", (void *)fake_unsupported },
	{ "cuStreamWriteValue32", (void *)fake_unsupported },
};

/* cuda.h makes this cuGetProcAddress_v2, the name the loader looks up */
CUresult CUDAAPI
cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
		 CUdriverProcAddressQueryResult *status)
{
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (strcmp(table[i].name, symbol) == 0) {
			*pfn = table[i].fn;
			if (status != NULL)
				*status = CU_GET_PROC_ADDRESS_SUCCESS;
			return CUDA_SUCCESS;
		}
	*pfn = NULL;
	if (status != NULL)
		*status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	return CUDA_ERROR_NOT_FOUND;
}

/* ---- NVML ---- */
struct nvml_bar1 {
	unsigned long long total, avail, used;
};

int nvmlInit_v2(void);
int nvmlShutdown(void);
const char *nvmlErrorString(int r);
int nvmlDeviceGetHandleByPciBusId_v2(const char *bus, void **dev);
int nvmlDeviceGetBAR1MemoryInfo(void *dev, struct nvml_bar1 *m);
int nvmlSystemGetDriverVersion(char *s, unsigned n);

int
nvmlInit_v2(void)
{
	load();
	return nvml_version[0] ? 0 : 9; /* NVML_ERROR_DRIVER_NOT_LOADED */
}

int
nvmlShutdown(void)
{
	return 0;
}

const char *
nvmlErrorString(int r)
{
	return r == 9 ? "Driver Not Loaded" : "Not Found";
}

int
nvmlDeviceGetHandleByPciBusId_v2(const char *bus, void **dev)
{
	for (int i = 0; i < ngpus; i++) {
		size_t lb = strlen(bus), lg = strlen(gpus[i].bus);

		/* NVML takes 4- or 8-digit domains: compare the tails */
		if (lb <= lg && strcasecmp(gpus[i].bus + lg - lb, bus) == 0) {
			*dev = &gpus[i];
			return 0;
		}
	}
	return 6; /* NVML_ERROR_NOT_FOUND */
}

int
nvmlDeviceGetBAR1MemoryInfo(void *dev, struct nvml_bar1 *m)
{
	const struct fake_gpu *g = dev;

	m->total = g->bar1;
	m->avail = g->bar1_free;
	m->used = g->bar1 - g->bar1_free;
	return 0;
}

int
nvmlSystemGetDriverVersion(char *s, unsigned n)
{
	snprintf(s, n, "%s", nvml_version);
	return 0;
}
