/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gcap_capfile_fill_span(), the reader's calls for an executor that reads
 * each batch from its staging area: a mapped file's batches each lie in
 * one span no longer than the staging, every record comes once, in order,
 * with its bytes where the span puts it; a record longer than the staging
 * is refused; damage hands the rest to libpcap (its records read into the
 * buffer, a span of their own), as gcap_capfile_fill() does; an input
 * without a mapping (a pipe) is read into the buffer. A large file's pages
 * are mapped in ahead of the reader (capfile_populate.c), up to its window
 * and not beyond.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include "gpucap/gcap_capfile.h"

#define NREC 300u
#define MAXB 64u

static char dir[64];

/* record i's length and bytes: lengths from 60 to 2,059, bytes from i */
static uint32_t
rec_len(unsigned i)
{
	return 60u + (i * 977u) % 2000u;
}

static uint8_t
rec_byte(unsigned i, uint32_t k)
{
	return (uint8_t)(i * 31u + k);
}

/* A pcap of nrec records (one of big bytes at index big, if big < nrec),
 * then cut bytes off its end. */
/* the snapshot length make_pcap_n writes in the file's header */
static int file_snaplen = 262144;

static void
make_pcap_n(const char *path, unsigned nrec, unsigned big, uint32_t big_len, long cut)
{
	pcap_t *p = pcap_open_dead(DLT_EN10MB, file_snaplen);
	pcap_dumper_t *d = pcap_dump_open(p, path);
	static uint8_t data[262144];

	ck_assert_ptr_nonnull(d);
	for (unsigned i = 0; i < nrec; i++) {
		struct pcap_pkthdr h = { .ts = { (time_t)i, 0 } };

		h.caplen = h.len = i == big ? big_len : rec_len(i);
		for (uint32_t k = 0; k < h.caplen; k++)
			data[k] = rec_byte(i, k);
		pcap_dump((u_char *)d, &h, data);
	}
	pcap_dump_close(d);
	pcap_close(p);
	if (cut > 0) {
		FILE *f = fopen(path, "r+");

		ck_assert_ptr_nonnull(f);
		fseek(f, 0, SEEK_END);
		ck_assert_int_eq(ftruncate(fileno(f), ftell(f) - cut), 0);
		fclose(f);
	}
}

static void
make_pcap(const char *path, unsigned big, uint32_t big_len, long cut)
{
	make_pcap_n(path, NREC, big, big_len, cut);
}

/* Read path to its end in batches of at most MAXB records and size bytes,
 * each span copied as a device would be; check every record. @return the
 * records read; *rc the last fill's result, *inbuf how many batches were
 * libpcap's (read into the buffer). */
static unsigned
read_all(const char *path, uint32_t size, int *rc, unsigned *inbuf, bool mapped)
{
	char err[GCAP_ERRBUF_SIZE];
	struct gcap_capfile *cf = gcap_capfile_open(path, err);
	uint8_t *buf = malloc(size), *copy = malloc(size);
	struct gcap_pkt d[MAXB];
	uint64_t raw[MAXB];
	unsigned got = 0;

	ck_assert_msg(cf != NULL, "%s: %s", path, err);
	ck_assert_int_eq(gcap_capfile_mapped(cf), mapped);
	*inbuf = 0;
	for (;;) {
		const uint8_t *span = NULL;
		uint32_t used = 0;
		int n = gcap_capfile_fill_span(cf, buf, size, d, raw, MAXB, &used, &span);

		*rc = n;
		if (n <= 0)
			break;
		ck_assert_uint_le(used, size);
		*inbuf += span == buf;
		memcpy(copy, span, used);
		for (int i = 0; i < n; i++, got++) {
			uint64_t off = d[i].addr - (uint64_t)(uintptr_t)span;
			const uint8_t *p = copy + off;

			ck_assert_uint_le(off + d[i].caplen, used);
			ck_assert_uint_eq(d[i].caplen, rec_len(got));
			ck_assert_uint_eq(d[i].ts_ns, (uint64_t)got * 1000000000u);
			for (uint32_t k = 0; k < d[i].caplen; k++)
				ck_assert_uint_eq(p[k], rec_byte(got, k));
		}
	}
	gcap_capfile_close(cf);
	free(buf);
	free(copy);
	return got;
}

