/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Records found in spans (gcap_span.h, what the gpu executor's kernel runs
 * for -r of a plain pcap file): the same walks, guesses and joins, run here
 * as the kernel's block runs them (one sub-chunk a thread, the lists taken
 * whole when each begins where the one before exits, else joined by one
 * thread), span after span through the chain, find every record the
 * reader's own step finds, in order, and stop where it stops (a caplen
 * past the snapshot, a record cut by the file's end). Files of both byte
 * orders and time units, packets whose bytes look like record headers (so
 * that guesses go wrong), spans and blocks of many sizes. Then the
 * reader's side (gcap_capfile_spans_*): which inputs are handed out in
 * spans, and the reader reading on from a record the spans stopped at.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include "gpucap/gcap_capfile.h"
#include "gpucap/gcap_span.h"

#define FHDR 24u

struct file {
	uint8_t *b;
	uint32_t size, snap, flags;
	uint32_t *rec;  /* the reader's record starts */
	uint32_t *caps; /* and caplens */
	uint32_t nrec;
	uint32_t stop; /* where its step stops, or size at a clean end */
};

static uint32_t rng = 12345u;

static uint32_t
rnd(void)
{
	rng = rng * 1103515245u + 12345u;
	return rng >> 8;
}

static void
put32(uint8_t *p, uint32_t v, int swap)
{
	if (swap)
		v = __builtin_bswap32(v);
	memcpy(p, &v, 4);
}

/* A header that the plausibility test passes: stored in packet bytes, it
 * makes a guess start inside a packet. */
static void
fake_hdr(uint8_t *p, uint32_t caplen, int swap, int nano)
{
	put32(p, 1600000000u + rnd() % 1000, swap);
	put32(p + 4, rnd() % (nano ? 1000000000u : 1000000u), swap);
	put32(p + 8, caplen, swap);
	put32(p + 12, caplen + rnd() % 4, swap);
}

/* n records; damage: 0 none, 1 a caplen past the snapshot at a random
 * record, 2 the last record cut short */
static void
make_file(struct file *f, unsigned n, int swap, int nano, uint32_t snap, int damage,
	  int tiny)
{
	uint32_t cap = FHDR, at = FHDR;
	unsigned bad = damage == 1 ? rnd() % n : n;

	f->snap = snap;
	f->flags = (swap ? GCAP_SPAN_SWAP : 0u) | (nano ? GCAP_SPAN_NANO : 0u);
	f->b = malloc((size_t)n * (16 + 2100) + FHDR);
	ck_assert_ptr_nonnull(f->b);
	put32(f->b, nano ? 0xa1b23c4du : 0xa1b2c3d4u, swap);
	/* version 2.4 */
	f->b[4 + swap] = 2;
	f->b[5 - swap] = 0;
	f->b[6 + swap] = 4;
	f->b[7 - swap] = 0;
	put32(f->b + 8, 0, swap);
	put32(f->b + 12, 0, swap);
	put32(f->b + 16, snap, swap);
	put32(f->b + 20, 1, swap);
	for (unsigned i = 0; i < n; i++) {
		uint32_t caplen = tiny && rnd() % 3 == 0 ? rnd() % 8 : rnd() % 2000;

		if (caplen > snap)
			caplen = snap;
		if (i == bad)
			caplen = snap + 1 +
				 (rnd() % 2 ? 0 :
					      rnd() % 100); /* at the edge, or past it */
		put32(f->b + at, 1600000000u + i, swap);
		put32(f->b + at + 4, rnd() % 1000, swap);
		put32(f->b + at + 8, caplen, swap);
		put32(f->b + at + 12, caplen + rnd() % 50, swap);
		for (uint32_t k = 0; k < caplen; k++)
			f->b[at + 16 + k] = (uint8_t)rnd();
		/* some packets hold runs of plausible headers */
		for (uint32_t k = 0; k + 16 * 5 <= caplen && rnd() % 4 == 0; k += 16 + 8)
			fake_hdr(f->b + at + 16 + k, 8, swap, nano);
		at += 16 + caplen;
		cap = at;
	}
	if (damage == 2)
		cap -= 1 + rnd() % 10;
	f->size = cap;
	/* the reader's step (capfile_pcap.c) */
	f->rec = malloc(sizeof(*f->rec) * (n + 1));
	f->caps = malloc(sizeof(*f->caps) * (n + 1));
	f->nrec = 0;
	at = FHDR;
	for (;;) {
		uint32_t c;

		if (at == f->size)
			break;
		if (f->size - at < 16)
			break;
		memcpy(&c, f->b + at + 8, 4);
		if (swap)
			c = __builtin_bswap32(c);
		if (c > snap || f->size - at - 16 < c)
			break;
		f->caps[f->nrec] = c;
		f->rec[f->nrec++] = at;
		at += 16 + c;
	}
	f->stop = at;
}

