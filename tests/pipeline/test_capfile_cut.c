/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A plain pcap cut short by another process while it is read through its
 * mapping (capfile_guard.c): no thread dies of the SIGBUS, the reader
 * hands out exactly the records that end within the new size, equal to
 * the file's and in order, then -EIO with its message; with finders and
 * without (their lists, made before the cut, run past it), in batches and
 * in spans, cut at a record's end, inside a record, inside a header,
 * within the mapping's last page (where no read faults), behind the
 * reader, with another thread faulting first, and while libpcap reads the
 * records from the mapping (after damage). Any other SIGBUS still
 * takes its own way: the default action (death by SIGBUS), a handler
 * installed before the reader's, or one installed over it that offers the
 * signal to gcap_capfile_fault() first.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpucap/gcap_capfile.h"

#include "find_common.h" /* mix32 */

#define MAXB 512u
#define BUFSZ (1u << 20)
#define FILE_MB 12u
#define MAX_RECS 40000u

static char dir[64];
static char path[128];
/* the file as written: its bytes and its records' offsets (and the end) */
static uint8_t *file;
static size_t file_len;
static size_t rec_off[MAX_RECS + 1];
static unsigned nrec;
static size_t page;

/* The records of about FILE_MB megabytes, built in memory once; small
 * ones at the end, so that the last page holds half a page of them. */
static void
build_file(void)
{
	/* past FILE_MB: the last large record and up to a page of small ones */
	size_t cap = (FILE_MB << 20) + (64u << 10);
	uint8_t *p;
	uint32_t h[6] = { 0xa1b2c3d4u, 0x00040002u, 0, 0, 65535u, 1 };

	file = malloc(cap);
	ck_assert_ptr_nonnull(file);
	memcpy(file, h, 24);
	file_len = 24;
	for (nrec = 0; file_len < (size_t)FILE_MB << 20 || file_len % page < page / 2;
	     nrec++) {
		uint32_t cl = file_len < (size_t)FILE_MB << 20 ?
				      40u + mix32(nrec) % 1460u :
				      40u;
		uint32_t r[4] = { 1600000000u + nrec / 64u, mix32(nrec * 3u) % 1000000u,
				  cl, cl + nrec % 3u };

		ck_assert_uint_lt(nrec, MAX_RECS);
		ck_assert_uint_le(file_len + 16 + cl, cap);
		rec_off[nrec] = file_len;
		p = file + file_len;
		memcpy(p, r, 16);
		for (uint32_t k = 0; k < cl; k++)
			p[16 + k] = (uint8_t)(mix32(nrec * 2654435761u + k) | 1u);
		file_len += 16 + cl;
	}
	rec_off[nrec] = file_len;
}

static void
write_file(void)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, file, file_len), (ssize_t)file_len);
	ck_assert_int_eq(close(fd), 0);
}

/* The records that end within size bytes. */
static unsigned
recs_within(size_t size)
{
	unsigned k = 0;

	while (k < nrec && rec_off[k + 1] <= size)
		k++;
	return k;
}

struct reader {
	struct gcap_capfile *cf;
	bool span;
	uintptr_t base; /* the mapping (from the first record) */
	uint32_t snap;  /* libpcap reads the records, cut to this (0: none) */
	unsigned got;
	int rc;
};

static uint8_t buf[BUFSZ];
static struct gcap_pkt d[MAXB];
static uint64_t raw[MAXB];

/* Open the file on finders threads; with finders, wait until they listed
 * the whole file (their lists then run past any cut). */
static void
reader_open(struct reader *r, unsigned finders, bool span)
{
	char err[GCAP_ERRBUF_SIZE];
	struct gcap_capfile_conf conf = { .decoders = 1, .finders = finders };

	memset(r, 0, sizeof(*r));
	r->span = span;
	r->cf = gcap_capfile_open_conf(path, &conf, err);
	ck_assert_msg(r->cf != NULL, "%s", err);
	ck_assert(gcap_capfile_mapped(r->cf));
	gcap_capfile_use_map(r->cf, true);
	for (unsigned t = 0; finders > 0 && t < 10000; t++) {
		uint64_t j, l, s;

		ck_assert_uint_eq(gcap_capfile_finders(r->cf, &j, &l, &s), finders);
		if (l >= FILE_MB)
			break;
		usleep(1000);
	}
}

/* One batch, each record checked against the file (its bytes wholly
 * within size, the next record in order). @return the batch's count or
 * end. */
