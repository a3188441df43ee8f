/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writer suite, the way out: the header on disk at open, flushing and
 * -U, records larger than the buffer, the fast lane against the general
 * path, export buffers (bits of the outmask, corrupt buffers) and stdout.
 */
#include <check.h>
#include <errno.h>
#include <pcap/pcap.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wt_util.h"

/* ==== durability and flushing ==== */

START_TEST(test_header_on_open_and_flush)
{
	const char *p = wt_path("d.pcap");
	struct gcap_writer_conf c = wt_conf1(p);
	struct gcap_writer *w = wt_open(&c);

	/* the header is in the file before any flush or close */
	ck_assert_int_eq(wt_fsize(p), 24);
	wt_check_file(p, 0, 0, 0, 65535, DLT_EN10MB);
	wt_write_n(w, 0, 3, 100, 1);
	ck_assert_int_eq(wt_fsize(p), 24); /* buffered */
	ck_assert_int_eq(gcap_writer_flush(w), 0);
	ck_assert_int_eq(wt_fsize(p), 24 + 3 * 116);
	wt_check_file(p, 0, 3, 100, 65535, DLT_EN10MB);
	wt_close(w, NULL);

	/* -U: every write call reaches the file */
	c.flush_each = true;
	w = wt_open(&c);
	wt_write_n(w, 0, 1, 100, 1);
	ck_assert_int_eq(wt_fsize(p), 24 + 116);
	wt_write_n(w, 1, 1, 100, 1);
	ck_assert_int_eq(wt_fsize(p), 24 + 2 * 116);
	wt_check_file(p, 0, 2, 100, 65535, DLT_EN10MB);
	wt_close(w, NULL);

	/* pcapng: SHB and IDB on disk at open */
	c = wt_conf1(wt_path("d.pcapng"));
	w = wt_open(&c);
	struct wt_ng ni;

	wt_ng_parse(wt_path("d.pcapng"), &ni);
	ck_assert_uint_eq(ni.nshb, 1);
	ck_assert_uint_eq(ni.nidb, 1);
	wt_close(w, NULL);
}
END_TEST

/* pcapng's strings are UTF-8: an interface's name of other bytes (a
 * port's path holds any) is written with each stray byte as '?', text
 * kept as it is */
START_TEST(test_if_strings_utf8)
{
	struct gcap_writer_if ifs[1] = { { .name = "a\xff"
						   "b\xc3\xbc"
						   "c\xe2\x82",
					   .description = "\xc0\xafok",
					   .linktype = DLT_EN10MB } };
	struct gcap_writer_conf c = wt_conf1(wt_path("u.pcapng"));
	struct gcap_writer *w;
	struct wt_ng ni;

	c.ifs = ifs;
	w = wt_open(&c);
	wt_close(w, NULL);
	wt_ng_parse(wt_path("u.pcapng"), &ni);
	ck_assert_uint_eq(ni.nidb, 1);
	ck_assert_str_eq(ni.ifname[0], "a?b\xc3\xbc"
				       "c??");
	ck_assert_str_eq(ni.if_descr[0], "??ok");
}
END_TEST

START_TEST(test_large_records)
{
	/* records larger than the 1 MiB buffer go straight to the file */
	static uint8_t big[3 << 20];
	const char *p = wt_path("big.pcapng");
	struct gcap_writer_conf c = wt_conf1(p);
	struct gcap_writer *w;
	struct gcap_rec h = { .ts_ns = T0 + 5,
			      .caplen = sizeof(big),
			      .wirelen = sizeof(big),
			      .outmask = 1 };
	struct wt_ng ni;
	struct wt_rec r;

	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 31);
	c.snaplen = sizeof(big);
	w = wt_open(&c);
	wt_mkrec(&r, 0, 100, 1);
	ck_assert_int_eq(gcap_writer_write(w, &r.h, r.data), 0);
	ck_assert_int_eq(gcap_writer_write(w, &h, big), 0);
	wt_mkrec(&r, 1, 101, 1); /* odd length: EPB padding */
	ck_assert_int_eq(gcap_writer_write(w, &r.h, r.data), 0);
	wt_close(w, NULL);
	wt_ng_parse(p, &ni);
	ck_assert_uint_eq(ni.nepb, 3);

	/* check the big record's bytes in place */
	FILE *f = fopen(p, "rb");
	static uint8_t rd[4 << 20];
	size_t n = fread(rd, 1, sizeof(rd), f), pos = 0;
	int k = 0;

	fclose(f);
	while (pos < n) {
		uint32_t len = wt_rd32(rd + pos + 4);

		if (wt_rd32(rd + pos) == 6 && k++ == 1) {
			ck_assert_uint_eq(wt_rd32(rd + pos + 20), sizeof(big));
			ck_assert_mem_eq(rd + pos + 28, big, sizeof(big));
		}
		pos += len;
	}
	ck_assert_int_eq(k, 3);

	/* and pcap */
	p = wt_path("big.pcap");
	c = wt_conf1(p);
	c.snaplen = sizeof(big);
	w = wt_open(&c);
	ck_assert_int_eq(gcap_writer_write(w, &h, big), 0);
	wt_close(w, NULL);
	ck_assert_int_eq(wt_fsize(p), 24 + 16 + (long long)sizeof(big));
}
END_TEST

