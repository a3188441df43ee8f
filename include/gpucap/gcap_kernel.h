/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The inline packet kernel API: what a kernel source includes.
 *
 * A kernel is one C function run for every packet that passed the filter:
 *
 *     #include <gpucap/gcap_kernel.h>
 *     struct gcap_kstate { uint64_t tcp; };
 *     GCAP_KERNEL uint32_t gcap_kernel(const struct gcap_kpkt *pkt,
 *                                      struct gcap_kstate *st)
 *     {
 *             struct gcap_parsed p;
 *             gcap_parse(pkt, &p);
 *             if (!(p.flags & GCAP_PF_TCP))
 *                     return GCAP_DROP;
 *             gcap_atomic_add_u64(&st->tcp, 1);
 *             return GCAP_SNAP(128);
 *     }
 *
 * The same source compiles three ways and must mean the same thing:
 * - NVRTC (the gpu executor; C++ device code, no system headers),
 * - nvcc (`-x cu`, device code),
 * - a host C compiler (gnu11; the cpu executor, unit tests), where the
 *   optional host hooks gcap_kernel_init() and gcap_kernel_report() exist.
 *
 * GCAP_DEVICE is defined to 1 in the two CUDA builds; put everything
 * host-only (system headers, the hooks) under `#ifndef GCAP_DEVICE`.
 *
 * This header is self-contained: it includes no other gpucap header, so
 * NVRTC needs only this one file. See docs/kernels.md for the tutorial,
 * the rules and the examples.
 */
#ifndef GCAP_KERNEL_H
#define GCAP_KERNEL_H

/* ------------------------------------------------------------------ */
/* Portability                                                         */
/* ------------------------------------------------------------------ */

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
typedef unsigned long long gcap_size_t;
#else
#include <stdint.h>
#include <stddef.h>
typedef size_t gcap_size_t;
#if !defined(__cplusplus)
#include <stdbool.h>
#endif
#endif

#ifndef GCAP_DEVICE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#endif

