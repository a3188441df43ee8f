/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A plain pcapng file's blocks found ahead of the reader by several
 * threads (capfile_find.c), as test_capfile_find.c checks pcap's: the
 * reader hands out the same records, in the same order, with the same
 * fields and the same end as without finders. The layouts are pcapng's
 * own hard cases: blocks that are not packets (statistics, custom) inside
 * a list, packets with options and padding, two interfaces with their own
 * time units, interfaces added mid-chunk (the finders' copy of the
 * reader's state is frozen before them, and the reader's table is
 * reallocated while they run), payloads of blocks that are not blocks, a
 * block whose trailer does not repeat its length, a cut end, lists cut
 * short by tiny packets, blocks larger than a chunk, a new section and an
 * interface libpcap refuses.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "find_common.h"

struct nggen {
	bool swap;
	/* a statistics or custom block after every so many packets (0: none) */
	unsigned skip_every;
	/* seven more interfaces' blocks half a megabyte past this megabyte
	 * (0: none), their packets after them */
	size_t idb_at_mb;
	/* every payload a chain of packet blocks that are not blocks */
	bool decoys;
	/* options after the data of every third packet */
	bool opts;
	/* packets of 0-3 bytes: more blocks in a megabyte than a list holds */
	bool tiny;
	/* a custom block of 1.5 MB (larger than a chunk) in each 4 MB */
	bool big;
	/* half a megabyte past this megabyte (0: none): a new section, or an
	 * interface of another snapshot length (libpcap reads on from it) */
	size_t shb_at_mb, badidb_at_mb;
};

static size_t
ng_block(FILE *f, uint32_t type, const uint8_t *body, size_t blen, bool swap)
{
	uint8_t h[8], pad[4] = { 0 };
	size_t padded = (blen + 3u) & ~(size_t)3u, len = 12 + padded;

	put32(h, type, swap);
	put32(h + 4, (uint32_t)len, swap);
	ck_assert_uint_eq(fwrite(h, 1, 8, f), 8);
	ck_assert_uint_eq(fwrite(body, 1, blen, f), blen);
	ck_assert_uint_eq(fwrite(pad, 1, padded - blen, f), padded - blen);
	ck_assert_uint_eq(fwrite(h + 4, 1, 4, f), 4);
	return len;
}

/* An interface block: Ethernet, snapshot snap; if_tsresol res (0: the
 * default microseconds) and if_tsoffset off. */
static size_t
ng_idb(FILE *f, bool swap, uint32_t snap, uint8_t res, uint64_t off)
{
	uint8_t b[40] = { 0 };
	size_t n = 8;

	put16(b, 1, swap);
	put32(b + 4, snap, swap);
	if (res != 0) {
		put16(b + n, 9, swap);
		put16(b + n + 2, 1, swap);
		b[n + 4] = res;
		n += 8;
	}
	if (off != 0) {
		put16(b + n, 14, swap);
		put16(b + n + 2, 8, swap);
		if (swap)
			off = __builtin_bswap64(off);
		memcpy(b + n + 4, &off, 8);
		n += 12;
	}
	return ng_block(f, 1, b, n + 4, swap); /* and opt_endofopt */
}

static size_t
ng_shb(FILE *f, bool swap)
{
	uint8_t b[16];

	memset(b, 0, sizeof(b));
	put32(b, 0x1a2b3c4du, swap);
	put16(b + 4, 1, swap);  /* version 1.0 */
	memset(b + 8, 0xff, 8); /* section length unknown */
	return ng_block(f, 0x0a0d0d0au, b, 16, swap);
}

/* Is half a megabyte past megabyte mb (0: never) reached at total? */
static bool
ng_mid(size_t mb, size_t total)
{
	return mb != 0 && total >= (mb << 20) + (1u << 19);
}

