/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for compressed -r inputs decompressed on several
 * threads (base/capfile_par.c and the codecs' cut of zstd frames and lz4
 * blocks, which parses untrusted frame headers by hand).
 *
 * Input: [layout byte][damage byte][4 bytes: where][a capture file]. The
 * capture's bytes are compressed in one of ten layouts (tests/tools/
 * layouts.h: zstd frames with and without their sizes, pzstd's skippable
 * frames, one frame; lz4 frames of independent and of linked blocks, with
 * and without checksums; BGZF's gzip members, alone and around a plain
 * one), then damaged as the damage byte says (a byte changed, the
 * end cut off, both, or neither), and read to the end on one decoding
 * thread and on three.
 *
 * One thread and three must give the same records as far as both go
 * (at damage either may give a little more), the same records when both
 * end cleanly, and, undamaged, what the capture itself gives. Any
 * violation abort()s.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gpucap/gcap_capfile.h"
#include "tests/tools/layouts.h"

#define MAXB 64u
#define BUFSZ (1u << 20)

struct recs {
	uint64_t *sum; /* per record: caplen, time and bytes hashed */
	size_t n, cap;
	int rc;
	bool opened;
};

static uint64_t
hash(const uint8_t *p, size_t n, uint64_t h)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

static void
add(struct recs *r, uint64_t v)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 64;
		r->sum = realloc(r->sum, r->cap * sizeof(*r->sum));
		if (r->sum == NULL)
			abort();
	}
	r->sum[r->n++] = v;
}

/* Read the file behind fd on dec threads. */
static struct recs
read_fd(int fd, unsigned dec)
{
	static uint8_t buf[BUFSZ];
	char path[64], err[GCAP_ERRBUF_SIZE];
	struct gcap_capfile_conf conf = { .decoders = dec };
	struct gcap_capfile *cf;
	struct gcap_pkt d[MAXB];
	uint64_t raw[MAXB];
	struct recs r = { 0 };

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	cf = gcap_capfile_open_conf(path, &conf, err);
	if (cf == NULL)
		return r;
	r.opened = true;
	for (;;) {
		uint32_t used = 0;
		int n = gcap_capfile_fill(cf, buf, BUFSZ, d, raw, MAXB, &used);

		r.rc = n;
		if (n <= 0)
			break;
		for (int i = 0; i < n; i++) {
			uint64_t h =
				hash((const uint8_t *)(uintptr_t)d[i].addr, d[i].caplen,
				     0xcbf29ce484222325ull ^ d[i].ts_ns);

			add(&r, h ^ d[i].caplen);
		}
	}
	gcap_capfile_close(cf);
	return r;
}

static int
mem_file(const uint8_t *p, size_t n)
{
	int fd = memfd_create("fuzz", 0);

	if (fd < 0)
		abort();
	if (write(fd, p, n) != (ssize_t)n)
		abort();
	return fd;
}

#define LAYOUTS 10u

/* The capture compressed in layout k, in chunks of chunk bytes. */
static void
compress_as(struct lay_out *o, unsigned k, const uint8_t *p, size_t n, size_t chunk)
{
	switch (k) {
	case 0: lay_zstd(o, p, n, chunk, true, false); break;
	case 1: lay_zstd(o, p, n, chunk, false, false); break;
	case 2: lay_zstd(o, p, n, chunk, false, true); break;
	case 3: lay_zstd(o, p, n, 0, true, false); break;
	case 8: lay_gzip(o, p, n, chunk, true); break;
	case 9:
		/* BGZF's members around a plain one */
		lay_gzip(o, p, n / 3, chunk, true);
		lay_gzip(o, p + n / 3, n / 3, 0, false);
		lay_gzip(o, p + 2 * (n / 3), n - 2 * (n / 3), chunk, true);
		break;
	default:
		/* lz4: one frame per chunk, independent or (6) every other
		 * one linked, with checksums or (4) without; 7: one frame */
		for (size_t off = 0; off < n || off == 0;) {
			size_t c = k == 7 || n - off < chunk ? n - off : chunk;

			lay_lz4(o, p + off, c, 4, k == 6 && off % (2 * chunk) != 0,
				k != 4, k != 4, k != 4);
			off += c;
			if (c == 0)
				break;
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lay_out o = { 0 };
	struct recs one, three, plain;
	unsigned layout, damage;
	uint32_t where;
	int fd;

	if (size < 6 || size > (1u << 20))
		return 0;
	layout = data[0] % LAYOUTS;
	damage = data[1] & 3u;
	memcpy(&where, data + 2, 4);
	data += 6;
	size -= 6;
	compress_as(&o, layout, data, size, 1024u + ((where >> 8) & 0x0fu) * 512u);
	if (o.len > 0 && (damage & 1))
		o.b[where % o.len] ^= (uint8_t)(1u + (where >> 24));
	if (o.len > 0 && (damage & 2))
		o.len = where % o.len;
	fd = mem_file(o.b, o.len);
	one = read_fd(fd, 1);
	three = read_fd(fd, 3);
	close(fd);
	/* as far as both go, the same records (at damage each may hand out
	 * a little more than the other: a unit whole, or what liblz4's frame
	 * decoder had not yet handed back when it found the error) */
	for (size_t i = 0; i < three.n && i < one.n; i++)
		if (three.sum[i] != one.sum[i])
			abort();
	if (one.rc == 0 && three.rc == 0 && one.n != three.n)
		abort();
	if (damage == 0) {
		fd = mem_file(data, size);
		plain = read_fd(fd, 1);
		close(fd);
		if (plain.opened != one.opened || plain.n != one.n ||
		    plain.n != three.n || plain.rc != one.rc || plain.rc != three.rc)
			abort();
		for (size_t i = 0; i < plain.n; i++)
			if (plain.sum[i] != one.sum[i])
				abort();
		free(plain.sum);
	}
	free(one.sum);
	free(three.sum);
	free(o.b);
	return 0;
}
