/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The capture file reader's shared state helpers (capfile_internal.h): the
 * byte source's reads from its file descriptor, the interface table, the
 * kept header and growable byte buffers, and times. The reader and its
 * table rows (formats, codecs) call them; they call nothing of either.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capfile_internal.h"

/* How often a read that waits for a pipe's bytes asks whether to stop. */
#define CF_STOP_POLL_MS 50

/* Wait until the fd has bytes (or its end, or an error: the read says
 * which), in slices, looking for a stop between them (the reader would
 * sit in read(2) otherwise). @return 0; -ECANCELED. */
static int
wait_readable(struct gcap_cf_src *s)
{
	struct pollfd p = { .fd = s->fd, .events = POLLIN };

	if (!s->may_wait)
		return 0;
	for (;;) {
		int r = poll(&p, 1, CF_STOP_POLL_MS);

		if (r > 0 || (r < 0 && errno != EINTR))
			return 0;
		if (__atomic_load_n(&s->stopped, __ATOMIC_ACQUIRE)) {
			snprintf(s->msg, sizeof(s->msg),
				 "stopped while waiting for input");
			return -ECANCELED;
		}
	}
}

bool
gcap_cf_src_idle(const struct gcap_cf_src *s)
{
	struct pollfd p = { .fd = s->fd, .events = POLLIN };

	return s->may_wait && s->headpos >= s->nhead && s->backpos >= s->nback &&
	       poll(&p, 1, 0) == 0;
}

ssize_t
gcap_cf_raw_read(struct gcap_cf_src *s, uint8_t *buf, size_t len)
{
	ssize_t r;

	if (s->headpos < s->nhead) {
		size_t n = s->nhead - s->headpos < len ? s->nhead - s->headpos : len;

		memcpy(buf, s->head + s->headpos, n);
		s->headpos += n;
		return (ssize_t)n;
	}
	if (s->backpos < s->nback) {
		size_t n = s->nback - s->backpos < len ? s->nback - s->backpos : len;

		memcpy(buf, s->back + s->backpos, n);
		s->backpos += n;
		return (ssize_t)n;
	}
	if ((r = wait_readable(s)) < 0)
		return r;
	do
		r = read(s->fd, buf, len);
	while (r < 0 && errno == EINTR);
	if (r < 0) {
		snprintf(s->msg, sizeof(s->msg), "error reading dump file: %s",
			 strerror(errno));
		return -errno;
	}
	__atomic_store_n(&s->raw_bytes, s->raw_bytes + (uint64_t)r, __ATOMIC_RELAXED);
	return r;
}

ssize_t
gcap_cf_raw_full(struct gcap_cf_src *s, uint8_t *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t r = gcap_cf_raw_read(s, buf + got, len - got);

		if (r < 0)
			return r;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

int
gcap_cf_unread(struct gcap_cf_src *s, const uint8_t *p, size_t n)
{
	size_t left = s->nback - s->backpos;

	if (n == 0)
		return 0;
	if (left + n > s->backcap) {
		size_t cap = s->backcap ? s->backcap : 4096;
		uint8_t *b;

		while (cap < left + n)
			cap *= 2;
		if ((b = malloc(cap)) == NULL)
			return -ENOMEM;
		if (left > 0)
			memcpy(b + n, s->back + s->backpos, left);
		free(s->back);
		s->back = b;
		s->backcap = cap;
	} else {
		memmove(s->back + n, s->back + s->backpos, left);
	}
	memcpy(s->back, p, n);
	s->backpos = 0;
	s->nback = left + n;
	return 0;
}

int
gcap_cf_unit_room(struct gcap_cf_unit *u, size_t n)
{
	uint8_t *b;
	size_t cap;

	if (n <= u->in_cap)
		return 0;
	cap = u->in_cap ? u->in_cap : 65536;
	while (cap < n)
		cap *= 2;
	if ((b = realloc(u->in, cap)) == NULL)
		return -ENOMEM;
	u->in = b;
	u->in_cap = cap;
	return 0;
}

int
gcap_cf_ifs_grow(struct gcap_capfile *cf)
{
	if (cf->nifs < cf->ifs_cap)
		return 0;
	unsigned cap = cf->ifs_cap ? cf->ifs_cap * 2 : 4;
	struct gcap_cf_if *n = realloc(cf->ifs, cap * sizeof(*n));

	if (n == NULL)
		return -ENOMEM;
	memset(n + cf->ifs_cap, 0, (cap - cf->ifs_cap) * sizeof(*n));
	cf->ifs = n;
	cf->ifs_cap = cap;
	return 0;
}

int
gcap_cf_buf_add(uint8_t **b, size_t *len, size_t *cap, const uint8_t *p, size_t n)
{
	if (*len + n > *cap) {
		size_t c = *cap ? *cap : 4096;
		uint8_t *nb;

		while (c < *len + n)
			c *= 2;
		nb = realloc(*b, c);
		if (nb == NULL)
			return -ENOMEM;
		*b = nb;
		*cap = c;
	}
	memcpy(*b + *len, p, n);
	*len += n;
	return 0;
}

int
gcap_cf_hdr_add(struct gcap_capfile *cf, const uint8_t *p, size_t len)
{
	return gcap_cf_buf_add(&cf->hdr, &cf->hdr_len, &cf->hdr_cap, p, len);
}

uint64_t
gcap_cf_ts_ns(int64_t sec, uint64_t frac_ns)
{
	if (sec < 0)
		return 0;
	if ((uint64_t)sec > (UINT64_MAX - frac_ns) / 1000000000u)
		return UINT64_MAX;
	return (uint64_t)sec * 1000000000u + frac_ns;
}
