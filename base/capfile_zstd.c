/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * zstd inputs for the capture file reader, through libzstd's streaming
 * decoder: every frame in turn.
 */
#include <errno.h>
#include <stdlib.h>

#include <zstd.h>

#include "capfile_internal.h"

struct zs {
	ZSTD_DStream *d;
	ZSTD_inBuffer in;
	uint8_t *inbuf;
	size_t insize;
	bool end;
};

static void
zs_close(struct gcap_cf_src *s)
{
	struct zs *z = s->z;

	if (z == NULL)
		return;
	ZSTD_freeDStream(z->d);
	free(z->inbuf);
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

static ssize_t
zs_read(struct gcap_cf_src *s, uint8_t *buf, size_t len)
{
	struct zs *z = s->z;
	ZSTD_outBuffer out = { buf, len, 0 };

	while (out.pos < out.size) {
		size_t r;

		if (z->in.pos == z->in.size) {
			ssize_t n;

			if (z->end)
				break;
			n = gcap_cf_raw_read(s, z->inbuf, z->insize);
			if (n < 0)
				return n;
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
			return -EIO;
		}
	}
	return (ssize_t)out.pos;
}

const struct gcap_cf_codec gcap_cf_zstd = {
	.name = "zstd",
	.magic = { 0x28, 0xb5, 0x2f, 0xfd },
	.magic_len = 4,
	.open = zs_open,
	.read = zs_read,
	.close = zs_close,
};
