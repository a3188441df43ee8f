/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A plain pcap file's records found ahead of the reader by several
 * threads (capfile_find.c): whatever the file holds, the reader hands out
 * the same records, in the same order, with the same fields and the same
 * end (rc and message) as without finders, in batches (gcap_capfile_fill) and in
 * spans (gcap_capfile_fill_span). The layouts are the finders' hard
 * cases: payloads full of record headers that are not records, a run of
 * headers four bytes off the real ones that walks in step with them,
 * records too small for a chunk's list, records larger than a chunk,
 * damage and a cut end, both byte orders and nanosecond times. Where the
 * guesses can be right, the reader must have taken lists (else the
 * finders did nothing and the test proves nothing).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpucap/gcap_capfile.h"

#include "find_common.h"

/* ---- writing ---- */

struct gen {
	bool swap, nano;
	uint32_t snap;
	/* record i's lengths and its payload's byte k */
	uint32_t (*caplen)(unsigned i);
	uint32_t (*wirelen)(unsigned i, uint32_t caplen);
	uint8_t (*byte)(unsigned i, uint32_t k, uint32_t caplen);
	/* a record starts two bytes before each megabyte (where the finders'
	 * chunks begin) */
	bool align;
};

/* Write about mb megabytes of records; returns their count. */
static unsigned
write_pcap(const char *path, const struct gen *g, size_t mb)
{
	FILE *f = fopen(path, "wb");
	uint8_t h[24] = { 0 }, *rec = malloc(16 + SNAP + 16);
	size_t total = 24;
	unsigned i;

	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(rec);
	put32(h, g->nano ? 0xa1b23c4du : 0xa1b2c3d4u, g->swap);
	h[4] = g->swap ? 0 : 2; /* version 2.4, in the file's order */
	h[5] = g->swap ? 2 : 0;
	h[6] = g->swap ? 0 : 4;
	h[7] = g->swap ? 4 : 0;
	put32(h + 16, g->snap, g->swap);
	put32(h + 20, 1, g->swap); /* DLT_EN10MB */
	ck_assert_uint_eq(fwrite(h, 1, 24, f), 24);
	for (i = 0; total < mb << 20; i++) {
		uint32_t cl = g->caplen(i);
		/* the next chunk's start, counted from the first record */
		size_t b = ((total - 24) >> 20 << 20) + (1u << 20) + 24;

		if (g->align && total + 16 + cl + 16 + 200 > b - 2 &&
		    total + 16 + 200 < b - 2)
			cl = (uint32_t)(b - 2 - total - 16);

		put32(rec, 1600000000u + i / 64u, g->swap);
		put32(rec + 4, mix32(i) % (g->nano ? 1000000000u : 1000000u), g->swap);
		put32(rec + 8, cl, g->swap);
		put32(rec + 12, g->wirelen(i, cl), g->swap);
		for (uint32_t k = 0; k < cl; k++)
			rec[16 + k] = g->byte(i, k, cl);
		ck_assert_uint_eq(fwrite(rec, 1, 16 + cl, f), 16 + cl);
		total += 16 + cl;
	}
	fclose(f);
	free(rec);
	return i;
}

static uint32_t
wl_same(unsigned i, uint32_t cl)
{
	return cl > 0 ? cl : 60u;
}

static uint32_t
wl_more(unsigned i, uint32_t cl)
{
	return i % 5u == 0 ? cl + 100u : (cl > 0 ? cl : 60u);
}

static uint8_t
b_random(unsigned i, uint32_t k, uint32_t cl)
{
	return (uint8_t)mix32(i * 2654435761u + k);
}

/* every payload a run of record headers that are not records: 16-byte
 * headers of plausible lengths pointing at the next decoy */
static uint8_t
b_decoys(unsigned i, uint32_t k, uint32_t cl)
{
	uint32_t at = k % 40u, v;

	switch (at / 4u) {
	case 0: v = 1600000000u; break;
	case 1: v = 5000u; break;
	case 2: v = 24u; break; /* caplen: the next decoy 40 bytes on */
	case 3: v = 60u; break;
	default: v = 0x01020304u * (i + k); break;
	}
	return (uint8_t)(v >> (8 * (at % 4u)));
}