/* The kernel's block on one span (find_span.cuh): nthr threads, each
 * round's reads before its fixes, as the barriers order them. Appends the
 * span's records to out. @return its exit; *stopped. */
static uint32_t
block_span(const struct file *f, uint32_t off, uint32_t len, uint32_t avail,
	   uint64_t index, uint32_t entry, unsigned nthr, uint32_t *out, uint32_t *nout,
	   uint32_t *stopped, unsigned *rounds, uint64_t *avg)
{
	struct gcap_span_view v = { f->b + off, avail, f->snap, f->flags };
	const uint32_t c = gcap_span_chunk(len, nthr, *avg), cap = GCAP_SPAN_LIST(c);
	unsigned nsub = c ? (len + c - 1) / c : 0;
	struct gcap_span_sub *sub = calloc(nsub + 1, sizeof(*sub));
	uint32_t *lists = calloc((size_t)nsub * cap + 1, sizeof(*lists));
	uint32_t *at = calloc(nsub + 1, sizeof(*at)),
		 *at_stop = calloc(nsub + 1, sizeof(*at));
	int *ok = calloc(nsub + 1, sizeof(*ok));
	uint32_t rel = entry - off, walks = 0;

	ck_assert(sub && lists && at && at_stop && ok);
	ck_assert_uint_le((size_t)nsub * cap, 2 * GCAP_SPAN_LIST(len) + 2 * nthr);
	for (unsigned t = 0; t < nsub; t++) {
		sub[t].lo = t * c;
		sub[t].hi = sub[t].lo + c < len ? sub[t].lo + c : len;
		gcap_span_guess(&v, &sub[t], lists + (size_t)t * cap,
				t == 0 && index == 0 ? rel : GCAP_SPAN_UNKNOWN);
	}
	for (*rounds = 1;; ++*rounds) {
		int all = 1;

		ck_assert_uint_le(*rounds, nsub + 1); /* the prefix grows each round */
		for (unsigned t = 0; t < nsub; t++) {
			at[t] = t ? sub[t - 1].exit : rel;
			at_stop[t] = t ? sub[t - 1].stop : 0;
			ok[t] = gcap_span_agrees(&sub[t], at[t]);
			all &= ok[t];
		}
		if (all)
			break;
		for (unsigned t = 0; t < nsub; t++)
			if (!ok[t] && (t == 0 || ok[t - 1]))
				gcap_span_fix(&v, &sub[t], lists + (size_t)t * cap, at[t],
					      at_stop[t], &walks);
	}
	for (unsigned t = 0; t < nsub; t++)
		for (uint32_t i = sub[t].from; i < sub[t].n; i++)
			out[(*nout)++] = off + lists[(size_t)t * cap + i];
	*stopped = nsub ? sub[nsub - 1].stop : 0;
	{
		uint32_t ex = nsub ? sub[nsub - 1].exit : rel, total = 0;

		for (unsigned t = 0; t < nsub; t++)
			total += sub[t].n - sub[t].from;
		if (total > 0 && ex > rel) /* the hint the next span gets */
			*avg = (ex - rel) / total;
		rel = ex;
	}
	free(sub);
	free(lists);
	free(at);
	free(at_stop);
	free(ok);
	return off + rel;
}

/* The whole file in spans of each bytes (the pipeline's cut,
 * pipeline_file_span.c), blocks of nthr threads. */
static void
check_file(const struct file *f, uint32_t each, unsigned nthr)
{
	uint32_t *out = malloc(sizeof(*out) * (f->nrec + 1));
	uint32_t nout = 0, off = FHDR, next = FHDR, stopped = 0;
	uint64_t index = 0;
	unsigned rounds, most = 0;
	uint64_t avg = 0;

	while (off < f->size && !stopped) {
		uint32_t avail = f->size - off < each + GCAP_SPAN_TAIL ?
					 f->size - off :
					 each + GCAP_SPAN_TAIL;
		uint32_t len = avail < each ? avail : each;

		next = block_span(f, off, len, avail, index, next, nthr, out, &nout,
				  &stopped, &rounds, &avg);
		most = rounds > most ? rounds : most;
		ck_assert_uint_ge(next, off + (stopped ? 0 : len));
		off += len;
		index++;
	}
	ck_assert_uint_eq(nout, f->nrec);
	for (uint32_t i = 0; i < nout; i++)
		ck_assert_uint_eq(out[i], f->rec[i]);
	/* where the reader goes on: the record the step stops at, or the end */
	ck_assert_uint_eq(stopped ? next : f->size, f->stop);
	ck_assert_uint_eq(stopped, f->stop != f->size);
	if (getenv("GCAP_TEST_VERBOSE"))
		printf("spans of %u, %u threads: at most %u rounds\n", each, nthr, most);
	free(out);
}

