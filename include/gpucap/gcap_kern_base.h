/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Part of the inline kernel API (gcap_kernel.h): what every other part
 * stands on. Which build this is (GCAP_DEVICE), the fixed-width types
 * (typedefs under NVRTC, which has no system headers), the qualifiers of
 * helpers (GCAP_DEV) and of the entry points (GCAP_KERNEL), and the state
 * limit. Kernel sources include <gpucap/gcap_kernel.h>, not this part.
 */
#ifndef GCAP_KERN_BASE_H
#define GCAP_KERN_BASE_H

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define GCAP_DEVICE 1
#endif

#ifdef __CUDACC_RTC__
typedef unsigned long long uint64_t;
typedef long long int64_t;
typedef unsigned int uint32_t;
typedef int int32_t;
typedef unsigned short uint16_t;
typedef unsigned char uint8_t;
#else
#include <stdint.h>
#include <stddef.h>
#if !defined(__cplusplus)
#include <stdbool.h>
#endif
#endif

/**
 * Qualifiers of every helper: a device inline function under CUDA, a
 * static inline function in the host build.
 */
#ifdef GCAP_DEVICE
#define GCAP_DEV static __device__ __forceinline__
#else
#define GCAP_DEV static inline
#endif

/**
 * Qualifiers of the entry points (gcap_kernel(), gcap_kernel_order()). On
 * the GPU the executor compiles the kernel source together with its
 * persistent kernel, which calls gcap_kernel() inline; on the host the
 * function is exported from the shared object the loader builds.
 */
#ifdef GCAP_DEVICE
#define GCAP_KERNEL __device__ __forceinline__
#else
#define GCAP_KERNEL __attribute__((visibility("default")))
#endif

/** Number of elements of an array (not a pointer). */
#define GCAP_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/** Largest kernel state the loader accepts (bytes): 1 GiB. */
#define GCAP_KSTATE_MAX (1ull << 30)

#endif /* GCAP_KERN_BASE_H */