/* ==== export buffers ==== */

static size_t
add_rec(uint8_t *buf, size_t off, const struct wt_rec *r)
{
	memcpy(buf + off, &r->h, sizeof(r->h));
	memcpy(buf + off + sizeof(r->h), r->data, r->h.caplen);
	memset(buf + off + sizeof(r->h) + r->h.caplen, 0xee,
	       GCAP_REC_SIZE(r->h.caplen) - sizeof(r->h) - r->h.caplen);
	return off + GCAP_REC_SIZE(r->h.caplen);
}

START_TEST(test_write_buf_bits)
{
	static uint8_t buf[64 << 10] __attribute__((aligned(8)));
	const char *p0 = wt_path("b0.pcap"), *p3 = wt_path("b3.pcap");
	struct gcap_writer_conf c0 = wt_conf1(p0), c3 = wt_conf1(p3);
	struct gcap_writer *w0, *w3;
	unsigned ids0[40], ids3[40];
	uint32_t lens0[40], lens3[40];
	int n0 = 0, n3 = 0;
	size_t off = 0;

	for (unsigned i = 0; i < 40; i++) {
		struct wt_rec r;

		wt_mkrec(&r, i, wt_vlen(i) % 700 + 1, 1);
		r.h.outmask =
			(i % 2 ? 1ull : 0) | (i % 3 == 0 ? 1ull << 3 : 0) | (1ull << 63);
		if (r.h.outmask & 1) {
			lens0[n0] = r.h.caplen;
			ids0[n0++] = i;
		}
		if (r.h.outmask & 8) {
			lens3[n3] = r.h.caplen;
			ids3[n3++] = i;
		}
		off = add_rec(buf, off, &r);
	}
	w0 = wt_open(&c0);
	w3 = wt_open(&c3);
	ck_assert_int_eq(gcap_writer_write_buf(w0, buf, (uint32_t)off, 0), n0);
	ck_assert_int_eq(gcap_writer_write_buf(w3, buf, (uint32_t)off, 3), n3);
	ck_assert_int_eq(gcap_writer_write_buf(w3, buf, (uint32_t)off, 5), 0);
	ck_assert_int_eq(gcap_writer_write_buf(w3, buf, 0, 3), 0);
	ck_assert_int_eq(gcap_writer_write_buf(w3, buf, (uint32_t)off, 64), -EINVAL);
	wt_close(w0, NULL);
	wt_close(w3, NULL);
	ck_assert_int_eq(n0, 20);
	ck_assert_int_eq(n3, 14);
	wt_check_file_ids(p0, ids0, n0, 0, lens0, 65535, DLT_EN10MB);
	wt_check_file_ids(p3, ids3, n3, 0, lens3, 65535, DLT_EN10MB);
}
END_TEST