static int
reader_batch(struct reader *r, size_t size)
{
	uint32_t used = 0;
	const uint8_t *sp = NULL;
	int n = r->span ? gcap_capfile_fill_span(r->cf, buf, BUFSZ, d, raw, MAXB, &used,
						 &sp) :
			  gcap_capfile_fill(r->cf, buf, BUFSZ, d, raw, MAXB, &used);

	r->rc = n;
	if (n <= 0)
		return n;
	/* described in the mapping, within one span */
	if (r->span)
		ck_assert((sp != buf || r->snap != 0) && used <= BUFSZ);
	if (r->base == 0 && r->snap == 0)
		r->base = (uintptr_t)d[0].addr - 40u;
	for (int i = 0; i < n; i++, r->got++) {
		size_t off = (size_t)((uintptr_t)d[i].addr - r->base);
		const uint8_t *h = file + rec_off[r->got];
		uint32_t cl, wl;

		ck_assert_uint_lt(r->got, nrec);
		memcpy(&cl, h + 8, 4);
		memcpy(&wl, h + 12, 4);
		if (r->snap == 0) {
			ck_assert_msg(off == rec_off[r->got] + 16,
				      "record %u at %zu, in the file at %zu", r->got, off,
				      rec_off[r->got] + 16);
			ck_assert_msg(off + d[i].caplen <= size,
				      "record %u ends at %zu, past the size %zu", r->got,
				      off + d[i].caplen, size);
		} else if (cl > r->snap) {
			cl = r->snap;
		}
		ck_assert_uint_eq(d[i].caplen, cl);
		ck_assert_uint_eq(d[i].wirelen, wl);
		ck_assert(memcmp((const void *)(uintptr_t)d[i].addr, h + 16, cl) == 0);
		if (r->span)
			ck_assert((uintptr_t)d[i].addr + cl <= (uintptr_t)sp + used);
	}
	return n;
}

/* Read on to the end: the records within size (none more where more were
 * handed out before the cut), then -EIO and the message; the same end
 * again after it. */
static void
reader_end(struct reader *r, size_t size, const char *what)
{
	unsigned within = recs_within(size);
	unsigned total = r->got > within ? r->got : within;
	char want[128];

	while (reader_batch(r, size) > 0)
		;
	snprintf(want, sizeof(want), "the file shrank to %zu bytes while it was read",
		 size);
	ck_assert_msg(r->rc == -EIO && strcmp(gcap_capfile_errmsg(r->cf), want) == 0,
		      "%s: rc %d (%s) after %u records", what, r->rc,
		      gcap_capfile_errmsg(r->cf), r->got);
	ck_assert_msg(r->got == total, "%s: %u records, not %u (%u within %zu)", what,
		      r->got, total, within, size);
	ck_assert_int_eq(reader_batch(r, size), -EIO);
}

/* A thread other than the reader reads the mapping at off. */
struct toucher {
	const volatile uint8_t *p;
	uint8_t v;
};

static void *
touch_main(void *arg)
{
	struct toucher *t = arg;

	t->v = *t->p;
	return NULL;
}

enum order {
	READER_FIRST,
	OTHER_FIRST
};

/* Read a few batches, cut the file to size, read on. */
static void
cut_case(size_t size, unsigned finders, bool span, enum order o, const char *what)
{
	struct reader r;
	char name[160];

	snprintf(name, sizeof(name), "%s, %u finders, %s%s", what, finders,
		 span ? "spans" : "batches",
		 o == OTHER_FIRST ? ", other thread first" : "");
	write_file();
	reader_open(&r, finders, span);
	for (unsigned b = 0; b < 3; b++)
		ck_assert_int_gt(reader_batch(&r, file_len), 0);
	ck_assert_int_eq(truncate(path, (off_t)size), 0);
	if (o == OTHER_FIRST) {
		/* a page past the new end, as a copier or the writer would */
		size_t off = ((size + page - 1) & ~(page - 1)) + page;
		struct toucher t = { .p = (const uint8_t *)(r.base + off), .v = 1 };
		pthread_t th;

		ck_assert_uint_lt(off, file_len);
		ck_assert_int_eq(pthread_create(&th, NULL, touch_main, &t), 0);
		ck_assert_int_eq(pthread_join(th, NULL), 0);
		ck_assert_uint_eq(t.v, 0);
	}
	reader_end(&r, size, name);
	gcap_capfile_close(r.cf);
}

/* The record boundary nearest after off that is not page-aligned. */
static size_t
boundary_after(size_t off)
{
	unsigned i = 0;

	while (rec_off[i] < off || rec_off[i] % page == 0)
		i++;
	ck_assert_uint_lt(i, nrec);
	return rec_off[i];
}

