/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Internal: finding the records of a span of a plain pcap file in parallel
 * (-r on the gpu backend, records found on the GPU). Plain C that compiles
 * with a host C compiler, nvcc and NVRTC: the persistent kernel runs it
 * (find_span.cuh), a host test runs the same code on spans it checks
 * against the capture file reader.
 *
 * A span is the file's bytes [off, off + avail): the records that start
 * in its first len bytes are its own, and avail reaches past len by the
 * longest record the span takes, or to the file's end. It is cut into
 * sub-chunks of equal size, one per thread. Each thread guesses where
 * its sub-chunk's first record starts (the reader's own plausibility
 * test, capfile_pcap.c) and walks from there to the first record start
 * past its sub-chunk (its exit), listing the starts it passed. A record's
 * step depends only on its own header, so two walks that meet a common
 * start agree from there on: the span's records are those of the lists
 * from the true entry (the previous span's exit) on, each list joined
 * where the one before it exits. A list that does not hold that point (a
 * wrong guess) is walked again from it.
 *
 * The walk takes what the reader's own step takes (capfile_pcap.c): a
 * caplen within the file's snapshot, the record whole within the file. It
 * stops at a record it would not take; the span's records end there and
 * the reader on the host goes on from that record (libpcap's rules, the
 * end of a cut file), as it would have without the GPU.
 */
#ifndef GCAP_SPAN_H
#define GCAP_SPAN_H

#include "gcap_pkt.h"

#ifdef __CUDACC__
#define GCAP_SPAN_FN static __device__ __forceinline__
#else
#define GCAP_SPAN_FN static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** Span flags: the file's byte order is not the GPU's (little-endian);
 *  its fractions are nanoseconds. */
#define GCAP_SPAN_SWAP 1u
#define GCAP_SPAN_NANO 2u

/** A pcap record header's bytes. */
#define GCAP_SPAN_RHDR 16u
/** Headers in a row a guessed record start must pass (as the reader's). */
#define GCAP_SPAN_RUN 4u
/** The longest wire length a guessed start may have (as the reader's). */
#define GCAP_SPAN_WIRELEN_MAX 262144u
/** The longest caplen a span takes: avail reaches this far past len, and a
 *  record longer is the host's (a snapshot above it is rare). */
#define GCAP_SPAN_CAPLEN_MAX 262144u
/** Bytes past a span's own a slot holds (the last record's tail). */
#define GCAP_SPAN_TAIL (GCAP_SPAN_RHDR + GCAP_SPAN_CAPLEN_MAX)

/** gcap_batch_result.span_stop of a span whose records all came. */
#define GCAP_SPAN_GOES_ON 0xffffffffffffffffull

/** A span's bytes as the walk reads them. */
struct gcap_span_view {
	const uint8_t *p; /**< the span's first byte (file offset off) */
	uint32_t avail;   /**< bytes at p */
	uint32_t snap;    /**< longest caplen taken: the file's snapshot,
			   *   at most GCAP_SPAN_CAPLEN_MAX */
	uint32_t flags;   /**< GCAP_SPAN_SWAP, GCAP_SPAN_NANO */
};

/** One sub-chunk [lo, hi) and its walk. */
struct gcap_span_sub {
	uint32_t lo, hi;
	uint32_t n;     /**< record starts listed */
	uint32_t first; /**< the first of them (when n > 0) */
	uint32_t exit;  /**< the first start at or past hi, or where it stopped */
	uint32_t from;  /**< after the join: the first listed start that is the span's */
	uint32_t stop;  /**< 1: the walk stopped at exit (a record it does not take) */
	uint32_t pad;
};

GCAP_SPAN_FN uint32_t
gcap_span_u32(const struct gcap_span_view *v, uint32_t at)
{
	const uint8_t *q = v->p + at;
	uint32_t x = (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 |
		     (uint32_t)q[3] << 24;

	if (v->flags & GCAP_SPAN_SWAP)
		x = (x >> 24) | ((x >> 8) & 0xff00u) | ((x << 8) & 0xff0000u) | (x << 24);
	return x;
}

/** Whether a record may start at p: GCAP_SPAN_RUN headers in a row (or
 *  fewer, ending at the span's bytes' end), each within the snapshot
 *  and its wire length, a wire length of 1 to GCAP_SPAN_WIRELEN_MAX, a
 *  fraction under a second. A guess only: the join checks it. */
GCAP_SPAN_FN int
gcap_span_plausible(const struct gcap_span_view *v, uint32_t p)
{
	const uint32_t frac_max = (v->flags & GCAP_SPAN_NANO) ? 1000000000u : 1000000u;
	unsigned k;

	for (k = 0; k < GCAP_SPAN_RUN; k++) {
		uint32_t frac, caplen, wirelen;

		if (p == v->avail)
			return k > 0;
		if (v->avail - p < GCAP_SPAN_RHDR)
			return 0;
		frac = gcap_span_u32(v, p + 4);
		caplen = gcap_span_u32(v, p + 8);
		wirelen = gcap_span_u32(v, p + 12);
		if (caplen > v->snap || caplen > wirelen || wirelen == 0 ||
		    wirelen > GCAP_SPAN_WIRELEN_MAX || frac >= frac_max ||
		    v->avail - p - GCAP_SPAN_RHDR < caplen)
			return 0;
		p += GCAP_SPAN_RHDR + caplen;
	}
	return 1;
}

/** Walk from the record start p to the first start at or past s->hi,
 *  listing the starts before it (at most GCAP_SPAN_LIST(hi - lo)) in
 *  list; or stop at a record the reader's step would not take (s->stop,
 *  s->exit where it is). */
GCAP_SPAN_FN void
gcap_span_walk(const struct gcap_span_view *v, uint32_t p, struct gcap_span_sub *s,
	       uint32_t *list)
{
	uint32_t n = 0;

	s->stop = 0;
	while (p < s->hi) {
		uint32_t caplen;

		if (v->avail - p < GCAP_SPAN_RHDR) {
			s->stop = 1;
			break;
		}
		caplen = gcap_span_u32(v, p + 8);
		if (caplen > v->snap || v->avail - p - GCAP_SPAN_RHDR < caplen) {
			s->stop = 1;
			break;
		}
		list[n++] = p;
		p += GCAP_SPAN_RHDR + caplen;
	}
	s->n = n;
	s->first = n ? list[0] : 0;
	s->exit = p;
}

/** Most starts a sub-chunk of len bytes lists: a record has a header. */
#define GCAP_SPAN_LIST(len) ((len) / GCAP_SPAN_RHDR + 1u)

/** A sub-chunk's own walk, from its guessed first start (at lo for the
 *  span's first sub-chunk when its entry is known: entry_hint, else
 *  ~0u). */
GCAP_SPAN_FN void
gcap_span_guess(const struct gcap_span_view *v, struct gcap_span_sub *s, uint32_t *list,
		uint32_t entry_hint)
{
	uint32_t p = s->lo;

	if (entry_hint != 0xffffffffu) {
		p = entry_hint;
	} else {
		while (p < s->hi && !gcap_span_plausible(v, p))
			p++;
	}
	if (p >= s->hi) { /* nothing listed: the join walks it */
		s->n = 0;
		s->first = 0;
		s->exit = 0xffffffffu;
		s->stop = 1;
		return;
	}
	gcap_span_walk(v, p, s, list);
}

/** Whether sub-chunk j's list begins where the true chain enters it (the
 *  entry for j 0, else the exit of j - 1): then the join takes it whole. */
GCAP_SPAN_FN int
gcap_span_joins(const struct gcap_span_sub *sub, unsigned j, uint32_t entry)
{
	uint32_t at = j == 0 ? entry : sub[j - 1].exit;

	if (j > 0 && sub[j - 1].stop)
		return 0;
	return sub[j].n > 0 && sub[j].first == at;
}

/** Where sorted list (n starts) holds p, or n. */
GCAP_SPAN_FN uint32_t
gcap_span_find(const uint32_t *list, uint32_t n, uint32_t p)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2u;

		if (list[mid] < p)
			lo = mid + 1u;
		else
			hi = mid;
	}
	return lo < n && list[lo] == p ? lo : n;
}

