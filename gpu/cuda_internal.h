/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Internal: the CUDA driver API, loaded at run time with dlopen so that a
 * build with CUDA runs (and reports "no GPU") on machines without a driver.
 * Only the gpu module, the doctor (doctor/cuda_gpus.c) and bench/bpf_bench
 * include this header.
 */
#ifndef GCAP_CUDA_INTERNAL_H
#define GCAP_CUDA_INTERNAL_H

#include <cuda.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The driver entry points gpucap uses (NULL: the driver lacks it). */
struct gcap_cu {
	int version; /**< cuDriverGetVersion */
	CUresult (*Init)(unsigned);
	CUresult (*DriverGetVersion)(int *);
	CUresult (*GetErrorName)(CUresult, const char **);
	CUresult (*GetErrorString)(CUresult, const char **);
	CUresult (*DeviceGetCount)(int *);
	CUresult (*DeviceGet)(CUdevice *, int);
	CUresult (*DeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
	CUresult (*DeviceGetName)(char *, int, CUdevice);
	CUresult (*DeviceGetPCIBusId)(char *, int, CUdevice);
	CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*DevicePrimaryCtxRelease)(CUdevice);
	CUresult (*CtxSetCurrent)(CUcontext);
	CUresult (*MemHostAlloc)(void **, size_t, unsigned);
	CUresult (*MemFreeHost)(void *);
	CUresult (*MemHostGetDevicePointer)(CUdeviceptr *, void *, unsigned);
	CUresult (*MemAlloc)(CUdeviceptr *, size_t);
	CUresult (*MemFree)(CUdeviceptr);
	CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
	CUresult (*MemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
	CUresult (*MemsetD8)(CUdeviceptr, unsigned char, size_t);
	CUresult (*PointerSetAttribute)(const void *, CUpointer_attribute, CUdeviceptr);
	CUresult (*ModuleLoadData)(CUmodule *, const void *);
	CUresult (*ModuleUnload)(CUmodule);
	CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
	CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
				 unsigned, unsigned, unsigned, CUstream, void **,
				 void **);
	CUresult (*StreamCreate)(CUstream *, unsigned);
	CUresult (*StreamDestroy)(CUstream);
	CUresult (*StreamQuery)(CUstream);
	CUresult (*StreamSynchronize)(CUstream);
	CUresult (*StreamWriteValue32)(CUstream, CUdeviceptr, cuuint32_t, unsigned);
	/* optional */
	CUresult (*MemcpyBatchAsync13)(CUdeviceptr *, CUdeviceptr *, size_t *, size_t,
				       CUmemcpyAttributes *, size_t *, size_t, CUstream);
	CUresult (*MemcpyBatchAsync12)(CUdeviceptr *, CUdeviceptr *, size_t *, size_t,
				       CUmemcpyAttributes *, size_t *, size_t, size_t *,
				       CUstream);
	CUresult (*FlushGPUDirectRDMAWrites)(CUflushGPUDirectRDMAWritesTarget,
					     CUflushGPUDirectRDMAWritesScope);
	/* optional, for the emulated GPUDirect NIC (gpunic.c) */
	CUresult (*PointerGetAttribute)(void *, CUpointer_attribute, CUdeviceptr);
	CUresult (*MemHostRegister)(void *, size_t, unsigned);
	CUresult (*MemHostUnregister)(void *);
	/* optional, for bench/bpf_bench (its timing and verdict checks) and
	 * the doctor (DeviceTotalMem); the gpu module does not use them */
	CUresult (*DeviceTotalMem)(size_t *, CUdevice);
	CUresult (*CtxSynchronize)(void);
	CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
	CUresult (*EventCreate)(CUevent *, unsigned);
	CUresult (*EventRecord)(CUevent, CUstream);
	CUresult (*EventSynchronize)(CUevent);
	CUresult (*EventElapsedTime)(float *, CUevent, CUevent);
	CUresult (*OccupancyMaxActiveBlocksPerMultiprocessor)(int *, CUfunction, int,
							      size_t);
};

/**
 * Load libcuda.so.1 (or the library GCAP_CUDA_LIB names) once per process
 * and cuInit(0) it.
 * @return the table, or NULL with errno (ENOENT: no driver; ENODEV: cuInit
 *         failed) and a message in errbuf.
 */
const struct gcap_cu *gcap_cu_load(char *errbuf);

/**
 * Translate a CUresult into a negative errno, with a message naming the
 * call: "<what>: CUDA_ERROR_X (description)".
 * @return 0 for CUDA_SUCCESS, else a negative errno (-ENOMEM, -ENODEV,
 *         -EINVAL, -ENOTSUP, -EIO, ...).
 */
int gcap_cu_err(const struct gcap_cu *cu, CUresult r, char *errbuf, const char *what);

#ifdef __cplusplus
}
#endif

#endif /* GCAP_CUDA_INTERNAL_H */
