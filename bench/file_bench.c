/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * file_bench: how fast one file on a given mount takes bytes, by each way
 * a capture writer could put them there, side by side. It measures the
 * kernel's side of the writer's output, apart from any framing: whether
 * one thread's write(2) is the file's ceiling, what handing the buffers
 * to a thread of their own costs, and whether a second writing thread,
 * allocating the file ahead or copying into a shared mapping would raise
 * that ceiling. Every run writes --mib MiB into a new file in DIR and
 * removes it (unless --keep); the modes alternate within each round. DIR
 * must have room for the file, and with --keep for every mode's as well
 * (checked first: a mapped file past its mount's room is a SIGBUS, not
 * an error).
 *
 * modes (every write is a pwrite(2) of --chunk KiB at its offset):
 *   write     one thread writes one buffer again and again (a writer
 *             without its I/O thread, the buffer hot in its cache)
 *   handoff   one thread fills a ring of four buffers, another writes
 *             them (the writer and its I/O thread: the bytes come from
 *             another CPU's cache)
 *   write2    two threads write alternate buffers of the one file
 *   prealloc  one thread writes while another allocates the file 64 MiB
 *             ahead of it (fallocate, FALLOC_FL_KEEP_SIZE)
 *   map1      the file sized first, mapped shared; one thread copies into
 *             the mapping while another populates it 64 MiB ahead of
 *             that thread (MADV_POPULATE_WRITE)
 *   map4      the same with four copying threads (the populating one
 *             keeps ahead of the first)
 *
 * It prints one markdown row per run: GB/s into the file and the CPU the
 * process took per GB (all threads); a map mode's time includes sizing,
 * mapping and unmapping the file.
 *
 * usage: file_bench --dir DIR [--mib N] [--rounds R] [--chunk KiB]
 *                   [--offset BYTES] [--src-offset BYTES] [--keep]
 *                   [--modes m1,...]
 * --chunk: each write's (each copy's) size, 256 KiB by default, as the
 * writer's buffers; --offset: where in the file the bytes start (0; a
 * pcap file's records start 24 bytes in), so that the writes' alignment
 * to the mount's pages can be set apart from their size; --src-offset:
 * where in its (page-aligned) buffer each write's bytes start (0), so
 * that the copy's source can share the file's alignment or not; --keep:
 * leave each mode's last file as DIR/file_bench-MODE instead of removing
 * it (to check what a mode wrote: the --offset bytes zero, then --mib
 * MiB of no zero byte; not for timing: kept files on a disk are written
 * back while later modes run).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* fallocate, MADV_POPULATE_WRITE */
#endif
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "bench_clock.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

#define FB_RING 4u
#define FB_AHEAD (64u << 20) /* how far the helper allocates ahead */
#define FB_STEP (8u << 20)   /* in steps of this */
#define FB_MAXTHR 4

struct fb_run {
	int fd;
	size_t total; /* bytes to write */
	size_t buf;   /* a write's (a copy's) size, --chunk */
	size_t skew;  /* the file offset of byte 0, --offset */
	size_t src;   /* where in its buffer a write's bytes start, --src-offset */
	unsigned nthr;
	uint8_t *map;             /* map modes: the file, shared */
	uint8_t *ring[FB_RING];   /* handoff */
	pthread_mutex_t lock;     /* handoff: */
	pthread_cond_t cond;      /* a buffer filled or written */
	uint64_t filled, written; /* handoff: buffers so far */
	_Atomic size_t done;      /* bytes the first thread has put */
	_Atomic bool stop;        /* the helper's end */
	_Atomic int err;          /* the first errno */
};

struct fb_thr {
	struct fb_run *r;
	unsigned id;
};

/* Fail the run with e (the first failure stays); the handoff's threads
 * waiting for each other see it under their lock */
static void
fail(struct fb_run *r, int e)
{
	int zero = 0;

	pthread_mutex_lock(&r->lock);
	atomic_compare_exchange_strong(&r->err, &zero, e);
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

static size_t
piece(const struct fb_run *r, size_t off)
{
	return r->total - off < r->buf ? r->total - off : r->buf;
}

/* a buffer's allocation: a write's bytes start up to 4095 bytes in, and
 * aligned_alloc takes whole multiples of its alignment */
static size_t
buf_room(size_t chunk)
{
	return (chunk + 4096 + 4095) & ~(size_t)4095;
}

static bool
put(struct fb_run *r, const uint8_t *buf, size_t off)
{
	size_t n = piece(r, off), got = 0;

	if (r->map != NULL) {
		memcpy(r->map + r->skew + off, buf, n);
		return true;
	}
	while (got < n) {
		ssize_t w =
			pwrite(r->fd, buf + got, n - got, (off_t)(r->skew + off + got));

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			fail(r, w < 0 ? errno : EIO);
			return false;
		}
		got += (size_t)w;
	}
	return true;
}