START_TEST(test_write_buf_corrupt)
{
	static uint8_t buf[16 << 10] __attribute__((aligned(8)));
	const char *p = wt_path("corrupt.pcap");
	struct gcap_writer_conf c = wt_conf1(p);
	struct gcap_writer *w = wt_open(&c);
	size_t off = 0, last;
	struct wt_rec r;

	for (unsigned i = 0; i < 5; i++) {
		wt_mkrec(&r, i, 100, 1);
		last = off;
		off = add_rec(buf, off, &r);
	}
	/* the last record claims more bytes than the buffer holds */
	((struct gcap_rec *)(buf + last))->caplen = 200;
	ck_assert_int_eq(gcap_writer_write_buf(w, buf, (uint32_t)off, 0), -EINVAL);
	/* a huge caplen must not wrap around */
	((struct gcap_rec *)(buf + last))->caplen = 0xfffffffcu;
	ck_assert_int_eq(gcap_writer_write_buf(w, buf, (uint32_t)off, 0), -EINVAL);
	((struct gcap_rec *)(buf + last))->caplen = 100;
	/* a buffer that ends inside a record header */
	ck_assert_int_eq(gcap_writer_write_buf(w, buf, (uint32_t)last + 8, 0), -EINVAL);
	/* a buffer that ends inside the record's padding */
	((struct gcap_rec *)(buf + last))->caplen = 97;
	ck_assert_int_eq(gcap_writer_write_buf(w, buf, (uint32_t)off - 8, 0), -EINVAL);
	((struct gcap_rec *)(buf + last))->caplen = 100;
	ck_assert_int_eq(gcap_writer_flush(w), 0);
	/* nothing of the corrupt buffers was written */
	wt_check_file(p, 0, 0, 100, 65535, DLT_EN10MB);
	/* the writer still works: the whole buffer goes through */
	ck_assert_int_eq(gcap_writer_write_buf(w, buf, (uint32_t)off, 0), 5);
	wt_close(w, NULL);
	wt_check_file(p, 0, 5, 100, 65535, DLT_EN10MB);
}
END_TEST

/* ==== stdout ==== */

START_TEST(test_stdout_pipe)
{
	struct gcap_writer_conf c = wt_conf1("-");
	struct gcap_writer *w;
	int pfd[2], saved;
	char eb[PCAP_ERRBUF_SIZE];

	ck_assert_int_eq(pipe(pfd), 0);
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	ck_assert_int_ge(saved, 0);
	ck_assert_int_eq(dup2(pfd[1], STDOUT_FILENO), STDOUT_FILENO);
	close(pfd[1]);
	w = gcap_writer_open(&c, eb);
	if (w != NULL) {
		ck_assert_str_eq(gcap_writer_filename(w), "-");
		wt_write_n(w, 0, 20, 0, 1); /* < 64 KiB: fits in the pipe */
		ck_assert_int_eq(gcap_writer_close(w, NULL, eb), 0);
	}
	/* stdout is not closed by the writer: put it back */
	ck_assert_int_eq(dup2(saved, STDOUT_FILENO), STDOUT_FILENO);
	close(saved);
	ck_assert_ptr_nonnull(w);

	FILE *f = fdopen(pfd[0], "rb");
	pcap_t *pc = pcap_fopen_offline_with_tstamp_precision(
		f, PCAP_TSTAMP_PRECISION_NANO, eb);
	struct pcap_pkthdr *h;
	const u_char *d;
	int k = 0;

	ck_assert_msg(pc != NULL, "%s", eb);
	while (pcap_next_ex(pc, &h, &d) == 1) {
		struct wt_rec r;

		wt_mkrec(&r, (unsigned)k, wt_vlen((unsigned)k), 1);
		ck_assert_uint_eq(h->ts.tv_usec, r.h.ts_ns % NS);
		ck_assert_uint_eq(h->caplen, r.h.caplen);
		ck_assert_mem_eq(d, r.data, r.h.caplen);
		k++;
	}
	pcap_close(pc);
	ck_assert_int_eq(k, 20);
}
END_TEST

START_TEST(test_stdout_epipe)
{
	/* nobody reads stdout: the open fails with EPIPE, SIGPIPE ignored */
	struct gcap_writer_conf c = wt_conf1("-");
	char eb[GCAP_ERRBUF_SIZE] = "";
	int pfd[2], saved, err;
	struct gcap_writer *w;

	signal(SIGPIPE, SIG_IGN);
	ck_assert_int_eq(pipe(pfd), 0);
	close(pfd[0]);
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	ck_assert_int_eq(dup2(pfd[1], STDOUT_FILENO), STDOUT_FILENO);
	close(pfd[1]);
	errno = 0;
	w = gcap_writer_open(&c, eb);
	err = errno;
	dup2(saved, STDOUT_FILENO);
	close(saved);
	ck_assert_ptr_null(w);
	ck_assert_int_eq(err, EPIPE);
	ck_assert_str_eq(eb, "cannot write '-': Broken pipe");
}
END_TEST

