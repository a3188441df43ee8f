/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writer suite, failed writes: EFBIG under RLIMIT_FSIZE, ENOSPC on a
 * small tmpfs, and a FIFO whose reader stops (the stop's interrupt). The file must end at its last whole record, later calls
 * report the same error, and the counts must match what the files hold.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pcap/pcap.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wt_util.h"

/* ==== EFBIG: truncation back to the last whole record ==== */

/*
 * RLIMIT_FSIZE with SIGXFSZ ignored makes write(2) fail with EFBIG past a
 * size, the way a full disk fails with ENOSPC, without mounting anything.
 * The limit applies to every file of the process, check's own message file
 * included: between fsz_limit and fsz_restore no ck_assert may run, so the
 * tests keep results in variables and check them afterwards.
 */
struct fsz_guard {
	struct rlimit old;
	void (*oldsig)(int);
	int rc;
};

static void
fsz_limit(struct fsz_guard *g, rlim_t bytes)
{
	struct rlimit rl;

	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &g->old), 0);
	g->oldsig = signal(SIGXFSZ, SIG_IGN);
	rl.rlim_cur = bytes;
	rl.rlim_max = g->old.rlim_max;
	g->rc = setrlimit(RLIMIT_FSIZE, &rl);
}

static void
fsz_restore(struct fsz_guard *g)
{
	int rc = setrlimit(RLIMIT_FSIZE, &g->old);

	signal(SIGXFSZ, g->oldsig);
	ck_assert_int_eq(g->rc, 0);
	ck_assert_int_eq(rc, 0);
}

START_TEST(test_efbig_flush_each)
{
	/* -U: the failing write is exactly the record that did not fit */
	const char *p = wt_path("fsz.pcap");
	struct gcap_writer_conf c = wt_conf1(p);
	struct gcap_writer *w;
	struct fsz_guard g;
	char eb[GCAP_ERRBUF_SIZE] = "";
	struct wt_rec r;
	uint64_t nrec, nbytes;
	int rc = 0, rc2, rc3, rc4, rcc;
	unsigned i;

	c.flush_each = true;
	w = wt_open(&c);
	fsz_limit(&g, 24 + 5 * R100 + 50); /* record 5 ends past the limit */
	for (i = 0; i < 10; i++) {
		wt_mkrec(&r, i, 100, 1);
		rc = gcap_writer_write(w, &r.h, r.data);
		if (rc != 0)
			break;
	}
	/* sticky: later calls report the same error */
	rc2 = gcap_writer_write(w, &r.h, r.data);
	rc3 = gcap_writer_flush(w);
	rc4 = gcap_writer_tick(w, T0 + 100 * NS);
	gcap_writer_counts(w, &nrec, &nbytes);
	rcc = gcap_writer_close(w, NULL, eb);
	fsz_restore(&g);

	ck_assert_uint_eq(i, 5);
	ck_assert_int_eq(rc, -EFBIG);
	ck_assert_int_eq(rc2, -EFBIG);
	ck_assert_int_eq(rc3, -EFBIG);
	ck_assert_int_eq(rc4, -EFBIG);
	ck_assert_uint_eq(nrec, 5);
	ck_assert_uint_eq(nbytes, 24 + 5 * R100);
	ck_assert_int_eq(rcc, -EFBIG);
	ck_assert_msg(strstr(eb, p) != NULL && strstr(eb, strerror(EFBIG)) != NULL, "%s",
		      eb);
	ck_assert_int_eq(wt_fsize(p), 24 + 5 * R100);
	wt_check_file(p, 0, 5, 100, 65535, DLT_EN10MB);
}
END_TEST

