/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A single-producer single-consumer ring of pointers (internal). Used
 * between an RX lcore and the writer thread; works without the EAL, so the
 * file reader uses it too.
 */
#ifndef GCAP_SPSC_H
#define GCAP_SPSC_H

#include <errno.h>
#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>

struct gcap_spsc {
	alignas(64) uint32_t head; /* producer */
	alignas(64) uint32_t tail; /* consumer */
	alignas(64) uint32_t mask;
	void **slot;
};

/* size: a power of two. @return 0 or -ENOMEM / -EINVAL. */
static inline int
gcap_spsc_init(struct gcap_spsc *r, uint32_t size)
{
	if (size == 0 || (size & (size - 1)) != 0)
		return -EINVAL;
	r->slot = calloc(size, sizeof(void *));
	if (r->slot == NULL)
		return -ENOMEM;
	r->head = r->tail = 0;
	r->mask = size - 1;
	return 0;
}

static inline void
gcap_spsc_fini(struct gcap_spsc *r)
{
	free(r->slot);
	r->slot = NULL;
}

/* @return 0, or -ENOBUFS when full. */
static inline int
gcap_spsc_push(struct gcap_spsc *r, void *p)
{
	uint32_t h = r->head;
	uint32_t t = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);

	if (h - t > r->mask)
		return -ENOBUFS;
	r->slot[h & r->mask] = p;
	__atomic_store_n(&r->head, h + 1, __ATOMIC_RELEASE);
	return 0;
}

/* @return the oldest pointer, or NULL when empty. */
static inline void *
gcap_spsc_pop(struct gcap_spsc *r)
{
	uint32_t t = r->tail;
	uint32_t h = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
	void *p;

	if (t == h)
		return NULL;
	p = r->slot[t & r->mask];
	__atomic_store_n(&r->tail, t + 1, __ATOMIC_RELEASE);
	return p;
}

static inline uint32_t
gcap_spsc_count(const struct gcap_spsc *r)
{
	return __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) -
	       __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
}

#endif /* GCAP_SPSC_H */
