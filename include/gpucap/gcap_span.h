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
 * past its sub-chunk, listing the starts it passed. A record's step
 * depends only on its own header, so two walks that meet a common start
 * agree from there on: the span's records are those of the lists from
 * the true entry (the previous span's exit) on, each list joined where
 * the one before it leaves off.
 *
 * The join runs in rounds, every sub-chunk at once: one that does not
 * agree with where the one before it leaves off is set right (its list
 * taken from that start, or walked again from it) when the one before it
 * agrees with its own predecessor. The sub-chunks that agree from the
 * first on are right and stay so, and each round sets at least the first
 * that does not agree; a wrong guess costs a round, and wrong guesses
 * are rare and apart, so a span takes two rounds or three.
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

/** gcap_batch_result.span_ns: a span's guesses and walks, its wait for
 *  the one before it, the join, the descriptors. */
#define GCAP_SPAN_T_GUESS 0
#define GCAP_SPAN_T_WAIT 1
#define GCAP_SPAN_T_JOIN 2
#define GCAP_SPAN_T_DESCRIBE 3

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

/** A sub-chunk's exit while where it leaves off is not known (its guess
 *  found no record start). */
#define GCAP_SPAN_UNKNOWN 0xffffffffu

/** One sub-chunk [lo, hi): its walk, and where the chain leaves it. */
struct gcap_span_sub {
	uint32_t lo, hi;
	uint32_t n;     /**< record starts its walk listed */
	uint32_t wexit; /**< the walk's first start at or past hi, or where it
			 *   stopped (wstop 1) */
	uint32_t wstop;
	uint32_t from; /**< the first listed start that is the span's (n: none) */
	uint32_t in;   /**< the entry from and exit are for (the guess's start
			 *   at first; GCAP_SPAN_UNKNOWN: none) */
	uint32_t exit; /**< where the chain leaves it: the next one's entry,
			 *   or GCAP_SPAN_UNKNOWN */
	uint32_t stop; /**< 1: the chain stopped at exit */
	uint32_t pad[3];
};

GCAP_SPAN_FN uint32_t
gcap_span_u32(const struct gcap_span_view *v, uint32_t at)
{
#ifdef __CUDACC__
	/* two aligned words (their bytes lie in the span's slot, aligned and
	 * a multiple of 4 long) instead of four byte loads */
	unsigned long long a = (unsigned long long)(v->p + at);
	const uint32_t *w = (const uint32_t *)(a & ~3ull);
	uint32_t sh = (uint32_t)(a & 3u);
	uint32_t x = sh ? __funnelshift_r(w[0], w[1], sh * 8u) : w[0];
#else
	const uint8_t *q = v->p + at;
	uint32_t x = (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 |
		     (uint32_t)q[3] << 24;
#endif

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
		/* the caplen alone turns most places away */
		caplen = gcap_span_u32(v, p + 8);
		if (caplen > v->snap)
			return 0;
		frac = gcap_span_u32(v, p + 4);
		wirelen = gcap_span_u32(v, p + 12);
		if (caplen > wirelen || wirelen == 0 || wirelen > GCAP_SPAN_WIRELEN_MAX ||
		    frac >= frac_max || v->avail - p - GCAP_SPAN_RHDR < caplen)
			return 0;
		p += GCAP_SPAN_RHDR + caplen;
	}
	return 1;
}

/** Most starts a sub-chunk of len bytes lists: a record has a header. */
#define GCAP_SPAN_LIST(len) ((len) / GCAP_SPAN_RHDR + 1u)

/** The sub-chunk size for a span of len bytes on nthr threads, given the
 *  bytes a record took in a recent span (avg, 0: none known): at least
 *  two records' worth, so that few sub-chunks lie wholly inside one
 *  record (each of those costs the join a round). */
GCAP_SPAN_FN uint32_t
gcap_span_chunk(uint32_t len, uint32_t nthr, uint64_t avg)
{
	uint32_t c = (len + nthr - 1u) / nthr;

	if (avg > 0 && 2u * avg > c)
		c = 2u * avg < len ? (uint32_t)(2u * avg) : len;
	return c;
}

/** Walk from the record start p to the first start at or past s->hi,
 *  listing the starts before it (at most GCAP_SPAN_LIST(hi - lo)) in
 *  list; or stop at a record the reader's step would not take (wstop 1,
 *  wexit where it is). */
GCAP_SPAN_FN void
gcap_span_walk(const struct gcap_span_view *v, uint32_t p, struct gcap_span_sub *s,
	       uint32_t *list)
{
	uint32_t n = 0;

	s->wstop = 0;
	while (p < s->hi) {
		uint32_t caplen;

		if (v->avail - p < GCAP_SPAN_RHDR) {
			s->wstop = 1;
			break;
		}
		caplen = gcap_span_u32(v, p + 8);
		if (caplen > v->snap || v->avail - p - GCAP_SPAN_RHDR < caplen) {
			s->wstop = 1;
			break;
		}
		list[n++] = p;
		p += GCAP_SPAN_RHDR + caplen;
	}
	s->n = n;
	s->wexit = p;
}

/** A sub-chunk's own walk, from its guessed first start (entry_hint where
 *  it is known: the first sub-chunk of a run's first span; else
 *  GCAP_SPAN_UNKNOWN), taken whole until the join says otherwise. */
GCAP_SPAN_FN void
gcap_span_guess(const struct gcap_span_view *v, struct gcap_span_sub *s, uint32_t *list,
		uint32_t entry_hint)
{
	uint32_t p = s->lo;

	if (entry_hint != GCAP_SPAN_UNKNOWN) {
		p = entry_hint;
	} else {
		while (p < s->hi && !gcap_span_plausible(v, p))
			p++;
	}
	s->from = 0;
	if (p >= s->hi) { /* no start found: the join finds it */
		s->n = 0;
		s->in = s->wexit = s->exit = GCAP_SPAN_UNKNOWN;
		s->wstop = s->stop = 0;
		return;
	}
	gcap_span_walk(v, p, s, list);
	s->in = p;
	s->exit = s->wexit;
	s->stop = s->wstop;
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

/** Whether sub-chunk s agrees with where the chain enters it, at, as the
 *  one before it leaves off (for the first, the span's entry). Its state
 *  is a function of that start alone (whether the chain stopped there
 *  too: a walk stops at a record for what its own header says), so it
 *  agrees when it was made for it. Shared state only. */
GCAP_SPAN_FN int
gcap_span_agrees(const struct gcap_span_sub *s, uint32_t at)
{
	return at != GCAP_SPAN_UNKNOWN && s->in == at;
}

/** Set sub-chunk s right for where the chain enters it (as
 *  gcap_span_agrees): none of its starts, its list from at, or a walk
 *  from at (*walks counts those). */
GCAP_SPAN_FN void
gcap_span_fix(const struct gcap_span_view *v, struct gcap_span_sub *s, uint32_t *list,
	      uint32_t at, uint32_t at_stop, uint32_t *walks)
{
	uint32_t i;

	s->in = at;
	if (at_stop || at >= s->hi) { /* the chain stopped, or a record spans it */
		s->from = s->n;
		s->exit = at;
		s->stop = at_stop ? 1u : 0u;
		return;
	}
	i = gcap_span_find(list, s->n, at);
	if (i == s->n) {
		gcap_span_walk(v, at, s, list);
		i = 0;
		(*walks)++;
	}
	s->from = i;
	s->exit = s->wexit;
	s->stop = s->wstop;
}

#ifdef __cplusplus
}
#endif

#endif /* GCAP_SPAN_H */
