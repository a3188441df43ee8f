/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A plain pcap or pcapng file's records found ahead of the reader by
 * several threads (capfile_find.c): whatever the file holds, the reader
 * hands out the same
 * records, in the same order, with the same fields and the same end (rc
 * and message) as without finders, in batches (gcap_capfile_fill) and in
 * spans (gcap_capfile_fill_span). The layouts are the finders' hard
 * cases: payloads full of record headers that are not records, a run of
 * headers four bytes off the real ones that walks in step with them,
 * records too small for a chunk's list, records larger than a chunk,
 * damage and a cut end, both byte orders and nanosecond times; pcapng's
 * blocks that are not packets, several interfaces and their time units,
 * an interface added mid-file, payloads of blocks that are not blocks. Where the
 * guesses can be right, the reader must have taken lists (else the
 * finders did nothing and the test proves nothing).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gpucap/gcap_capfile.h"

#define MAXB 512u
#define BUFSZ (1u << 20)
#define SNAP 262144u

static char dir[64];

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

static uint32_t
mix32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352du;
	x ^= x >> 15;
	x *= 0x846ca68bu;
	return x ^ (x >> 16);
}

static void
put32(uint8_t *p, uint32_t v, bool swap)
{
	if (swap)
		v = __builtin_bswap32(v);
	memcpy(p, &v, 4);
}

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
cl_mixed(unsigned i)
{
	return mix32(i * 7u + 1u) % 1600u;
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

/* ---- pcapng ---- */

struct nggen {
	bool swap;
	/* a statistics or custom block after every so many packets (0: none) */
	unsigned skip_every;
	/* a third interface's block at this megabyte (0: none); packets on
	 * it follow */
	size_t idb_at_mb;
	/* every payload a chain of packet blocks that are not blocks */
	bool decoys;
};

static void
put16(uint8_t *p, uint16_t v, bool swap)
{
	if (swap)
		v = (uint16_t)(v >> 8 | v << 8);
	memcpy(p, &v, 2);
}

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

/* An interface block: Ethernet, SNAP; if_tsresol res (0: the default
 * microseconds) and if_tsoffset off. */
static size_t
ng_idb(FILE *f, bool swap, uint8_t res, uint64_t off)
{
	uint8_t b[40] = { 0 };
	size_t n = 8;

	put16(b, 1, swap);
	put32(b + 4, SNAP, swap);
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

/* Write about mb megabytes of pcapng blocks; returns the packets. */
static unsigned
write_pcapng(const char *path, const struct nggen *g, size_t mb)
{
	FILE *f = fopen(path, "wb");
	uint8_t *b = malloc(20 + 1600 + 64);
	size_t total = 0;
	unsigned i, nifs = 2;

	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(b);
	memset(b, 0, 16);
	put32(b, 0x1a2b3c4du, g->swap);
	put16(b + 4, 1, g->swap); /* version 1.0 */
	memset(b + 8, 0xff, 8);   /* section length unknown */
	total += ng_block(f, 0x0a0d0d0au, b, 16, g->swap);
	total += ng_idb(f, g->swap, 9, 0);
	total += ng_idb(f, g->swap, 0, 100);
	for (i = 0; total < mb << 20; i++) {
		uint32_t cl = cl_mixed(i) & ~7u, ifid = mix32(i) % nifs;
		uint64_t t = (1600000000ull + i / 64u) *
				     (ifid == 0 ? 1000000000ull : 1000000ull) +
			     mix32(i) % 1000000u;

		if (g->idb_at_mb != 0 && nifs == 2 && total >= g->idb_at_mb << 20) {
			total += ng_idb(f, g->swap, 3, 0);
			nifs = 3;
		}
		if (g->skip_every != 0 && i % g->skip_every == g->skip_every - 1) {
			/* statistics (interface 0, a time) or a custom block */
			memset(b, 0, 16);
			put32(b + 4, 1600000000u, g->swap);
			total += ng_block(f, i % 2 ? 5u : 0x40000badu, b, 12 + i % 3 * 4,
					  g->swap);
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
		total += ng_block(f, 6, b, 20 + cl, g->swap);
	}
	fclose(f);
	free(b);
	return i;
}

/* ---- reading ---- */

struct got {
	unsigned recs;
	int rc;
	char msg[512];
	uint64_t hash; /* every record's fields and bytes, in order */
	uint64_t joined, listed, stepped;
	unsigned finders;
};

static uint64_t
fold(uint64_t h, uint64_t v)
{
	return (h ^ v) * 0x100000001b3ull;
}

/* Read path on finders threads: in batches, or in spans of at most BUFSZ
 * (span); first wait (at most 10 s) until the finders listed ahead what
 * their ring holds (wait). */
static struct got
read_all(const char *path, unsigned finders, bool span, bool wait, unsigned stop_after,
	 bool slow)
{
	char err[GCAP_ERRBUF_SIZE];
	struct gcap_capfile_conf conf = { .decoders = 1, .finders = finders };
	struct gcap_capfile *cf = gcap_capfile_open_conf(path, &conf, err);
	static uint8_t buf[BUFSZ];
	static struct gcap_pkt d[MAXB];
	static uint64_t raw[MAXB];
	struct got g = { .hash = 0xcbf29ce484222325ull };

	ck_assert_msg(cf != NULL, "%s: %s", path, err);
	gcap_capfile_use_map(cf, true);
	/* until a dozen lists are out (or every chunk's, in a smaller file) */
	struct stat st;
	uint64_t want;

	ck_assert_int_eq(stat(path, &st), 0);
	want = ((uint64_t)st.st_size - 24 + (1u << 20) - 1) >> 20;
	want = want < 12 ? want : 12;
	for (unsigned t = 0; wait && t < 10000; t++) {
		uint64_t j, l, s;

		if (gcap_capfile_finders(cf, &j, &l, &s) == 0 || l >= want)
			break;
		usleep(1000);
	}
	for (;;) {
		uint32_t used = 0;
		const uint8_t *sp;

		/* what the format does not fill must stay the caller's */
		memset(d, 0xa5, sizeof(d));
		int n = span ? gcap_capfile_fill_span(cf, buf, BUFSZ, d, raw, MAXB, &used,
						      &sp) :
			       gcap_capfile_fill(cf, buf, BUFSZ, d, raw, MAXB, &used);

		g.rc = n;
		if (n <= 0)
			break;
		for (int i = 0; i < n; i++, g.recs++) {
			const uint8_t *p = (const uint8_t *)(uintptr_t)d[i].addr;
			uint64_t h = g.hash;

			h = fold(h, d[i].caplen);
			h = fold(h, d[i].wirelen);
			h = fold(h, d[i].ts_ns);
			h = fold(h, raw[i]);
			h = fold(h, d[i].port);
			h = fold(h, (uint64_t)d[i].queue << 32 | d[i].seq);
			for (uint32_t k = 0; k < d[i].caplen; k += 61)
				h = fold(h, p[k]);
			if (d[i].caplen > 0)
				h = fold(h, p[d[i].caplen - 1]);
			g.hash = h;
		}
		if (stop_after && g.recs >= stop_after)
			break;
		if (slow) /* the finders wait for the reader, slots are reused */
			usleep(200);
	}
	if (g.rc < 0)
		snprintf(g.msg, sizeof(g.msg), "%s", gcap_capfile_errmsg(cf));
	g.finders = gcap_capfile_finders(cf, &g.joined, &g.listed, &g.stepped);
	gcap_capfile_close(cf);
	return g;
}

/* The file read with finders, waiting for them and racing them, in
 * batches and in spans, gives what the reader alone gives. @return the
 * waiting read's counts (batches). */
static struct got
same_records(const char *name, const char *path)
{
	struct got ref = read_all(path, 0, false, false, 0, false), wait = { 0 };

	ck_assert_uint_eq(ref.finders, 0);
	ck_assert_msg(ref.recs > 0, "%s: no records (rc %d: %s)", name, ref.rc, ref.msg);
	for (unsigned k = 0; k < 4; k++) {
		bool span = k & 1, w = !(k & 2);
		struct got g = read_all(path, 3, span, w, 0, false);
		struct got r = span ? read_all(path, 0, true, false, 0, false) : ref;

		ck_assert_msg(g.finders == 3, "%s: %u finders", name, g.finders);
		ck_assert_msg(g.recs == r.recs && g.hash == r.hash && g.rc == r.rc &&
				      strcmp(g.msg, r.msg) == 0,
			      "%s (%s, %s): %u records, rc %d (%s); alone %u, rc %d (%s)",
			      name, span ? "spans" : "batches", w ? "ahead" : "racing",
			      g.recs, g.rc, g.msg, r.recs, r.rc, r.msg);
		if (!span && w)
			wait = g;
	}
	return wait;
}

static void
path_of(char *path, size_t len, const char *name)
{
	snprintf(path, len, "%s/%s", dir, name);
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

START_TEST(test_ng_mixed)
{
	struct nggen g = { .skip_every = 97 };
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

/* An interface added mid-file: the finders, frozen before it, end their
 * lists at it and at its packets; the reader finds those itself. */
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

static void
setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/gcap-find-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void
teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

int
main(void)
{
	Suite *s = suite_create("capfile_find");
	TCase *tc = tcase_create("find");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_mixed);
	tcase_add_test(tc, test_swapped_nano);
	tcase_add_test(tc, test_decoys);
	tcase_add_test(tc, test_shifted);
	tcase_add_test(tc, test_tiny_and_jumbo);
	tcase_add_test(tc, test_damage_and_cut);
	tcase_add_test(tc, test_slow_reader);
	tcase_add_test(tc, test_close_early);
	tcase_add_test(tc, test_ng_mixed);
	tcase_add_test(tc, test_ng_new_interface);
	tcase_add_test(tc, test_ng_decoys_damage_cut);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
