/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gzip inputs for the capture file reader, through zlib: every member of
 * a multi-member file in turn (as gzip -d and Wireshark read them).
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
	bool end; /* the input has ended */
};

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

static ssize_t
gz_read(struct gcap_cf_src *s, uint8_t *buf, size_t len)
{
	struct gz *g = s->z;

	g->z.next_out = buf;
	g->z.avail_out = (uInt)(len > UINT32_MAX ? UINT32_MAX : len);
	while (g->z.avail_out > 0) {
		int r;

		if (g->z.avail_in == 0 && !g->end) {
			ssize_t n = gcap_cf_raw_read(s, g->in, sizeof(g->in));

			if (n < 0)
				return n;
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
			continue;
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
};
