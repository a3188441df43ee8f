/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Compressed stream layouts for the tests and the fuzzer of the capture
 * file reader's decoders (tests/pipeline/test_capfile_decoders.c,
 * fuzz/fuzz_decoders.c): zstd frames with and without their sizes, lz4
 * frames of independent and linked blocks, gzip members with and without
 * BGZF's length field, and skippable frames, appended to a growable
 * buffer with the libraries. Any library failure abort()s.
 */
#ifndef GCAP_TESTS_LAYOUTS_H
#define GCAP_TESTS_LAYOUTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <lz4frame.h>
#include <zlib.h>
#include <zstd.h>

struct lay_out {
	uint8_t *b;
	size_t len, cap;
};

static inline void
lay_room(struct lay_out *o, size_t n)
{
	if (o->len + n <= o->cap)
		return;
	o->cap = (o->len + n) * 2;
	o->b = realloc(o->b, o->cap);
	if (o->b == NULL)
		abort();
}

static inline void
lay_le32(struct lay_out *o, uint32_t v)
{
	lay_room(o, 4);
	for (int i = 0; i < 4; i++)
		o->b[o->len++] = (uint8_t)(v >> (8 * i));
}

/* A skippable frame (zstd's and lz4's magic) of n bytes. */
static inline void
lay_skippable(struct lay_out *o, uint32_t n)
{
	lay_le32(o, 0x184D2A50u + 3);
	lay_le32(o, n);
	lay_room(o, n);
	memset(o->b + o->len, 0xAB, n);
	o->len += n;
}

/* One lz4 frame of src: block size id 4-7, linked blocks or not, the
 * content checksum, the block checksums, the content size. */
static inline void
lay_lz4(struct lay_out *o, const uint8_t *src, size_t len, int bsid, bool linked,
	bool csum, bool bsum, bool size)
{
	LZ4F_preferences_t pr = { 0 };
	size_t n;

	pr.frameInfo.blockSizeID = (LZ4F_blockSizeID_t)bsid;
	pr.frameInfo.blockMode = linked ? LZ4F_blockLinked : LZ4F_blockIndependent;
	pr.frameInfo.contentChecksumFlag =
		csum ? LZ4F_contentChecksumEnabled : LZ4F_noContentChecksum;
	pr.frameInfo.blockChecksumFlag =
		bsum ? LZ4F_blockChecksumEnabled : LZ4F_noBlockChecksum;
	pr.frameInfo.contentSize = size ? len : 0;
	n = LZ4F_compressFrameBound(len, &pr);
	lay_room(o, n);
	n = LZ4F_compressFrame(o->b + o->len, n, src, len, &pr);
	if (LZ4F_isError(n))
		abort();
	o->len += n;
}

/* zstd frames of src, chunk bytes each (0: one frame), their content
 * size said or not, a skippable frame before each if skip (pzstd's). */
static inline void
lay_zstd(struct lay_out *o, const uint8_t *src, size_t len, size_t chunk, bool size,
	 bool skip)
{
	ZSTD_CCtx *c = ZSTD_createCCtx();

	if (c == NULL)
		abort();
	ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 1);
	ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
	for (size_t off = 0; off < len || off == 0;) {
		size_t n = chunk == 0 || len - off < chunk ? len - off : chunk;
		ZSTD_inBuffer in = { src + off, n, 0 };
		size_t r;

		if (skip)
			lay_skippable(o, 4);
		if (size) {
			lay_room(o, ZSTD_compressBound(n));
			r = ZSTD_compress2(c, o->b + o->len, o->cap - o->len, src + off,
					   n);
			if (ZSTD_isError(r))
				abort();
			o->len += r;
		} else {
			/* streamed, no size pledged: the frame does not say it */
			do {
				ZSTD_outBuffer ob;

				lay_room(o, 1 << 16);
				ob = (ZSTD_outBuffer){ o->b + o->len, o->cap - o->len,
						       0 };
				r = ZSTD_compressStream2(c, &ob, &in, ZSTD_e_end);
				if (ZSTD_isError(r))
					abort();
				o->len += ob.pos;
			} while (r != 0);
		}
		ZSTD_CCtx_reset(c, ZSTD_reset_session_only);
		off += n;
		if (n == 0)
			break;
	}
	ZSTD_freeCCtx(c);
}

/* gzip members of src, chunk bytes each (at most 65,280 with bgzf): BGZF's
 * (bgzip: the member's size in a "BC" extra field) when bgzf, else plain
 * gzip members. */
static inline void
lay_gzip(struct lay_out *o, const uint8_t *src, size_t len, size_t chunk, bool bgzf)
{
	static const uint8_t bc[18] = { 0x1f, 0x8b, 8, 4,   0,   0, 0, 0, 0,
					0xff, 6,    0, 'B', 'C', 2, 0, 0, 0 };
	static const uint8_t plain[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff };

	for (size_t off = 0; off < len || off == 0;) {
		size_t n = chunk == 0 || len - off < chunk ? len - off : chunk,
		       start = o->len;
		z_stream z = { 0 };

		lay_room(o, 18 + compressBound((uLong)n) + 8);
		memcpy(o->b + o->len, bgzf ? bc : plain, bgzf ? 18 : 10);
		o->len += bgzf ? 18 : 10;
		if (deflateInit2(&z, 1, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
			abort();
		z.next_in = (uint8_t *)(uintptr_t)(src + off);
		z.avail_in = (uInt)n;
		z.next_out = o->b + o->len;
		z.avail_out = (uInt)(o->cap - o->len);
		if (deflate(&z, Z_FINISH) != Z_STREAM_END)
			abort();
		o->len += z.total_out;
		deflateEnd(&z);
		lay_le32(o, (uint32_t)crc32(0, src + off, (uInt)n));
		lay_le32(o, (uint32_t)n);
		if (bgzf) {
			size_t bsize = o->len - start - 1;

			o->b[start + 16] = (uint8_t)bsize;
			o->b[start + 17] = (uint8_t)(bsize >> 8);
		}
		off += n;
		if (n == 0)
			break;
	}
}

#endif
