/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Part of the inline kernel API (gcap_kernel.h): the 32-bit verdict
 * gcap_kernel() returns (drop, capture, snap length, one output) and
 * gcap_verdict_apply(), its one decoding, which both executors use.
 * Kernel sources include <gpucap/gcap_kernel.h>, not this part.
 */
#ifndef GCAP_KERN_VERDICT_H
#define GCAP_KERN_VERDICT_H

#include "gcap_kern_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A verdict is 32 bits:
 *   bit 31       capture (clear: drop; every other bit is then ignored)
 *   bit 30       output selected: capture to output (bits 29..24) only
 *   bits 29..24  output index, 0..63
 *   bits 23..0   snap length in bytes; 0 means the whole caplen
 * Verdicts combine with |: GCAP_OUTPUT(2) | GCAP_SNAP(96).
 */

/** Drop the packet. */
#define GCAP_DROP 0u
/** Capture to every output whose filter matched. */
#define GCAP_CAPTURE 0x80000000u
/** Bit 30: an output index is given. */
#define GCAP_VERDICT_OUTPUT_FLAG 0x40000000u
/** Largest snap length a verdict carries (larger values are clamped). */
#define GCAP_VERDICT_SNAP_MAX 0x00ffffffu
/**
 * Capture, cut to n bytes (n = 0: the whole packet; n is clamped to
 * GCAP_VERDICT_SNAP_MAX).
 */
#define GCAP_SNAP(n)                                                                     \
	(GCAP_CAPTURE | ((uint32_t)(n) > GCAP_VERDICT_SNAP_MAX ? GCAP_VERDICT_SNAP_MAX : \
								 (uint32_t)(n)))
/** Capture to output i (0..63) only, whatever the filters said. */
#define GCAP_OUTPUT(i) \
	(GCAP_CAPTURE | GCAP_VERDICT_OUTPUT_FLAG | (((uint32_t)(i)&63u) << 24))

/** @return the snap length of a verdict (0: none). */
#define GCAP_VERDICT_SNAPLEN(v) ((v)&GCAP_VERDICT_SNAP_MAX)

/**
 * Apply a kernel's verdict to a packet, as both executors do.
 * @param verdict      what gcap_kernel() returned
 * @param filter_mask  bit i set: output i's filter matched the packet
 * @param caplen       captured length of the packet
 * @param outmask      the outputs the packet goes to (0: dropped). For
 *                     GCAP_OUTPUT(i) this is bit i alone, whether or not
 *                     filter i matched; the executor then clears bits of
 *                     outputs that do not exist.
 * @param snap         bytes to write: caplen, or less for GCAP_SNAP(n)
 * @return true when the packet is captured (*outmask != 0).
 */
GCAP_DEV bool
gcap_verdict_apply(uint32_t verdict, uint64_t filter_mask, uint32_t caplen,
		   uint64_t *outmask, uint32_t *snap)
{
	if (!(verdict & GCAP_CAPTURE)) {
		*outmask = 0;
		*snap = 0;
		return false;
	}
	if (verdict & GCAP_VERDICT_OUTPUT_FLAG)
		*outmask = 1ull << ((verdict >> 24) & 63u);
	else
		*outmask = filter_mask;
	uint32_t s = verdict & GCAP_VERDICT_SNAP_MAX;
	*snap = (s != 0 && s < caplen) ? s : caplen;
	if (*outmask == 0)
		*snap = 0;
	return *outmask != 0;
}

#ifdef __cplusplus
}
#endif

#endif /* GCAP_KERN_VERDICT_H */
