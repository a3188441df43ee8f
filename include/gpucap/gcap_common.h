/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Definitions every gpucap module shares: error buffers, the backend and
 * memory-mode enums.
 */
#ifndef GCAP_COMMON_H
#define GCAP_COMMON_H

#include <stdarg.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Size of the error buffers constructors fill with one line of text. */
#define GCAP_ERRBUF_SIZE 512

/** Which executor processes packets. */
enum gcap_backend {
	GCAP_BACKEND_AUTO = 0, /**< gpu when a usable GPU exists, else cpu */
	GCAP_BACKEND_CPU,      /**< filters and kernels on the RX lcores */
	GCAP_BACKEND_GPU,      /**< persistent CUDA kernels */
};

/** Where mbuf data rooms live (see docs/architecture.md). */
enum gcap_mem {
	GCAP_MEM_AUTO = 0, /**< gpu where the port and GPU allow it, else host */
	GCAP_MEM_GPU,      /**< device memory, NIC DMA (GPUDirect RDMA) */
	GCAP_MEM_HOST,     /**< pinned, GPU-mapped host memory, read in place */
	GCAP_MEM_COPY,     /**< host memory, copied to VRAM per batch */
	GCAP_MEM_PLAIN,    /**< ordinary DPDK memory (cpu backend) */
};

/** @return the name of a backend ("auto", "cpu", "gpu"). */
const char *gcap_backend_name(enum gcap_backend b);

/** @return the name of a memory mode ("auto", "gpu", "host", "copy", "plain"). */
const char *gcap_mem_name(enum gcap_mem m);

/**
 * Parse a backend name.
 * @return 0, or -EINVAL for an unknown name.
 */
int gcap_backend_parse(const char *s, enum gcap_backend *out);

/**
 * Parse a memory-mode name ("auto", "gpu", "host", "copy").
 * @return 0, or -EINVAL for an unknown name.
 */
int gcap_mem_parse(const char *s, enum gcap_mem *out);

/** Largest CPU number a CPU list may name (exclusive). */
#define GCAP_CPU_MAX 1024

/**
 * Parse a CPU list as taskset and the kernel write it ("2-5,8"): numbers
 * and ascending ranges, comma separated, each CPU below GCAP_CPU_MAX.
 * @param cpus  receives the CPUs in list order (NULL: only count)
 * @param max   capacity of cpus
 * @return the number of CPUs (>= 1); -EINVAL for an empty or malformed
 *         list; -E2BIG when it names more than max CPUs.
 */
int gcap_cpulist_parse(const char *s, unsigned *cpus, unsigned max);

/**
 * The CPUs the process was allowed to run on when it started, before the
 * EAL pinned its main thread to one lcore (the main thread's affinity
 * says one CPU after that).
 * @param cpus  receives the CPUs in ascending order (NULL: only count)
 * @param max   capacity of cpus
 * @return the number of CPUs (>= 1); -ENOSYS where the start's affinity
 *         could not be read; -E2BIG when there are more than max.
 */
int gcap_cpus_at_start(unsigned *cpus, unsigned max);

/**
 * Format a message into an error buffer (NULL is allowed and ignored).
 * @return always -err, so that callers can write
 *         `return gcap_err(errbuf, ENOMEM, "...")`.
 */
int gcap_err(char *errbuf, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/**
 * The constructors' failure: format a message into errbuf (NULL is
 * allowed), set errno to err.
 * @return always NULL, so that constructors can write
 *         `return gcap_err_null(errbuf, ENOMEM, "...")`.
 */
void *gcap_err_null(char *errbuf, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#ifdef __cplusplus
}
#endif

#endif /* GCAP_COMMON_H */