#ifdef __cplusplus
extern "C" {
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
 * Qualifiers of the entry point gcap_kernel(). On the GPU the executor
 * compiles the kernel source together with its persistent kernel, which
 * calls gcap_kernel() inline; on the host the function is exported from
 * the shared object the loader builds.
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

/** Most outputs (-w FILE:EXPR); the same value as gcap_pkt.h's. */
#define GCAP_KMAX_OUTPUTS 64u

/* ------------------------------------------------------------------ */
/* The packet view                                                     */
/* ------------------------------------------------------------------ */

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
GCAP_DEV bool gcap_load_u8(const struct gcap_kpkt *pkt, uint32_t off,
			   uint8_t *out)
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
GCAP_DEV bool gcap_load_u16be(const struct gcap_kpkt *pkt, uint32_t off,
			      uint16_t *out)
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
GCAP_DEV bool gcap_load_u32be(const struct gcap_kpkt *pkt, uint32_t off,
			      uint32_t *out)
{
	if (off >= pkt->caplen || pkt->caplen - off < 4u) {
		*out = 0;
		return false;
	}
	const uint8_t *d = pkt->data + off;
	*out = ((uint32_t)d[0] << 24) | ((uint32_t)d[1] << 16) |
	       ((uint32_t)d[2] << 8) | (uint32_t)d[3];
	return true;
}

/**
 * Load a little-endian 16-bit value at off.
 * @return true, or false (*out = 0) when off + 2 > caplen.
 */
GCAP_DEV bool gcap_load_u16le(const struct gcap_kpkt *pkt, uint32_t off,
			      uint16_t *out)
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
GCAP_DEV bool gcap_load_u32le(const struct gcap_kpkt *pkt, uint32_t off,
			      uint32_t *out)
{
	if (off >= pkt->caplen || pkt->caplen - off < 4u) {
		*out = 0;
		return false;
	}
	const uint8_t *d = pkt->data + off;
	*out = ((uint32_t)d[3] << 24) | ((uint32_t)d[2] << 16) |
	       ((uint32_t)d[1] << 8) | (uint32_t)d[0];
	return true;
}

/**
 * Copy n bytes at off into dst.
 * @return true, or false (nothing copied) when off + n > caplen.
 */
GCAP_DEV bool gcap_load_bytes(const struct gcap_kpkt *pkt, uint32_t off,
			      void *dst, uint32_t n)
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
GCAP_DEV const uint8_t *gcap_ptr(const struct gcap_kpkt *pkt, uint32_t off,
				 uint32_t n)
{
	if (off > pkt->caplen || pkt->caplen - off < n)
		return (const uint8_t *)0;
	return pkt->data + off;
}

/** @return the byte at off, or 0 when off >= caplen (as BPF loads do). */
GCAP_DEV uint8_t gcap_byte(const struct gcap_kpkt *pkt, uint32_t off)
{
	return off < pkt->caplen ? pkt->data[off] : (uint8_t)0;
}

/** @return bytes from off to the end of the capture (0 past it). */
GCAP_DEV uint32_t gcap_avail(const struct gcap_kpkt *pkt, uint32_t off)
{
	return off < pkt->caplen ? pkt->caplen - off : 0u;
}

/* ------------------------------------------------------------------ */
/* Verdicts                                                            */
/* ------------------------------------------------------------------ */

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
#define GCAP_SNAP(n) \
	(GCAP_CAPTURE | ((uint32_t)(n) > GCAP_VERDICT_SNAP_MAX ? \
			 GCAP_VERDICT_SNAP_MAX : (uint32_t)(n)))
/** Capture to output i (0..63) only, whatever the filters said. */
#define GCAP_OUTPUT(i) \
	(GCAP_CAPTURE | GCAP_VERDICT_OUTPUT_FLAG | (((uint32_t)(i) & 63u) << 24))

/** @return true when the verdict captures. */
#define GCAP_VERDICT_IS_CAPTURE(v) (((v) & GCAP_CAPTURE) != 0)
/** @return the snap length of a verdict (0: none). */
#define GCAP_VERDICT_SNAPLEN(v) ((v) & GCAP_VERDICT_SNAP_MAX)

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
GCAP_DEV bool gcap_verdict_apply(uint32_t verdict, uint64_t filter_mask,
				 uint32_t caplen, uint64_t *outmask,
				 uint32_t *snap)
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

/* ------------------------------------------------------------------ */
/* Atomics (relaxed, device scope on the GPU)                          */
/* ------------------------------------------------------------------ */

#ifdef GCAP_DEVICE
#define GCAP_ULL(p) ((unsigned long long *)(p))
#define GCAP_UINT(p) ((unsigned int *)(p))
#endif

/** Add v to *p. @return the old value. */
GCAP_DEV uint64_t gcap_atomic_add_u64(uint64_t *p, uint64_t v)
{
#ifdef GCAP_DEVICE
	return atomicAdd(GCAP_ULL(p), (unsigned long long)v);
#else
	return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}

/** Add v to *p. @return the old value. */
GCAP_DEV uint32_t gcap_atomic_add_u32(uint32_t *p, uint32_t v)
{
#ifdef GCAP_DEVICE
	return atomicAdd(GCAP_UINT(p), v);
#else
	return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}

/** Set *p to desired if it equals expected. @return the old value. */
GCAP_DEV uint32_t gcap_atomic_cas_u32(uint32_t *p, uint32_t expected,
				      uint32_t desired)
{
#ifdef GCAP_DEVICE
	return atomicCAS(GCAP_UINT(p), expected, desired);
#else
	__atomic_compare_exchange_n(p, &expected, desired, false,
				    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	return expected;
#endif
}

/** Set *p to desired if it equals expected. @return the old value. */
GCAP_DEV uint64_t gcap_atomic_cas_u64(uint64_t *p, uint64_t expected,
				      uint64_t desired)
{
#ifdef GCAP_DEVICE
	return atomicCAS(GCAP_ULL(p), (unsigned long long)expected,
			 (unsigned long long)desired);
#else
	__atomic_compare_exchange_n(p, &expected, desired, false,
				    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	return expected;
#endif
}

/** *p = max(*p, v). @return the old value. */
GCAP_DEV uint64_t gcap_atomic_max_u64(uint64_t *p, uint64_t v)
{
#ifdef GCAP_DEVICE
	return atomicMax(GCAP_ULL(p), (unsigned long long)v);
#else
	uint64_t old = __atomic_load_n(p, __ATOMIC_RELAXED);
	while (old < v && !__atomic_compare_exchange_n(p, &old, v, true,
			__ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	return old;
#endif
}

/** *p = min(*p, v). @return the old value. */
GCAP_DEV uint64_t gcap_atomic_min_u64(uint64_t *p, uint64_t v)
{
#ifdef GCAP_DEVICE
	return atomicMin(GCAP_ULL(p), (unsigned long long)v);
#else
	uint64_t old = __atomic_load_n(p, __ATOMIC_RELAXED);
	while (old > v && !__atomic_compare_exchange_n(p, &old, v, true,
			__ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	return old;
#endif
}

/** *p = max(*p, v). @return the old value. */
GCAP_DEV uint32_t gcap_atomic_max_u32(uint32_t *p, uint32_t v)
{
#ifdef GCAP_DEVICE
	return atomicMax(GCAP_UINT(p), v);
#else
	uint32_t old = __atomic_load_n(p, __ATOMIC_RELAXED);
	while (old < v && !__atomic_compare_exchange_n(p, &old, v, true,
			__ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	return old;
#endif
}

/** *p |= v. @return the old value. */
GCAP_DEV uint64_t gcap_atomic_or_u64(uint64_t *p, uint64_t v)
{
#ifdef GCAP_DEVICE
	return atomicOr(GCAP_ULL(p), (unsigned long long)v);
#else
	return __atomic_fetch_or(p, v, __ATOMIC_RELAXED);
#endif
}

/** Store v in *p, ordered after every write before it. */
GCAP_DEV void gcap_atomic_store_release_u32(uint32_t *p, uint32_t v)
{
#ifdef GCAP_DEVICE
	__threadfence();
	atomicExch(GCAP_UINT(p), v);
#else
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
#endif
}

/** @return *p, read before every read after it. */
GCAP_DEV uint32_t gcap_atomic_load_acquire_u32(const uint32_t *p)
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
GCAP_DEV uint64_t gcap_atomic_load_u64(const uint64_t *p)
{
#ifdef GCAP_DEVICE
	return *(const volatile uint64_t *)p;
#else
	return __atomic_load_n(p, __ATOMIC_RELAXED);
#endif
}

/** Spin-wait hint (a no-op on the GPU). */
GCAP_DEV void gcap_cpu_relax(void)
{
#if !defined(GCAP_DEVICE) && (defined(__x86_64__) || defined(__i386__))
	__builtin_ia32_pause();
#endif
}

/* ------------------------------------------------------------------ */
/* Parsing                                                             */
/* ------------------------------------------------------------------ */

/** struct gcap_parsed flags: which layers were found. */
#define GCAP_PF_ETH      0x0001u /**< an Ethernet header (14 bytes) */
#define GCAP_PF_VLAN     0x0002u /**< at least one 802.1Q/802.1ad tag */
#define GCAP_PF_IPV4     0x0004u /**< an IPv4 header, options included */
#define GCAP_PF_IPV6     0x0008u /**< an IPv6 header (+ extension headers) */
#define GCAP_PF_TCP      0x0010u /**< a TCP header, options included */
#define GCAP_PF_UDP      0x0020u /**< a UDP header */
#define GCAP_PF_ICMP     0x0040u /**< an ICMP header (type, code) */
#define GCAP_PF_ICMP6    0x0080u /**< an ICMPv6 header (type, code) */
#define GCAP_PF_FRAG     0x0100u /**< an IP fragment (first or later) */
#define GCAP_PF_FRAG_LATER 0x0200u /**< a later fragment: no L4 header */
#define GCAP_PF_IPOPT    0x0400u /**< IPv4 options or IPv6 ext headers */
#define GCAP_PF_TRUNC    0x0800u /**< a header ended past caplen: parsing
				      stopped at the last complete layer */
#define GCAP_PF_BADHDR   0x1000u /**< a malformed length field */

/** TCP flag bits (struct gcap_parsed.tcp_flags). */
#define GCAP_TCP_FIN 0x01u
#define GCAP_TCP_SYN 0x02u
#define GCAP_TCP_RST 0x04u
#define GCAP_TCP_PSH 0x08u
#define GCAP_TCP_ACK 0x10u
#define GCAP_TCP_URG 0x20u
#define GCAP_TCP_ECE 0x40u
#define GCAP_TCP_CWR 0x80u

/** IP protocol numbers the parser knows. */
#define GCAP_IPPROTO_HOPOPTS  0u
#define GCAP_IPPROTO_ICMP     1u
#define GCAP_IPPROTO_TCP      6u
#define GCAP_IPPROTO_UDP      17u
#define GCAP_IPPROTO_ROUTING  43u
#define GCAP_IPPROTO_FRAGMENT 44u
#define GCAP_IPPROTO_ESP      50u
#define GCAP_IPPROTO_AH       51u
#define GCAP_IPPROTO_ICMPV6   58u
#define GCAP_IPPROTO_NONE     59u
#define GCAP_IPPROTO_DSTOPTS  60u

/** Ethertypes the parser knows. */
#define GCAP_ETH_IPV4  0x0800u
#define GCAP_ETH_IPV6  0x86ddu
#define GCAP_ETH_VLAN  0x8100u
#define GCAP_ETH_QINQ  0x88a8u
#define GCAP_ETH_QINQ_OLD 0x9100u

/** Most VLAN tags the parser walks; more is marked GCAP_PF_BADHDR. */
#define GCAP_PARSE_MAX_VLAN 4u
/** Most IPv6 extension headers the parser walks. */
#define GCAP_PARSE_MAX_EXT 8u

/**
 * A parsed packet. Offsets are from the first byte of the packet; a field
 * whose layer's flag is clear is 0. Everything was read within caplen.
 */
struct gcap_parsed {
	uint32_t flags;       /**< GCAP_PF_* */
	uint16_t l2_off;      /**< Ethernet header (0) */
	uint16_t ethertype;   /**< after the VLAN tags */
	uint16_t vlan[2];     /**< TCI of the outer and inner tag */
	uint8_t nvlan;        /**< tags seen (up to GCAP_PARSE_MAX_VLAN) */
	uint8_t ip_version;   /**< 4, 6 or 0 */
	uint8_t l4_proto;     /**< IPv4 protocol or the last IPv6 next header */
	uint8_t ttl;          /**< IPv4 TTL / IPv6 hop limit */
	uint8_t tcp_flags;    /**< GCAP_TCP_* */
	uint8_t icmp_type;    /**< ICMP / ICMPv6 type */
	uint8_t icmp_code;    /**< ICMP / ICMPv6 code */
	uint8_t n_ext;        /**< IPv6 extension headers walked */
	uint16_t l3_off;      /**< IP header */
	uint16_t l3_hlen;     /**< IPv4 header with options (IHL*4); 40 for IPv6 */
	uint16_t l4_off;      /**< TCP/UDP/ICMP header (after ext headers) */
	uint16_t l4_hlen;     /**< TCP data offset*4, 8 for UDP and ICMP */
	uint32_t l3_len;      /**< IP datagram length from its header */
	uint16_t sport;       /**< TCP/UDP source port */
	uint16_t dport;       /**< TCP/UDP destination port */
	uint32_t frag_off;    /**< fragment offset in bytes */
	/** first byte after the L4 header (0 when that header is cut by the
	 *  capture); payload_off + payload_len <= caplen always */
	uint16_t payload_off;
	uint16_t reserved;
	/** captured payload bytes: up to the IP datagram's end, within caplen */
	uint32_t payload_len;
	uint32_t tcp_seq;     /**< TCP sequence number */
	uint32_t tcp_ack;     /**< TCP acknowledgement number */
	/** source address: IPv4 in the first 4 bytes (network order), rest 0 */
	uint8_t src[16];
	uint8_t dst[16];      /**< destination address, as src */
};

/** Walk the L4 header at p->l4_off (p->l4_proto set). */
GCAP_DEV void gcap_parse_l4(const struct gcap_kpkt *pkt, uint32_t l3_end,
			    struct gcap_parsed *p)
{
	uint32_t off = p->l4_off;
	uint8_t v8;

	if (p->flags & GCAP_PF_FRAG_LATER)
		return;
	switch (p->l4_proto) {
	case GCAP_IPPROTO_TCP: {
		uint32_t seq, ack;
		if (gcap_avail(pkt, off) < 20u) {
			p->flags |= GCAP_PF_TRUNC;
			return;
		}
		gcap_load_u16be(pkt, off, &p->sport);
		gcap_load_u16be(pkt, off + 2, &p->dport);
		gcap_load_u32be(pkt, off + 4, &seq);
		gcap_load_u32be(pkt, off + 8, &ack);
		gcap_load_u8(pkt, off + 12, &v8);
		p->tcp_seq = seq;
		p->tcp_ack = ack;
		p->l4_hlen = (uint16_t)((v8 >> 4) * 4u);
		gcap_load_u8(pkt, off + 13, &p->tcp_flags);
		p->flags |= GCAP_PF_TCP;
		if (p->l4_hlen < 20u) {
			p->flags |= GCAP_PF_BADHDR;
			return;
		}
		break;
	}
	case GCAP_IPPROTO_UDP:
		if (gcap_avail(pkt, off) < 8u) {
			p->flags |= GCAP_PF_TRUNC;
			return;
		}
		gcap_load_u16be(pkt, off, &p->sport);
		gcap_load_u16be(pkt, off + 2, &p->dport);
		p->l4_hlen = 8;
		p->flags |= GCAP_PF_UDP;
		break;
	case GCAP_IPPROTO_ICMP:
	case GCAP_IPPROTO_ICMPV6:
		if (gcap_avail(pkt, off) < 4u) {
			p->flags |= GCAP_PF_TRUNC;
			return;
		}
		gcap_load_u8(pkt, off, &p->icmp_type);
		gcap_load_u8(pkt, off + 1, &p->icmp_code);
		p->l4_hlen = 8;
		p->flags |= p->l4_proto == GCAP_IPPROTO_ICMP ? GCAP_PF_ICMP
							     : GCAP_PF_ICMP6;
		break;
	default:
		return;
	}
	uint32_t end = l3_end < pkt->caplen ? l3_end : pkt->caplen;
	uint32_t poff = off + p->l4_hlen;
	if (poff > pkt->caplen || poff > 0xffffu) {
		/* options cut by the capture: no payload */
		p->flags |= GCAP_PF_TRUNC;
		return;
	}
	p->payload_off = (uint16_t)poff;
	p->payload_len = poff < end ? end - poff : 0u;
}

/**
 * Parse an IP packet whose header starts at off (IPv4 or IPv6, told by the
 * version nibble). Fills the L3 and L4 fields of p (p is not cleared).
 * @return true when an IP header was found.
 */
GCAP_DEV bool gcap_parse_ip(const struct gcap_kpkt *pkt, uint32_t off,
			    struct gcap_parsed *p)
{
	uint8_t v8;
	uint16_t v16;

	if (!gcap_load_u8(pkt, off, &v8))
		return false;
	p->l3_off = (uint16_t)off;
	if ((v8 >> 4) == 4) {
		uint32_t ihl = (uint32_t)(v8 & 0x0fu) * 4u;
		if (ihl < 20u) {
			p->flags |= GCAP_PF_BADHDR;
			return false;
		}
		if (gcap_avail(pkt, off) < ihl) {
			p->flags |= GCAP_PF_TRUNC;
			return false;
		}
		p->flags |= GCAP_PF_IPV4;
		if (ihl > 20u)
			p->flags |= GCAP_PF_IPOPT;
		p->ip_version = 4;
		p->l3_hlen = (uint16_t)ihl;
		gcap_load_u16be(pkt, off + 2, &v16);
		p->l3_len = v16;
		gcap_load_u16be(pkt, off + 6, &v16);
		p->frag_off = (uint32_t)(v16 & 0x1fffu) * 8u;
		if ((v16 & 0x2000u) || p->frag_off)
			p->flags |= GCAP_PF_FRAG;
		if (p->frag_off)
			p->flags |= GCAP_PF_FRAG_LATER;
		gcap_load_u8(pkt, off + 8, &p->ttl);
		gcap_load_u8(pkt, off + 9, &p->l4_proto);
		gcap_load_bytes(pkt, off + 12, p->src, 4);
		gcap_load_bytes(pkt, off + 16, p->dst, 4);
		if (p->l3_len != 0 && p->l3_len < ihl)
			p->flags |= GCAP_PF_BADHDR;
		uint32_t l4 = off + ihl;
		if (l4 > 0xffffu)
			return true;
		p->l4_off = (uint16_t)l4;
		/* total length 0 (TSO, captured before segmentation): up to caplen */
		gcap_parse_l4(pkt, p->l3_len == 0 ? pkt->caplen :
			      off + (p->l3_len > ihl ? p->l3_len : ihl), p);
		return true;
	}
	if ((v8 >> 4) == 6) {
		if (gcap_avail(pkt, off) < 40u) {
			p->flags |= GCAP_PF_TRUNC;
			return false;
		}
		p->flags |= GCAP_PF_IPV6;
		p->ip_version = 6;
		p->l3_hlen = 40;
		gcap_load_u16be(pkt, off + 4, &v16);
		p->l3_len = 40u + v16;
		uint8_t nh;
		gcap_load_u8(pkt, off + 6, &nh);
		gcap_load_u8(pkt, off + 7, &p->ttl);
		gcap_load_bytes(pkt, off + 8, p->src, 16);
		gcap_load_bytes(pkt, off + 24, p->dst, 16);
		uint32_t cur = off + 40u;
		for (uint32_t i = 0; i < GCAP_PARSE_MAX_EXT; i++) {
			uint8_t len8;
			if (nh != GCAP_IPPROTO_HOPOPTS && nh != GCAP_IPPROTO_ROUTING
			    && nh != GCAP_IPPROTO_FRAGMENT && nh != GCAP_IPPROTO_DSTOPTS
			    && nh != GCAP_IPPROTO_AH)
				break;
			if (gcap_avail(pkt, cur) < 8u) {
				p->flags |= GCAP_PF_TRUNC;
				p->l4_proto = nh;
				return true;
			}
			uint8_t next;
			uint32_t hlen;
			gcap_load_u8(pkt, cur, &next);
			gcap_load_u8(pkt, cur + 1, &len8);
			if (nh == GCAP_IPPROTO_FRAGMENT) {
				hlen = 8;
				gcap_load_u16be(pkt, cur + 2, &v16);
				p->frag_off = (uint32_t)(v16 & 0xfff8u);
				p->flags |= GCAP_PF_FRAG;
				if (p->frag_off)
					p->flags |= GCAP_PF_FRAG_LATER;
			} else if (nh == GCAP_IPPROTO_AH) {
				hlen = ((uint32_t)len8 + 2u) * 4u;
			} else {
				hlen = ((uint32_t)len8 + 1u) * 8u;
			}
			p->flags |= GCAP_PF_IPOPT;
			p->n_ext++;
			cur += hlen;
			nh = next;
		}
		p->l4_proto = nh;
		if (cur > 0xffffu)
			return true;
		p->l4_off = (uint16_t)cur;
		/* payload length 0 (jumbogram, TSO): up to caplen */
		gcap_parse_l4(pkt, p->l3_len == 40u ? pkt->caplen : off + p->l3_len, p);
		return true;
	}
	return false;
}

/**
 * Parse an Ethernet frame: up to GCAP_PARSE_MAX_VLAN 802.1Q / 802.1ad
 * tags, then IPv4 (options) or IPv6 (extension headers: hop-by-hop,
 * routing, fragment, destination options, AH), then TCP, UDP, ICMP or
 * ICMPv6. Every byte is read through the bounded loads: a truncated packet
 * stops the walk and sets GCAP_PF_TRUNC.
 * @return p->flags (0: not even an Ethernet header).
 */
GCAP_DEV uint32_t gcap_parse(const struct gcap_kpkt *pkt,
			     struct gcap_parsed *p)
{
	uint8_t *z = (uint8_t *)p;
	for (uint32_t i = 0; i < (uint32_t)sizeof(*p); i++)
		z[i] = 0;
	if (pkt->caplen < 14u) {
		if (pkt->caplen)
			p->flags |= GCAP_PF_TRUNC;
		return p->flags;
	}
	p->flags = GCAP_PF_ETH;
	uint32_t off = 12;
	uint16_t et;
	gcap_load_u16be(pkt, off, &et);
	for (uint32_t i = 0; i < GCAP_PARSE_MAX_VLAN + 1u; i++) {
		if (et != GCAP_ETH_VLAN && et != GCAP_ETH_QINQ &&
		    et != GCAP_ETH_QINQ_OLD)
			break;
		if (i == GCAP_PARSE_MAX_VLAN) {
			p->flags |= GCAP_PF_BADHDR;
			p->ethertype = et;
			return p->flags;
		}
		uint16_t tci;
		if (!gcap_load_u16be(pkt, off + 2, &tci) ||
		    !gcap_load_u16be(pkt, off + 4, &et)) {
			p->flags |= GCAP_PF_TRUNC;
			return p->flags;
		}
		if (i < 2u)
			p->vlan[i] = tci;
		p->nvlan++;
		p->flags |= GCAP_PF_VLAN;
		off += 4;
	}
	p->ethertype = et;
	off += 2;
	if (et == GCAP_ETH_IPV4 || et == GCAP_ETH_IPV6) {
		uint8_t v;
		if (!gcap_load_u8(pkt, off, &v)) {
			p->flags |= GCAP_PF_TRUNC;
			return p->flags;
		}
		if ((et == GCAP_ETH_IPV4 && (v >> 4) == 4) ||
		    (et == GCAP_ETH_IPV6 && (v >> 4) == 6))
			gcap_parse_ip(pkt, off, p);
		else
			p->flags |= GCAP_PF_BADHDR;
	}
	return p->flags;
}

/* ------------------------------------------------------------------ */
/* Hashing and the concurrent hash table                               */
/* ------------------------------------------------------------------ */

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
#define GCAP_HASH_DECLARE(name, nslots) \
	struct { \
		uint32_t used;  /* slots in use */ \
		uint32_t full;  /* inserts refused: no free slot in reach */ \
		struct gcap_hslot slot[nslots]; \
	} name

/** Slots an insert or lookup examines before giving up. */
#define GCAP_HASH_MAX_PROBE 64u

/** Tag of a used slot. */
#define GCAP_HSLOT_USED 0x80000000u

/** Mix a 32-bit value (finaliser of a 32-bit avalanche hash). */
GCAP_DEV uint32_t gcap_mix32(uint32_t h)
{
	h ^= h >> 16;
	h *= 0x7feb352du;
	h ^= h >> 15;
	h *= 0x846ca68bu;
	h ^= h >> 16;
	return h;
}

/** @return a 32-bit hash of a key. */
GCAP_DEV uint32_t gcap_hash_key(const struct gcap_hkey *k)
{
	uint32_t h = 0x9e3779b9u;
	for (uint32_t i = 0; i < 4u; i++)
		h = gcap_mix32(h ^ k->w[i]) + 0x85ebca6bu * (i + 1u);
	return gcap_mix32(h);
}

/** @return a 64-bit FNV-1a hash of n bytes (seeded). */
GCAP_DEV uint64_t gcap_hash_bytes(const void *b, uint32_t n, uint64_t seed)
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
GCAP_DEV void gcap_hkey_set(struct gcap_hkey *k, const void *b, uint32_t n)
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
GCAP_DEV int32_t gcap_hash_insert(struct gcap_hslot *slots, uint32_t nslots,
				  uint32_t *used, uint32_t *full,
				  const struct gcap_hkey *key, bool *inserted)
{
	uint32_t h = gcap_hash_key(key);
	uint32_t tag = h | GCAP_HSLOT_USED;
	uint32_t i = h % nslots;
	uint32_t probes = nslots < GCAP_HASH_MAX_PROBE ? nslots
						       : GCAP_HASH_MAX_PROBE;
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
GCAP_DEV int32_t gcap_hash_find(const struct gcap_hslot *slots,
				uint32_t nslots, const struct gcap_hkey *key)
{
	uint32_t h = gcap_hash_key(key);
	uint32_t tag = h | GCAP_HSLOT_USED;
	uint32_t i = h % nslots;
	uint32_t probes = nslots < GCAP_HASH_MAX_PROBE ? nslots
						       : GCAP_HASH_MAX_PROBE;
	for (uint32_t n = 0; n < probes; n++) {
		const struct gcap_hslot *s = &slots[i];
		uint32_t t = gcap_atomic_load_acquire_u32(&s->tag);
		if (t == 0)
			return -1;
		while (t == 1u) {
			gcap_cpu_relax();
			t = gcap_atomic_load_acquire_u32(&s->tag);
		}
		if (t == tag && s->key[0] == key->w[0] &&
		    s->key[1] == key->w[1] && s->key[2] == key->w[2] &&
		    s->key[3] == key->w[3])
			return (int32_t)i;
		i = i + 1u == nslots ? 0u : i + 1u;
	}
	return -1;
}

/** gcap_hash_insert() on a table declared with GCAP_HASH_DECLARE. */
#define gcap_htab_insert(tab, key, inserted) \
	gcap_hash_insert((tab)->slot, (uint32_t)GCAP_ARRAY_SIZE((tab)->slot), \
			 &(tab)->used, &(tab)->full, (key), (inserted))
/** gcap_hash_find() on a table declared with GCAP_HASH_DECLARE. */
#define gcap_htab_find(tab, key) \
	gcap_hash_find((tab)->slot, (uint32_t)GCAP_ARRAY_SIZE((tab)->slot), (key))
/** Number of slots of a table declared with GCAP_HASH_DECLARE. */
#define gcap_htab_size(tab) ((uint32_t)GCAP_ARRAY_SIZE((tab)->slot))

/** @return true when slot s holds a key (host side, after the run). */
GCAP_DEV bool gcap_hslot_used(const struct gcap_hslot *s)
{
	return (s->tag & GCAP_HSLOT_USED) != 0;
}

/* ------------------------------------------------------------------ */
/* Host-only: JSON reports (gcap_json.h) and sorting                                */
/* ------------------------------------------------------------------ */

#ifndef GCAP_DEVICE

#include "gcap_json.h"

/** One row being sorted by gcap_hash_sorted(). */
struct gcap_hsort_row {
	uint64_t count;
	uint32_t key[4];
	uint32_t idx;
};

/** qsort order of gcap_hash_sorted(): count descending, then key bytes. */
static inline int gcap_hsort_cmp(const void *a, const void *b)
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
static inline uint32_t gcap_hash_sorted(const struct gcap_hslot *slots,
					uint32_t nslots, const uint64_t *counts,
					uint32_t *idx, uint32_t max)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < nslots; i++)
		n += gcap_hslot_used(&slots[i]);
	if (n == 0 || max == 0)
		return 0;
	struct gcap_hsort_row *rows =
		(struct gcap_hsort_row *)malloc(n * sizeof(*rows));
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

/* ------------------------------------------------------------------ */
/* The entry points a kernel source defines                            */
/* ------------------------------------------------------------------ */

struct gcap_kstate;

/** The entry point every kernel source defines (see below). */
GCAP_KERNEL uint32_t gcap_kernel(const struct gcap_kpkt *pkt,
				 struct gcap_kstate *st);

/*
 * Required, in the kernel source:
 *   struct gcap_kstate { ... };   (at least one member)
 *   GCAP_KERNEL uint32_t gcap_kernel(const struct gcap_kpkt *pkt,
 *                                    struct gcap_kstate *st);
 * Optional, host build only (inside #ifndef GCAP_DEVICE):
 *   int gcap_kernel_init(struct gcap_kstate *st, const char *args);
 *       st is zeroed; args is --kernel-arg (NULL when not given).
 *       Return 0, or non-zero to refuse (the loader fails with the
 *       message the hook put with gcap_kernel_error()).
 *   void gcap_kernel_report(const struct gcap_kstate *st,
 *                           struct gcap_json *j);
 *       Write members of the top-level JSON object.
 * Optional, both builds: the order key (see "Ordered kernels" below)
 *   GCAP_KERNEL uint64_t gcap_kernel_order(const struct gcap_kpkt *pkt,
 *                                          const struct gcap_kstate *st);
 */

/* ------------------------------------------------------------------ */
/* Ordered kernels                                                     */
/* ------------------------------------------------------------------ */

/*
 * On the GPU the packets of one batch run gcap_kernel() at the same time.
 * A kernel whose verdict depends only on the packet and on state that
 * other packets of the batch do not change (a match, a commutative
 * counter) gives the same verdicts in any order. A kernel whose verdict
 * depends on what earlier packets of the same flow or host did (the first
 * N packets of a flow, the SYN that crosses a threshold) needs them in
 * arrival order: it defines
 *
 *     GCAP_KERNEL uint64_t gcap_kernel_order(const struct gcap_kpkt *pkt,
 *                                            const struct gcap_kstate *st);
 *
 * which returns the packet's order key (e.g. a hash of its flow), or
 * GCAP_ORDER_NONE when the packet's verdict does not depend on order. It
 * must not change the state. The gpu executor then runs the packets of a
 * batch that share a key one after the other, in arrival order, and the
 * others in parallel: every packet's verdict and the final state are the
 * cpu executor's (which runs packets one by one), queue by queue, as long
 * as all the order-dependent state a packet touches belongs to its key.
 * The executor finds the function by name (the host build exports it) and
 * defines GCAP_KERNEL_ORDERED before this header in the GPU build; other
 * nvcc builds of a kernel source pass -DGCAP_KERNEL_ORDERED themselves and
 * run it with gcap_kernel_block_run() (bench/kernel_bench.cu does).
 * Cost: the key call, and one step of the batch per packet of the most
 * frequent key of each 512-packet chunk. Order holds within one block per
 * queue (--gpu-blocks 1, which the executor then requires).
 */

/** gcap_kernel_order(): this packet's verdict does not depend on order. */
#define GCAP_ORDER_NONE (~0ull)

#ifdef GCAP_KERNEL_ORDERED
/** The order key of an ordered kernel (defined by the kernel source). */
GCAP_KERNEL uint64_t gcap_kernel_order(const struct gcap_kpkt *pkt,
				       const struct gcap_kstate *st);
#endif

#ifdef GCAP_DEVICE
/**
 * Executor side of ordered kernels (kernel code never calls it). Every
 * thread of the block calls it with its packet's order key
 * (GCAP_ORDER_NONE for none, or for no packet); keys is blockDim.x words
 * of shared memory, max one shared word. @return the thread's round: the
 * number of lower threads of the block that hold the same key; *rounds
 * gets the number of rounds the block needs (1 + the largest round).
 * Running round r's packets between barriers, r = 0, 1, ..., runs the
 * packets of one key in thread order.
 */
GCAP_DEV uint32_t gcap_order_round(uint64_t key, uint64_t *keys, uint32_t *max,
				   uint32_t *rounds)
{
	uint32_t t = threadIdx.x, r = 0;

	if (t == 0)
		*max = 0;
	keys[t] = key;
	__syncthreads();
	if (key != GCAP_ORDER_NONE) {
		for (uint32_t j = 0; j < t; j++)
			r += keys[j] == key;
		if (r)
			atomicMax(max, r);
	}
	__syncthreads();
	*rounds = *max + 1u;
	return r;
}

/**
 * Executor side: run gcap_kernel() on the block's packets, one per thread
 * (run: this thread has a packet for it). Every thread of the block calls
 * it. An ordered kernel (GCAP_KERNEL_ORDERED defined before this header)
 * runs the packets that share an order key in thread order, one round
 * each, with keys (blockDim.x shared words) and max (one shared word);
 * otherwise all at once and keys/max are unused.
 * @return the verdict (GCAP_DROP for a thread without a packet).
 */
GCAP_DEV uint32_t gcap_kernel_block_run(bool run, const struct gcap_kpkt *pkt,
					struct gcap_kstate *st, uint64_t *keys,
					uint32_t *max)
{
#ifdef GCAP_KERNEL_ORDERED
	uint32_t v = 0, rounds;
	uint64_t key = run ? gcap_kernel_order(pkt, st) : GCAP_ORDER_NONE;
	uint32_t r = gcap_order_round(key, keys, max, &rounds);

	for (uint32_t k = 0; k < rounds; k++) {
		if (run && k == r)
			v = gcap_kernel(pkt, st);
		/* round k's stores to the state, seen by round k + 1 */
		__syncthreads();
	}
	return v;
#else
	(void)keys;
	(void)max;
	return run ? gcap_kernel(pkt, st) : 0u;
#endif
}
#endif

#ifndef GCAP_DEVICE
/** Entry point type (host build). */
typedef uint32_t (*gcap_kernel_fn)(const struct gcap_kpkt *pkt,
				   struct gcap_kstate *st);
/** Init hook type. */
typedef int (*gcap_kernel_init_fn)(struct gcap_kstate *st, const char *args);
/** Report hook type. */
typedef void (*gcap_kernel_report_fn)(const struct gcap_kstate *st,
				      struct gcap_json *j);

/** Size of the message buffer gcap_kernel_error() fills. */
#define GCAP_KERNEL_ERR_SIZE 256

/**
 * Where an init hook leaves a one-line reason for refusing. The loader
 * defines it in the shared object it builds (after the kernel source) and
 * reads it when init fails.
 */
extern char gcap_kernel_errmsg[GCAP_KERNEL_ERR_SIZE];

/** Record why init failed. @return -1, for `return gcap_kernel_error(...)`. */
__attribute__((format(printf, 1, 2), unused))
static inline int gcap_kernel_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(gcap_kernel_errmsg, GCAP_KERNEL_ERR_SIZE, fmt, ap);
	va_end(ap);
	return -1;
}

/** Optional init hook (host build only); see above. */
__attribute__((visibility("default")))
int gcap_kernel_init(struct gcap_kstate *st, const char *args);
/** Optional report hook (host build only); see above. */
__attribute__((visibility("default")))
void gcap_kernel_report(const struct gcap_kstate *st, struct gcap_json *j);
#endif

#ifdef __cplusplus
}
#endif

#endif /* GCAP_KERNEL_H */
