/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the inline kernel packet helpers of gcap_kernel.h,
 * host build: the bounded loads, gcap_parse() and the hashes and hash
 * table a kernel keeps in its state.
 *
 * Input: [extra wire bytes, 2 bytes LE][load offset seed, 4 bytes LE]
 * [packet bytes]. The packet is copied into a malloc'd buffer of exactly
 * caplen bytes, so that AddressSanitizer reports any read past caplen.
 * Checked (abort() on violation):
 * - every gcap_load_*() succeeds exactly when its bytes lie within
 *   caplen (offsets near 0, near caplen and near 2^32 tried), returns the
 *   bytes in the order it promises, and leaves 0 in *out on failure;
 * - gcap_ptr()/gcap_byte()/gcap_avail() agree with the same bounds;
 * - gcap_parse(): every offset it reports lies within caplen, the payload
 *   ends within caplen and the datagram, flags are consistent with the
 *   fields, and a second parse gives the same result;
 * - the hash table: every key inserted is found again at the slot its
 *   insert returned, used + refused inserts add up, and a key never
 *   inserted is not found.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpucap/gcap_kernel.h"

#define NSLOTS 13u /* small and not a power of two: probing wraps */

static void
bad(const char *what, uint32_t off)
{
	fprintf(stderr, "fuzz_kpkt: %s (offset %u)\n", what, off);
	abort();
}

static int
fits(uint32_t caplen, uint32_t off, uint32_t n)
{
	return (uint64_t)off + n <= caplen;
}

static void
check_loads(const struct gcap_kpkt *k, const uint8_t *ref, uint32_t off)
{
	uint32_t c = k->caplen, v32;
	uint16_t v16;
	uint8_t v8, buf[24];
	const uint8_t *p;

	if (gcap_load_u8(k, off, &v8) != fits(c, off, 1) ||
	    (fits(c, off, 1) ? v8 != ref[off] : v8 != 0))
		bad("gcap_load_u8", off);
	if (gcap_load_u16be(k, off, &v16) != fits(c, off, 2) ||
	    (fits(c, off, 2) ? v16 != (uint16_t)(ref[off] << 8 | ref[off + 1]) :
			       v16 != 0))
		bad("gcap_load_u16be", off);
	if (gcap_load_u16le(k, off, &v16) != fits(c, off, 2) ||
	    (fits(c, off, 2) ? v16 != (uint16_t)(ref[off] | ref[off + 1] << 8) :
			       v16 != 0))
		bad("gcap_load_u16le", off);
	if (gcap_load_u32be(k, off, &v32) != fits(c, off, 4) ||
	    (fits(c, off, 4) ?
		     v32 != ((uint32_t)ref[off] << 24 | (uint32_t)ref[off + 1] << 16 |
			     (uint32_t)ref[off + 2] << 8 | ref[off + 3]) :
		     v32 != 0))
		bad("gcap_load_u32be", off);
	if (gcap_load_u32le(k, off, &v32) != fits(c, off, 4) ||
	    (fits(c, off, 4) ?
		     v32 != ((uint32_t)ref[off + 3] << 24 | (uint32_t)ref[off + 2] << 16 |
			     (uint32_t)ref[off + 1] << 8 | ref[off]) :
		     v32 != 0))
		bad("gcap_load_u32le", off);
	for (uint32_t n = 0; n <= sizeof(buf); n += 5) {
		memset(buf, 0xa5, sizeof(buf));
		if (gcap_load_bytes(k, off, buf, n) != fits(c, off, n))
			bad("gcap_load_bytes", off);
		if (fits(c, off, n) && n > 0 && memcmp(buf, ref + off, n) != 0)
			bad("gcap_load_bytes content", off);
		p = gcap_ptr(k, off, n);
		if ((p != NULL) != fits(c, off, n) || (p != NULL && p != k->data + off))
			bad("gcap_ptr", off);
		if (p != NULL && n > 0 &&
		    (p[0] != ref[off] || p[n - 1] != ref[off + n - 1]))
			bad("gcap_ptr content", off);
	}
	if (gcap_byte(k, off) != (off < c ? ref[off] : 0))
		bad("gcap_byte", off);
	if (gcap_avail(k, off) != (off < c ? c - off : 0))
		bad("gcap_avail", off);
}