/* Write about mb megabytes of pcapng blocks; returns the packets. */
static unsigned
write_pcapng(const char *path, const struct nggen *g, size_t mb)
{
	FILE *f = fopen(path, "wb");
	uint8_t *b = malloc(1600u << 10);
	size_t total = 0, big_at = 2u << 20;
	unsigned i, nifs = 2;
	bool shb = false, badidb = false;

	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(b);
	total += ng_shb(f, g->swap);
	total += ng_idb(f, g->swap, SNAP, 9, 0);
	total += ng_idb(f, g->swap, SNAP, 0, 100);
	for (i = 0; total < mb << 20; i++) {
		uint32_t cl = g->tiny ? mix32(i) % 4u : cl_mixed(i),
			 ifid = mix32(i) % nifs;
		uint64_t t = (1600000000ull + i / 64u) *
				     (ifid == 0 ? 1000000000ull : 1000000ull) +
			     mix32(i) % 1000000u;
		size_t n;

		if (nifs == 2 && ng_mid(g->idb_at_mb, total)) {
			/* the reader's table grows (reallocated) while the
			 * finders run */
			for (; nifs < 9; nifs++)
				total += ng_idb(f, g->swap, SNAP, nifs % 2 ? 3 : 0, 0);
		}
		if (!shb && ng_mid(g->shb_at_mb, total)) {
			total += ng_shb(f, g->swap);
			total += ng_idb(f, g->swap, SNAP, 9, 0);
			total += ng_idb(f, g->swap, SNAP, 0, 100);
			shb = true;
		}
		if (!badidb && ng_mid(g->badidb_at_mb, total)) {
			total += ng_idb(f, g->swap, 65535, 0, 0);
			badidb = true;
		}
		if (g->skip_every != 0 && i % g->skip_every == g->skip_every - 1) {
			/* statistics (interface 0, a time) or a custom block */
			memset(b, 0, 16);
			put32(b + 4, 1600000000u, g->swap);
			total += ng_block(f, i % 2 ? 5u : 0x40000badu, b, 12 + i % 3 * 4,
					  g->swap);
		}
		if (g->big && total >= big_at) {
			memset(b, 0x5c, 1536u << 10);
			total += ng_block(f, 0x00000badu, b, 1536u << 10, g->swap);
			big_at += 4u << 20;
		}
		put32(b, ifid, g->swap);
		put32(b + 4, (uint32_t)(t >> 32), g->swap);
		put32(b + 8, (uint32_t)t, g->swap);
		put32(b + 12, cl, g->swap);
		put32(b + 16, i % 5u == 0 ? cl + 100u : cl, g->swap);
		for (uint32_t k = 0; k < cl; k++) {
			/* decoys: packet blocks of 40 bytes, each holding 8 */
			uint32_t at = k % 40u;
			static const uint32_t fake[] = {
				6, 40, 0, 0, 5000, 8, 8, 0, 0, 40
			};

			b[20 + k] = g->decoys ?
					    (uint8_t)(fake[at / 4u] >> (8 * (at % 4u))) :
					    (uint8_t)mix32(i * 2654435761u + k);
		}
		n = 20 + ((cl + 3u) & ~3u);
		memset(b + 20 + cl, 0, n - 20 - cl);
		if (g->opts && i % 3 == 0) {
			/* opt_comment of 1-7 bytes, then opt_endofopt */
			uint16_t ol = (uint16_t)(1 + i % 7);

			put16(b + n, 1, g->swap);
			put16(b + n + 2, ol, g->swap);
			memset(b + n + 4, 'c', 8);
			n += 4 + ((ol + 3u) & ~3u);
			memset(b + n, 0, 4);
			n += 4;
		}
		total += ng_block(f, 6, b, n, g->swap);
	}
	fclose(f);
	free(b);
	return i;
}

START_TEST(test_ng_mixed)
{
	struct nggen g = { .skip_every = 97, .opts = true };
	char path[128];
	struct got w;

	path_of(path, sizeof(path), "mixed.pcapng");
	write_pcapng(path, &g, 14);
	w = same_records("pcapng", path);
	ck_assert_msg(w.joined >= 10, "pcapng: %llu lists taken whole of %llu",
		      (unsigned long long)w.joined, (unsigned long long)w.listed);
	g.swap = true;
	path_of(path, sizeof(path), "swapped.pcapng");
	write_pcapng(path, &g, 9);
	w = same_records("pcapng swapped", path);
	ck_assert_msg(w.joined >= 6, "pcapng swapped: %llu lists taken whole",
		      (unsigned long long)w.joined);
}
END_TEST