/* caplen = wirelen, and a payload whose first bytes read as 65,536: the
 * headers four bytes on (time fraction, caplen, wirelen, payload) pass as
 * records and walk in step with the real ones */
static uint8_t
b_shifted(unsigned i, uint32_t k, uint32_t cl)
{
	if (k < 4)
		return k == 2 ? 1 : 0;
	return (uint8_t)mix32(i + k * 31u);
}

static uint32_t
cl_shifted(unsigned i)
{
	return 40u + mix32(i) % 400u;
}

/* records too small for a chunk's list (more than 16,384 in a megabyte) */
static uint32_t
cl_tiny(unsigned i)
{
	return mix32(i) % 8u;
}

/* now and then a record larger than a chunk */
static uint32_t
cl_jumbo(unsigned i)
{
	return i % 97u == 3u ? 200000u + mix32(i) % 60000u : mix32(i) % 1500u;
}

START_TEST(test_mixed)
{
	struct gen g = {
		.snap = SNAP, .caplen = cl_mixed, .wirelen = wl_more, .byte = b_random
	};
	char path[128];
	struct got w;

	path_of(path, sizeof(path), "mixed.pcap");
	write_pcap(path, &g, 14);
	w = same_records("mixed", path);
	/* the first dozen lists were out before the reader began */
	ck_assert_msg(w.joined >= 10, "mixed: %llu lists taken whole of %llu",
		      (unsigned long long)w.joined, (unsigned long long)w.listed);
}
END_TEST

START_TEST(test_swapped_nano)
{
	struct gen g = { .swap = true,
			 .nano = true,
			 .snap = SNAP,
			 .caplen = cl_mixed,
			 .wirelen = wl_same,
			 .byte = b_random };
	char path[128];
	struct got w;

	path_of(path, sizeof(path), "swapped.pcap");
	write_pcap(path, &g, 9);
	w = same_records("swapped nano", path);
	ck_assert_msg(w.joined >= 6, "swapped: %llu lists taken whole",
		      (unsigned long long)w.joined);
}
END_TEST

START_TEST(test_decoys)
{
	struct gen g = {
		.snap = SNAP, .caplen = cl_mixed, .wirelen = wl_same, .byte = b_decoys
	};
	char path[128];

	path_of(path, sizeof(path), "decoys.pcap");
	write_pcap(path, &g, 10);
	same_records("decoys", path);
}
END_TEST

START_TEST(test_shifted)
{
	struct gen g = { .snap = SNAP,
			 .caplen = cl_shifted,
			 .wirelen = wl_same,
			 .byte = b_shifted,
			 .align = true };
	char path[128];
	struct got w;

	path_of(path, sizeof(path), "shifted.pcap");
	write_pcap(path, &g, 8);
	w = same_records("shifted", path);
	/* every chunk's guess but the first was four bytes off: no list but
	 * the first was taken */
	ck_assert_msg(w.joined == 1 && w.listed >= 6 && w.stepped > 20000,
		      "shifted: %llu lists taken whole of %llu, %llu stepped",
		      (unsigned long long)w.joined, (unsigned long long)w.listed,
		      (unsigned long long)w.stepped);
}
END_TEST

START_TEST(test_tiny_and_jumbo)
{
	struct gen t = {
		.snap = SNAP, .caplen = cl_tiny, .wirelen = wl_same, .byte = b_random
	};
	struct gen j = {
		.snap = SNAP, .caplen = cl_jumbo, .wirelen = wl_same, .byte = b_random
	};
	char path[128];
	struct got w;

	path_of(path, sizeof(path), "tiny.pcap");
	write_pcap(path, &t, 6);
	w = same_records("tiny", path);
	/* lists cut short: the reader found the rest itself */
	ck_assert_msg(w.joined > 0 && w.stepped > 0,
		      "tiny: %llu taken whole, %llu stepped",
		      (unsigned long long)w.joined, (unsigned long long)w.stepped);
	path_of(path, sizeof(path), "jumbo.pcap");
	write_pcap(path, &j, 30);
	same_records("jumbo", path);
}
END_TEST