/* write, write2, prealloc, map1, map4: thread id puts buffers id,
 * id + nthr, ... */
static void *
writer_main(void *arg)
{
	struct fb_thr *t = arg;
	struct fb_run *r = t->r;
	uint8_t *mem = aligned_alloc(4096, buf_room(r->buf)), *buf;

	if (mem == NULL) {
		fail(r, ENOMEM);
		return NULL;
	}
	buf = mem + r->src;
	memset(buf, 0x5a, r->buf);
	for (size_t off = (size_t)t->id * r->buf; off < r->total && r->err == 0;
	     off += (size_t)r->nthr * r->buf) {
		if (!put(r, buf, off))
			break;
		if (t->id == 0)
			atomic_store(&r->done, off + piece(r, off));
	}
	free(mem);
	return NULL;
}

/* prealloc and map: keep the file allocated FB_AHEAD past the first
 * thread's bytes */
static void *
helper_main(void *arg)
{
	struct fb_run *r = arg;
	size_t off = 0, end = r->skew + r->total;

	while (!r->stop && off < end && r->err == 0) {
		size_t n = end - off < FB_STEP ? end - off : FB_STEP;

		if (off >= r->skew + atomic_load(&r->done) + FB_AHEAD) {
			usleep(20);
			continue;
		}
		if (r->map != NULL ?
			    madvise(r->map + off, n, MADV_POPULATE_WRITE) :
			    fallocate(r->fd, FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)n)) {
			fail(r, errno);
			break;
		}
		off += n;
	}
	return NULL;
}

/* handoff: wait until *count passes `past`; false when the run failed */
static bool
wait_past(struct fb_run *r, const uint64_t *count, uint64_t past)
{
	pthread_mutex_lock(&r->lock);
	while (*count <= past && r->err == 0)
		pthread_cond_wait(&r->cond, &r->lock);
	pthread_mutex_unlock(&r->lock);
	return r->err == 0;
}