START_TEST(test_stdout_no_rotation)
{
	struct gcap_writer_conf c = wt_conf1("-");
	char eb[GCAP_ERRBUF_SIZE];

	c.rotate_bytes = 1000;
	errno = 0;
	ck_assert_ptr_null(gcap_writer_open(&c, eb));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strstr(eb, "stdout") != NULL, "%s", eb);
	c.rotate_bytes = 0;
	c.rotate_secs = 5;
	ck_assert_ptr_null(gcap_writer_open(&c, eb));
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

/* ==== the fast lane ==== */

static uint8_t *
slurp(const char *path, long long *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b;

	ck_assert_ptr_nonnull(f);
	*len = wt_fsize(path);
	b = malloc((size_t)*len + 1);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(fread(b, 1, (size_t)*len, f), (size_t)*len);
	fclose(f);
	return b;
}

/* A live port's records take the writer's fast lane where nothing is
 * checked before a record; -a filesize (never reached here) sends the
 * same records down the general path. The files must be the same bytes,
 * in each format and resolution, cut to a snap length, with pcapng's
 * per-record options, several interfaces and the ISBs' counts, across
 * many buffers. */
START_TEST(test_fast_lane_same_bytes)
{
	static const struct {
		const char *name;
		bool micro, epb_rx;
		unsigned nifs;
		uint32_t snaplen;
	} cases[] = {
		{ "l.pcap", false, false, 1, 65535 },
		{ "l.pcap", true, false, 1, 200 },
		{ "l.pcapng", false, true, 3, 65535 },
		{ "l.pcapng", true, false, 3, 200 },
		{ "l.pcapng", false, false, 1, 61 },
	};
	const struct gcap_writer_if_stats st[3] = { { 4000, 1, 4000, 2 }, { 0 }, { 0 } };
	struct wt_rec r;

	for (unsigned k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		uint64_t recs[2], bytes[2];
		uint8_t *b[2];
		long long len[2];

		for (unsigned g = 0; g < 2; g++) {
			const char *p = wt_path(g == 0 ? "lane" : "general");
			struct gcap_writer_conf c = wt_conf1(p);
			struct gcap_writer *w;

			c.fmt = strstr(cases[k].name, "pcapng") ? GCAP_FMT_PCAPNG :
								  GCAP_FMT_PCAP;
			c.ts_micro = cases[k].micro;
			c.epb_rx = cases[k].epb_rx;
			c.nifs = cases[k].nifs;
			c.ifs = cases[k].nifs == 3 ? wt_eth3 : wt_eth1;
			c.snaplen = cases[k].snaplen;
			c.stop_bytes = g == 0 ? 0 : UINT64_C(1) << 50;
			w = wt_open(&c);
			/* more than a buffer holds: records meet its end */
			for (unsigned i = 0; i < 4000; i++) {
				wt_mkrec(&r, i, wt_vlen(i), cases[k].nifs);
				/* in 2100: the ISBs' end is then the last
				 * record's time, not the clock's now */
				r.h.ts_ns += UINT64_C(76) * 365 * 86400 * NS;
				r.h.queue = (uint16_t)(i % 4);
				ck_assert_int_eq(gcap_writer_write(w, &r.h, r.data), 0);
			}
			if (cases[k].nifs == 3) { /* no such interface: refused */
				r.h.port = 3;
				ck_assert_int_eq(gcap_writer_write(w, &r.h, r.data),
						 -EINVAL);
			}
			gcap_writer_counts(w, &recs[g], &bytes[g]);
			/* pcapng: ISBs, with each interface's records
			 * (isb_usrdeliv) */
			wt_close(w, st);
			b[g] = slurp(p, &len[g]);
		}
		ck_assert_uint_eq(recs[0], 4000);
		ck_assert_uint_eq(recs[0], recs[1]);
		ck_assert_uint_eq(bytes[0], bytes[1]);
		ck_assert_int_eq(len[0], len[1]);
		ck_assert_msg(memcmp(b[0], b[1], (size_t)len[0]) == 0,
			      "case %u: the fast lane wrote other bytes", k);
		free(b[0]);
		free(b[1]);
	}
}
END_TEST

/* The merge's runs (gcap_writer_write_run): a buffer's records written
 * as runs, each record a run stops at written by gcap_writer_write, give
 * the bytes gcap_writer_write alone gives, in each format, resolution and
 * snap length, across many buffers of the writer; a run stops at the
 * first record past ts_max, without the bit, past max or outside the
 * buffer (its off left there), and writes nothing where each record
 * needs its checks (-U, -C, -a) or on a bad interface. */
