/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The gpu executor: persistent CUDA kernels fed through doorbell rings in
 * pinned, device-mapped host memory (see docs/gpu.md). Its operations are
 * the executor interface of gcap_exec.h (gcap_exec_gpu_ops()); this header
 * adds what the application needs around it: probing for a GPU, choosing
 * one by NUMA node, and the CUDA source the executor compiles.
 *
 * The CUDA driver is loaded at run time (dlopen("libcuda.so.1")), so every
 * function here works, and fails cleanly, on a machine without a GPU.
 *
 * Debugging aid: with the environment variable GCAP_GPU_FAULT_AT=N set when
 * an executor is created, the kernel block of the first queue of each GPU
 * executes a trap instruction on its N-th batch (a sticky CUDA error, for
 * testing health() and stop()).
 */
#ifndef GCAP_GPU_H
#define GCAP_GPU_H

#include "gcap_common.h"
#include "gcap_exec.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Tell whether a usable GPU exists: the CUDA driver loads, cuInit works,
 * and at least one device supports mapped host memory and unified
 * addressing.
 *
 * @param ndev    if not NULL, gets the number of usable devices
 * @param errbuf  GCAP_ERRBUF_SIZE bytes or NULL: why not
 * @return 0 when at least one GPU is usable; -ENOTSUP in a build without
 *         CUDA; -ENOENT when libcuda.so.1 is missing; -ENODEV when cuInit
 *         fails or no device is usable.
 */
int gcap_gpu_probe(int *ndev, char *errbuf);

/**
 * The GPU closest to a NUMA node (from the device's PCI address in sysfs),
 * for the default device choice when the user gives no --gpu.
 *
 * @param socket  NUMA node of the port (SOCKET_ID_ANY / negative: unknown)
 * @return the ordinal of the first GPU on that node, else 0; a negative
 *         errno as gcap_gpu_probe() when no GPU is usable.
 */
int gcap_gpu_pick(int socket);

/**
 * The complete CUDA translation unit the gpu executor runs for conf, as
 * NVRTC receives it (with compile_filters: the code gcap_bpfc generates for
 * conf->filters, then the kernel; without: the kernel that was compiled
 * into the library with nvcc, whose filters are interpreted). It compiles
 * as is with `nvcc -c -x cu`.
 *
 * With conf->kernel_path the inline kernel is loaded (gcap_khost_load, with
 * conf->kernel_arg) and its source, with gcap_kernel.h inlined, is part of
 * the unit (compiled filters are then always used).
 *
 * @param conf    the executor configuration (filters, nfilters,
 *                compile_filters, kernel_path, kernel_arg are used)
 * @param errbuf  GCAP_ERRBUF_SIZE bytes or NULL
 * @return the source, malloc'd, NUL-terminated (free() it); or NULL with
 *         errno: EINVAL (bad conf, or a program gcap_bpfc refuses: the
 *         message says which), ENOTSUP (a build without CUDA), ENOMEM;
 *         and the kernel loader's errors: ENOENT (no such file), ENOEXEC
 *         (the kernel does not compile: FILE:LINE message), ENOSYS (no
 *         gcap_kernel entry), EFBIG (state too large), ECANCELED (its init
 *         hook failed).
 */
char *gcap_gpu_code(const struct gcap_exec_conf *conf, char *errbuf);

#ifdef __cplusplus
}
#endif

#endif /* GCAP_GPU_H */
