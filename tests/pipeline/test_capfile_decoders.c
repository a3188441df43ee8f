/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Compressed inputs decompressed on several threads (capfile_par.c): every
 * layout of zstd, lz4 and gzip streams gives the same records, in order,
 * on one decoding thread and on three; the streams that split (zstd
 * frames, lz4 frames of independent blocks, BGZF's gzip members) are
 * decoded as units side by side, the others (linked lz4 blocks, a zstd
 * frame too large for a unit, plain gzip members) serially,
 * and mixtures of both; damage ends the input with the codec's message
 * after the records before it; a truncated stream ends as it ends on one
 * thread; a pipe splits as a file does; closing early stops the threads.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pcap/pcap.h>
#include <zstd.h>

#include "gpucap/gcap_capfile.h"
#include "tests/tools/layouts.h"

#define MAXB 256u
#define BUFSZ (4u << 20)

static char dir[64];
/* the plain pcap: its bytes, and its records' count */
static uint8_t *plain;
static size_t plain_len;
static unsigned nrec;

static uint32_t
rec_len(unsigned i)
{
	return 60u + (i * 977u) % 2000u;
}

/* records 5,000 to 5,199 do not compress (lz4 stores their blocks) */
static uint8_t
rec_byte(unsigned i, uint32_t k)
{
	if (i >= 5000 && i < 5200) {
		uint32_t h = (i * 2654435761u) ^ (k * 2246822519u);

		h ^= h >> 15;
		h *= 2654435761u;
		return (uint8_t)(h >> 13);
	}
	return (uint8_t)(i * 31u + k / 8u);
}

/* A pcap of n records, as bytes in memory (plain, plain_len). */
static void
make_plain(unsigned n)
{
	char path[128];
	pcap_t *p = pcap_open_dead(DLT_EN10MB, 262144);
	pcap_dumper_t *d;
	static uint8_t data[4096];
	FILE *f;
	long len;

	snprintf(path, sizeof(path), "%s/plain.pcap", dir);
	d = pcap_dump_open(p, path);
	ck_assert_ptr_nonnull(d);
	for (unsigned i = 0; i < n; i++) {
		struct pcap_pkthdr h = { .ts = { (time_t)i, 0 } };

		h.caplen = h.len = rec_len(i);
		for (uint32_t k = 0; k < h.caplen; k++)
			data[k] = rec_byte(i, k);
		pcap_dump((u_char *)d, &h, data);
	}
	pcap_dump_close(d);
	pcap_close(p);
	f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	free(plain);
	plain = malloc((size_t)len);
	ck_assert_ptr_nonnull(plain);
	ck_assert_uint_eq(fread(plain, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	plain_len = (size_t)len;
	nrec = n;
}

static void
write_file(const char *name, const struct lay_out *o, char *path, size_t plen)
{
	FILE *f;

	snprintf(path, plen, "%s/%s", dir, name);
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(o->b, 1, o->len, f), o->len);
	fclose(f);
}

/* ---- reading ---- */

struct got {
	unsigned recs;
	int rc;
	char msg[512];
	uint64_t units, pieces;
	unsigned threads;
};

/* Is d record i? (one check per record: check's asserts are slow) */
static bool
rec_ok(const struct gcap_pkt *d, unsigned i)
{
	const uint8_t *p = (const uint8_t *)(uintptr_t)d->addr;

	if (d->caplen != rec_len(i) || d->ts_ns != (uint64_t)i * 1000000000u)
		return false;
	for (uint32_t k = 0; k < d->caplen; k++)
		if (p[k] != rec_byte(i, k))
			return false;
	return true;
}

/* Read path to its end on dec decoders; check each record when check. */
static struct got
read_all(const char *path, unsigned dec, bool check, unsigned stop_after)
{
	char err[GCAP_ERRBUF_SIZE];
	struct gcap_capfile_conf conf = { .decoders = dec };
	struct gcap_capfile *cf = gcap_capfile_open_conf(path, &conf, err);
	static uint8_t buf[BUFSZ];
	struct gcap_pkt d[MAXB];
	uint64_t raw[MAXB];
	struct got g = { 0 };

	ck_assert_msg(cf != NULL, "%s: %s", path, err);
	for (;;) {
		uint32_t used = 0;
		int n = gcap_capfile_fill(cf, buf, BUFSZ, d, raw, MAXB, &used);

		g.rc = n;
		if (n <= 0)
			break;
		for (int i = 0; i < n; i++, g.recs++)
			if (check && !rec_ok(&d[i], g.recs))
				ck_abort_msg("%s on %u threads: record %u differs", path,
					     dec, g.recs);
		if (stop_after && g.recs >= stop_after)
			break;
	}
	if (g.rc < 0)
		snprintf(g.msg, sizeof(g.msg), "%s", gcap_capfile_errmsg(cf));
	g.threads = gcap_capfile_decoders(cf, &g.units, &g.pieces);
	gcap_capfile_close(cf);
	return g;
}

/* Both ways give every record; on three threads units side by side
 * (units) and pieces in turn (pieces) as expected. */
static void
same_records(const char *name, const struct lay_out *o, bool units, bool pieces)
{
	char path[128];
	struct got one, three;

	write_file(name, o, path, sizeof(path));
	one = read_all(path, 1, true, 0);
	three = read_all(path, 3, true, 0);
	ck_assert_msg(one.rc == 0 && one.recs == nrec,
		      "%s, one thread: %u records, rc %d", name, one.recs, one.rc);
	ck_assert_msg(three.rc == 0 && three.recs == nrec,
		      "%s, three threads: %u records, rc %d (%s)", name, three.recs,
		      three.rc, three.msg);
	ck_assert_uint_eq(one.threads, 1);
	ck_assert_uint_eq(three.threads, 3);
	ck_assert_msg((three.units > 0) == units && (three.pieces > 0) == pieces,
		      "%s: %llu units, %llu pieces", name,
		      (unsigned long long)three.units, (unsigned long long)three.pieces);
}

START_TEST(test_lz4_layouts)
{
	struct lay_out o = { 0 };
	size_t third = plain_len / 3;

	/* lz4(1)'s default: independent 4 MB blocks, content checksum */
	lay_lz4(&o, plain, plain_len, 7, false, true, false, false);
	same_records("default.lz4", &o, true, false);
	/* 64 KB blocks, every checksum, the content size said */
	o.len = 0;
	lay_lz4(&o, plain, plain_len, 4, false, true, true, true);
	same_records("small.lz4", &o, true, false);
	/* linked blocks: the frame decoder */
	o.len = 0;
	lay_lz4(&o, plain, plain_len, 5, true, true, false, false);
	same_records("linked.lz4", &o, false, true);
	/* both kinds, skippable frames, no checksums */
	o.len = 0;
	lay_skippable(&o, 100);
	lay_lz4(&o, plain, third, 4, false, false, false, false);
	lay_lz4(&o, plain + third, third, 4, true, false, false, true);
	lay_skippable(&o, 10000);
	lay_lz4(&o, plain + 2 * third, plain_len - 2 * third, 6, false, true, false,
		true);
	same_records("mixed.lz4", &o, true, true);
	free(o.b);
}
END_TEST

START_TEST(test_zstd_layouts)
{
	struct lay_out o = { 0 };
	size_t half = plain_len / 2;

	/* frames of 1 MB, their sizes said */
	lay_zstd(&o, plain, plain_len, 1 << 20, true, false);
	same_records("frames.zst", &o, true, false);
	/* pzstd's layout: a skippable frame before each, sizes not said */
	o.len = 0;
	lay_zstd(&o, plain, plain_len, 1 << 20, false, true);
	same_records("pzstd.zst", &o, true, false);
	/* two skippable frames first, one over 4 KB: found past both */
	o.len = 0;
	lay_skippable(&o, 5000);
	lay_skippable(&o, 10);
	lay_zstd(&o, plain, plain_len, 1 << 20, true, false);
	same_records("skips.zst", &o, true, false);
	/* one frame over a unit's 8 MB: in turn; one under it: a unit */
	o.len = 0;
	lay_zstd(&o, plain, plain_len, 0, true, false);
	same_records("one.zst", &o, false, true);
	o.len = 0;
	lay_zstd(&o, plain, half, 0, true, false);
	lay_zstd(&o, plain + half, plain_len - half, 0, false, false);
	same_records("halves.zst", &o, true, false);
	/* a frame of 1 MB units, then one whose size is not said */
	o.len = 0;
	lay_zstd(&o, plain, half, 1 << 20, true, false);
	lay_zstd(&o, plain + half, plain_len - half, 0, false, false);
	same_records("two-kinds.zst", &o, true, false);
	free(o.b);
}
END_TEST

START_TEST(test_gzip_layouts)
{
	struct lay_out o = { 0 };
	size_t third = plain_len / 3;

	/* bgzip's members of 64 KB, and its empty member at the end */
	lay_gzip(&o, plain, plain_len, 65280, true);
	lay_gzip(&o, plain, 0, 65280, true);
	same_records("bgzf.gz", &o, true, false);
	/* one plain member: the streaming decoder */
	o.len = 0;
	lay_gzip(&o, plain, plain_len, plain_len, false);
	same_records("one.gz", &o, false, true);
	/* both kinds in one file */
	o.len = 0;
	lay_gzip(&o, plain, third, 65280, true);
	lay_gzip(&o, plain + third, third, third, false);
	lay_gzip(&o, plain + 2 * third, plain_len - 2 * third, 30000, true);
	same_records("mixed.gz", &o, true, true);
	free(o.b);
}
END_TEST

/* A frame whose window is over the streaming decoder's limit (2^27) is
 * refused on three threads as on one (the one-shot decoder has no
 * limit). */
START_TEST(test_zstd_window)
{
	ZSTD_CCtx *c = ZSTD_createCCtx();
	struct lay_out o = { 0 };
	ZSTD_inBuffer in = { plain, 1 << 20, 0 };
	char path[128], err1[GCAP_ERRBUF_SIZE], err3[GCAP_ERRBUF_SIZE];
	struct gcap_capfile_conf one = { .decoders = 1 }, three = { .decoders = 3 };
	struct gcap_capfile *cf1, *cf3;
	size_t r;

	ck_assert_ptr_nonnull(c);
	ZSTD_CCtx_setParameter(c, ZSTD_c_windowLog, 28);
	/* streamed in pieces: the size unknown, the window stays 2^28 */
	for (size_t off = 0; off < (1u << 20); off += 65536) {
		ZSTD_EndDirective end =
			off + 65536 < (1u << 20) ? ZSTD_e_continue : ZSTD_e_end;

		in = (ZSTD_inBuffer){ plain + off, 65536, 0 };
		do {
			ZSTD_outBuffer ob;

			lay_room(&o, 1 << 17);
			ob = (ZSTD_outBuffer){ o.b + o.len, o.cap - o.len, 0 };
			r = ZSTD_compressStream2(c, &ob, &in, end);
			ck_assert(!ZSTD_isError(r));
			o.len += ob.pos;
		} while (end == ZSTD_e_end ? r != 0 : in.pos < in.size);
	}
	ZSTD_freeCCtx(c);
	write_file("window.zst", &o, path, sizeof(path));
	cf1 = gcap_capfile_open_conf(path, &one, err1);
	cf3 = gcap_capfile_open_conf(path, &three, err3);
	ck_assert_msg(cf1 == NULL && cf3 == NULL && strstr(err1, "memory") != NULL &&
			      strstr(err3, "memory") != NULL,
		      "a 2^28 window: one thread '%s', three '%s'", cf1 ? "opened" : err1,
		      cf3 ? "opened" : err3);
	free(o.b);
}
END_TEST

/* Frames larger than a unit (8 MB): decoded in turn, said or not. */
START_TEST(test_zstd_large)
{
	struct lay_out o = { 0 };

	make_plain(40000);
	ck_assert_uint_gt(plain_len, 36u << 20);
	lay_zstd(&o, plain, plain_len, 0, true, false);
	same_records("large.zst", &o, false, true);
	o.len = 0;
	lay_zstd(&o, plain, plain_len, 0, false, false);
	same_records("large-unsaid.zst", &o, false, true);
	/* units, a large frame, units again */
	o.len = 0;
	lay_zstd(&o, plain, 1 << 20, 1 << 20, true, false);
	lay_zstd(&o, plain + (1 << 20), plain_len - (2 << 20), 0, true, false);
	lay_zstd(&o, plain + plain_len - (1 << 20), 1 << 20, 1 << 19, false, true);
	same_records("around.zst", &o, true, true);
	free(o.b);
	make_plain(12000);
}
END_TEST

/* Damage in a unit: the records before it, then the codec's message. */
static void
damaged(const char *name, const struct lay_out *o, size_t at, const char *want,
	bool prefix)
{
	char path[128];
	struct lay_out d = { 0 };
	struct got g1, g3;

	lay_room(&d, o->len);
	memcpy(d.b, o->b, o->len);
	d.len = o->len;
	d.b[at] ^= 0x5a;
	write_file(name, &d, path, sizeof(path));
	g1 = read_all(path, 1, false, 0);
	/* on threads a unit is checked before it is read: the records
	 * before the damage are whole (checked) */
	g3 = read_all(path, 3, prefix, 0);
	ck_assert_msg(g1.rc == -EIO && strstr(g1.msg, want) != NULL,
		      "%s, one thread: rc %d, '%s'", name, g1.rc, g1.msg);
	ck_assert_msg(g3.rc == -EIO && strstr(g3.msg, want) != NULL,
		      "%s, three threads: rc %d, '%s'", name, g3.rc, g3.msg);
	/* a checksum checked before its data is handed out stops short of
	 * the damage; the content checksum comes after all of its frame */
	if (prefix)
		ck_assert_uint_lt(g3.recs, nrec);
	ck_assert_uint_le(g1.recs, nrec);
	ck_assert_uint_gt(g3.recs, 0);
	free(d.b);
}

START_TEST(test_damage)
{
	struct lay_out o = { 0 };

	/* block checksums: the damaged block is refused */
	lay_lz4(&o, plain, plain_len, 4, false, true, true, false);
	damaged("bsum.lz4", &o, o.len / 2, "lz4: damaged data", true);
	/* the content checksum alone: found at the frame's end */
	o.len = 0;
	lay_lz4(&o, plain, plain_len, 4, false, true, false, false);
	damaged("csum.lz4", &o, o.len / 2, "ERROR_contentChecksum_invalid", false);
	/* a BGZF member's CRC */
	o.len = 0;
	lay_gzip(&o, plain, plain_len, 65280, true);
	damaged("bgzf.gz", &o, o.len / 2, "gzip: damaged data", true);
	/* a zstd frame's checksum */
	o.len = 0;
	lay_zstd(&o, plain, plain_len, 1 << 20, true, false);
	damaged("frames.zst", &o, o.len / 2, "zstd: damaged data", true);
	free(o.b);
}
END_TEST

/* A truncated stream ends as on one thread: the same records. */
START_TEST(test_truncated)
{
	struct lay_out o = { 0 };
	const char *names[] = { "cut.lz4", "cut.zst" };

	for (int k = 0; k < 2; k++) {
		char path[128];
		struct got g1, g3;

		o.len = 0;
		if (k == 0)
			lay_lz4(&o, plain, plain_len, 4, false, true, false, false);
		else
			lay_zstd(&o, plain, plain_len, 1 << 20, true, false);
		o.len = o.len * 3 / 5;
		write_file(names[k], &o, path, sizeof(path));
		g1 = read_all(path, 1, true, 0);
		g3 = read_all(path, 3, true, 0);
		ck_assert_uint_gt(g3.recs, 0);
		ck_assert_msg(g1.recs == g3.recs && g1.rc == g3.rc,
			      "%s: one thread %u records rc %d, three %u rc %d", names[k],
			      g1.recs, g1.rc, g3.recs, g3.rc);
	}
	free(o.b);
}
END_TEST

/* A pipe splits as a file does; closing early stops the threads. */
START_TEST(test_pipe_and_close)
{
	struct lay_out o = { 0 };
	char path[128];
	int fd[2];
	pid_t pid;
	struct got g;

	lay_lz4(&o, plain, plain_len, 4, false, true, false, false);
	ck_assert_int_eq(pipe(fd), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		size_t off = 0;

		close(fd[0]);
		while (off < o.len) {
			ssize_t n = write(fd[1], o.b + off, o.len - off);

			if (n <= 0)
				_exit(1);
			off += (size_t)n;
		}
		_exit(0);
	}
	close(fd[1]);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd[0]);
	g = read_all(path, 3, true, 0);
	close(fd[0]);
	waitpid(pid, NULL, 0);
	ck_assert_int_eq(g.rc, 0);
	ck_assert_uint_eq(g.recs, nrec);
	ck_assert_uint_gt(g.units, 0);
	/* stop after the first batch: the threads wait on full slots */
	write_file("early.lz4", &o, path, sizeof(path));
	g = read_all(path, 3, true, 100);
	ck_assert_uint_ge(g.recs, 100);
	ck_assert_uint_lt(g.recs, nrec);
	free(o.b);
}
END_TEST

static void
setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/gcap-cfdec-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	make_plain(12000);
}

static void
teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	free(plain);
	plain = NULL;
}

int
main(void)
{
	Suite *s = suite_create("capfile-decoders");
	TCase *tc = tcase_create("decoders");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_lz4_layouts);
	tcase_add_test(tc, test_zstd_layouts);
	tcase_add_test(tc, test_gzip_layouts);
	tcase_add_test(tc, test_zstd_window);
	tcase_add_test(tc, test_zstd_large);
	tcase_add_test(tc, test_damage);
	tcase_add_test(tc, test_truncated);
	tcase_add_test(tc, test_pipe_and_close);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