START_TEST(test_write_run)
{
	static uint8_t buf[8 << 20] __attribute__((aligned(8)));
	static const struct {
		const char *name;
		bool micro;
		unsigned nifs;
		uint32_t snaplen;
	} cases[] = {
		{ "r.pcap", false, 1, 65535 },
		{ "r.pcap", true, 1, 200 },
		{ "r.pcapng", false, 3, 65535 },
		{ "r.pcapng", true, 3, 61 },
	};
	const unsigned n = 4000;
	uint32_t ends[4000];
	size_t len = 0;
	struct wt_rec r;

	for (unsigned i = 0; i < n; i++) {
		wt_mkrec(&r, i, wt_vlen(i), 3);
		/* bursts of 16 of one time, as a port stamps them */
		r.h.ts_ns = T0 + (uint64_t)(i / 16) * 1000;
		len = add_rec(buf, len, &r);
		ends[i] = (uint32_t)len;
	}
	for (unsigned k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		uint8_t *b[2];
		long long flen[2];

		for (unsigned g = 0; g < 2; g++) {
			const char *p = wt_path(g == 0 ? "runs" : "single");
			struct gcap_writer_conf c = wt_conf1(p);
			struct gcap_writer *w;
			uint32_t off = 0, ran = 0;

			c.fmt = strstr(cases[k].name, "pcapng") ? GCAP_FMT_PCAPNG :
								  GCAP_FMT_PCAP;
			c.ts_micro = cases[k].micro;
			c.nifs = cases[k].nifs;
			c.ifs = cases[k].nifs == 3 ? wt_eth3 : wt_eth1;
			c.snaplen = cases[k].snaplen;
			w = wt_open(&c);
			while (off < len) {
				const uint8_t *data;
				struct gcap_rec h;

				if (g == 0) {
					/* runs of up to 100, each up to a time */
					int m = gcap_writer_write_run(
						w, buf, (uint32_t)len, &off, 100,
						T0 + (off / 997) * 1000, 0);

					ck_assert_int_ge(m, 0);
					ran += (uint32_t)m;
					if (off == len)
						break;
				}
				ck_assert_int_eq(gcap_rec_step(buf, (uint32_t)len, &off,
							       &h, &data),
						 1);
				ck_assert_int_eq(gcap_writer_write(w, &h, data), 0);
			}
			/* most records went in runs */
			if (g == 0)
				ck_assert_uint_gt(ran, n / 2);
			wt_close(w, NULL);
			b[g] = slurp(p, &flen[g]);
		}
		ck_assert_int_eq(flen[0], flen[1]);
		ck_assert_msg(memcmp(b[0], b[1], (size_t)flen[0]) == 0,
			      "case %u: runs wrote other bytes", k);
		free(b[0]);
		free(b[1]);
	}

	/* where a run stops: records 0..15 have the time T0, 16..31 the next */
	const char *p = wt_path("stops.pcap"), *pr = wt_path("ref.pcap");
	struct gcap_writer_conf c = wt_conf1(p);
	struct gcap_writer *w = wt_open(&c);
	uint32_t off = 0;
	uint8_t *b[2];
	long long flen[2];

	ck_assert_int_eq(gcap_writer_write_run(NULL, buf, (uint32_t)len, &off, 9, T0, 0),
			 -EINVAL);
	ck_assert_int_eq(gcap_writer_write_run(w, buf, (uint32_t)len, NULL, 9, T0, 0),
			 -EINVAL);
	ck_assert_int_eq(gcap_writer_write_run(w, buf, (uint32_t)len, &off, 9, T0, 64),
			 -EINVAL);
	/* nothing to read from where it starts, an empty buffer or past the
	 * end: nothing written, the offset kept */
	uint32_t far = 4100;

	ck_assert_int_eq(gcap_writer_write_run(w, NULL, 0, &far, 9, T0, 0), 0);
	ck_assert_uint_eq(far, 4100);
	ck_assert_int_eq(gcap_writer_write_run(w, buf, 64, &far, 9, T0, 0), 0);
	ck_assert_uint_eq(far, 4100);
	/* max */
	ck_assert_int_eq(gcap_writer_write_run(w, buf, (uint32_t)len, &off, 3, T0, 0), 3);
	ck_assert_uint_eq(off, ends[2]);
	/* ts_max */
	ck_assert_int_eq(gcap_writer_write_run(w, buf, (uint32_t)len, &off, 100, T0, 0),
			 13);
	ck_assert_uint_eq(off, ends[15]);
	ck_assert_int_eq(gcap_writer_write_run(w, buf, (uint32_t)len, &off, 100, T0, 0),
			 0);
	ck_assert_uint_eq(off, ends[15]);
	/* the bit: record 20 is output 1's */
	((struct gcap_rec *)(buf + ends[19]))->outmask = 2;
	ck_assert_int_eq(
		gcap_writer_write_run(w, buf, (uint32_t)len, &off, 100, UINT64_MAX, 0),
		4);
	ck_assert_uint_eq(off, ends[19]);
	ck_assert_int_eq(
		gcap_writer_write_run(w, buf, ends[20], &off, 100, UINT64_MAX, 1), 1);
	ck_assert_uint_eq(off, ends[20]);
	/* a record outside the buffer: 21 and 22 go, 23 claims too much */
	((struct gcap_rec *)(buf + ends[22]))->caplen = 1u << 30;
	ck_assert_int_eq(
		gcap_writer_write_run(w, buf, (uint32_t)len, &off, 100, UINT64_MAX, 0),
		2);
	ck_assert_uint_eq(off, ends[22]);
	wt_close(w, NULL);
	/* records 0..22, as gcap_writer_write writes them */
	c = wt_conf1(pr);
	w = wt_open(&c);
	off = 0;
	for (unsigned i = 0; i < 23; i++) {
		const uint8_t *data;
		struct gcap_rec h;

		ck_assert_int_eq(gcap_rec_step(buf, (uint32_t)len, &off, &h, &data), 1);
		ck_assert_int_eq(gcap_writer_write(w, &h, data), 0);
	}
	wt_close(w, NULL);
	b[0] = slurp(p, &flen[0]);
	b[1] = slurp(pr, &flen[1]);
	ck_assert_int_eq(flen[0], flen[1]);
	ck_assert_msg(memcmp(b[0], b[1], (size_t)flen[0]) == 0,
		      "the runs that stopped wrote other records");
	free(b[0]);
	free(b[1]);

	/* each record's checks: nothing goes as a run */
	for (unsigned m = 0; m < 3; m++) {
		c = wt_conf1(wt_path("checked.pcap"));
		c.flush_each = m == 0;
		c.rotate_bytes = m == 1 ? 1000000 : 0;
		c.stop_bytes = m == 2 ? 1000000 : 0;
		w = wt_open(&c);
		off = 0;
		ck_assert_int_eq(
			gcap_writer_write_run(w, buf, ends[10], &off, 100, UINT64_MAX, 0),
			0);
		ck_assert_uint_eq(off, 0);
		wt_close(w, NULL);
	}
	/* pcapng: a record of no interface stops a run */
	c = wt_conf1(wt_path("bad.pcapng"));
	c.fmt = GCAP_FMT_PCAPNG;
	c.nifs = 3;
	c.ifs = wt_eth3;
	w = wt_open(&c);
	off = 0;
	((struct gcap_rec *)(buf + ends[4]))->port = 3;
	ck_assert_int_eq(
		gcap_writer_write_run(w, buf, ends[10], &off, 100, UINT64_MAX, 0), 5);
	ck_assert_uint_eq(off, ends[4]);
	wt_close(w, NULL);
}
END_TEST

TCase *
wt_tcase_durability(void)
{
	TCase *tc = wt_tcase("durability");

	tcase_add_test(tc, test_header_on_open_and_flush);
	tcase_add_test(tc, test_large_records);
	tcase_add_test(tc, test_if_strings_utf8);
	tcase_add_test(tc, test_fast_lane_same_bytes);
	return tc;
}

TCase *
wt_tcase_export_buffers(void)
{
	TCase *tc = wt_tcase("export_buffers");

	tcase_add_test(tc, test_write_buf_bits);
	tcase_add_test(tc, test_write_buf_corrupt);
	tcase_add_test(tc, test_write_run);
	return tc;
}

TCase *
wt_tcase_stdout(void)
{
	TCase *tc = wt_tcase("stdout");

	tcase_add_test(tc, test_stdout_pipe);
	tcase_add_test(tc, test_stdout_epipe);
	tcase_add_test(tc, test_stdout_no_rotation);
	return tc;
}