/**
 * Join the sub-chunks' lists along the true chain from entry (every
 * sub[j].from set; a list that does not hold the chain's point is walked
 * again from it, into lists + j * cap). One thread. @return the span's
 * exit: the first record start at or past len, or where the walk stopped
 * (*stopped 1).
 */
GCAP_SPAN_FN uint32_t
gcap_span_join(const struct gcap_span_view *v, struct gcap_span_sub *sub, unsigned nsub,
	       uint32_t *lists, uint32_t cap, uint32_t entry, uint32_t *stopped)
{
	uint32_t p = entry, st = 0;
	unsigned j;

	for (j = 0; j < nsub; j++) {
		struct gcap_span_sub *s = &sub[j];
		uint32_t i;

		if (st || p >= s->hi) { /* stopped, or a record spans it all */
			s->from = s->n;
			continue;
		}
		i = s->n > 0 && s->first == p ?
			    0u :
			    gcap_span_find(lists + (unsigned long long)j * cap, s->n, p);
		if (i == s->n) {
			gcap_span_walk(v, p, s, lists + (unsigned long long)j * cap);
			i = 0;
		}
		s->from = i;
		p = s->exit;
		st = s->stop;
	}
	*stopped = st;
	return p;
}

#ifdef __cplusplus
}
#endif

#endif /* GCAP_SPAN_H */
