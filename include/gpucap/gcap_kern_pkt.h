/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Part of the inline kernel API (gcap_kernel.h): one packet as a kernel
 * sees it (struct gcap_kpkt) and the bounded loads that read its bytes,
 * which fail past caplen instead of reading memory that may not be
 * mapped. Kernel sources include <gpucap/gcap_kernel.h>, not this part.
 */
#ifndef GCAP_KERN_PKT_H
#define GCAP_KERN_PKT_H

#include "gcap_kern_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * One packet as a kernel sees it. Read the bytes only through the
 * gcap_load_*() helpers (or after checking caplen yourself): data may lie
 * in device memory, pinned host memory or an mbuf, and nothing past
 * data[caplen - 1] is mapped for you. 32 bytes.
 */
struct gcap_kpkt {
	const uint8_t *data; /**< first byte (link layer header) */
	uint32_t caplen;     /**< bytes present at data */
	uint32_t wirelen;    /**< length on the wire */
	uint64_t ts_ns;      /**< capture time, ns since the Unix epoch */
	uint16_t port;       /**< interface index */
	uint16_t queue;      /**< RX queue within the port */
	uint32_t seq;        /**< descriptor sequence number within the queue */
};

/**
 * Load one byte at offset off.
 * @return true and *out set, or false (and *out = 0) when off >= caplen.
 */
GCAP_DEV bool
gcap_load_u8(const struct gcap_kpkt *pkt, uint32_t off, uint8_t *out)
{
	if (off >= pkt->caplen) {
		*out = 0;
		return false;
	}
	*out = pkt->data[off];
	return true;
}

/**
 * Load a big-endian (network order) 16-bit value at off.
 * @return true, or false (*out = 0) when off + 2 > caplen.
 */
GCAP_DEV bool
gcap_load_u16be(const struct gcap_kpkt *pkt, uint32_t off, uint16_t *out)
{
	if (off >= pkt->caplen || pkt->caplen - off < 2u) {
		*out = 0;
		return false;
	}
	*out = (uint16_t)((pkt->data[off] << 8) | pkt->data[off + 1]);
	return true;
}

/**
 * Load a big-endian 32-bit value at off.
 * @return true, or false (*out = 0) when off + 4 > caplen.
 */
GCAP_DEV bool
gcap_load_u32be(const struct gcap_kpkt *pkt, uint32_t off, uint32_t *out)
{
	if (off >= pkt->caplen || pkt->caplen - off < 4u) {
		*out = 0;
		return false;
	}
	const uint8_t *d = pkt->data + off;
	*out = ((uint32_t)d[0] << 24) | ((uint32_t)d[1] << 16) | ((uint32_t)d[2] << 8) |
	       (uint32_t)d[3];
	return true;
}

/**
 * Load a little-endian 16-bit value at off.
 * @return true, or false (*out = 0) when off + 2 > caplen.
 */
GCAP_DEV bool
gcap_load_u16le(const struct gcap_kpkt *pkt, uint32_t off, uint16_t *out)
{
	if (off >= pkt->caplen || pkt->caplen - off < 2u) {
		*out = 0;
		return false;
	}
	*out = (uint16_t)(pkt->data[off] | (pkt->data[off + 1] << 8));
	return true;
}

/**
 * Load a little-endian 32-bit value at off.
 * @return true, or false (*out = 0) when off + 4 > caplen.
 */
GCAP_DEV bool
gcap_load_u32le(const struct gcap_kpkt *pkt, uint32_t off, uint32_t *out)
{
	if (off >= pkt->caplen || pkt->caplen - off < 4u) {
		*out = 0;
		return false;
	}
	const uint8_t *d = pkt->data + off;
	*out = ((uint32_t)d[3] << 24) | ((uint32_t)d[2] << 16) | ((uint32_t)d[1] << 8) |
	       (uint32_t)d[0];
	return true;
}

/**
 * Copy n bytes at off into dst.
 * @return true, or false (nothing copied) when off + n > caplen.
 */
GCAP_DEV bool
gcap_load_bytes(const struct gcap_kpkt *pkt, uint32_t off, void *dst, uint32_t n)
{
	if (off > pkt->caplen || pkt->caplen - off < n)
		return false;
	uint8_t *o = (uint8_t *)dst;
	for (uint32_t i = 0; i < n; i++)
		o[i] = pkt->data[off + i];
	return true;
}

/**
 * A bounded view of n bytes at off: the kernel may then index ptr[0..n).
 * @return a pointer to the bytes, or NULL when off + n > caplen.
 */
GCAP_DEV const uint8_t *
gcap_ptr(const struct gcap_kpkt *pkt, uint32_t off, uint32_t n)
{
	if (off > pkt->caplen || pkt->caplen - off < n)
		return (const uint8_t *)0;
	return pkt->data + off;
}

/** @return the byte at off, or 0 when off >= caplen (as BPF loads do). */
GCAP_DEV uint8_t
gcap_byte(const struct gcap_kpkt *pkt, uint32_t off)
{
	return off < pkt->caplen ? pkt->data[off] : (uint8_t)0;
}

/** @return bytes from off to the end of the capture (0 past it). */
GCAP_DEV uint32_t
gcap_avail(const struct gcap_kpkt *pkt, uint32_t off)
{
	return off < pkt->caplen ? pkt->caplen - off : 0u;
}

#ifdef __cplusplus
}
#endif

#endif /* GCAP_KERN_PKT_H */