static void
free_file(struct file *f)
{
	free(f->b);
	free(f->rec);
	free(f->caps);
}

START_TEST(spans_find_every_record)
{
	static const uint32_t each[] = { 13, 100, 777, 4096, 65536 };
	static const unsigned thr[] = { 1, 3, 32, 512 };

	rng = 1u + (uint32_t)_i;
	for (int swap = 0; swap < 2; swap++)
		for (int nano = 0; nano < 2; nano++) {
			struct file f;

			make_file(&f, 400, swap, nano, 65535, 0, _i & 1);
			ck_assert_uint_eq(f.nrec, 400);
			for (unsigned e = 0; e < sizeof(each) / sizeof(each[0]); e++)
				for (unsigned t = 0; t < sizeof(thr) / sizeof(thr[0]);
				     t++)
					check_file(&f, each[e], thr[t]);
			free_file(&f);
		}
}
END_TEST

START_TEST(spans_stop_where_the_reader_does)
{
	static const uint32_t each[] = { 50, 999, 8192, 1u << 20 };

	rng = 100u + (uint32_t)_i;
	for (int damage = 1; damage <= 2; damage++) {
		struct file f;

		/* a small snapshot: caplens past it are damage to the step */
		make_file(&f, 300, _i & 1, (_i >> 1) & 1, 1500, damage, 0);
		ck_assert_uint_lt(f.stop, f.size);
		for (unsigned e = 0; e < sizeof(each) / sizeof(each[0]); e++) {
			check_file(&f, each[e], 64);
			check_file(&f, each[e], 5);
		}
		free_file(&f);
	}
}
END_TEST

/* A file of records of 0 bytes: a span's most records, lists full. */
START_TEST(spans_of_empty_records)
{
	struct file f;
	uint32_t n = 5000, at = FHDR;

	memset(&f, 0, sizeof(f));
	f.snap = 65535;
	f.size = FHDR + 16 * n;
	f.b = calloc(1, f.size);
	f.rec = malloc(sizeof(*f.rec) * n);
	f.caps = calloc(n, sizeof(*f.caps));
	put32(f.b, 0xa1b2c3d4u, 0);
	put32(f.b + 16, 65535, 0);
	for (uint32_t i = 0; i < n; i++, at += 16) {
		put32(f.b + at, i, 0);
		f.rec[i] = at;
	}
	f.nrec = n;
	f.stop = f.size;
	check_file(&f, 4096, 512);
	check_file(&f, 16, 1);
	check_file(&f, 100000, 7);
	free_file(&f);
}
END_TEST

static char dir[64];

static void
write_file(const char *path, const struct file *f)
{
	FILE *fp = fopen(path, "wb");

	ck_assert_ptr_nonnull(fp);
	ck_assert_uint_eq(fwrite(f->b, 1, f->size, fp), f->size);
	fclose(fp);
}

/* The reader's side: a plain pcap file is handed out in spans, and reads
 * on from the record where they stopped, as its own step reads it. */
START_TEST(reader_reads_on_where_spans_stop)
{
	char path[128], err[GCAP_ERRBUF_SIZE];
	struct gcap_capfile_spans sp;
	struct gcap_capfile *cf;
	struct file f;
	struct gcap_pkt d[64];
	uint64_t raw[64];
	uint8_t buf[65536];
	uint32_t used, k, got = 0;
	int n;

	rng = 7;
	make_file(&f, 200, _i, _i, 65535, 0, 0);
	snprintf(path, sizeof(path), "%s/f.pcap", dir);
	write_file(path, &f);
	cf = gcap_capfile_open(path, err);
	ck_assert_msg(cf != NULL, "%s", err);
	ck_assert(gcap_capfile_spans_ok(cf));
	ck_assert_int_eq(gcap_capfile_spans_begin(cf, &sp), 0);
	ck_assert_uint_eq(sp.first, FHDR);
	ck_assert_uint_eq(sp.end, f.size);
	ck_assert_uint_eq(sp.snap, 65535);
	ck_assert_uint_eq(sp.flags, f.flags);
	ck_assert(memcmp(sp.map, f.b, f.size) == 0);
	ck_assert_uint_eq(gcap_capfile_spans_at(cf, f.size / 2), f.size);
	ck_assert_uint_eq(gcap_capfile_offset(cf), f.size / 2);
	/* the spans took the first 123 records */
	k = 123;
	gcap_capfile_spans_done(cf, f.rec[k]);
	while ((n = gcap_capfile_fill(cf, buf, sizeof(buf), d, raw, 64, &used)) > 0)
		for (int i = 0; i < n; i++, got++) {
			uint32_t at = f.rec[k + got];

			ck_assert_uint_eq(d[i].caplen, f.caps[k + got]);
			ck_assert(memcmp((const void *)(uintptr_t)d[i].addr,
					 f.b + at + 16, d[i].caplen) == 0);
			ck_assert_uint_eq(raw[i] >> 32, 1600000000u + k + got);
		}
	ck_assert_int_eq(n, 0);
	ck_assert_uint_eq(got, f.nrec - k);
	ck_assert(!gcap_capfile_spans_ok(cf)); /* read already */
	gcap_capfile_close(cf);
	unlink(path);
	free_file(&f);
}
END_TEST

