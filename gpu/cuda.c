/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CUDA driver API through dlopen("libcuda.so.1") and cuGetProcAddress:
 * nothing links against libcuda, so the same binary runs on machines
 * without a GPU (the probe then fails cleanly).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gpucap/gcap_thread.h"
#include "gpucap/gcap_common.h"
#include "cuda_internal.h"

typedef CUresult (*gcap_getproc_fn)(const char *, void **, int, cuuint64_t,
				    CUdriverProcAddressQueryResult *);

static struct gcap_cu g_cu;
static int g_cu_err; /* 0: loaded; else positive errno */
static char g_cu_msg[GCAP_ERRBUF_SIZE];
static pthread_once_t g_cu_once = PTHREAD_ONCE_INIT;

static void *
cu_sym(void *lib, gcap_getproc_fn gp, const char *name, int ver)
{
	void *fn = NULL;
	CUdriverProcAddressQueryResult st;

	if (gp != NULL &&
	    gp(name, &fn, ver, CU_GET_PROC_ADDRESS_DEFAULT, &st) == CUDA_SUCCESS &&
	    fn != NULL)
		return fn;
	return dlsym(lib, name);
}

static void
cu_load_once(void)
{
	/* GCAP_CUDA_LIB: another driver library (the doctor's tests) */
	const char *path = getenv("GCAP_CUDA_LIB");
	void *lib;
	gcap_getproc_fn gp;
	CUresult r;

	if (path == NULL || path[0] == '\0')
		path = "libcuda.so.1";
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		g_cu_err = ENOENT;
		gcap_err(g_cu_msg, ENOENT, "no CUDA driver: dlopen(%s): %s", path,
			 dlerror());
		return;
	}
	gp = (gcap_getproc_fn)dlsym(lib, "cuGetProcAddress_v2");
	if (gp == NULL) {
		/* without it dlsym would give the oldest ABI of each call */
		g_cu_err = ENOTSUP;
		gcap_err(g_cu_msg, ENOTSUP,
			 "CUDA driver too old: no "
			 "cuGetProcAddress_v2 (needs a CUDA 12 driver)");
		return;
	}

