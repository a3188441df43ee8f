/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Internal to the gpu module: the embedded kernel (gpu/embed.py), the CUDA
 * translation unit built around it (code.c) and its NVRTC build
 * (module.c). Needs no GPU and no executor state; the executor's own
 * declarations are in exec_gpu_internal.h.
 */
#ifndef GCAP_GPU_INTERNAL_H
#define GCAP_GPU_INTERNAL_H

#include <stddef.h>

#include "gpucap/gcap_exec.h"
#include "gpucap/gcap_khost.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The kernel source with its headers inlined (gpu/embed.py), NUL-terminated. */
extern const unsigned char gcap_gpu_kernel_src[];
/** The kernel built by nvcc with interpreted filters (gpu/embed.py). */
extern const unsigned char gcap_gpu_fatbin[];

/**
 * gcap_gpu_code() for an inline kernel that is already loaded (k, or NULL
 * for none): the bpfc filter code, gcap_kernel.h as the loader read it
 * (gcap_khost_header(), its parts inlined; the kernel's own
 * `#include <gpucap/gcap_kernel.h>` lines become comments, lines keep
 * their numbers), `#line 1 "path"` + the kernel source, then the
 * persistent kernel with GCAP_GPU_INLINE_KERNEL defined. With k the
 * filters are always compiled (compile_filters is implied).
 * @return malloc'd source, or NULL with errno (EINVAL, ENOMEM, EIO) and a
 *         message.
 */
char *gcap_gpu_code_kernel(const struct gcap_exec_conf *conf, const struct gcap_khost *k,
			   char *errbuf);

/**
 * Compile a translation unit from gcap_gpu_code_kernel() with NVRTC
 * (gcap_rtc, with its cache) for sm_<maj><min>; needs no GPU. With k,
 * -I<include dir> and -I<the kernel's directory> are added, and an NVRTC
 * error is reported as "FILE:LINE: error: message (NVRTC)".
 * @param image  out: the CUBIN, malloc'd
 * @return 0; -ENOTSUP (no run-time compiler in this build, or no
 *         libnvrtc); -ENOEXEC (compile error); -EINVAL, -EIO, -ENOMEM.
 */
int gcap_gpu_rtc_build(const char *src, const struct gcap_khost *k, int maj, int min,
		       void **image, size_t *len, char *errbuf);

#ifdef __cplusplus
}
#endif

#endif /* GCAP_GPU_INTERNAL_H */