START_TEST(test_efbig_buffered)
{
	/* buffered: the flush fails half way through the buffer; the file
	 * keeps the whole records that made it, counts follow */
	for (int ng = 0; ng < 2; ng++) {
		const char *p = wt_path(ng ? "fb.pcapng" : "fb.pcap");
		struct gcap_writer_conf c = wt_conf1(p);
		struct gcap_writer *w;
		struct fsz_guard g;
		char eb[GCAP_ERRBUF_SIZE] = "";
		long long hdr, rec = ng ? 28 + 100 + 4 : R100;
		uint64_t nrec, nbytes;
		int wrc = 0, frc, rc2, rcc;
		struct wt_rec r;

		w = wt_open(&c);
		hdr = wt_fsize(p);
		fsz_limit(&g, (rlim_t)(hdr + 7 * rec + rec / 2));
		for (unsigned i = 0; i < 20; i++) { /* all in the buffer */
			wt_mkrec(&r, i, 100, 1);
			wrc |= gcap_writer_write(w, &r.h, r.data);
		}
		frc = gcap_writer_flush(w);
		gcap_writer_counts(w, &nrec, &nbytes);
		rc2 = gcap_writer_write(w, &r.h, r.data);
		rcc = gcap_writer_close(w, NULL, eb);
		fsz_restore(&g);

		ck_assert_int_eq(wrc, 0);
		ck_assert_int_eq(frc, -EFBIG);
		ck_assert_uint_eq(nrec, 7);
		ck_assert_uint_eq(nbytes, (uint64_t)(hdr + 7 * rec));
		ck_assert_int_eq(rc2, -EFBIG);
		ck_assert_int_eq(rcc, -EFBIG);
		ck_assert_msg(strstr(eb, "last whole record") != NULL, "%s", eb);
		ck_assert_int_eq(wt_fsize(p), hdr + 7 * rec);
		wt_check_file(p, 0, 7, 100, 65535, DLT_EN10MB);
		if (ng) {
			struct wt_ng ni;

			wt_ng_parse(p, &ni);
			ck_assert_uint_eq(ni.nepb, 7);
			ck_assert_uint_eq(ni.nisb, 0);
		}
	}
}
END_TEST

START_TEST(test_efbig_large_record)
{
	/* a record written past the buffer (direct write) is cut off whole */
	static uint8_t big[2 << 20];
	const char *p = wt_path("fbig.pcap");
	struct gcap_writer_conf c = wt_conf1(p);
	struct gcap_writer *w;
	struct gcap_rec h = {
		.ts_ns = T0, .caplen = sizeof(big), .wirelen = sizeof(big), .outmask = 1
	};
	struct fsz_guard g;
	char eb[GCAP_ERRBUF_SIZE];
	int rc, rcc;

	c.snaplen = sizeof(big);
	w = wt_open(&c);
	wt_write_n(w, 0, 3, 100, 1);
	fsz_limit(&g, 1 << 20);
	rc = gcap_writer_write(w, &h, big);
	rcc = gcap_writer_close(w, NULL, eb);
	fsz_restore(&g);
	ck_assert_int_eq(rc, -EFBIG);
	ck_assert_int_eq(rcc, -EFBIG);
	ck_assert_int_eq(wt_fsize(p), 24 + 3 * R100);
	wt_check_file(p, 0, 3, 100, sizeof(big), DLT_EN10MB);
}
END_TEST

START_TEST(test_efbig_at_close_isb)
{
	/* the ISBs at close do not fit: the records stay, the error shows */
	const char *p = wt_path("fisb.pcapng");
	struct gcap_writer_conf c = wt_conf1(p);
	struct gcap_writer_if_stats st = { 1, 2, 3, 0 };
	struct gcap_writer *w;
	struct fsz_guard g;
	char eb[GCAP_ERRBUF_SIZE] = "";
	long long hdr;
	int rcc;

	w = wt_open(&c);
	hdr = wt_fsize(p);
	wt_write_n(w, 0, 4, 100, 1);
	ck_assert_int_eq(gcap_writer_flush(w), 0);
	fsz_limit(&g, (rlim_t)(hdr + 4 * 132 + 40)); /* an ISB is 88 bytes */
	rcc = gcap_writer_close(w, &st, eb);
	fsz_restore(&g);
	ck_assert_int_eq(rcc, -EFBIG);
	ck_assert_msg(eb[0] != '\0', "no message");
	ck_assert_int_eq(wt_fsize(p), hdr + 4 * 132);
	wt_check_file(p, 0, 4, 100, 65535, DLT_EN10MB);
}
END_TEST

/* ==== a real full disk: ENOSPC on a small tmpfs ==== */

/*
 * Mount a tmpfs of `size` on dir (created if needed), in a mount namespace
 * of this test's own process so that nothing outlives it. @return false,
 * with a message, when that cannot be done (not root, no mount rights): the
 * caller skips.
 */
