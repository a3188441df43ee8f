/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Internal to the gpu module: the embedded kernel and the compiled-filter
 * path (gcap_bpfc + gcap_rtc).
 */
#ifndef GCAP_GPU_INTERNAL_H
#define GCAP_GPU_INTERNAL_H

#include "gpucap/gcap_exec.h"
#include "cuda_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The kernel source with its headers inlined (gpu/embed.py), NUL-terminated. */
extern const unsigned char gcap_gpu_kernel_src[];

/**
 * The code gcap_bpfc generates for conf's filters (functions prefixed
 * gcap_flt_, gcap_flt_mask() used by the kernel).
 * @return malloc'd source, or NULL with errno and a message.
 */
char *gcap_gpu_filter_code(const struct gcap_exec_conf *conf, char *errbuf);

/**
 * Compile gcap_gpu_code(conf) for device dev (NVRTC through gcap_rtc, with
 * its cache) and load it into the current context.
 * @return 0; -ENOTSUP when this build has no run-time compiler; or the
 *         compiler's / loader's negative errno, with a message.
 */
int gcap_gpu_compile_module(const struct gcap_cu *cu,
			    const struct gcap_exec_conf *conf, CUdevice dev,
			    CUmodule *mod, char *errbuf);

#ifdef __cplusplus
}
#endif

#endif /* GCAP_GPU_INTERNAL_H */
