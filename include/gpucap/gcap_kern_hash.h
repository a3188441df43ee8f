/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Part of the inline kernel API (gcap_kernel.h): hashes, the concurrent
 * insert-only hash table a kernel keeps in its state, and (host build
 * only) gcap_hash_sorted(), the listing of a table's keys in an order
 * that depends on its content only, for report hooks. Kernel sources
 * include <gpucap/gcap_kernel.h>, not this part.
 */
#ifndef GCAP_KERN_HASH_H
#define GCAP_KERN_HASH_H

#include "gcap_kern_base.h"
#include "gcap_kern_atomic.h"

#ifndef GCAP_DEVICE
#include <stdlib.h>
#include <string.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** A hash table key: 16 bytes; pad shorter keys with zeros. */
struct gcap_hkey {
	uint32_t w[4];
};

/**
 * One slot of a hash table. tag: 0 empty, 1 being claimed, else
 * (hash | 0x80000000): used, key valid. Values live in the kernel's own
 * arrays, indexed like the slots.
 */
struct gcap_hslot {
	uint32_t tag;
	uint32_t key[4];
};

/** Declare a hash table member of nslots (any size >= 1) slots. */
#define GCAP_HASH_DECLARE(name, nslots)                                     \
	struct {                                                            \
		uint32_t used; /* slots in use */                           \
		uint32_t full; /* inserts refused: no free slot in reach */ \
		struct gcap_hslot slot[nslots];                             \
	} name

/** Slots an insert or lookup examines before giving up. */
#define GCAP_HASH_MAX_PROBE 64u

/** Tag of a used slot. */
#define GCAP_HSLOT_USED 0x80000000u

/** Mix a 32-bit value (finaliser of a 32-bit avalanche hash). */
GCAP_DEV uint32_t
gcap_mix32(uint32_t h)
{
	h ^= h >> 16;
	h *= 0x7feb352du;
	h ^= h >> 15;
	h *= 0x846ca68bu;
	h ^= h >> 16;
	return h;
}

/** @return a 32-bit hash of a key. */
GCAP_DEV uint32_t
gcap_hash_key(const struct gcap_hkey *k)
{
	uint32_t h = 0x9e3779b9u;
	for (uint32_t i = 0; i < 4u; i++)
		h = gcap_mix32(h ^ k->w[i]) + 0x85ebca6bu * (i + 1u);
	return gcap_mix32(h);
}