#define CU_REQ(field, name)                                                      \
	do {                                                                     \
		*(void **)&g_cu.field = cu_sym(lib, gp, name, 12000);            \
		if (g_cu.field == NULL) {                                        \
			g_cu_err = ENOTSUP;                                      \
			gcap_err(g_cu_msg, ENOTSUP,                              \
				 "CUDA driver lacks %s (driver too old)", name); \
			return;                                                  \
		}                                                                \
	} while (0)

	CU_REQ(Init, "cuInit");
	CU_REQ(DriverGetVersion, "cuDriverGetVersion");
	CU_REQ(GetErrorName, "cuGetErrorName");
	CU_REQ(GetErrorString, "cuGetErrorString");
	CU_REQ(DeviceGetCount, "cuDeviceGetCount");
	CU_REQ(DeviceGet, "cuDeviceGet");
	CU_REQ(DeviceGetAttribute, "cuDeviceGetAttribute");
	CU_REQ(DeviceGetName, "cuDeviceGetName");
	CU_REQ(DeviceGetPCIBusId, "cuDeviceGetPCIBusId");
	CU_REQ(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
	CU_REQ(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease");
	CU_REQ(CtxSetCurrent, "cuCtxSetCurrent");
	CU_REQ(MemHostAlloc, "cuMemHostAlloc");
	CU_REQ(MemFreeHost, "cuMemFreeHost");
	CU_REQ(MemHostGetDevicePointer, "cuMemHostGetDevicePointer");
	CU_REQ(MemAlloc, "cuMemAlloc");
	CU_REQ(MemFree, "cuMemFree");
	CU_REQ(MemcpyHtoD, "cuMemcpyHtoD");
	CU_REQ(MemcpyHtoDAsync, "cuMemcpyHtoDAsync");
	CU_REQ(MemsetD8, "cuMemsetD8");
	CU_REQ(PointerSetAttribute, "cuPointerSetAttribute");
	CU_REQ(ModuleLoadData, "cuModuleLoadData");
	CU_REQ(ModuleUnload, "cuModuleUnload");
	CU_REQ(ModuleGetFunction, "cuModuleGetFunction");
	CU_REQ(LaunchKernel, "cuLaunchKernel");
	CU_REQ(StreamCreate, "cuStreamCreate");
	CU_REQ(StreamDestroy, "cuStreamDestroy");
	CU_REQ(StreamQuery, "cuStreamQuery");
	CU_REQ(StreamSynchronize, "cuStreamSynchronize");
	CU_REQ(StreamWriteValue32, "cuStreamWriteValue32");
#undef CU_REQ

	/* Optional entry points; their ABI depends on the version asked for. */
	if (gp != NULL) {
		void *fn = NULL;
		CUdriverProcAddressQueryResult st;

		if (gp("cuMemcpyBatchAsync", &fn, 13000, CU_GET_PROC_ADDRESS_DEFAULT,
		       &st) == CUDA_SUCCESS &&
		    fn)
			*(void **)&g_cu.MemcpyBatchAsync13 = fn;
		else if (gp("cuMemcpyBatchAsync", &fn, 12080, CU_GET_PROC_ADDRESS_DEFAULT,
			    &st) == CUDA_SUCCESS &&
			 fn)
			*(void **)&g_cu.MemcpyBatchAsync12 = fn;
		/* by version only: dlsym would give the 32-bit size ABI */
		fn = NULL;
		if (gp("cuDeviceTotalMem", &fn, 12000, CU_GET_PROC_ADDRESS_DEFAULT,
		       &st) == CUDA_SUCCESS &&
		    fn)
			*(void **)&g_cu.DeviceTotalMem = fn;
	}
	*(void **)&g_cu.FlushGPUDirectRDMAWrites =
		cu_sym(lib, gp, "cuFlushGPUDirectRDMAWrites", 11030);
#define CU_OPT(field, name) (*(void **)&g_cu.field = cu_sym(lib, gp, name, 12000))
	CU_OPT(PointerGetAttribute, "cuPointerGetAttribute");
	CU_OPT(MemHostRegister, "cuMemHostRegister");
	CU_OPT(MemHostUnregister, "cuMemHostUnregister");
	CU_OPT(CtxSynchronize, "cuCtxSynchronize");
	CU_OPT(MemcpyDtoH, "cuMemcpyDtoH");
	CU_OPT(EventCreate, "cuEventCreate");
	CU_OPT(EventRecord, "cuEventRecord");
	CU_OPT(EventSynchronize, "cuEventSynchronize");
	CU_OPT(EventElapsedTime, "cuEventElapsedTime");
	CU_OPT(OccupancyMaxActiveBlocksPerMultiprocessor,
	       "cuOccupancyMaxActiveBlocksPerMultiprocessor");
#undef CU_OPT

	/* the driver's threads, started here, leave the program its
	 * signals (gcap_thread.h) */
	sigset_t old;

	gcap_sigs_hold(&old);
	r = g_cu.Init(0);
	gcap_sigs_restore(&old);
	if (r != CUDA_SUCCESS) {
		const char *n = "?";

		g_cu.GetErrorName(r, &n);
		g_cu_err = ENODEV;
		gcap_err(g_cu_msg, ENODEV, "cuInit: %s", n);
		return;
	}
	if (g_cu.DriverGetVersion(&g_cu.version) != CUDA_SUCCESS)
		g_cu.version = 0;
	g_cu_err = 0;
	/* lib stays loaded for the life of the process */
}

const struct gcap_cu *
gcap_cu_load(char *errbuf)
{
	pthread_once(&g_cu_once, cu_load_once);
	if (g_cu_err != 0) {
		gcap_err(errbuf, g_cu_err, "%s", g_cu_msg);
		errno = g_cu_err;
		return NULL;
	}
	return &g_cu;
}

int
gcap_cu_err(const struct gcap_cu *cu, CUresult r, char *errbuf, const char *what)
{
	const char *name = "CUDA_ERROR_UNKNOWN", *desc = "";
	int e;

	if (r == CUDA_SUCCESS)
		return 0;
	if (cu != NULL) {
		cu->GetErrorName(r, &name);
		cu->GetErrorString(r, &desc);
	}
	switch (r) {
	case CUDA_ERROR_OUT_OF_MEMORY: e = ENOMEM; break;
	case CUDA_ERROR_NO_DEVICE:
	case CUDA_ERROR_INVALID_DEVICE:
	case CUDA_ERROR_NOT_INITIALIZED:
	case CUDA_ERROR_DEINITIALIZED: e = ENODEV; break;
	case CUDA_ERROR_INVALID_VALUE:
	case CUDA_ERROR_INVALID_HANDLE:
	case CUDA_ERROR_INVALID_IMAGE:
	case CUDA_ERROR_INVALID_PTX:
	case CUDA_ERROR_NOT_FOUND: e = EINVAL; break;
	case CUDA_ERROR_NOT_SUPPORTED:
	case CUDA_ERROR_NO_BINARY_FOR_GPU:
	case CUDA_ERROR_UNSUPPORTED_PTX_VERSION: e = ENOTSUP; break;
	case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
	case CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE: e = ENOSPC; break;
	default: e = EIO; break;
	}
	return gcap_err(errbuf, e, "%s: %s (%s)", what, name, desc ? desc : "");
}