/* Interfaces added mid-file (mid-chunk, and enough that the reader's
 * table is reallocated): the finders, frozen before them, end their lists
 * at them and at their packets; the reader finds those itself. */
START_TEST(test_ng_new_interface)
{
	struct nggen g = { .idb_at_mb = 5 };
	char path[128];
	struct got w;

	path_of(path, sizeof(path), "idb.pcapng");
	write_pcapng(path, &g, 10);
	w = same_records("pcapng new interface", path);
	ck_assert_msg(w.joined >= 3 && w.stepped > 3000,
		      "pcapng new interface: %llu taken whole, %llu stepped",
		      (unsigned long long)w.joined, (unsigned long long)w.stepped);
}
END_TEST

START_TEST(test_ng_decoys_damage_cut)
{
	struct nggen d = { .decoys = true }, g = { .skip_every = 50 };
	char path[128];
	uint32_t bad = 12;
	FILE *f;
	long len;

	path_of(path, sizeof(path), "decoys.pcapng");
	write_pcapng(path, &d, 10);
	same_records("pcapng decoys", path);
	/* a block's trailer that does not repeat its length in the seventh
	 * megabyte: libpcap ends the file there, as without finders */
	path_of(path, sizeof(path), "damaged.pcapng");
	write_pcapng(path, &g, 10);
	f = fopen(path, "r+b");
	ck_assert_ptr_nonnull(f);
	for (long pos = 0;;) {
		uint32_t h[2];

		ck_assert_int_eq(fseek(f, pos, SEEK_SET), 0);
		ck_assert_uint_eq(fread(h, 4, 2, f), 2);
		if (pos >= 7l << 20 && h[0] == 6) {
			ck_assert_int_eq(fseek(f, pos + (long)h[1] - 4, SEEK_SET), 0);
			ck_assert_uint_eq(fwrite(&bad, 4, 1, f), 1);
			break;
		}
		pos += (long)h[1];
	}
	fclose(f);
	same_records("pcapng damaged", path);
	/* cut inside a block */
	path_of(path, sizeof(path), "cut.pcapng");
	write_pcapng(path, &g, 6);
	f = fopen(path, "rb");
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fclose(f);
	ck_assert_int_eq(truncate(path, len - 301), 0);
	same_records("pcapng cut", path);
}
END_TEST

/* Lists cut short by tiny packets; blocks larger than a chunk; a new
 * section and an interface libpcap refuses (libpcap reads on from them). */
START_TEST(test_ng_tiny_big_sections)
{
	struct nggen t = { .tiny = true }, b = { .big = true, .skip_every = 31 };
	struct nggen sh = { .shb_at_mb = 6 }, bad = { .badidb_at_mb = 6 };
	char path[128];
	struct got w;

	path_of(path, sizeof(path), "tiny.pcapng");
	write_pcapng(path, &t, 6);
	w = same_records("pcapng tiny", path);
	ck_assert_msg(w.joined > 0 && w.stepped > 0,
		      "pcapng tiny: %llu taken whole, %llu stepped",
		      (unsigned long long)w.joined, (unsigned long long)w.stepped);
	path_of(path, sizeof(path), "big.pcapng");
	write_pcapng(path, &b, 14);
	same_records("pcapng big blocks", path);
	path_of(path, sizeof(path), "sections.pcapng");
	write_pcapng(path, &sh, 10);
	w = same_records("pcapng sections", path);
	ck_assert_msg(w.joined >= 3, "pcapng sections: %llu taken whole",
		      (unsigned long long)w.joined);
	path_of(path, sizeof(path), "badidb.pcapng");
	write_pcapng(path, &bad, 10);
	same_records("pcapng refused interface", path);
}
END_TEST

int
main(void)
{
	const TTest *const tests[] = {
		test_ng_mixed,
		test_ng_new_interface,
		test_ng_decoys_damage_cut,
		test_ng_tiny_big_sections,
	};

	return find_main("capfile_find_ng", tests, sizeof(tests) / sizeof(tests[0]));
}
