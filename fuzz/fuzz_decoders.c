/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for compressed -r inputs decompressed on several
 * threads (base/capfile_par.c and the codecs' cut of zstd frames and lz4
 * blocks, which parses untrusted frame headers by hand).
 *
 * Input: [layout byte][damage byte][4 bytes: where][a capture file]. The
 * capture's bytes are compressed in one of eight layouts (zstd frames
 * with and without their sizes, pzstd's skippable frames, one frame; lz4
 * frames of independent and of linked blocks, with and without
 * checksums), then damaged as the damage byte says (a byte changed, the
 * end cut off, both, or neither), and read to the end on one decoding
 * thread and on three.
 *
 * The three threads must give a prefix of what one thread gives, record
 * for record (a damaged unit ends them, where the streaming decoder may
 * still hand out some of its bytes), and all of it when both end cleanly;
 * undamaged, both give what the capture itself gives. Any violation
 * abort()s.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <lz4frame.h>
#include <zstd.h>

#include "gpucap/gcap_capfile.h"

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

struct out {
	uint8_t *b;
	size_t len, cap;
};

static void
room(struct out *o, size_t n)
{
	if (o->len + n <= o->cap)
		return;
	o->cap = (o->len + n) * 2;
	o->b = realloc(o->b, o->cap);
	if (o->b == NULL)
		abort();
}

static void
put_lz4(struct out *o, const uint8_t *p, size_t n, bool linked, bool sums)
{
	LZ4F_preferences_t pr = { 0 };
	size_t b;

	pr.frameInfo.blockSizeID = LZ4F_max64KB;
	pr.frameInfo.blockMode = linked ? LZ4F_blockLinked : LZ4F_blockIndependent;
	pr.frameInfo.contentChecksumFlag = sums ? LZ4F_contentChecksumEnabled : 0;
	pr.frameInfo.blockChecksumFlag = sums ? LZ4F_blockChecksumEnabled : 0;
	pr.frameInfo.contentSize = sums ? n : 0;
	b = LZ4F_compressFrameBound(n, &pr);
	room(o, b);
	b = LZ4F_compressFrame(o->b + o->len, b, p, n, &pr);
	if (LZ4F_isError(b))
		abort();
	o->len += b;
}

static void
put_zstd(struct out *o, const uint8_t *p, size_t n, bool size)
{
	ZSTD_CCtx *c = ZSTD_createCCtx();
	ZSTD_inBuffer in = { p, n, 0 };
	size_t r;

	ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 1);
	ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
	if (size) {
		room(o, ZSTD_compressBound(n));
		r = ZSTD_compress2(c, o->b + o->len, o->cap - o->len, p, n);
		if (ZSTD_isError(r))
			abort();
		o->len += r;
	} else {
		do {
			ZSTD_outBuffer ob;

			room(o, 1 << 16);
			ob = (ZSTD_outBuffer){ o->b + o->len, o->cap - o->len, 0 };
			r = ZSTD_compressStream2(c, &ob, &in, ZSTD_e_end);
			if (ZSTD_isError(r))
				abort();
			o->len += ob.pos;
		} while (r != 0);
	}
	ZSTD_freeCCtx(c);
}

static void
put_skippable(struct out *o, uint32_t n)
{
	room(o, 8 + n);
	for (int i = 0; i < 4; i++)
		o->b[o->len++] = (uint8_t)((0x184D2A51u >> (8 * i)) & 0xff);
	for (int i = 0; i < 4; i++)
		o->b[o->len++] = (uint8_t)(n >> (8 * i));
	memset(o->b + o->len, 0, n);
	o->len += n;
}

/* The capture compressed in layout k, in chunks of chunk bytes. */
static void
compress(struct out *o, unsigned k, const uint8_t *p, size_t n, size_t chunk)
{
	for (size_t off = 0; off < n || off == 0;) {
		size_t c = k == 3 || k == 7 ? n : (n - off < chunk ? n - off : chunk);

		switch (k) {
		case 0: put_zstd(o, p + off, c, true); break;
		case 1: put_zstd(o, p + off, c, false); break;
		case 2:
			put_skippable(o, 4);
			put_zstd(o, p + off, c, false);
			break;
		case 3: put_zstd(o, p + off, c, true); break;
		case 4: put_lz4(o, p + off, c, false, false); break;
		case 5: put_lz4(o, p + off, c, false, true); break;
		case 6: put_lz4(o, p + off, c, off % (2 * chunk) != 0, true); break;
		default: put_lz4(o, p + off, c, false, true); break;
		}
		off += c;
		if (c == 0)
			break;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct out o = { 0 };
	struct recs one, three, plain;
	unsigned layout, damage;
	uint32_t where;
	int fd;

	if (size < 6 || size > (1u << 20))
		return 0;
	layout = data[0] & 7u;
	damage = data[1] & 3u;
	memcpy(&where, data + 2, 4);
	data += 6;
	size -= 6;
	compress(&o, layout, data, size, 1024u + (data[0] & 0x0fu) * 512u);
	if (o.len > 0 && (damage & 1))
		o.b[where % o.len] ^= (uint8_t)(1u + (where >> 24));
	if (o.len > 0 && (damage & 2))
		o.len = where % o.len;
	fd = mem_file(o.b, o.len);
	one = read_fd(fd, 1);
	three = read_fd(fd, 3);
	close(fd);
	if (three.opened && !one.opened)
		abort();
	if (three.n > one.n)
		abort();
	for (size_t i = 0; i < three.n; i++)
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