/* handoff: *count = v, and wake the other side */
static void
post(struct fb_run *r, uint64_t *count, uint64_t v)
{
	pthread_mutex_lock(&r->lock);
	*count = v;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

/* handoff: the filling side (the writer thread's framing), a lock and a
 * wake-up per buffer as the writer's ring takes */
static void *
filler_main(void *arg)
{
	struct fb_run *r = arg;
	uint64_t nbuf = (r->total + r->buf - 1) / r->buf;

	for (uint64_t i = 0; i < nbuf; i++) {
		if (i >= FB_RING && !wait_past(r, &r->written, i - FB_RING))
			break;
		/* never 0, so that a hole in the file shows */
		memset(r->ring[i % FB_RING] + r->src, (int)(0x80 | (i & 0x7f)), r->buf);
		post(r, &r->filled, i + 1);
	}
	return NULL;
}

/* handoff: the writing side (the writer's I/O thread) */
static void *
drainer_main(void *arg)
{
	struct fb_run *r = arg;
	uint64_t nbuf = (r->total + r->buf - 1) / r->buf;

	for (uint64_t i = 0; i < nbuf; i++) {
		if (!wait_past(r, &r->filled, i) ||
		    !put(r, r->ring[i % FB_RING] + r->src, (size_t)i * r->buf))
			break;
		post(r, &r->written, i + 1);
	}
	return NULL;
}

/* The modes: a row each. copiers: threads putting the bytes (with
 * handoff, the one writing what the filling thread hands it); helper: a
 * thread allocating (or, mapped, populating) the file ahead of them. */
static const struct fb_mode {
	const char *name;
	unsigned copiers;
	bool handoff, helper, map;
} fb_modes[] = {
	{ "write", 1, false, false, false },  { "handoff", 1, true, false, false },
	{ "write2", 2, false, false, false }, { "prealloc", 1, false, true, false },
	{ "map1", 1, false, true, true },     { "map4", 4, false, true, true },
};
#define FB_NMODES (sizeof(fb_modes) / sizeof(fb_modes[0]))

/* the threads a mode runs */
static unsigned
mode_threads(const struct fb_mode *md)
{
	return md->copiers + md->handoff + md->helper;
}

/* Start a thread, or fail the run (the others see r->err and end). */
static void
start(struct fb_run *r, pthread_t *thr, unsigned *nt, void *(*fn)(void *), void *arg)
{
	int e = pthread_create(thr, NULL, fn, arg);

	if (e != 0) {
		fail(r, e);
		return;
	}
	(*nt)++;
}

struct fb_opts {
	const char *dir;
	size_t total, chunk, skew, src; /* bytes */
	bool keep;                      /* --keep */
};

/* One run of mode md; @return 0 or an errno (message printed). */
static int
run(const struct fb_opts *o, const struct fb_mode *md, double *secs, double *cpu)
{
	const char *dir = o->dir;
	size_t total = o->total, chunk = o->chunk, skew = o->skew;
	struct fb_run r = { .total = total,
			    .buf = chunk,
			    .skew = skew,
			    .src = o->src,
			    .nthr = 1,
			    .lock = PTHREAD_MUTEX_INITIALIZER,
			    .cond = PTHREAD_COND_INITIALIZER };
	struct fb_thr t[FB_MAXTHR];
	pthread_t thr[FB_MAXTHR + 1];
	unsigned nt = 0;
	char path[4096];
	int rc = 0;

	snprintf(path, sizeof(path), "%s/file_bench.%d", dir, (int)getpid());
	r.fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (r.fd < 0) {
		rc = errno;
		fprintf(stderr, "file_bench: %s: %s\n", path, strerror(rc));
		return rc;
	}
	if (md->handoff)
		for (unsigned i = 0; i < FB_RING; i++)
			if ((r.ring[i] = aligned_alloc(4096, buf_room(chunk))) == NULL)
				rc = ENOMEM;
	double t0 = gcap_bench_now(), c0 = gcap_bench_cpu_secs();

	if (rc == 0 && md->map) {
		/* sized first: a mapping ends at the file's end */
		if (ftruncate(r.fd, (off_t)(skew + total)) != 0)
			rc = errno;
		else if ((r.map = mmap(NULL, skew + total, PROT_READ | PROT_WRITE,
				       MAP_SHARED, r.fd, 0)) == MAP_FAILED) {
			r.map = NULL;
			rc = errno;
		}
	}
	if (rc == 0) {
		r.nthr = md->copiers;
		if (md->handoff) {
			start(&r, &thr[nt], &nt, filler_main, &r);
			start(&r, &thr[nt], &nt, drainer_main, &r);
		} else {
			for (unsigned i = 0; i < r.nthr; i++) {
				t[i] = (struct fb_thr){ &r, i };
				start(&r, &thr[nt], &nt, writer_main, &t[i]);
			}
		}
		/* the helper last: it stops once the writers are done */
		unsigned nw = nt;

		if (md->helper)
			start(&r, &thr[nt], &nt, helper_main, &r);
		for (unsigned i = 0; i < nw; i++)
			pthread_join(thr[i], NULL);
		atomic_store(&r.stop, true);
		if (nt > nw)
			pthread_join(thr[nw], NULL);
		rc = r.err;
	}
	if (r.map != NULL)
		munmap(r.map, skew + total);
	*secs = gcap_bench_now() - t0;
	*cpu = gcap_bench_cpu_secs() - c0;
	close(r.fd);
	if (o->keep && rc == 0) {
		char kept[4096];

		snprintf(kept, sizeof(kept), "%s/file_bench-%s", dir, md->name);
		if (rename(path, kept) != 0)
			rc = errno;
	}
	unlink(path);
	for (unsigned i = 0; i < FB_RING; i++)
		free(r.ring[i]);
	if (rc != 0)
		fprintf(stderr, "file_bench: %s into %s: %s\n", md->name, dir,
			strerror(rc));
	return rc;
}

static int
usage(void)
{
	fprintf(stderr, "usage: file_bench --dir DIR [--mib N] [--rounds R] "
			"[--chunk KiB] [--offset BYTES] [--src-offset BYTES] [--keep] "
			"[--modes write,handoff,write2,prealloc,map1,map4]\n");
	return 2;
}

int
main(int argc, char **argv)
{
	const char *dir = NULL, *modes = "write,handoff,write2,prealloc,map1,map4";
	unsigned long mib = 4096, rounds = 3, chunk = 256, skew = 0, src = 0;
	bool want[FB_NMODES] = { false }, keep = false;
	char *end;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--keep") == 0) {
			keep = true;
			continue;
		}
		if (v == NULL)
			return usage();
		if (strcmp(a, "--dir") == 0)
			dir = v;
		else if (strcmp(a, "--modes") == 0)
			modes = v;
		else if (strcmp(a, "--mib") == 0 || strcmp(a, "--rounds") == 0 ||
			 strcmp(a, "--chunk") == 0) {
			unsigned long x = strtoul(v, &end, 10);

			if (!isdigit((unsigned char)v[0]) || *end != '\0' || x == 0 ||
			    x > (1ul << 20)) {
				fprintf(stderr, "file_bench: %s: not a count: %s\n", a,
					v);
				return 2;
			}
			*(strcmp(a, "--mib") == 0    ? &mib :
			  strcmp(a, "--rounds") == 0 ? &rounds :
						       &chunk) = x;
		} else if (strcmp(a, "--src-offset") == 0) {
			src = strtoul(v, &end, 10);
			if (!isdigit((unsigned char)v[0]) || *end != '\0' ||
			    src >= 4096) {
				fprintf(stderr,
					"file_bench: --src-offset: not a byte count "
					"under 4096: %s\n",
					v);
				return 2;
			}
		} else if (strcmp(a, "--offset") == 0) {
			skew = strtoul(v, &end, 10);
			if (!isdigit((unsigned char)v[0]) || *end != '\0' ||
			    skew >= (1ul << 30)) {
				fprintf(stderr,
					"file_bench: --offset: not a byte count under 1 "
					"GiB: %s\n",
					v);
				return 2;
			}
		} else
			return usage();
		i++;
	}
	if (dir == NULL)
		return usage();
	for (const char *p = modes; *p != '\0';) {
		size_t n = strcspn(p, ",");
		unsigned m = 0;

		while (m < FB_NMODES && (strlen(fb_modes[m].name) != n ||
					 strncmp(p, fb_modes[m].name, n) != 0))
			m++;
		if (m == FB_NMODES) {
			fprintf(stderr, "file_bench: --modes: unknown mode '%.*s'\n",
				(int)n, p);
			return 2;
		}
		want[m] = true;
		p += n + (p[n] == ',');
	}
	unsigned nwant = 0;

	for (unsigned m = 0; m < FB_NMODES; m++)
		nwant += want[m];
	if (nwant == 0) {
		fprintf(stderr, "file_bench: --modes: no mode given\n");
		return 2;
	}
	struct statvfs vfs;

	if (access(dir, W_OK | X_OK) != 0 || statvfs(dir, &vfs) != 0) {
		fprintf(stderr, "file_bench: --dir %s: %s\n", dir, strerror(errno));
		return 2;
	}
	/* the file of the run, and with --keep each mode's kept one */
	uint64_t need = ((uint64_t)(mib << 20) + skew) * (keep ? nwant + 1 : 1);

	if ((uint64_t)vfs.f_bavail * vfs.f_frsize < need) {
		fprintf(stderr,
			"file_bench: --dir %s: %llu MiB free, --mib %lu from --offset "
			"%lu%s does not fit\n",
			dir,
			(unsigned long long)((uint64_t)vfs.f_bavail * vfs.f_frsize >> 20),
			mib, skew, keep ? " with --keep" : "");
		return 2;
	}
	printf("%lu KiB a write, from byte %lu of the file and byte %lu of its "
	       "buffer\n\n",
	       chunk, skew, src);
	printf("| round | mode | threads | GB/s | CPU s per GB "
	       "|\n|---|---|---:|---:|---:|\n");
	for (unsigned long k = 1; k <= rounds; k++)
		for (unsigned m = 0; m < FB_NMODES; m++) {
			double s, c, gb = (double)(mib << 20) / 1e9;

			if (!want[m])
				continue;
			struct fb_opts o = {
				dir, (size_t)mib << 20, (size_t)chunk << 10, skew, src,
				keep
			};

			if (run(&o, &fb_modes[m], &s, &c) != 0)
				return 1;
			printf("| %lu | %s | %u | %.2f | %.3f |\n", k, fb_modes[m].name,
			       mode_threads(&fb_modes[m]), gb / s, c / gb);
			fflush(stdout);
		}
	return 0;
}