static void
check_parse(const struct gcap_kpkt *k)
{
	struct gcap_parsed p, q;
	uint32_t c = k->caplen, f;

	f = gcap_parse(k, &p);
	if (f != p.flags)
		bad("gcap_parse return", 0);
	if (gcap_parse(k, &q) != f || memcmp(&p, &q, sizeof(p)) != 0)
		bad("gcap_parse not deterministic", 0);
	if (c < 14) {
		if (f != (c ? GCAP_PF_TRUNC : 0u))
			bad("short packet flags", c);
		return;
	}
	if (!(f & GCAP_PF_ETH) || p.nvlan > GCAP_PARSE_MAX_VLAN ||
	    (p.nvlan > 0) != ((f & GCAP_PF_VLAN) != 0))
		bad("ethernet/vlan", p.nvlan);
	if ((f & GCAP_PF_IPV4) && (f & GCAP_PF_IPV6))
		bad("both IPv4 and IPv6", 0);
	if (f & (GCAP_PF_IPV4 | GCAP_PF_IPV6)) {
		if (!fits(c, p.l3_off, p.l3_hlen) || p.l3_off < 14u)
			bad("l3 header past caplen", p.l3_off);
		if (p.ip_version != ((f & GCAP_PF_IPV4) ? 4 : 6))
			bad("ip_version", p.ip_version);
	} else if (f & (GCAP_PF_TCP | GCAP_PF_UDP | GCAP_PF_ICMP | GCAP_PF_ICMP6)) {
		bad("L4 without L3", 0);
	}
	if (f & (GCAP_PF_TCP | GCAP_PF_UDP | GCAP_PF_ICMP | GCAP_PF_ICMP6)) {
		uint32_t min = (f & GCAP_PF_TCP) ? 20u : (f & GCAP_PF_UDP) ? 8u : 4u;

		if (!fits(c, p.l4_off, min) || p.l4_off < p.l3_off + p.l3_hlen)
			bad("l4 header past caplen", p.l4_off);
	}
	if (p.payload_off != 0) {
		if (p.payload_off < p.l4_off + p.l4_hlen || p.payload_off > c ||
		    !fits(c, p.payload_off, p.payload_len))
			bad("payload past caplen", p.payload_off);
	} else if (p.payload_len != 0) {
		bad("payload length without offset", p.payload_len);
	}
	if ((f & GCAP_PF_FRAG_LATER) && !(f & GCAP_PF_FRAG))
		bad("later fragment not a fragment", 0);
	if ((f & GCAP_PF_FRAG_LATER) &&
	    (f & (GCAP_PF_TCP | GCAP_PF_UDP | GCAP_PF_ICMP | GCAP_PF_ICMP6)))
		bad("L4 header of a later fragment", 0);
}

static void
check_hash(const struct gcap_kpkt *k)
{
	static GCAP_HASH_DECLARE(tab, NSLOTS);
	struct gcap_hkey keys[40];
	int32_t slot[40];
	uint32_t n = 0, ins = 0, refused = 0;

	memset(&tab, 0, sizeof(tab));
	/* keys: 16-byte windows of the packet (short ones zero-padded) */
	for (uint32_t off = 0; n < 40u && off < k->caplen; off += 3, n++) {
		uint32_t len = gcap_avail(k, off) < 16u ? gcap_avail(k, off) : 16u;
		bool inserted;

		gcap_hkey_set(&keys[n], k->data + off, len);
		slot[n] = gcap_htab_insert(&tab, &keys[n], &inserted);
		if (slot[n] < 0) {
			refused++;
			if (inserted)
				bad("refused insert says inserted", off);
			continue;
		}
		if ((uint32_t)slot[n] >= NSLOTS || !gcap_hslot_used(&tab.slot[slot[n]]) ||
		    memcmp(tab.slot[slot[n]].key, keys[n].w, 16) != 0)
			bad("insert slot", off);
		ins += inserted;
		/* inserting it again finds it */
		if (gcap_htab_insert(&tab, &keys[n], &inserted) != slot[n] || inserted)
			bad("second insert", off);
	}
	if (tab.used != ins || tab.full != refused || tab.used > NSLOTS)
		bad("table counters", tab.used);
	for (uint32_t i = 0; i < n; i++)
		if (slot[i] >= 0 && gcap_htab_find(&tab, &keys[i]) != slot[i])
			bad("find after insert", i);
	/* a key no window can be (windows are at most caplen bytes, and
	 * this one differs from every inserted key in its last word) */
	struct gcap_hkey none = { { 0, 0, 0, 0 } };

	for (uint32_t i = 0; i < n; i++)
		none.w[3] ^= keys[i].w[3] + 1u;
	int missing = 1;

	for (uint32_t i = 0; i < n; i++)
		if (memcmp(&keys[i], &none, sizeof(none)) == 0)
			missing = 0;
	if (missing && gcap_htab_find(&tab, &none) >= 0)
		bad("find of a key never inserted", 0);
	(void)gcap_hash_bytes(k->data, k->caplen, k->wirelen);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gcap_kpkt k = { 0 };
	uint32_t seed, c;
	uint8_t *buf;

	if (size < 6 || size - 6 > 65535)
		return 0;
	c = (uint32_t)(size - 6);
	seed = (uint32_t)data[2] | (uint32_t)data[3] << 8 | (uint32_t)data[4] << 16 |
	       (uint32_t)data[5] << 24;
	/* exactly caplen bytes: ASan sees any read past them */
	buf = malloc(c ? c : 1);
	if (buf == NULL)
		abort();
	memcpy(buf, data + 6, c);
	k.data = c ? buf : buf + 1; /* caplen 0: nothing may be read */
	k.caplen = c;
	k.wirelen = c + ((uint32_t)data[0] | (uint32_t)data[1] << 8);

	/* offsets: every byte of a short packet, the edges, the far end */
	for (uint32_t off = 0; off < c + 5 && off < 64; off++)
		check_loads(&k, data + 6, off);
	for (uint32_t d = 0; d < 6; d++) {
		check_loads(&k, data + 6, c > d ? c - d : 0);
		check_loads(&k, data + 6, c + d);
		check_loads(&k, data + 6, UINT32_MAX - d);
	}
	check_loads(&k, data + 6, seed);
	check_loads(&k, data + 6, c ? seed % c : 0);
	check_parse(&k);
	check_hash(&k);
	free(buf);
	return 0;
}