/* Overwrite the caplen of the record nearest after off with v. */
static void
damage_at(const char *path, size_t off, uint32_t v)
{
	FILE *f = fopen(path, "r+b");
	uint8_t h[16];
	size_t pos = 24;

	ck_assert_ptr_nonnull(f);
	for (;;) {
		uint32_t cl;

		ck_assert_int_eq(fseek(f, (long)pos, SEEK_SET), 0);
		ck_assert_uint_eq(fread(h, 1, 16, f), 16);
		memcpy(&cl, h + 8, 4);
		if (pos >= off)
			break;
		pos += 16 + cl;
	}
	ck_assert_int_eq(fseek(f, (long)pos + 8, SEEK_SET), 0);
	ck_assert_uint_eq(fwrite(&v, 1, 4, f), 4);
	fclose(f);
}

START_TEST(test_damage_and_cut)
{
	struct gen g = {
		.snap = 2000u, .caplen = cl_mixed, .wirelen = wl_more, .byte = b_random
	};
	char path[128];
	struct got w;
	FILE *f;
	long len;

	/* a record longer than the snapshot in the eighth megabyte: libpcap
	 * takes over there, as without finders */
	path_of(path, sizeof(path), "damaged.pcap");
	write_pcap(path, &g, 12);
	damage_at(path, (size_t)7 << 20 | 12345u, 5000u);
	w = same_records("damaged", path);
	ck_assert_msg(w.joined >= 5, "damaged: %llu lists taken whole",
		      (unsigned long long)w.joined);
	/* a file cut inside a record, then inside a record header */
	path_of(path, sizeof(path), "mixed-cut.pcap");
	write_pcap(path, &g, 6);
	f = fopen(path, "rb");
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fclose(f);
	for (long c = 300; c <= 1300; c += 1000) {
		ck_assert_int_eq(truncate(path, len - c), 0);
		same_records("cut", path);
		len -= c;
	}
}
END_TEST

/* A reader slower than the finders: they wait for it at the end of their
 * ring and take its slots again as it moves on (4 finders, 40 MB). */
START_TEST(test_slow_reader)
{
	struct gen g = {
		.snap = SNAP, .caplen = cl_mixed, .wirelen = wl_more, .byte = b_random
	};
	char path[128];
	struct got ref, slow;

	path_of(path, sizeof(path), "slow.pcap");
	write_pcap(path, &g, 40);
	ref = read_all(path, 0, false, false, 0, false);
	slow = read_all(path, 4, false, false, 0, true);
	ck_assert_msg(slow.recs == ref.recs && slow.hash == ref.hash && slow.rc == ref.rc,
		      "slow reader: %u records, rc %d; alone %u, rc %d", slow.recs,
		      slow.rc, ref.recs, ref.rc);
	ck_assert_msg(slow.joined >= 20 && slow.listed >= 20,
		      "slow reader: %llu lists taken whole of %llu",
		      (unsigned long long)slow.joined, (unsigned long long)slow.listed);
}
END_TEST

/* Closing after the first batch ends the finders (they wait for a reader
 * that no longer comes). */
START_TEST(test_close_early)
{
	struct gen g = {
		.snap = SNAP, .caplen = cl_mixed, .wirelen = wl_same, .byte = b_random
	};
	char path[128];
	struct got r;

	path_of(path, sizeof(path), "early.pcap");
	write_pcap(path, &g, 40);
	r = read_all(path, 4, false, true, 1, false);
	ck_assert_uint_eq(r.finders, 4);
	ck_assert_uint_ge(r.recs, 1);
}
END_TEST

int
main(void)
{
	const TTest *const tests[] = {
		test_mixed,       test_swapped_nano,   test_decoys,
		test_shifted,     test_tiny_and_jumbo, test_damage_and_cut,
		test_slow_reader, test_close_early,
	};

	return find_main("capfile_find", tests, sizeof(tests) / sizeof(tests[0]));
}