static void
every_way(size_t size, const char *what)
{
	static const unsigned finders[] = { 0, 3 };

	for (unsigned f = 0; f < 2; f++)
		for (unsigned s = 0; s < 2; s++)
			cut_case(size, finders[f], s, READER_FIRST, what);
}

START_TEST(test_cut_at_record_end)
{
	every_way(boundary_after(file_len / 2), "at a record's end");
}
END_TEST

START_TEST(test_cut_inside_record)
{
	size_t b = boundary_after(file_len / 2);

	every_way(b + 16 + 20, "inside a record's bytes");
	every_way(b + 7, "inside a record's header");
}
END_TEST

START_TEST(test_cut_page_aligned)
{
	every_way((file_len / 2) & ~(page - 1), "at a page boundary");
}
END_TEST

/* Within the mapping's last page nothing faults: bytes past the new end
 * read zeros, the records' headers included. */
START_TEST(test_cut_last_page)
{
	size_t last = (file_len - 1) & ~(page - 1);
	size_t b = boundary_after(last + 1);

	ck_assert_uint_lt(b, file_len);
	every_way(b, "at a record's end in the last page");
	every_way(b + 5, "inside a header in the last page");
}
END_TEST

/* Cut behind what was handed out: nothing more comes. */
START_TEST(test_cut_behind_reader)
{
	every_way(boundary_after(200000), "behind the reader");
}
END_TEST

/* Records longer than the snapshot length the header gives: libpcap reads
 * them from the first on, its bytes served from the mapping. */
START_TEST(test_cut_after_damage)
{
	const uint32_t snap = 1000;
	size_t size = boundary_after(file_len / 2) + 16 + 500;
	uint32_t keep;

	memcpy(&keep, file + 16, 4);
	memcpy(file + 16, &snap, 4);
	for (unsigned k = 0; k < 4; k++) {
		struct reader r;
		char name[96];

		snprintf(name, sizeof(name), "libpcap reading, %u finders, %s",
			 k & 1 ? 3u : 0u, k & 2 ? "spans" : "batches");
		write_file();
		reader_open(&r, k & 1 ? 3 : 0, k & 2);
		r.snap = snap;
		for (unsigned b = 0; b < 3; b++)
			ck_assert_int_gt(reader_batch(&r, file_len), 0);
		ck_assert(!gcap_capfile_mapped(r.cf));
		ck_assert_int_eq(truncate(path, (off_t)size), 0);
		reader_end(&r, size, name);
		gcap_capfile_close(r.cf);
	}
	memcpy(file + 16, &keep, 4);
}
END_TEST

START_TEST(test_other_thread_first)
{
	size_t b = boundary_after(file_len / 2);

	for (unsigned f = 0; f <= 3; f += 3)
		for (unsigned s = 0; s < 2; s++)
			cut_case(b + 100, f, s, OTHER_FIRST, "inside a record");
}
END_TEST

/* Cut, read past the cut by another thread, then written whole again:
 * the mapping reads zeros from that page on though the file is whole
 * again. The input ends there, and does not say the file shrank. */
START_TEST(test_cut_and_rewritten)
{
	size_t size = boundary_after(file_len / 2) + 100;
	size_t zero = ((size + page - 1) / page + 2) * page;
	struct toucher t;
	struct reader r;
	pthread_t th;
	int fd;

	write_file();
	reader_open(&r, 0, false);
	ck_assert_int_gt(reader_batch(&r, file_len), 0);
	ck_assert_int_eq(truncate(path, (off_t)size), 0);
	t.p = (const volatile uint8_t *)(r.base + zero);
	ck_assert_int_eq(pthread_create(&th, NULL, touch_main, &t), 0);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	ck_assert_uint_eq(t.v, 0);
	fd = open(path, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, file + size, file_len - size, (off_t)size),
			 (ssize_t)(file_len - size));
	ck_assert_int_eq(close(fd), 0);
	while (reader_batch(&r, zero) > 0)
		;
	ck_assert_msg(r.rc == -EIO &&
			      strstr(gcap_capfile_errmsg(r.cf),
				     "could not be read (a storage error") != NULL,
		      "rewritten: rc %d (%s)", r.rc, gcap_capfile_errmsg(r.cf));
	ck_assert_uint_eq(r.got, recs_within(zero));
	gcap_capfile_close(r.cf);
}
END_TEST