START_TEST(test_spans_within_size)
{
	char path[96];
	int rc;
	unsigned inbuf;

	snprintf(path, sizeof(path), "%s/a.pcap", dir);
	make_pcap(path, NREC, 0, 0);
	/* a size that cuts most batches short of MAXB records, and one that
	 * fits the longest record and little more */
	ck_assert_uint_eq(read_all(path, 9000, &rc, &inbuf, true), NREC);
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(inbuf, 0);
	ck_assert_uint_eq(read_all(path, 2059, &rc, &inbuf, true), NREC);
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(read_all(path, 1u << 20, &rc, &inbuf, true), NREC);
}
END_TEST

START_TEST(test_record_too_large)
{
	char path[96];
	int rc;
	unsigned inbuf;

	snprintf(path, sizeof(path), "%s/b.pcap", dir);
	make_pcap(path, 100, 20000, 0);
	/* the 100 records before it, then the refusal */
	ck_assert_uint_eq(read_all(path, 9000, &rc, &inbuf, true), 100);
	ck_assert_int_eq(rc, -E2BIG);
}
END_TEST

START_TEST(test_damage_to_libpcap)
{
	char path[96];
	int rc;
	unsigned inbuf;

	snprintf(path, sizeof(path), "%s/c.pcap", dir);
	/* the last record cut short: libpcap reads the ones before it and
	 * fails, as for gcap_capfile_fill() */
	make_pcap(path, NREC, 0, 10);
	ck_assert_uint_eq(read_all(path, 9000, &rc, &inbuf, true), NREC - 1);
	ck_assert_int_eq(rc, -EIO);
}
END_TEST

START_TEST(test_damage_midway)
{
	char path[96], err[GCAP_ERRBUF_SIZE];
	struct gcap_capfile *cf;
	static uint8_t buf[9000], copy[9000];
	struct gcap_pkt d[MAXB];
	uint64_t raw[MAXB];
	unsigned got = 0, inbuf = 0, inmap = 0;
	pcap_t *ref;
	int n;

	/* a record longer than the header's snapshot length midway: the
	 * reader hands the rest to libpcap there, whose records come in buf
	 * (a span of their own); every record as libpcap reads the file */
	snprintf(path, sizeof(path), "%s/m.pcap", dir);
	file_snaplen = 2000;
	make_pcap_n(path, NREC, NREC, 0, 0);
	file_snaplen = 262144;
	{
		unsigned first = 0;

		while (first < NREC && rec_len(first) <= 2000)
			first++;
		ck_assert_uint_lt(first, NREC / 2); /* midway, not at the end */
	}
	ref = pcap_open_offline(path, err);
	ck_assert_msg(ref != NULL, "%s", err);
	cf = gcap_capfile_open(path, err);
	ck_assert_msg(cf != NULL, "%s", err);
	for (;;) {
		const uint8_t *span = NULL;
		uint32_t used = 0;

		n = gcap_capfile_fill_span(cf, buf, sizeof(buf), d, raw, MAXB, &used,
					   &span);
		if (n <= 0)
			break;
		ck_assert_uint_le(used, sizeof(buf));
		inbuf += span == buf;
		inmap += span != buf;
		memcpy(copy, span, used);
		for (int i = 0; i < n; i++, got++) {
			struct pcap_pkthdr *h;
			const u_char *data;
			uint64_t off = d[i].addr - (uint64_t)(uintptr_t)span;

			ck_assert_int_eq(pcap_next_ex(ref, &h, &data), 1);
			ck_assert_uint_eq(d[i].caplen, h->caplen);
			ck_assert_uint_eq(d[i].wirelen, h->len);
			ck_assert_uint_le(off + d[i].caplen, used);
			ck_assert_int_eq(memcmp(copy + off, data, h->caplen), 0);
		}
	}
	ck_assert_int_eq(n, 0);
	ck_assert_uint_eq(got, NREC);
	ck_assert_uint_gt(inmap, 0);
	ck_assert_uint_gt(inbuf, 0);
	gcap_capfile_close(cf);
	pcap_close(ref);
}
END_TEST

