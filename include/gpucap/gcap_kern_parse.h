/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Part of the inline kernel API (gcap_kernel.h): the packet parser
 * (Ethernet, VLAN tags, IPv4 with options, IPv6 with extension headers,
 * TCP, UDP, ICMP, ICMPv6), every byte read through the bounded loads,
 * and its constants (layer flags, TCP flags, protocol numbers,
 * ethertypes). Kernel sources include <gpucap/gcap_kernel.h>, not this
 * part.
 */
#ifndef GCAP_KERN_PARSE_H
#define GCAP_KERN_PARSE_H

#include "gcap_kern_base.h"
#include "gcap_kern_pkt.h"

#ifdef __cplusplus
extern "C" {
#endif

/** struct gcap_parsed flags: which layers were found. */
#define GCAP_PF_ETH 0x0001u        /**< an Ethernet header (14 bytes) */
#define GCAP_PF_VLAN 0x0002u       /**< at least one 802.1Q/802.1ad tag */
#define GCAP_PF_IPV4 0x0004u       /**< an IPv4 header, options included */
#define GCAP_PF_IPV6 0x0008u       /**< an IPv6 header (+ extension headers) */
#define GCAP_PF_TCP 0x0010u        /**< a TCP header, options included */
#define GCAP_PF_UDP 0x0020u        /**< a UDP header */
#define GCAP_PF_ICMP 0x0040u       /**< an ICMP header (type, code) */
#define GCAP_PF_ICMP6 0x0080u      /**< an ICMPv6 header (type, code) */
#define GCAP_PF_FRAG 0x0100u       /**< an IP fragment (first or later) */
#define GCAP_PF_FRAG_LATER 0x0200u /**< a later fragment: no L4 header */
#define GCAP_PF_IPOPT 0x0400u      /**< IPv4 options or IPv6 ext headers */
#define GCAP_PF_TRUNC \
	0x0800u                /**< a header ended past caplen: parsing
				      stopped at the last complete layer */
#define GCAP_PF_BADHDR 0x1000u /**< a malformed length field */

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
#define GCAP_IPPROTO_HOPOPTS 0u
#define GCAP_IPPROTO_ICMP 1u
#define GCAP_IPPROTO_TCP 6u
#define GCAP_IPPROTO_UDP 17u
#define GCAP_IPPROTO_ROUTING 43u
#define GCAP_IPPROTO_FRAGMENT 44u
#define GCAP_IPPROTO_AH 51u
#define GCAP_IPPROTO_ICMPV6 58u
#define GCAP_IPPROTO_DSTOPTS 60u

/** Ethertypes the parser knows. */
#define GCAP_ETH_IPV4 0x0800u
#define GCAP_ETH_IPV6 0x86ddu
#define GCAP_ETH_VLAN 0x8100u
#define GCAP_ETH_QINQ 0x88a8u
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
	uint32_t flags;     /**< GCAP_PF_* */
	uint16_t l2_off;    /**< Ethernet header (0) */
	uint16_t ethertype; /**< after the VLAN tags */
	uint16_t vlan[2];   /**< TCI of the outer and inner tag */
	uint8_t nvlan;      /**< tags seen (up to GCAP_PARSE_MAX_VLAN) */
	uint8_t ip_version; /**< 4, 6 or 0 */
	uint8_t l4_proto;   /**< IPv4 protocol or the last IPv6 next header */
	uint8_t ttl;        /**< IPv4 TTL / IPv6 hop limit */
	uint8_t tcp_flags;  /**< GCAP_TCP_* */
	uint8_t icmp_type;  /**< ICMP / ICMPv6 type */
	uint8_t icmp_code;  /**< ICMP / ICMPv6 code */
	uint8_t n_ext;      /**< IPv6 extension headers walked */
	uint16_t l3_off;    /**< IP header */
	uint16_t l3_hlen;   /**< IPv4 header with options (IHL*4); 40 for IPv6 */
	uint16_t l4_off;    /**< TCP/UDP/ICMP header (after ext headers) */
	uint16_t l4_hlen;   /**< TCP data offset*4, 8 for UDP and ICMP */
	uint32_t l3_len;    /**< IP datagram length from its header */
	uint16_t sport;     /**< TCP/UDP source port */
	uint16_t dport;     /**< TCP/UDP destination port */
	uint32_t frag_off;  /**< fragment offset in bytes */
	/** first byte after the L4 header (0 when that header is cut by the
	 *  capture); payload_off + payload_len <= caplen always */
	uint16_t payload_off;
	uint16_t reserved;
	/** captured payload bytes: up to the IP datagram's end, within caplen */
	uint32_t payload_len;
	uint32_t tcp_seq; /**< TCP sequence number */
	uint32_t tcp_ack; /**< TCP acknowledgement number */
	/** source address: IPv4 in the first 4 bytes (network order), rest 0 */
	uint8_t src[16];
	uint8_t dst[16]; /**< destination address, as src */
};

/** Walk the L4 header at p->l4_off (p->l4_proto set). */
GCAP_DEV void
gcap_parse_l4(const struct gcap_kpkt *pkt, uint32_t l3_end, struct gcap_parsed *p)
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
		p->flags |=
			p->l4_proto == GCAP_IPPROTO_ICMP ? GCAP_PF_ICMP : GCAP_PF_ICMP6;
		break;
	default: return;
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
GCAP_DEV bool
gcap_parse_ip(const struct gcap_kpkt *pkt, uint32_t off, struct gcap_parsed *p)
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
		gcap_parse_l4(pkt,
			      p->l3_len == 0 ? pkt->caplen :
					       off + (p->l3_len > ihl ? p->l3_len : ihl),
			      p);
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
			if (nh != GCAP_IPPROTO_HOPOPTS && nh != GCAP_IPPROTO_ROUTING &&
			    nh != GCAP_IPPROTO_FRAGMENT && nh != GCAP_IPPROTO_DSTOPTS &&
			    nh != GCAP_IPPROTO_AH)
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
GCAP_DEV uint32_t
gcap_parse(const struct gcap_kpkt *pkt, struct gcap_parsed *p)
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
		if (et != GCAP_ETH_VLAN && et != GCAP_ETH_QINQ && et != GCAP_ETH_QINQ_OLD)
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

#ifdef __cplusplus
}
#endif

#endif /* GCAP_KERN_PARSE_H */
