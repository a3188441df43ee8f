/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Export memory carved per batch (internal). One queue's export memory is
 * a ring of bytes: each submitted batch takes a region sized to the most
 * record bytes it can make, at the head; regions come back in the order
 * they were taken (the writer hands export buffers back in the order it
 * got them), which moves the tail. A region never wraps: one that would
 * cross the end starts at the beginning, and the bytes it skipped come
 * back with it.
 *
 * Why not fixed buffers: with several batches in flight (GPU blocks of a
 * queue) each needs a buffer of its own, so every buffer reached the
 * writer holding one small batch, and the writer's slack was the count of
 * buffers times a small batch: under a millisecond at 4 Mpps. Carved
 * regions give the same memory's slack in packets, not in batches.
 *
 * Positions are byte counts since the start (64-bit, never wrap); the
 * offset of position p in the memory is p % cap. Single-threaded: the
 * queue's RX lcore (or the file reader) does every call.
 */
#ifndef GCAP_XARENA_H
#define GCAP_XARENA_H

#include <stdbool.h>
#include <stdint.h>

/* Regions start 64-byte aligned (a cache line: GPU stores to one region
 * never share a line with another's). */
#define GCAP_XARENA_ALIGN 64u

struct gcap_xarena {
	uint8_t *base;
	uint64_t cap;  /* bytes, a multiple of GCAP_XARENA_ALIGN */
	uint64_t head; /* where the next region may start */
	uint64_t tail; /* end of the oldest region still out (or head) */
};

static inline void
gcap_xarena_init(struct gcap_xarena *a, uint8_t *base, uint64_t cap)
{
	a->base = base;
	a->cap = cap - cap % GCAP_XARENA_ALIGN;
	a->head = a->tail = 0;
}

/* The bytes a region of need bytes holds: whole lines, at least one. */
static inline uint64_t
gcap_xarena_len(uint32_t need)
{
	uint64_t n = ((uint64_t)need + GCAP_XARENA_ALIGN - 1) &
		     ~(uint64_t)(GCAP_XARENA_ALIGN - 1);

	return n == 0 ? GCAP_XARENA_ALIGN : n;
}

/* Where a region of need bytes would start now, or UINT64_MAX if the
 * bytes out leave no room for it. */
static inline uint64_t
gcap_xarena_place(const struct gcap_xarena *a, uint32_t need)
{
	uint64_t n = gcap_xarena_len(need);
	uint64_t pos = a->head, off = pos % a->cap;

	if (n > a->cap)
		return UINT64_MAX;
	if (off + n > a->cap)
		pos += a->cap - off; /* to the beginning */
	if (pos + n - a->tail > a->cap)
		return UINT64_MAX;
	return pos;
}

/* Take a region of need bytes: *end gets the position after it (what
 * gcap_xarena_release() takes when it comes back). @return its first
 * byte, or NULL if there is no room now. */
static inline uint8_t *
gcap_xarena_take(struct gcap_xarena *a, uint32_t need, uint64_t *end)
{
	uint64_t pos = gcap_xarena_place(a, need);

	if (pos == UINT64_MAX)
		return NULL;
	a->head = pos + gcap_xarena_len(need);
	*end = a->head;
	return a->base + pos % a->cap;
}

/* The oldest region out came back: end is what its take gave. With none
 * left out, the next region starts at the beginning (a region as large as
 * the whole memory fits again). */
static inline void
gcap_xarena_release(struct gcap_xarena *a, uint64_t end)
{
	a->tail = end;
	if (a->tail == a->head)
		a->head = a->tail = 0;
}

/* Grow the newest region, which ends at end, by need bytes in place.
 * @return its new end, or 0 if it cannot grow (it is not the newest, it
 * ends at the memory's end, or there is no room). */
static inline uint64_t
gcap_xarena_extend(struct gcap_xarena *a, uint64_t end, uint32_t need)
{
	uint64_t n = gcap_xarena_len(need);
	uint64_t off = end % a->cap;

	if (end != a->head || off == 0 || off + n > a->cap || end + n - a->tail > a->cap)
		return 0;
	a->head = end + n;
	return a->head;
}

/* Give back the region just taken (the newest out): end and need are its
 * take's. (A skip to the beginning stays taken until the next release.) */
static inline void
gcap_xarena_untake(struct gcap_xarena *a, uint64_t end, uint32_t need)
{
	a->head = end - gcap_xarena_len(need);
	if (a->tail == a->head)
		a->head = a->tail = 0;
}

/* Bytes out (taken and not released, skipped ends included). */
static inline uint64_t
gcap_xarena_used(const struct gcap_xarena *a)
{
	return a->head - a->tail;
}

#endif /* GCAP_XARENA_H */
