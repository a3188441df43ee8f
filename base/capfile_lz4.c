/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lz4 inputs (the frame format of lz4(1)) for the capture file reader,
 * through liblz4's frame decoder: every frame in turn.
 */
#include <errno.h>
#include <stdlib.h>

#include <lz4frame.h>

#include "capfile_internal.h"

#define LZ_IN (256u << 10)

struct lz {
	LZ4F_dctx *d;
	uint8_t in[LZ_IN];
	size_t pos, size;
	bool end;
};

static void
lz_close(struct gcap_cf_src *s)
{
	struct lz *z = s->z;

	if (z == NULL)
		return;
	LZ4F_freeDecompressionContext(z->d);
	free(z);
	s->z = NULL;
}

static int
lz_open(struct gcap_cf_src *s, char *errbuf)
{
	struct lz *z = calloc(1, sizeof(*z));

	if (z == NULL)
		return gcap_err(errbuf, ENOMEM, "lz4: out of memory");
	s->z = z;
	if (LZ4F_isError(LZ4F_createDecompressionContext(&z->d, LZ4F_VERSION))) {
		lz_close(s);
		return gcap_err(errbuf, ENOMEM, "lz4: cannot set up liblz4");
	}
	return 0;
}

static ssize_t
lz_read(struct gcap_cf_src *s, uint8_t *buf, size_t len)
{
	struct lz *z = s->z;
	size_t done = 0;

	while (done < len) {
		size_t dst = len - done, src;
		size_t r;

		if (z->pos == z->size) {
			ssize_t n;

			if (z->end)
				break;
			n = gcap_cf_raw_read(s, z->in, sizeof(z->in));
			if (n < 0)
				return n;
			z->end = n == 0;
			z->pos = 0;
			z->size = (size_t)n;
			if (n == 0)
				break;
		}
		src = z->size - z->pos;
		r = LZ4F_decompress(z->d, buf + done, &dst, z->in + z->pos, &src, NULL);
		if (LZ4F_isError(r)) {
			snprintf(s->msg, sizeof(s->msg), "lz4: damaged data (%s)",
				 LZ4F_getErrorName(r));
			return -EIO;
		}
		z->pos += src;
		done += dst;
	}
	return (ssize_t)done;
}

const struct gcap_cf_codec gcap_cf_lz4 = {
	.name = "lz4",
	.magic = { 0x04, 0x22, 0x4d, 0x18 },
	.magic_len = 4,
	.open = lz_open,
	.read = lz_read,
	.close = lz_close,
};