static bool
small_fs(const char *dir, const char *size)
{
	static bool ns, said;
	char opt[64];

	if (geteuid() != 0) {
		if (!said)
			fprintf(stderr, "writer: not root, tmpfs ENOSPC check "
					"skipped\n");
		said = true;
		return false;
	}
	if (!ns) {
		if (unshare(CLONE_NEWNS) != 0 ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
			fprintf(stderr,
				"writer: no mount namespace (%s), tmpfs "
				"ENOSPC check skipped\n",
				strerror(errno));
			return false;
		}
		ns = true;
	}
	(void)umount2(dir, MNT_DETACH);
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "writer: mkdir %s: %s\n", dir, strerror(errno));
		return false;
	}
	snprintf(opt, sizeof(opt), "size=%s", size);
	if (mount("tmpfs", dir, "tmpfs", 0, opt) != 0) {
		fprintf(stderr,
			"writer: cannot mount a tmpfs (%s), tmpfs ENOSPC "
			"check skipped\n",
			strerror(errno));
		return false;
	}
	return true;
}

/*
 * Read path with libpcap: every record must be the next one wt_mkrec makes
 * (ids from *next on, varied lengths) and the file must end cleanly.
 * @return records read; *next advances past them.
 */
static uint64_t
read_seq(const char *path, unsigned *next)
{
	char eb[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline_with_tstamp_precision(
		path, PCAP_TSTAMP_PRECISION_NANO, eb);
	struct pcap_pkthdr *h;
	const u_char *d;
	uint64_t k = 0;
	int rc;

	ck_assert_msg(p != NULL, "libpcap cannot read '%s': %s", path, eb);
	while ((rc = pcap_next_ex(p, &h, &d)) == 1) {
		struct wt_rec r;

		wt_mkrec(&r, *next, wt_vlen(*next), 1);
		ck_assert_uint_eq((uint64_t)h->ts.tv_sec, r.h.ts_ns / NS);
		ck_assert_uint_eq((uint64_t)h->ts.tv_usec, r.h.ts_ns % NS);
		ck_assert_uint_eq(h->caplen, r.h.caplen);
		ck_assert_uint_eq(h->len, r.h.wirelen);
		ck_assert_mem_eq(d, r.data, r.h.caplen);
		(*next)++;
		k++;
	}
	ck_assert_msg(rc == PCAP_ERROR_BREAK,
		      "%s: read error after %llu "
		      "records: %s",
		      path, (unsigned long long)k, pcap_geterr(p));
	pcap_close(p);
	return k;
}

/*
 * Write varied records into a small tmpfs until the disk is full, then
 * check that gcap_writer_counts() is what the files hold: as many records
 * as libpcap reads back (cleanly, in order, no gaps), and as many bytes.
 * rotate: -C in bytes (0: one file).
 */
static void
enospc_case(bool ng, const char *size, uint64_t rotate)
{
	const char *dir = wt_path("mnt");
	char p[600], eb[GCAP_ERRBUF_SIZE] = "";
	struct gcap_writer_conf c;
	struct gcap_writer *w;
	struct wt_rec r;
	uint64_t nrec, nbytes, got = 0, sz = 0;
	unsigned i, next = 0, nfiles = 0;
	int rc = 0, rcc;

	if (!small_fs(dir, size))
		return;
	snprintf(p, sizeof(p), "%s/o.%s", dir, ng ? "pcapng" : "pcap");
	c = wt_conf1(p);
	c.rotate_bytes = rotate;
	w = wt_open(&c);
	/* up to 40000 records of about 770 bytes: past the 1 MiB buffer
	 * and the I/O thread's 8 MiB ring, so that with the thread the
	 * failure comes back at a hand-over, not only at the flush */
	for (i = 0; i < 40000; i++) {
		wt_mkrec(&r, i, wt_vlen(i), 1);
		rc = gcap_writer_write(w, &r.h, r.data);
		if (rc != 0)
			break;
	}
	if (rc == 0)
		rc = gcap_writer_flush(w);
	gcap_writer_counts(w, &nrec, &nbytes);
	rcc = gcap_writer_close(w, NULL, eb);
	ck_assert_msg(rc == -ENOSPC, "%s (%s, -C %llu): write %d at record %u", p, size,
		      (unsigned long long)rotate, rc, i);
	ck_assert_int_eq(rcc, -ENOSPC);
	ck_assert_msg(strstr(eb, strerror(ENOSPC)) != NULL, "%s", eb);

	for (unsigned k = 0; k < 100; k++) {
		char f[640];

		if (k == 0)
			snprintf(f, sizeof(f), "%s", p);
		else
			snprintf(f, sizeof(f), "%s%u", p, k);
		if (!wt_exists(f))
			break;
		got += read_seq(f, &next);
		sz += (uint64_t)wt_fsize(f);
		nfiles++;
	}
	ck_assert_msg(got == nrec,
		      "%s (%s, -C %llu): counts say %llu records, "
		      "the %u files hold %llu",
		      p, size, (unsigned long long)rotate, (unsigned long long)nrec,
		      nfiles, (unsigned long long)got);
	ck_assert_uint_eq(sz, nbytes);
	ck_assert_uint_gt(got, 0);
	ck_assert_uint_le(got, i);
	if (rotate != 0)
		ck_assert_uint_gt(nfiles, 1);
	ck_assert_int_eq(umount2(dir, MNT_DETACH), 0);
}

START_TEST(test_efbig_streaming)
{
	/* the limit falls past several buffers: a write fails while later
	 * records are framed (with write_behind, while the thread holds
	 * more buffers); the file ends at the last record that fits whole,
	 * the counts are what it holds, and every later call fails */
	const char *p = wt_path("fs.pcap");
	struct gcap_writer_conf c = wt_conf1(p);
	const long long limit = 5000000; /* in the I/O thread's third buffer */
	long long want = 24;
	char msg[128];
	struct gcap_writer *w;
	struct fsz_guard g;
	char eb[GCAP_ERRBUF_SIZE] = "";
	uint64_t nrec, nbytes, fit = 0;
	int rc = 0, rc2, frc, rcc;
	unsigned i, next = 0;
	struct wt_rec r;

	while (want + 16 + wt_vlen((unsigned)fit) <= limit)
		want += 16 + wt_vlen((unsigned)fit++);
	w = wt_open(&c);
	fsz_limit(&g, (rlim_t)limit);
	/* about 30 MB: past the limit and the writer's 8 MiB ring */
	for (i = 0; i < 40000; i++) {
		wt_mkrec(&r, i, wt_vlen(i), 1);
		rc = gcap_writer_write(w, &r.h, r.data);
		if (rc != 0)
			break;
	}
	rc2 = gcap_writer_write(w, &r.h, r.data);
	frc = gcap_writer_flush(w);
	gcap_writer_counts(w, &nrec, &nbytes);
	rcc = gcap_writer_close(w, NULL, eb);
	fsz_restore(&g);

	ck_assert_msg(rc == -EFBIG && i < 40000, "write %d at record %u", rc, i);
	ck_assert_int_eq(rc2, -EFBIG);
	ck_assert_int_eq(frc, -EFBIG);
	ck_assert_int_eq(rcc, -EFBIG);
	snprintf(msg, sizeof(msg), "its last whole record, %lld bytes)", want);
	ck_assert_msg(strstr(eb, msg) != NULL, "%s", eb);
	ck_assert_int_eq(wt_fsize(p), want);
	ck_assert_uint_eq(nbytes, (uint64_t)want);
	ck_assert_uint_eq(nrec, fit);
	ck_assert_uint_eq(read_seq(p, &next), fit);
}
END_TEST

START_TEST(test_enospc_buffered)
{
	/* the disk fills in the middle of a buffered flush */
	static const char *sizes[] = { "64k", "100k", "192k", "300k" };

	for (int ng = 0; ng < 2; ng++)
		for (unsigned s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
			enospc_case(ng, sizes[s], 0);
}
END_TEST

START_TEST(test_enospc_rotate_C)
{
	/* -C: the disk fills at a rotation's flush or in a later file */
	static const char *sizes[] = { "64k", "160k", "300k" };
	static const uint64_t rot[] = { 9000, 20000, 30000 };

	for (int ng = 0; ng < 2; ng++)
		for (unsigned s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
			for (unsigned k = 0; k < sizeof(rot) / sizeof(rot[0]); k++)
				enospc_case(ng, sizes[s], rot[k]);
}
END_TEST

/* ==== a reader that stops: gcap_writer_interrupt ==== */

/* A FIFO's reader that reads `want` bytes, then stops (keeping its end
 * open, as a stalled tshark would); the test reads the rest later. */
struct stall {
	const char *path;
	size_t want, got;
	uint8_t *buf;
	int fd;
	atomic_int stopped;
};

static void *
stall_read(void *arg)
{
	struct stall *st = arg;

	st->fd = open(st->path, O_RDONLY);
	while (st->fd >= 0 && st->got < st->want) {
		ssize_t r = read(st->fd, st->buf + st->got, st->want - st->got);

		if (r <= 0)
			break;
		st->got += (size_t)r;
	}
	atomic_store(&st->stopped, 1);
	return NULL;
}

/* What the pipeline's bounded stop does: once the reader has stopped,
 * every 10 ms the output is interrupted and the writing thread kicked. */
struct kicker {
	struct gcap_writer *w;
	struct stall *st;
	pthread_t writing;
	atomic_int done;
};

static void *
kick(void *arg)
{
	struct kicker *k = arg;
	const struct timespec ts = { 0, 10000000 };

	while (!atomic_load(&k->done)) {
		if (atomic_load(&k->st->stopped)) {
			gcap_writer_interrupt(k->w);
			pthread_kill(k->writing, SIGURG);
		}
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static void
on_urg(int sig)
{
	(void)sig;
}

START_TEST(test_fifo_reader_stalls)
{
	/* the reader stops with buffers still to write (with write_behind,
	 * the ring full behind a write blocked on the FIFO): the interrupt
	 * ends the write with EAGAIN, and the counts are the whole records
	 * that reached the FIFO, none of those dropped after it */
	const char *p = wt_path("stall.fifo");
	struct gcap_writer_conf c = wt_conf1(p);
	struct stall st = { .path = p, .want = 200000, .fd = -1 };
	struct kicker k = { .writing = pthread_self() };
	struct sigaction sa = { .sa_handler = on_urg }, old_urg;
	char eb[GCAP_ERRBUF_SIZE] = "";
	pthread_t rd, kt;
	uint64_t nrec, nbytes, whole = 0;
	size_t cap = 8u << 20, pos = 24;
	int rc = 0, frc, rcc;
	struct wt_rec r;
	unsigned i;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&sa.sa_mask); /* no SA_RESTART: the write returns EINTR */
	ck_assert_int_eq(sigaction(SIGURG, &sa, &old_urg), 0);
	ck_assert_int_eq(mkfifo(p, 0600), 0);
	st.buf = malloc(cap);
	ck_assert_ptr_nonnull(st.buf);
	ck_assert_int_eq(pthread_create(&rd, NULL, stall_read, &st), 0);
	k.w = wt_open(&c);
	k.st = &st;
	ck_assert_int_eq(pthread_create(&kt, NULL, kick, &k), 0);
	/* about 30 MB: far past the FIFO and the writer's buffers */
	for (i = 0; i < 40000; i++) {
		wt_mkrec(&r, i, wt_vlen(i), 1);
		rc = gcap_writer_write(k.w, &r.h, r.data);
		if (rc != 0)
			break;
	}
	frc = gcap_writer_flush(k.w);
	gcap_writer_counts(k.w, &nrec, &nbytes);
	atomic_store(&k.done, 1);
	pthread_join(kt, NULL);
	rcc = gcap_writer_close(k.w, NULL, eb);
	pthread_join(rd, NULL);
	sigaction(SIGURG, &old_urg, NULL);
	/* what the reader left in the FIFO reached it too */
	ck_assert_int_ge(st.fd, 0);
	for (ssize_t n;
	     st.got < cap && (n = read(st.fd, st.buf + st.got, cap - st.got)) > 0;)
		st.got += (size_t)n;
	close(st.fd);

	ck_assert_msg(rc == -EAGAIN && i < 40000, "write %d at record %u", rc, i);
	ck_assert_int_eq(frc, -EAGAIN);
	ck_assert_int_eq(rcc, -EAGAIN);
	ck_assert_msg(strstr(eb, "not a regular file") != NULL, "%s", eb);
	/* the whole records in what reached the FIFO, in order */
	while (pos + 16 <= st.got) {
		uint32_t incl;

		memcpy(&incl, st.buf + pos + 8, sizeof(incl));
		if (pos + 16 + incl > st.got)
			break;
		ck_assert_uint_eq(incl, wt_vlen((unsigned)whole));
		pos += 16 + incl;
		whole++;
	}
	ck_assert_uint_ge(st.got, st.want);
	ck_assert_uint_eq(nrec, whole);
	ck_assert_uint_eq(nbytes, pos);
	free(st.buf);
}
END_TEST

TCase *
wt_tcase_write_errors(void)
{
	TCase *tc = wt_tcase("write_errors");

	tcase_add_test(tc, test_efbig_flush_each);
	tcase_add_test(tc, test_efbig_buffered);
	tcase_add_test(tc, test_efbig_streaming);
	tcase_add_test(tc, test_efbig_large_record);
	tcase_add_test(tc, test_efbig_at_close_isb);
	tcase_add_test(tc, test_enospc_buffered);
	tcase_add_test(tc, test_enospc_rotate_C);
	tcase_add_test(tc, test_fifo_reader_stalls);
	return tc;
}
