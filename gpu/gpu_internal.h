/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Internal to the gpu module: the embedded kernel and the compiled-filter
 * path (gcap_bpfc + gcap_rtc).
 */
#ifndef GCAP_GPU_INTERNAL_H
#define GCAP_GPU_INTERNAL_H

#include "gpucap/gcap_exec.h"
#include "gpucap/gcap_khost.h"
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
 * gcap_gpu_code() for an inline kernel that is already loaded (k, or NULL
 * for none): the bpfc filter code, gcap_kernel.h from
 * gcap_khost_include_dir(k) inlined (the kernel's own
 * `#include <gpucap/gcap_kernel.h>` lines become comments, lines keep
 * their numbers), `#line 1 "path"` + the kernel source, then the
 * persistent kernel with GCAP_GPU_INLINE_KERNEL defined. With k the
 * filters are always compiled (compile_filters is implied).
 * @return malloc'd source, or NULL with errno (EINVAL, ENOMEM, EIO) and a
 *         message.
 */
char *gcap_gpu_code_kernel(const struct gcap_exec_conf *conf,
			   const struct gcap_khost *k, char *errbuf);

/**
 * Compile a translation unit from gcap_gpu_code_kernel() with NVRTC
 * (gcap_rtc, with its cache) for sm_<maj><min>; needs no GPU. With k,
 * -I<include dir> and -I<the kernel's directory> are added, and an NVRTC
 * error is reported as "FILE:LINE: error: message (NVRTC)".
 * @param image  out: the CUBIN, malloc'd
 * @return 0; -ENOTSUP (no run-time compiler in this build, or no
 *         libnvrtc); -ENOEXEC (compile error); -EINVAL, -EIO, -ENOMEM.
 */
int gcap_gpu_rtc_build(const char *src, const struct gcap_khost *k, int maj,
		       int min, void **image, size_t *len, char *errbuf);

/**
 * Compile gcap_gpu_code_kernel(conf, k) for device dev (NVRTC through
 * gcap_rtc, with its cache) and load it into the current context.
 * @param k  the inline kernel, or NULL
 * @return 0; -ENOTSUP when this build has no run-time compiler; or the
 *         compiler's / loader's negative errno, with a message.
 */
int gcap_gpu_compile_module(const struct gcap_cu *cu,
			    const struct gcap_exec_conf *conf,
			    const struct gcap_khost *k, CUdevice dev,
			    CUmodule *mod, char *errbuf);

#ifdef __cplusplus
}
#endif

#endif /* GCAP_GPU_INTERNAL_H */