START_TEST(test_pipe_into_buffer)
{
	char path[96], cmd[128];
	int rc;
	unsigned inbuf;
	FILE *f;

	snprintf(path, sizeof(path), "%s/d.pcap", dir);
	make_pcap(path, NREC, 0, 0);
	/* standard input from a pipe: no mapping, every batch in buf */
	snprintf(cmd, sizeof(cmd), "cat %s", path);
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(dup2(fileno(f), 0), 0);
	ck_assert_uint_eq(read_all("-", 1u << 20, &rc, &inbuf, false), NREC);
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_gt(inbuf, 0);
	pclose(f);
}
END_TEST

/* Resident bytes of the mapping that holds addr (/proc/self/smaps). */
static uint64_t
map_rss(uint64_t addr)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in = false;
	uint64_t kb = 0;

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
			in = addr >= lo && addr < hi;
		else if (in && sscanf(line, "Rss: %lu kB", &lo) == 1)
			kb = lo;
	}
	fclose(f);
	return kb << 10;
}

START_TEST(test_populated_ahead)
{
	const unsigned nrec = 100000; /* about 106 MB: more than the window */
	char path[96], err[GCAP_ERRBUF_SIZE];
	struct gcap_capfile *cf;
	static uint8_t buf[1u << 20];
	struct gcap_pkt d[MAXB];
	uint64_t raw[MAXB], rss = 0;
	const uint8_t *span;
	uint32_t used;
	unsigned got;
	int n;

	snprintf(path, sizeof(path), "%s/e.pcap", dir);
	make_pcap_n(path, nrec, nrec, 0, 0);
	cf = gcap_capfile_open(path, err);
	ck_assert_msg(cf != NULL, "%s", err);
	n = gcap_capfile_fill_span(cf, buf, sizeof(buf), d, raw, MAXB, &used, &span);
	ck_assert_int_eq(n, MAXB);
	/* the reader is at its first 64 records: the next 64 MB are mapped
	 * in by the thread (however slowly it runs), and no more */
	for (int i = 0; i < 3000 && rss < (60u << 20); i++) {
		usleep(10000);
		rss = map_rss(d[0].addr);
	}
	ck_assert_msg(rss >= (60u << 20), "%" PRIu64 " bytes mapped in ahead", rss);
	usleep(100000);
	rss = map_rss(d[0].addr);
	ck_assert_msg(rss <= (72u << 20), "%" PRIu64 " bytes mapped in, past the window",
		      rss);
	/* the rest reads as it should */
	for (got = (unsigned)n; (n = gcap_capfile_fill_span(cf, buf, sizeof(buf), d, raw,
							    MAXB, &used, &span)) > 0;
	     got += (unsigned)n)
		ck_assert_uint_eq(d[n - 1].caplen, rec_len(got + (unsigned)n - 1));
	ck_assert_int_eq(n, 0);
	ck_assert_uint_eq(got, nrec);
	gcap_capfile_close(cf);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("capfile");
	TCase *tc = tcase_create("span");

	tcase_set_timeout(tc, 100);
	SRunner *sr;
	int nfail;

	snprintf(dir, sizeof(dir), "%s/gcap-span-XXXXXX",
		 getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp");
	if (strlen(dir) >= sizeof(dir) - 1 || mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	tcase_add_test(tc, test_spans_within_size);
	tcase_add_test(tc, test_record_too_large);
	tcase_add_test(tc, test_damage_to_libpcap);
	tcase_add_test(tc, test_damage_midway);
	tcase_add_test(tc, test_pipe_into_buffer);
	tcase_add_test(tc, test_populated_ahead);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nfail = srunner_ntests_failed(sr);
	srunner_free(sr);
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", dir);
	}
	return nfail == 0 ? 0 : 1;
}