/* What is not handed out in spans: pcapng, and a file read already. */
START_TEST(spans_only_for_plain_pcap_from_its_start)
{
	static const uint8_t ng[] = {
		/* SHB */
		0x0a,
		0x0d,
		0x0d,
		0x0a,
		28,
		0,
		0,
		0,
		0x4d,
		0x3c,
		0x2b,
		0x1a,
		1,
		0,
		0,
		0,
		0xff,
		0xff,
		0xff,
		0xff,
		0xff,
		0xff,
		0xff,
		0xff,
		28,
		0,
		0,
		0,
		/* IDB: Ethernet, snapshot 65535 */
		1,
		0,
		0,
		0,
		20,
		0,
		0,
		0,
		1,
		0,
		0,
		0,
		0xff,
		0xff,
		0,
		0,
		20,
		0,
		0,
		0,
		/* EPB: 4 bytes of packet */
		6,
		0,
		0,
		0,
		36,
		0,
		0,
		0,
		0,
		0,
		0,
		0,
		0,
		0,
		0,
		0,
		1,
		0,
		0,
		0,
		4,
		0,
		0,
		0,
		4,
		0,
		0,
		0,
		1,
		2,
		3,
		4,
		36,
		0,
		0,
		0,
	};
	char path[128], err[GCAP_ERRBUF_SIZE];
	struct gcap_capfile_spans sp;
	struct gcap_capfile *cf;
	struct file f;
	uint8_t buf[65536];
	struct gcap_pkt d[4];
	uint64_t raw[4];
	uint32_t used;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/g.pcapng", dir);
	fp = fopen(path, "wb");
	ck_assert_ptr_nonnull(fp);
	ck_assert_uint_eq(fwrite(ng, 1, sizeof(ng), fp), sizeof(ng));
	fclose(fp);
	cf = gcap_capfile_open(path, err);
	ck_assert_msg(cf != NULL, "%s", err);
	ck_assert(gcap_capfile_mapped(cf));
	ck_assert(!gcap_capfile_spans_ok(cf));
	ck_assert_int_eq(gcap_capfile_spans_begin(cf, &sp), -ENOTSUP);
	ck_assert_int_eq(gcap_capfile_fill(cf, buf, sizeof(buf), d, raw, 4, &used), 1);
	gcap_capfile_close(cf);

	rng = 9;
	make_file(&f, 10, 0, 0, 65535, 0, 0);
	snprintf(path, sizeof(path), "%s/h.pcap", dir);
	write_file(path, &f);
	cf = gcap_capfile_open(path, err);
	ck_assert_msg(cf != NULL, "%s", err);
	ck_assert(gcap_capfile_spans_ok(cf));
	ck_assert_int_eq(gcap_capfile_fill(cf, buf, sizeof(buf), d, raw, 4, &used), 4);
	ck_assert(!gcap_capfile_spans_ok(cf));
	ck_assert_int_eq(gcap_capfile_spans_begin(cf, &sp), -ENOTSUP);
	gcap_capfile_close(cf);
	unlink(path);
	snprintf(path, sizeof(path), "%s/g.pcapng", dir);
	unlink(path);
	free_file(&f);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("span_find");
	TCase *tc = tcase_create("spans");
	SRunner *sr;
	int nf;

	snprintf(dir, sizeof(dir), "/tmp/gcap-span-XXXXXX");
	if (getenv("TMPDIR") != NULL)
		snprintf(dir, sizeof(dir), "%s/gcap-span-XXXXXX", getenv("TMPDIR"));
	if (mkdtemp(dir) == NULL)
		return 1;
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, spans_find_every_record, 0, 4);
	tcase_add_loop_test(tc, spans_stop_where_the_reader_does, 0, 4);
	tcase_add_test(tc, spans_of_empty_records);
	tcase_add_loop_test(tc, reader_reads_on_where_spans_stop, 0, 2);
	tcase_add_test(tc, spans_only_for_plain_pcap_from_its_start);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	rmdir(dir);
	return nf == 0 ? 0 : 1;
}
