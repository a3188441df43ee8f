/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * zstd inputs for the capture file reader, through libzstd: every frame
 * in turn, by the streaming decoder; or, on several threads
 * (capfile_par.c), each frame of a known or boundable size up to
 * ZS_UNIT_MAX as a unit of its own (files of many frames: pzstd's,
 * zstd's seekable format, concatenated streams), larger ones serially.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ZSTD_decompressBound(), ZSTD_FRAMEHEADERSIZE_MAX: in libzstd's exported
 * symbols since 1.4.0, declared only for static linking */
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>
#include <zstd_errors.h>

#include "capfile_internal.h"

struct zs {
	ZSTD_DStream *d;
	ZSTD_inBuffer in;
	uint8_t *inbuf;
	size_t insize;
	bool end;
	bool frame_done; /* serial(): the frame ended, 0 comes next */
	int err;         /* an error after bytes still handed out: next */
	uint8_t *cbuf;   /* the cut's window on the stream */
	size_t cpos, clen, ccap;
};

/* the most a frame decoded as one unit gives (a slot's size: the ring
 * holds two per thread) */
#define ZS_UNIT_MAX (8u << 20)
/* the most compressed bytes read to find such a frame's end */
#define ZS_IN_MAX (ZS_UNIT_MAX + (ZS_UNIT_MAX >> 7) + (1u << 16))
#define ZS_READ (1u << 20)

static void
zs_close(struct gcap_cf_src *s)
{
	struct zs *z = s->z;

	if (z == NULL)
		return;
	ZSTD_freeDStream(z->d);
	free(z->inbuf);
	free(z->cbuf);
	free(z);
	s->z = NULL;
}

static int
zs_open(struct gcap_cf_src *s, char *errbuf)
{
	struct zs *z = calloc(1, sizeof(*z));

	if (z == NULL)
		return gcap_err(errbuf, ENOMEM, "zstd: out of memory");
	s->z = z;
	z->insize = ZSTD_DStreamInSize();
	z->inbuf = malloc(z->insize);
	z->d = ZSTD_createDStream();
	if (z->inbuf == NULL || z->d == NULL) {
		zs_close(s);
		return gcap_err(errbuf, ENOMEM, "zstd: out of memory");
	}
	ZSTD_initDStream(z->d);
	z->in.src = z->inbuf;
	return 0;
}

/* Up to len bytes; one_frame: stop at the frame's end, giving back what
 * follows it. */
static ssize_t
zs_stream(struct gcap_cf_src *s, uint8_t *buf, size_t len, bool one_frame)
{
	struct zs *z = s->z;
	ZSTD_outBuffer out = { buf, len, 0 };

	if (z->err < 0)
		return z->err;
	while (out.pos < out.size) {
		size_t r;

		if (z->in.pos == z->in.size) {
			ssize_t n;

			if (z->end)
				break;
			if (out.pos > 0 && gcap_cf_src_idle(s))
				break; /* what is decoded goes: the pipe is quiet */
			n = gcap_cf_raw_read(s, z->inbuf, z->insize);
			if (n < 0)
				return cf_fail(&z->err, out.pos, (int)n);
			z->end = n == 0;
			z->in.size = (size_t)n;
			z->in.pos = 0;
			if (n == 0)
				break;
		}
		r = ZSTD_decompressStream(z->d, &out, &z->in);
		if (ZSTD_isError(r)) {
			snprintf(s->msg, sizeof(s->msg), "zstd: damaged data (%s)",
				 ZSTD_getErrorName(r));
			return cf_fail(&z->err, out.pos, -EIO);
		}
		if (r == 0 && one_frame) {
			/* decoded and flushed: what follows is the next cut's */
			if (gcap_cf_unread(s, (const uint8_t *)z->in.src + z->in.pos,
					   z->in.size - z->in.pos) < 0) {
				snprintf(s->msg, sizeof(s->msg), "zstd: out of memory");
				return -ENOMEM;
			}
			z->in.pos = z->in.size = 0;
			z->frame_done = true;
			break;
		}
	}
	return (ssize_t)out.pos;
}

static ssize_t
zs_read(struct gcap_cf_src *s, uint8_t *buf, size_t len)
{
	return zs_stream(s, buf, len, false);
}

static ssize_t
zs_serial(struct gcap_cf_src *s, uint8_t *buf, size_t len)
{
	struct zs *z = s->z;

	if (z->frame_done) {
		z->frame_done = false;
		return 0;
	}
	return zs_stream(s, buf, len, true);
}

/* The cut's window on the stream holds want bytes from cpos, or all that
 * is left of the input. */
static int
zs_more(struct gcap_cf_src *s, struct zs *z, size_t want)
{
	if (z->clen - z->cpos >= want)
		return 0;
	if (z->cpos > 0) {
		memmove(z->cbuf, z->cbuf + z->cpos, z->clen - z->cpos);
		z->clen -= z->cpos;
		z->cpos = 0;
	}
	if (want + ZS_READ > z->ccap) {
		size_t cap = z->ccap ? z->ccap : 4 * ZS_READ;
		uint8_t *b;

		while (cap < want + ZS_READ)
			cap *= 2;
		if ((b = realloc(z->cbuf, cap)) == NULL) {
			snprintf(s->msg, sizeof(s->msg), "zstd: out of memory");
			return -ENOMEM;
		}
		z->cbuf = b;
		z->ccap = cap;
	}
	while (z->clen < want) {
		ssize_t r = gcap_cf_raw_read(s, z->cbuf + z->clen, z->ccap - z->clen);

		if (r < 0)
			return (int)r;
		if (r == 0)
			break;
		z->clen += (size_t)r;
	}
	return 0;
}

/* What the window holds goes back to the stream, for serial(). */
static int
zs_to_serial(struct gcap_cf_src *s, struct zs *z)
{
	if (gcap_cf_unread(s, z->cbuf + z->cpos, z->clen - z->cpos) < 0) {
		snprintf(s->msg, sizeof(s->msg), "zstd: out of memory");
		return -ENOMEM;
	}
	z->cpos = z->clen = 0;
	z->frame_done = false;
	ZSTD_DCtx_reset(z->d, ZSTD_reset_session_only);
	return CF_CUT_SERIAL;
}

/* Pass over a skippable frame of skip bytes at the window's start.
 * @return 0, 1 at the input's end, or -errno. */
static int
zs_skip(struct gcap_cf_src *s, struct zs *z, uint64_t skip)
{
	while (skip > 0) {
		size_t n;
		int r;

		if (z->cpos == z->clen && (r = zs_more(s, z, 1)) < 0)
			return r;
		if (z->cpos == z->clen)
			return 1;
		n = z->clen - z->cpos < skip ? z->clen - z->cpos : (size_t)skip;
		z->cpos += n;
		skip -= n;
	}
	return 0;
}

/* Frames are found in a window on the stream (ZS_READ bytes at a time)
 * and only their own bytes copied into the unit. Anything unusual
 * (damage, a truncated end, a large frame) goes to the streaming decoder,
 * so that it ends as a one-thread read ends. */
static int
zs_cut(struct gcap_cf_src *s, struct gcap_cf_unit *u)
{
	struct zs *z = s->z;

	for (;;) {
		unsigned long long fcs, bound;
		ZSTD_frameHeader fh;
		const uint8_t *p;
		size_t fs, avail;
		int r;

		if ((r = zs_more(s, z, ZSTD_FRAMEHEADERSIZE_MAX)) < 0)
			return r;
		avail = z->clen - z->cpos;
		p = z->cbuf + z->cpos;
		if (avail == 0)
			return CF_CUT_END;
		if (avail >= 8 && (cf_le32(p) & ZSTD_MAGIC_SKIPPABLE_MASK) ==
					  ZSTD_MAGIC_SKIPPABLE_START) {
			/* pzstd's frame sizes, a seek table: nothing to decode */
			if ((r = zs_skip(s, z, 8 + (uint64_t)cf_le32(p + 4))) < 0)
				return r;
			if (r == 1)
				return CF_CUT_END; /* as the streaming decoder ends */
			continue;
		}
		fcs = ZSTD_getFrameContentSize(p, avail);
		if (fcs == ZSTD_CONTENTSIZE_ERROR ||
		    (fcs != ZSTD_CONTENTSIZE_UNKNOWN && fcs > ZS_UNIT_MAX))
			return zs_to_serial(s, z);
		/* the streaming decoder refuses windows over its limit: so
		 * does a unit (the one-shot decoder would not) */
		if (ZSTD_getFrameHeader(&fh, p, avail) != 0 ||
		    fh.windowSize > (1ull << ZSTD_WINDOWLOG_LIMIT_DEFAULT))
			return zs_to_serial(s, z);
		for (;;) {
			fs = ZSTD_findFrameCompressedSize(p, avail);
			if (!ZSTD_isError(fs))
				break;
			if (ZSTD_getErrorCode(fs) != ZSTD_error_srcSize_wrong ||
			    avail >= ZS_IN_MAX)
				return zs_to_serial(s, z);
			if ((r = zs_more(s, z, avail + ZS_READ)) < 0)
				return r;
			if (z->clen - z->cpos == avail)
				return zs_to_serial(s, z); /* cut short */
			avail = z->clen - z->cpos;
			p = z->cbuf + z->cpos;
		}
		bound = fcs != ZSTD_CONTENTSIZE_UNKNOWN ? fcs :
							  ZSTD_decompressBound(p, fs);
		if (bound == ZSTD_CONTENTSIZE_ERROR || bound > ZS_UNIT_MAX)
			return zs_to_serial(s, z);
		if (gcap_cf_unit_room(u, fs) < 0) {
			snprintf(s->msg, sizeof(s->msg), "zstd: out of memory");
			return -ENOMEM;
		}
		memcpy(u->in, p, fs);
		u->in_len = fs;
		u->out_max = (size_t)bound;
		z->cpos += fs;
		return CF_CUT_UNIT;
	}
}

static void *
zs_ctx_new(void)
{
	return ZSTD_createDCtx();
}

static void
zs_ctx_free(void *ctx)
{
	ZSTD_freeDCtx(ctx);
}

static ssize_t
zs_decode(void *ctx, const struct gcap_cf_unit *u, uint8_t *out, char *msg, size_t len)
{
	size_t r = ZSTD_decompressDCtx(ctx, out, u->out_max, u->in, u->in_len);

	if (ZSTD_isError(r)) {
		snprintf(msg, len, "zstd: damaged data (%s)", ZSTD_getErrorName(r));
		return -EIO;
	}
	return (ssize_t)r;
}

const struct gcap_cf_codec gcap_cf_zstd = {
	.name = "zstd",
	.magic = { 0x28, 0xb5, 0x2f, 0xfd },
	.magic_len = 4,
	.open = zs_open,
	.read = zs_read,
	.close = zs_close,
	/* 4 GB on an H200 host: 776 ms on 4 threads, 774 on 8 */
	.par_max = 4,
	.unit_in_max = ZS_IN_MAX,
	.unit_out_max = ZS_UNIT_MAX,
	.cut = zs_cut,
	.serial = zs_serial,
	.ctx_new = zs_ctx_new,
	.ctx_free = zs_ctx_free,
	.decode = zs_decode,
};