/** @return a 64-bit FNV-1a hash of n bytes (seeded). */
GCAP_DEV uint64_t
gcap_hash_bytes(const void *b, uint32_t n, uint64_t seed)
{
	const uint8_t *s = (const uint8_t *)b;
	uint64_t h = 0xcbf29ce484222325ull ^ seed;
	for (uint32_t i = 0; i < n; i++) {
		h ^= s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/** Set a key from up to 16 bytes (the rest zero). */
GCAP_DEV void
gcap_hkey_set(struct gcap_hkey *k, const void *b, uint32_t n)
{
	uint8_t *o = (uint8_t *)k->w;
	const uint8_t *s = (const uint8_t *)b;
	for (uint32_t i = 0; i < 16u; i++)
		o[i] = i < n ? s[i] : (uint8_t)0;
}

/**
 * Find key in the table, inserting it when absent. Safe when many threads
 * insert and look up at once: a free slot is claimed with a CAS, filled,
 * then published; a thread that meets a slot being claimed waits for it
 * (the claimer always finishes: a few stores). Linear probing over at most
 * GCAP_HASH_MAX_PROBE slots; no deletes.
 * @param slots     the table's slots
 * @param nslots    number of slots
 * @param used      counter of used slots (incremented on insert)
 * @param full      counter of refused inserts (incremented on failure)
 * @param key       the key
 * @param inserted  set to true when this call inserted the key (may be NULL)
 * @return the slot index, or -1 when no free slot was in reach (table full).
 */
GCAP_DEV int32_t
gcap_hash_insert(struct gcap_hslot *slots, uint32_t nslots, uint32_t *used,
		 uint32_t *full, const struct gcap_hkey *key, bool *inserted)
{
	uint32_t h = gcap_hash_key(key);
	uint32_t tag = h | GCAP_HSLOT_USED;
	uint32_t i = h % nslots;
	uint32_t probes = nslots < GCAP_HASH_MAX_PROBE ? nslots : GCAP_HASH_MAX_PROBE;
	if (inserted)
		*inserted = false;
	for (uint32_t n = 0; n < probes; n++) {
		struct gcap_hslot *s = &slots[i];
		uint32_t t = gcap_atomic_load_acquire_u32(&s->tag);
		if (t == 0) {
			t = gcap_atomic_cas_u32(&s->tag, 0, 1);
			if (t == 0) {
				for (uint32_t w = 0; w < 4u; w++)
					s->key[w] = key->w[w];
				gcap_atomic_store_release_u32(&s->tag, tag);
				if (used)
					gcap_atomic_add_u32(used, 1);
				if (inserted)
					*inserted = true;
				return (int32_t)i;
			}
		}
		while (t == 1u) {
			gcap_cpu_relax();
			t = gcap_atomic_load_acquire_u32(&s->tag);
		}
		if (t == tag) {
#ifdef GCAP_DEVICE
			const volatile uint32_t *kw = s->key;
#else
			const uint32_t *kw = s->key;
#endif
			if (kw[0] == key->w[0] && kw[1] == key->w[1] &&
			    kw[2] == key->w[2] && kw[3] == key->w[3])
				return (int32_t)i;
		}
		i = i + 1u == nslots ? 0u : i + 1u;
	}
	if (full)
		gcap_atomic_add_u32(full, 1);
	return -1;
}

/**
 * Find key without inserting it.
 * @return the slot index, or -1 when absent.
 */
GCAP_DEV int32_t
gcap_hash_find(const struct gcap_hslot *slots, uint32_t nslots,
	       const struct gcap_hkey *key)
{
	uint32_t h = gcap_hash_key(key);
	uint32_t tag = h | GCAP_HSLOT_USED;
	uint32_t i = h % nslots;
	uint32_t probes = nslots < GCAP_HASH_MAX_PROBE ? nslots : GCAP_HASH_MAX_PROBE;
	for (uint32_t n = 0; n < probes; n++) {
		const struct gcap_hslot *s = &slots[i];
		uint32_t t = gcap_atomic_load_acquire_u32(&s->tag);
		if (t == 0)
			return -1;
		while (t == 1u) {
			gcap_cpu_relax();
			t = gcap_atomic_load_acquire_u32(&s->tag);
		}
		if (t == tag && s->key[0] == key->w[0] && s->key[1] == key->w[1] &&
		    s->key[2] == key->w[2] && s->key[3] == key->w[3])
			return (int32_t)i;
		i = i + 1u == nslots ? 0u : i + 1u;
	}
	return -1;
}

/** gcap_hash_insert() on a table declared with GCAP_HASH_DECLARE. */
#define gcap_htab_insert(tab, key, inserted)                                  \
	gcap_hash_insert((tab)->slot, (uint32_t)GCAP_ARRAY_SIZE((tab)->slot), \
			 &(tab)->used, &(tab)->full, (key), (inserted))
/** gcap_hash_find() on a table declared with GCAP_HASH_DECLARE. */
#define gcap_htab_find(tab, key) \
	gcap_hash_find((tab)->slot, (uint32_t)GCAP_ARRAY_SIZE((tab)->slot), (key))
/** Number of slots of a table declared with GCAP_HASH_DECLARE. */
#define gcap_htab_size(tab) ((uint32_t)GCAP_ARRAY_SIZE((tab)->slot))

/** @return true when slot s holds a key (host side, after the run). */
GCAP_DEV bool
gcap_hslot_used(const struct gcap_hslot *s)
{
	return (s->tag & GCAP_HSLOT_USED) != 0;
}

/* Host build only: report hooks list a table after the run. */
#ifndef GCAP_DEVICE

/** One row being sorted by gcap_hash_sorted(). */
struct gcap_hsort_row {
	uint64_t count;
	uint32_t key[4];
	uint32_t idx;
};

/** qsort order of gcap_hash_sorted(): count descending, then key bytes. */
static inline int
gcap_hsort_cmp(const void *a, const void *b)
{
	const struct gcap_hsort_row *x = (const struct gcap_hsort_row *)a;
	const struct gcap_hsort_row *y = (const struct gcap_hsort_row *)b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return memcmp(x->key, y->key, sizeof(x->key));
}

/**
 * List the used slots of a table ordered by counts[slot] descending, ties
 * broken by key bytes ascending. The order depends on the table's content
 * only, never on which slot a key landed in, so reports of the same
 * traffic are identical whatever order the packets were processed in.
 * @param slots   the slots
 * @param nslots  number of slots
 * @param counts  one count per slot (NULL: order by key only)
 * @param idx     receives up to max slot indices
 * @param max     capacity of idx
 * @return the number of indices written (min(used, max)), or 0 when out
 *         of memory.
 */
static inline uint32_t
gcap_hash_sorted(const struct gcap_hslot *slots, uint32_t nslots, const uint64_t *counts,
		 uint32_t *idx, uint32_t max)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < nslots; i++)
		n += gcap_hslot_used(&slots[i]);
	if (n == 0 || max == 0)
		return 0;
	struct gcap_hsort_row *rows = (struct gcap_hsort_row *)malloc(n * sizeof(*rows));
	if (!rows)
		return 0;
	n = 0;
	for (uint32_t i = 0; i < nslots; i++) {
		if (!gcap_hslot_used(&slots[i]))
			continue;
		rows[n].count = counts ? counts[i] : 0;
		memcpy(rows[n].key, slots[i].key, sizeof(rows[n].key));
		rows[n].idx = i;
		n++;
	}
	qsort(rows, n, sizeof(*rows), gcap_hsort_cmp);
	if (n > max)
		n = max;
	for (uint32_t i = 0; i < n; i++)
		idx[i] = rows[i].idx;
	free(rows);
	return n;
}

#endif /* !GCAP_DEVICE */

#ifdef __cplusplus
}
#endif

#endif /* GCAP_KERN_HASH_H */
