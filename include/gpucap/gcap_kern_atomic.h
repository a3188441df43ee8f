/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Part of the inline kernel API (gcap_kernel.h): atomics on the kernel
 * state, relaxed (device scope on the GPU, __atomic builtins on the
 * host), the release/acquire pair that publishes data to other threads,
 * and a spin-wait hint. Kernel sources include <gpucap/gcap_kernel.h>,
 * not this part.
 */
#ifndef GCAP_KERN_ATOMIC_H
#define GCAP_KERN_ATOMIC_H

#include "gcap_kern_base.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef GCAP_DEVICE
#define GCAP_ULL(p) ((unsigned long long *)(p))
#define GCAP_UINT(p) ((unsigned int *)(p))
#endif

/** Add v to *p. @return the old value. */
GCAP_DEV uint64_t
gcap_atomic_add_u64(uint64_t *p, uint64_t v)
{
#ifdef GCAP_DEVICE
	return atomicAdd(GCAP_ULL(p), (unsigned long long)v);
#else
	return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}

/** Add v to *p. @return the old value. */
GCAP_DEV uint32_t
gcap_atomic_add_u32(uint32_t *p, uint32_t v)
{
#ifdef GCAP_DEVICE
	return atomicAdd(GCAP_UINT(p), v);
#else
	return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}

/** Set *p to desired if it equals expected. @return the old value. */
GCAP_DEV uint32_t
gcap_atomic_cas_u32(uint32_t *p, uint32_t expected, uint32_t desired)
{
#ifdef GCAP_DEVICE
	return atomicCAS(GCAP_UINT(p), expected, desired);
#else
	__atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_ACQ_REL,
				    __ATOMIC_ACQUIRE);
	return expected;
#endif
}

/** Set *p to desired if it equals expected. @return the old value. */
GCAP_DEV uint64_t
gcap_atomic_cas_u64(uint64_t *p, uint64_t expected, uint64_t desired)
{
#ifdef GCAP_DEVICE
	return atomicCAS(GCAP_ULL(p), (unsigned long long)expected,
			 (unsigned long long)desired);
#else
	__atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_ACQ_REL,
				    __ATOMIC_ACQUIRE);
	return expected;
#endif
}

/** *p = max(*p, v). @return the old value. */
GCAP_DEV uint64_t
gcap_atomic_max_u64(uint64_t *p, uint64_t v)
{
#ifdef GCAP_DEVICE
	return atomicMax(GCAP_ULL(p), (unsigned long long)v);
#else
	uint64_t old = __atomic_load_n(p, __ATOMIC_RELAXED);
	while (old < v && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED,
						       __ATOMIC_RELAXED))
		;
	return old;
#endif
}

/** *p = min(*p, v). @return the old value. */
GCAP_DEV uint64_t
gcap_atomic_min_u64(uint64_t *p, uint64_t v)
{
#ifdef GCAP_DEVICE
	return atomicMin(GCAP_ULL(p), (unsigned long long)v);
#else
	uint64_t old = __atomic_load_n(p, __ATOMIC_RELAXED);
	while (old > v && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED,
						       __ATOMIC_RELAXED))
		;
	return old;
#endif
}

/** *p = max(*p, v). @return the old value. */
GCAP_DEV uint32_t
gcap_atomic_max_u32(uint32_t *p, uint32_t v)
{
#ifdef GCAP_DEVICE
	return atomicMax(GCAP_UINT(p), v);
#else
	uint32_t old = __atomic_load_n(p, __ATOMIC_RELAXED);
	while (old < v && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED,
						       __ATOMIC_RELAXED))
		;
	return old;
#endif
}

/** *p |= v. @return the old value. */
GCAP_DEV uint64_t
gcap_atomic_or_u64(uint64_t *p, uint64_t v)
{
#ifdef GCAP_DEVICE
	return atomicOr(GCAP_ULL(p), (unsigned long long)v);
#else
	return __atomic_fetch_or(p, v, __ATOMIC_RELAXED);
#endif
}

/** Store v in *p, ordered after every write before it. */
GCAP_DEV void
gcap_atomic_store_release_u32(uint32_t *p, uint32_t v)
{
#ifdef GCAP_DEVICE
	__threadfence();
	atomicExch(GCAP_UINT(p), v);
#else
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
#endif
}

/** @return *p, read before every read after it. */
GCAP_DEV uint32_t
gcap_atomic_load_acquire_u32(const uint32_t *p)
{
#ifdef GCAP_DEVICE
	uint32_t v = *(const volatile uint32_t *)p;
	__threadfence();
	return v;
#else
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
#endif
}

/** @return *p, a single untorn 64-bit read. */
GCAP_DEV uint64_t
gcap_atomic_load_u64(const uint64_t *p)
{
#ifdef GCAP_DEVICE
	return *(const volatile uint64_t *)p;
#else
	return __atomic_load_n(p, __ATOMIC_RELAXED);
#endif
}

/** Spin-wait hint (a no-op on the GPU). */
GCAP_DEV void
gcap_cpu_relax(void)
{
#if !defined(GCAP_DEVICE) && (defined(__x86_64__) || defined(__i386__))
	__builtin_ia32_pause();
#endif
}

#ifdef __cplusplus
}
#endif

#endif /* GCAP_KERN_ATOMIC_H */