/* A mapping the reader does not know, cut short, read past its end. */
static void
unrelated_fault(void)
{
	char other[160];
	int fd;
	uint8_t *m;

	snprintf(other, sizeof(other), "%s/other", dir);
	fd = open(other, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)(4 * page)) != 0)
		_exit(90);
	m = mmap(NULL, 4 * page, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED || ftruncate(fd, 100) != 0)
		_exit(91);
	(void)*(volatile uint8_t *)(m + 2 * page);
	_exit(92); /* survived */
}

/* In a child (no core file): open and read the file, cut it, read to the
 * end (the guard's case: the child says it came through), then fault on
 * another mapping. @return the child's status. */
static int
child_run(void (*before)(void), void (*after)(void))
{
	int fds[2], st;
	pid_t pid;
	char c = 0;

	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct rlimit no_core = { 0, 0 };
		struct reader r;
		size_t size = boundary_after(file_len / 2) + 30;

		(void)setrlimit(RLIMIT_CORE, &no_core);
		if (before != NULL)
			before();
		write_file();
		reader_open(&r, 2, false);
		if (after != NULL)
			after();
		if (reader_batch(&r, file_len) <= 0 || truncate(path, (off_t)size) != 0)
			_exit(93);
		while (reader_batch(&r, size) > 0)
			;
		if (r.rc != -EIO || r.got != recs_within(size))
			_exit(94);
		if (write(fds[1], "y", 1) != 1)
			_exit(96);
		unrelated_fault();
	}
	close(fds[1]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(read(fds[0], &c, 1) == 1 && c == 'y',
		      "the child did not read the cut file to its end (status %#x)", st);
	close(fds[0]);
	return st;
}

START_TEST(test_unrelated_sigbus_kills)
{
	struct sigaction was;
	int st;

	/* a sanitizer's runtime handles SIGBUS itself (a report, then exit
	 * 1): the guard passes the fault on to it, so the child must not
	 * come through; with nothing installed, death by SIGBUS */
	ck_assert_int_eq(sigaction(SIGBUS, NULL, &was), 0);
	st = child_run(NULL, NULL);
	if (!(was.sa_flags & SA_SIGINFO) && was.sa_handler == SIG_DFL)
		ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGBUS,
			      "an unrelated SIGBUS: status %#x, not death by SIGBUS", st);
	else
		ck_assert_msg(!(WIFEXITED(st) && WEXITSTATUS(st) == 92),
			      "an unrelated SIGBUS: the child came through (status %#x)",
			      st);
}
END_TEST

static void
on_bus_exit(int sig, siginfo_t *si, void *ctx)
{
	_exit(42);
}

static void
install_exit_handler(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_bus_exit;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, NULL) != 0)
		_exit(95);
}

/* as gpu-capture's crash report: the guard's first, then its own way */
static void
on_bus_offer(int sig, siginfo_t *si, void *ctx)
{
	if (gcap_capfile_fault(sig, si))
		return;
	_exit(43);
}

static void
install_offer_handler(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_bus_offer;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, NULL) != 0)
		_exit(95);
}

START_TEST(test_handler_before_guard)
{
	int st = child_run(install_exit_handler, NULL);

	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 42,
		      "a handler installed before: status %#x, not its exit 42", st);
}
END_TEST

START_TEST(test_handler_over_guard)
{
	int st = child_run(NULL, install_offer_handler);

	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 43,
		      "a handler installed over the guard: status %#x, not its exit 43",
		      st);
}
END_TEST

static void
setup(void)
{
	long pg = sysconf(_SC_PAGESIZE);

	page = pg > 0 ? (size_t)pg : 4096u;
	snprintf(dir, sizeof(dir), "/tmp/gcap-cut-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/cut.pcap", dir);
	build_file();
}

static void
teardown(void)
{
	char cmd[128];

	free(file);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

int
main(void)
{
	Suite *s = suite_create("capfile_cut");
	TCase *tc = tcase_create("cut");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_cut_at_record_end);
	tcase_add_test(tc, test_cut_inside_record);
	tcase_add_test(tc, test_cut_page_aligned);
	tcase_add_test(tc, test_cut_last_page);
	tcase_add_test(tc, test_cut_and_rewritten);
	tcase_add_test(tc, test_cut_behind_reader);
	tcase_add_test(tc, test_cut_after_damage);
	tcase_add_test(tc, test_other_thread_first);
	tcase_add_test(tc, test_unrelated_sigbus_kills);
	tcase_add_test(tc, test_handler_before_guard);
	tcase_add_test(tc, test_handler_over_guard);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
