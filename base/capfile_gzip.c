/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gzip inputs for the capture file reader, through zlib: every member of
 * a multi-member file in turn (as gzip -d and Wireshark read them); or,
 * on several threads (capfile_par.c), each member that says its own
 * length (BGZF's, as bgzip writes them: an extra field "BC" holding it)
 * as a unit of its own, its CRC and length checked. Members that do not
 * say it (gzip's, pigz's) are found only by inflating: the streaming
 * decoder takes them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "capfile_internal.h"

#define GZ_IN (256u << 10)

struct gz {
	z_stream z;
	uint8_t in[GZ_IN];
	bool end;        /* the input has ended */
	bool frame_done; /* serial(): the member ended, 0 comes next */
	int err;         /* an error after bytes still handed out: next */
};

/* threads worth running for BGZF's members */
#define GZ_PAR_MAX 8u
/* the most a member decoded as a unit gives (BGZF's: 64 KB) */
#define GZ_UNIT_MAX (1u << 20)

static int
gz_open(struct gcap_cf_src *s, char *errbuf)
{
	struct gz *g = calloc(1, sizeof(*g));

	if (g == NULL)
		return gcap_err(errbuf, ENOMEM, "gzip: out of memory");
	/* 15 + 32: a gzip or zlib header, found by zlib */
	if (inflateInit2(&g->z, 15 + 32) != Z_OK) {
		free(g);
		return gcap_err(errbuf, ENOMEM, "gzip: cannot set up zlib");
	}
	s->z = g;
	return 0;
}

/* Up to len bytes; one_member: stop at the member's end, giving back
 * what follows it. */
static ssize_t
gz_stream(struct gcap_cf_src *s, uint8_t *buf, size_t len, bool one_member)
{
	struct gz *g = s->z;

	if (g->err < 0)
		return g->err;
	g->z.next_out = buf;
	g->z.avail_out = (uInt)(len > UINT32_MAX ? UINT32_MAX : len);
	while (g->z.avail_out > 0) {
		int r;

		if (g->z.avail_in == 0 && !g->end) {
			if (g->z.next_out > buf && gcap_cf_src_idle(s))
				break; /* what is decoded goes: the pipe is quiet */
			ssize_t n = gcap_cf_raw_read(s, g->in, sizeof(g->in));

			if (n < 0)
				return cf_fail(&g->err, (size_t)(g->z.next_out - buf),
					       (int)n);
			g->end = n == 0;
			g->z.next_in = g->in;
			g->z.avail_in = (uInt)n;
		}
		if (g->z.avail_in == 0 && g->end)
			break;
		r = inflate(&g->z, Z_NO_FLUSH);
		if (r == Z_STREAM_END) {
			/* another member may follow */
			if (inflateReset(&g->z) != Z_OK)
				goto bad;
			if (!one_member)
				continue;
			if (gcap_cf_unread(s, g->z.next_in, g->z.avail_in) < 0) {
				snprintf(s->msg, sizeof(s->msg), "gzip: out of memory");
				return -ENOMEM;
			}
			g->z.avail_in = 0;
			g->frame_done = true;
			break;
		}
		if (r != Z_OK && r != Z_BUF_ERROR)
			goto bad;
		if (r == Z_BUF_ERROR && g->end)
			break;
	}
	return (ssize_t)(g->z.next_out - buf);
bad:
	snprintf(s->msg, sizeof(s->msg), "gzip: damaged data (%s)",
		 g->z.msg != NULL ? g->z.msg : "inflate failed");
	return cf_fail(&g->err, (size_t)(g->z.next_out - buf), -EIO);
}

static ssize_t
gz_read(struct gcap_cf_src *s, uint8_t *buf, size_t len)
{
	return gz_stream(s, buf, len, false);
}

static ssize_t
gz_serial(struct gcap_cf_src *s, uint8_t *buf, size_t len)
{
	struct gz *g = s->z;

	if (g->frame_done) {
		g->frame_done = false;
		return 0;
	}
	return gz_stream(s, buf, len, true);
}

/* The bytes read (the header in h, then u's) go back, for the streaming
 * decoder. */
static int
gz_to_serial(struct gcap_cf_src *s, const uint8_t *h, size_t hl, struct gcap_cf_unit *u)
{
	struct gz *g = s->z;

	if (gcap_cf_unread(s, u->in, u->in_len) < 0 || gcap_cf_unread(s, h, hl) < 0) {
		snprintf(s->msg, sizeof(s->msg), "gzip: out of memory");
		return -ENOMEM;
	}
	u->in_len = 0;
	g->frame_done = false;
	return CF_CUT_SERIAL;
}

/* A member whose header says its length (BGZF: FLG.FEXTRA alone, a "BC"
 * subfield of 2 bytes holding the member's size less 1) is a unit: its
 * deflate data and trailer in u->in. */
static int
gz_cut(struct gcap_cf_src *s, struct gcap_cf_unit *u)
{
	uint8_t h[12 + 65535];
	size_t hl, xlen, bsize = 0;
	ssize_t n;

	u->in_len = 0;
	n = gcap_cf_raw_full(s, h, 12);
	if (n <= 0)
		return (int)n;
	hl = (size_t)n;
	if (hl < 12 || h[0] != 0x1f || h[1] != 0x8b || h[2] != 8 || h[3] != 4)
		return gz_to_serial(s, h, hl, u);
	xlen = (size_t)h[10] | (size_t)h[11] << 8;
	if ((n = gcap_cf_raw_full(s, h + 12, xlen)) < 0)
		return (int)n;
	hl += (size_t)n;
	if ((size_t)n < xlen)
		return gz_to_serial(s, h, hl, u);
	for (size_t i = 12; i + 4 <= hl;) {
		size_t slen = (size_t)h[i + 2] | (size_t)h[i + 3] << 8;

		if (h[i] == 'B' && h[i + 1] == 'C' && slen == 2 && i + 6 <= hl)
			bsize = ((size_t)h[i + 4] | (size_t)h[i + 5] << 8) + 1;
		i += 4 + slen;
	}
	/* the member: this header, deflate data, CRC32 and ISIZE */
	if (bsize < hl + 8)
		return gz_to_serial(s, h, hl, u);
	if (gcap_cf_unit_room(u, bsize - hl) < 0) {
		snprintf(s->msg, sizeof(s->msg), "gzip: out of memory");
		return -ENOMEM;
	}
	if ((n = gcap_cf_raw_full(s, u->in, bsize - hl)) < 0)
		return (int)n;
	u->in_len = (size_t)n;
	if (u->in_len < bsize - hl || cf_le32(u->in + u->in_len - 4) > GZ_UNIT_MAX)
		return gz_to_serial(s, h, hl, u);
	u->out_max = cf_le32(u->in + u->in_len - 4);
	return CF_CUT_UNIT;
}

static void *
gz_ctx_new(void)
{
	z_stream *z = calloc(1, sizeof(*z));

	if (z != NULL && inflateInit2(z, -15) != Z_OK) {
		free(z);
		z = NULL;
	}
	return z;
}

static void
gz_ctx_free(void *ctx)
{
	inflateEnd(ctx);
	free(ctx);
}

static ssize_t
gz_decode(void *ctx, const struct gcap_cf_unit *u, uint8_t *out, char *msg, size_t len)
{
	z_stream *z = ctx;
	uint8_t none;
	int r;

	if (inflateReset(z) != Z_OK)
		goto bad;
	z->next_in = u->in;
	z->avail_in = (uInt)(u->in_len - 8);
	/* exactly the room ISIZE says: a member that gives more does not
	 * reach its end in it */
	z->next_out = u->out_max > 0 ? out : &none;
	z->avail_out = (uInt)(u->out_max > 0 ? u->out_max : 1);
	r = inflate(z, Z_FINISH);
	if (r != Z_STREAM_END || z->total_out != u->out_max || z->avail_in != 0)
		goto bad;
	if (crc32(0, out, (uInt)u->out_max) != cf_le32(u->in + u->in_len - 8))
		goto bad;
	return (ssize_t)u->out_max;
bad:
	snprintf(msg, len, "gzip: damaged data (%s)",
		 z->msg != NULL ? z->msg : "a member that does not match its header");
	return -EIO;
}

static void
gz_close(struct gcap_cf_src *s)
{
	struct gz *g = s->z;

	if (g == NULL)
		return;
	inflateEnd(&g->z);
	free(g);
	s->z = NULL;
}

const struct gcap_cf_codec gcap_cf_gzip = {
	.name = "gzip",
	.magic = { 0x1f, 0x8b },
	.magic_len = 2,
	.open = gz_open,
	.read = gz_read,
	.close = gz_close,
	/* inflating is slower: GZ_PAR_MAX */
	.par_max = GZ_PAR_MAX,
	/* a member's length field is 16 bits (BGZF's BSIZE + 1) */
	.unit_in_max = 65536u,
	.unit_out_max = GZ_UNIT_MAX,
	.cut = gz_cut,
	.serial = gz_serial,
	.ctx_new = gz_ctx_new,
	.ctx_free = gz_ctx_free,
	.decode = gz_decode,
};
