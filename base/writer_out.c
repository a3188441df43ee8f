/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The writer's bytes to its file descriptor, for both paths that write
 * them (writer_io.c on the caller's thread, writer_behind.c on the
 * writer's I/O thread): write(2) of whole iovecs, the walk to the last
 * whole item of a buffer, the cut back to it, and the sticky error with
 * its message.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include "writer_internal.h"

int
gcap_wr_fail(struct gcap_writer *w, int err, const char *fmt, ...)
{
	if (w->err == 0) {
		va_list ap;

		w->err = -err;
		va_start(ap, fmt);
		vsnprintf(w->msg, sizeof(w->msg), fmt, ap);
		va_end(ap);
	}
	return w->err;
}

int
gcap_wr_writev_all(int fd, struct iovec *iov, int n, size_t *done)
{
	*done = 0;
	while (n > 0) {
		ssize_t r = writev(fd, iov, n > IOV_MAX ? IOV_MAX : n);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -EIO;
		*done += (size_t)r;
		while (n > 0 && (size_t)r >= iov->iov_len) {
			r -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (uint8_t *)iov->iov_base + r;
			iov->iov_len -= (size_t)r;
		}
	}
	return 0;
}

size_t
gcap_wr_whole_prefix(const struct gcap_wr_fmt *fmt, const uint8_t *buf, size_t len,
		     size_t upto, uint32_t *recs)
{
	size_t pos = 0;
	uint32_t n = 0;

	/* the file header never sits in the buffer: gcap_wr_file_open
	 * writes it */
	while (pos < len) {
		bool is_rec;
		size_t sz = fmt->item_len(buf + pos, &is_rec);

		if (pos + sz > upto)
			break;
		pos += sz;
		n += is_rec;
	}
	*recs = n;
	return pos;
}

void
gcap_wr_cut_back(const struct gcap_writer *w, uint64_t len)
{
	if (w->fd_reg)
		(void)!ftruncate(w->fd, w->base + (off_t)len);
}

int
gcap_wr_fail_write(struct gcap_writer *w, int rc)
{
	if (!w->fd_reg)
		return gcap_wr_fail(w, -rc,
				    "write to '%s' failed: %s (not a "
				    "regular file: it may end in a partial "
				    "record)",
				    w->cur, strerror(-rc));
	return gcap_wr_fail(w, -rc,
			    "write to '%s' failed: %s (file cut back to "
			    "its last whole record, %llu bytes)",
			    w->cur, strerror(-rc), (unsigned long long)w->file_off);
}
