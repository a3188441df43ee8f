/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The capture file reader's records (gcap_capfile.h): filling a caller's
 * buffer with records parsed in place by the format's row (from the
 * source's bytes, or described where they lie in a mapped file), and the
 * hand-over to libpcap where the format stops being certain (see
 * capfile_internal.h). The stream libpcap reads is here too: after a
 * hand-over it serves the records (from the mapping or the source), and
 * opening an input (capfile_open.c) has libpcap read the file header
 * through it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "capfile_internal.h"

/* Smallest read into a batch's buffer. */
#define CF_READ_MIN (64u << 10)
/* how far ahead of the record being parsed a mapped file is prefetched
 * (1 GB in tmpfs: 150 ms to parse without, 95 with; dev machine) */
#define CF_MAP_PREFETCH 2048u

/* The input's next bytes; on an error its message is in s->rmsg. */
ssize_t
gcap_cf_src_read(struct gcap_cf_src *s, uint8_t *buf, size_t len)
{
	ssize_t r;

	if (s->par != NULL)
		return gcap_cf_par_read(s, buf, len);
	if (s->ahead != NULL)
		return gcap_cf_ahead_read(s, buf, len);
	r = s->codec != NULL ? s->codec->read(s, buf, len) :
			       gcap_cf_raw_read(s, buf, len);
	if (r < 0)
		memcpy(s->rmsg, s->msg, sizeof(s->rmsg));
	return r;
}

/* ---- a mapped file cut short while it is read ---- */

size_t
gcap_cf_map_whole(struct gcap_capfile *cf, size_t pos, bool ask)
{
	bool last;
	size_t from = gcap_cf_guard_probe(cf->guard, pos, &last);
	struct stat st;

	if (from == SIZE_MAX && !last && !ask)
		return SIZE_MAX;
	if (fstat(cf->src.fd, &st) == 0 && (uint64_t)st.st_size < from)
		from = (size_t)st.st_size;
	return from < cf->map_len ? from : SIZE_MAX;
}

/* The mapping holds the file's bytes only up to whole (the file shrank
 * to it): of desc's n records (in file order) those whose bytes end past
 * it are dropped, and the input ends with -EIO after the rest. A file
 * that is longer again (written again after the cut) or was never cut (a
 * storage error faults the same way) is said so. @return the records
 * kept. */
static unsigned
map_shrank(struct gcap_capfile *cf, size_t whole, const struct gcap_pkt *desc, unsigned n)
{
	unsigned k = 0;
	struct stat st;

	while (k < n && desc[k].addr - (uintptr_t)cf->map + desc[k].caplen <= whole)
		k++;
	if (fstat(cf->src.fd, &st) == 0 && (uint64_t)st.st_size > whole)
		snprintf(cf->msg, sizeof(cf->msg),
			 "its bytes from %zu on could not be read (a storage error, or "
			 "the file was cut short and written again while it was read)",
			 whole);
	else
		snprintf(cf->msg, sizeof(cf->msg),
			 "the file shrank to %zu bytes while it was read", whole);
	cf->shrank = true;
	cf->err = -EIO;
	cf->done = true;
	return k;
}

/* ---- the stream libpcap reads ---- */

/* libpcap's reads: the replay bytes first, then the carry (at open,
 * recording: what the source gives is kept in the carry too), then the
 * source. */
/* Up to size bytes of the held bytes from[*pos..len) into buf. */
static size_t
ck_serve(char *buf, size_t size, const uint8_t *from, size_t len, size_t *pos)
{
	size_t n = len - *pos < size ? len - *pos : size;

	memcpy(buf, from + *pos, n);
	*pos += n;
	return n;
}

static ssize_t
ck_read(void *c, char *buf, size_t size)
{
	struct gcap_capfile *cf = c;
	ssize_t r;

	if (cf->replay_pos < cf->replay_len)
		return (ssize_t)ck_serve(buf, size, cf->replay, cf->replay_len,
					 &cf->replay_pos);
	if (cf->carry_pos < cf->carry_len)
		return (ssize_t)ck_serve(buf, size, cf->carry, cf->carry_len,
					 &cf->carry_pos);
	if (cf->map_rd < cf->map_len) {
		size_t at = cf->map_rd, whole;
		size_t n = ck_serve(buf, size, cf->map, cf->map_len, &cf->map_rd);

		whole = gcap_cf_map_whole(cf, cf->map_rd, false);
		if (whole == SIZE_MAX || whole >= cf->map_rd)
			return (ssize_t)n;
		/* the bytes up to the new end, then the end (the input's
		 * error is set: libpcap's does not replace it) */
		map_shrank(cf, whole, NULL, 0);
		cf->map_rd = cf->map_len;
		cf->src_eof = true;
		return whole > at ? (ssize_t)(whole - at) : 0;
	}
	if (cf->src_eof)
		return 0;
	r = gcap_cf_src_read(&cf->src, (uint8_t *)buf, size);
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	if (r == 0)
		cf->src_eof = true;
	else if (cf->recording) {
		if (gcap_cf_buf_add(&cf->carry, &cf->carry_len, &cf->carry_cap,
				    (uint8_t *)buf, (size_t)r) < 0) {
			errno = ENOMEM;
			return -1;
		}
		cf->carry_pos = cf->carry_len;
	}
	return r;
}

FILE *
gcap_cf_ck_open(struct gcap_capfile *cf)
{
	cookie_io_functions_t io = { .read = ck_read };

	return fopencookie(cf, "r", io);
}

/* ---- reading ---- */

/* libpcap's time (nanosecond precision) back into the fields of the
 * interface's form (libpcap sign-extends pcap's 32-bit fields); *ns the
 * time as the format's own parse gives it. */
static uint64_t
lp_ts(const struct gcap_cf_if *f, const struct timeval *tv, uint64_t *ns)
{
	uint32_t sec = (uint32_t)tv->tv_sec, frac;

	switch (f->ts_form) {
	case GCAP_TS_PCAP_US:
	case GCAP_TS_PCAP_NS:
		frac = (uint32_t)(f->ts_form == GCAP_TS_PCAP_US ? tv->tv_usec / 1000 :
								  tv->tv_usec);
		*ns = (uint64_t)sec * 1000000000u +
		      (uint64_t)frac * (f->ts_form == GCAP_TS_PCAP_US ? 1000u : 1u);
		return (uint64_t)sec << 32 | frac;
	case GCAP_TS_UNITS:
		*ns = gcap_cf_ts_ns(tv->tv_sec, (uint64_t)tv->tv_usec);
		return (uint64_t)(tv->tv_sec - f->tsoffset) * f->units +
		       (uint64_t)tv->tv_usec / f->scale;
	default:
		/* as libpcap 1.10 gives it: seconds modulo 2^32 */
		*ns = (tv->tv_sec < 0 ? (uint64_t)(uint32_t)tv->tv_sec :
					(uint64_t)tv->tv_sec) *
			      1000000000u +
		      (uint64_t)tv->tv_usec;
		return *ns;
	}
}

/* Copy libpcap's records into buf from offset *off. */
static int
lp_fill(struct gcap_capfile *cf, uint8_t *buf, uint32_t size, struct gcap_pkt *desc,
	uint64_t *raw, unsigned max, unsigned n, uint32_t *off)
{
	while (n < max) {
		struct pcap_pkthdr *h;
		const u_char *data;
		int r;

		if (cf->pend) {
			h = &cf->pend_h;
			data = cf->pend_data;
		} else {
			r = pcap_next_ex(cf->lp, &h, &data);
			if (r == PCAP_ERROR_BREAK) {
				cf->done = true;
				break;
			}
			if (r < 0) {
				/* a stop ended a pipe's wait: the input's end */
				if (__atomic_load_n(&cf->src.stopped, __ATOMIC_ACQUIRE)) {
					cf->done = true;
					break;
				}
				if (!cf->shrank)
					snprintf(cf->msg, sizeof(cf->msg), "%s",
						 pcap_geterr(cf->lp));
				cf->err = -EIO;
				cf->done = true;
				break;
			}
			if (r == 0)
				continue;
		}
		uint32_t at = (*off + 63u) & ~63u;

		if (h->caplen > size || at > size || h->caplen > size - at) {
			if (h->caplen > size) {
				snprintf(cf->msg, sizeof(cf->msg),
					 "packet of %u bytes is larger than the staging "
					 "buffer",
					 h->caplen);
				cf->err = -E2BIG;
				cf->done = true;
				break;
			}
			/* the next batch takes it first (its bytes stay
			 * libpcap's until the next read) */
			cf->pend = true;
			cf->pend_h = *h;
			cf->pend_data = data;
			break;
		}
		cf->pend = false;
		memcpy(buf + at, data, h->caplen);
		desc[n].addr = (uint64_t)(uintptr_t)(buf + at);
		desc[n].caplen = h->caplen;
		desc[n].wirelen = h->len;
		raw[n] = lp_ts(&cf->ifs[0], &h->ts, &desc[n].ts_ns);
		desc[n].port = 0;
		n++;
		*off = at + h->caplen;
	}
	return (int)n;
}

/* The format stops at buf[pos..have): libpcap reads the file header
 * again, then these bytes, then the rest of the source. */
static int
to_libpcap(struct gcap_capfile *cf, const uint8_t *rest, size_t len)
{
	char perr[PCAP_ERRBUF_SIZE];
	FILE *f;

	/* the finders read the format the records leave */
	gcap_cf_find_stop(cf);
	free(cf->replay);
	cf->replay = malloc(cf->hdr_len + len + 1);
	if (cf->replay == NULL)
		return -ENOMEM;
	memcpy(cf->replay, cf->hdr, cf->hdr_len);
	if (len > 0)
		memcpy(cf->replay + cf->hdr_len, rest, len);
	cf->replay_len = cf->hdr_len + len;
	cf->replay_pos = 0;
	cf->carry_len = cf->carry_pos = 0;
	if (cf->use_map) {
		/* the rest is the map's (the fd's position is not the map's) */
		cf->map_rd = cf->map_pos;
		cf->src_eof = true;
	}
	cf->fmt = NULL;
	f = gcap_cf_ck_open(cf);
	if (f == NULL)
		return -errno;
	cf->lp = pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_NANO,
							  perr);
	if (cf->lp == NULL) {
		fclose(f);
		snprintf(cf->msg, sizeof(cf->msg), "%s", perr);
		return -EIO;
	}
	cf->lpf = f;
	return 0;
}

/* A record longer than a span may be: the input ends (-E2BIG). */
static int
map_too_large(struct gcap_capfile *cf, uint32_t caplen, uint32_t limit)
{
	snprintf(cf->msg, sizeof(cf->msg),
		 "a record of %u bytes is larger than the %u-byte buffer", caplen, limit);
	cf->err = -E2BIG;
	cf->done = true;
	return -E2BIG;
}

/* The mapped file's records, described where they lie. With limit (0:
 * none) the records' bytes, from the first's data to the last's end, span
 * at most limit bytes, from *span (the span's length in *used); a record
 * longer than limit is -E2BIG, and damage ends the batch before libpcap
 * takes over (its records are read into buf: a span of their own). */
static int
map_fill(struct gcap_capfile *cf, uint8_t *buf, uint32_t size, struct gcap_pkt *desc,
	 uint64_t *raw, unsigned max, uint32_t *used, uint32_t limit,
	 const uint8_t **span)
{
	size_t pos = cf->map_pos, adv = 0, first = 0, end = 0, whole = SIZE_MAX;
	unsigned n = 0;
	int r;

	if (!cf->pop_tried) {
		cf->pop_tried = true;
		gcap_cf_pop_start(cf);
	}
	while (n < max) {
		uint32_t doff = 0;
		const struct gcap_cf_ent *e;
		size_t lend;
		unsigned run =
			cf->find != NULL ? gcap_cf_find_run(cf, pos, &e, &lend) : 0;

		if (run > 0) {
			/* records a finder listed: what the steps below would
			 * find, without reading the file */
			unsigned k;
			bool full = false;

			for (k = 0; k < run && n < max; k++) {
				uint32_t cl = e[k].d.caplen;
				size_t at = (size_t)(e[k].d.addr - (uintptr_t)cf->map);

				if (limit != 0 &&
				    (n == 0 ? cl : at + cl - first) > limit) {
					if (n == 0)
						return map_too_large(cf, cl, limit);
					full = true; /* the next batch starts with it */
					break;
				}
				desc[n].addr = e[k].d.addr;
				desc[n].ts_ns = e[k].d.ts_ns;
				desc[n].caplen = cl;
				desc[n].wirelen = e[k].d.wirelen;
				desc[n].port = e[k].d.port;
				raw[n] = e[k].raw;
				if (n == 0)
					first = at;
				end = at + cl;
				n++;
				pos = k + 1 < run ? e[k + 1].pos : lend;
			}
			gcap_cf_find_used(cf, k);
			if (full)
				break;
			continue;
		}
		/* the next records' headers: one page is about 8 records, and
		 * the CPU's own prefetch stops at the page's end */
		__builtin_prefetch(cf->map + pos + CF_MAP_PREFETCH);
		enum gcap_cf_step st = cf->fmt->step(cf, cf->map + pos, cf->map_len - pos,
						     &desc[n], &raw[n], &adv, &doff);

		if (st == CF_PKT) {
			size_t at = pos + doff;

			if (limit != 0 &&
			    (n == 0 ? desc[n].caplen : at + desc[n].caplen - first) >
				    limit) {
				if (n > 0)
					break; /* the next batch starts with it */
				return map_too_large(cf, desc[n].caplen, limit);
			}
			if (n == 0)
				first = at;
			end = at + desc[n].caplen;
			desc[n++].addr = (uint64_t)(uintptr_t)(cf->map + at);
			pos += adv;
		} else if (st == CF_SKIP) {
			pos += adv;
		} else if (st == CF_MORE && pos == cf->map_len) {
			cf->done = true;
			break;
		} else if (limit != 0 && n > 0) {
			break; /* these first; libpcap takes over at the next fill */
		} else {
			/* past a new end (the file cut while it is read) the
			 * zeros are no damage of the file's: the input ends */
			whole = gcap_cf_map_whole(cf, pos, true);
			if (whole != SIZE_MAX && pos >= whole)
				break;
			/* damaged or truncated: libpcap reads on from here */
			cf->map_pos = pos;
			__atomic_store_n(&cf->src.raw_bytes, pos, __ATOMIC_RELAXED);
			if ((r = to_libpcap(cf, NULL, 0)) < 0)
				return r;
			uint32_t off = 0;

			r = lp_fill(cf, buf, size, desc, raw, max, n, &off);
			*used = off;
			*span = buf;
			return r > 0 ? r : cf->err;
		}
	}
	/* the file cut while it is read: no record past its new end (zeros
	 * there) goes out; one probe and a load per batch while it is whole */
	if (whole == SIZE_MAX)
		whole = gcap_cf_map_whole(cf, pos, false);
	if (whole != SIZE_MAX && (pos >= whole || (n > 0 && end > whole))) {
		n = map_shrank(cf, whole, desc, n);
		if (n == 0)
			return cf->err;
		end = (size_t)(desc[n - 1].addr - (uintptr_t)cf->map) +
		      desc[n - 1].caplen;
		pos = whole;
	}
	cf->map_pos = pos;
	__atomic_store_n(&cf->src.raw_bytes, pos, __ATOMIC_RELAXED);
	gcap_cf_pop_reader_at(cf, pos);
	*used = limit != 0 ? (uint32_t)(end - first) : 0;
	*span = cf->map + first;
	return (int)n;
}

/* Whether the next read of a pipe would wait for its writer: no bytes
 * held and none in the pipe now (a compressed one: after a short read,
 * as its decoder's input cannot be told). Regular files never wait. */
static bool
pipe_waits(const struct gcap_capfile *cf)
{
	const struct gcap_cf_src *s = &cf->src;
	struct pollfd p = { .fd = s->fd, .events = POLLIN };

	if (cf->size != 0 || !s->may_wait)
		return false;
	if (s->codec != NULL)
		return true;
	if (s->headpos < s->nhead || s->backpos < s->nback)
		return false;
	return poll(&p, 1, 0) == 0;
}

void
gcap_capfile_use_map(struct gcap_capfile *cf, bool on)
{
	cf->use_map = on && cf->map != NULL;
}

void
gcap_capfile_stop(struct gcap_capfile *cf)
{
	__atomic_store_n(&cf->src.stopped, 1, __ATOMIC_RELEASE);
}

int
gcap_capfile_fill(struct gcap_capfile *cf, uint8_t *buf, uint32_t size,
		  struct gcap_pkt *desc, uint64_t *raw, unsigned max, uint32_t *used)
{
	if (cf->use_map && cf->fmt != NULL) {
		const uint8_t *span;

		return cf->done ? cf->err :
				  map_fill(cf, buf, size, desc, raw, max, used, 0, &span);
	}
	size_t have = 0, pos = 0, adv = 0;
	unsigned n = 0;
	/* a pipe's complete records go before a read that would wait (those
	 * the carry held too): a stop must not find them still here */
	bool short_read = pipe_waits(cf);
	int r;

	*used = 0;
	if (cf->fmt == NULL)
		goto lp;
	if (cf->src_err < 0)
		return cf->src_err;
	/* the partial record the last batch ended on, or the bytes read at
	 * open */
	if (cf->carry_len > cf->carry_pos) {
		have = cf->carry_len - cf->carry_pos;
		if (have > size)
			return to_libpcap(cf, cf->carry + cf->carry_pos, have) < 0 ?
				       -EIO :
				       gcap_capfile_fill(cf, buf, size, desc, raw, max,
							 used);
		memcpy(buf, cf->carry + cf->carry_pos, have);
	}
	cf->carry_len = cf->carry_pos = 0;
	for (;;) {
		while (n < max) {
			uint32_t doff = 0;
			enum gcap_cf_step st =
				cf->fmt->step(cf, buf + pos, have - pos, &desc[n],
					      &raw[n], &adv, &doff);

			if (st == CF_PKT) {
				desc[n++].addr = (uint64_t)(uintptr_t)(buf + pos + doff);
				pos += adv;
			} else if (st == CF_SKIP) {
				pos += adv;
			} else if (st == CF_LIBPCAP) {
				goto handover;
			} else {
				break;
			}
		}
		if (n == max || (short_read && n > 0))
			break;
		short_read = false;
		if (cf->src_eof) {
			if (pos == have) {
				cf->done = true;
				break;
			}
			goto handover; /* truncated: libpcap says how */
		}
		if (adv > size)
			goto handover; /* larger than a batch's buffer */
		if (have == size || (adv != 0 && pos + adv > size)) {
			if (n > 0)
				break;
			memmove(buf, buf + pos, have - pos); /* only skipped blocks */
			have -= pos;
			pos = 0;
		}
		/* large reads: about what the batch's room takes */
		size_t want = (size_t)(cf->avg_rec + cf->avg_rec / 8) * (max - n);

		want = want < CF_READ_MIN ? CF_READ_MIN : want;
		want = want > size - have ? size - have : want;
		ssize_t got = gcap_cf_src_read(&cf->src, buf + have, want);

		if (got == -ECANCELED) { /* a stop: what is complete goes first */
			if (n == 0)
				return -ECANCELED;
			break;
		}
		if (got < 0) {
			snprintf(cf->msg, sizeof(cf->msg), "%s", cf->src.rmsg);
			if (n == 0)
				return -EIO;
			/* the records before the damage go first */
			cf->src_err = -EIO;
			break;
		}
		if (got == 0)
			cf->src_eof = true;
		have += (size_t)got;
		/* a pipe that has no more now: what is complete goes now (a
		 * capture still being written is passed on as it comes), the
		 * records of this read too */
		if ((size_t)got < want && pipe_waits(cf))
			short_read = true;
	}
	if (pos < have && gcap_cf_buf_add(&cf->carry, &cf->carry_len, &cf->carry_cap,
					  buf + pos, have - pos) < 0)
		return -ENOMEM;
	if (n > 0) {
		uint64_t a = pos / n;

		cf->avg_rec = cf->avg_rec ? (cf->avg_rec * 3 + a) / 4 : a;
	}
	*used = (uint32_t)pos;
	return (int)n;
handover:
	if ((r = to_libpcap(cf, buf + pos, have - pos)) < 0)
		return r;
	*used = (uint32_t)pos;
lp:
	if (cf->done)
		return n > 0 ? (int)n : cf->err;
	{
		uint32_t off = *used;

		r = lp_fill(cf, buf, size, desc, raw, max, n, &off);
		*used = off;
	}
	return r > 0 ? r : cf->err;
}

/* ---- queries ---- */

pcap_t *
gcap_capfile_pcap(const struct gcap_capfile *cf)
{
	return cf->p;
}

int
gcap_capfile_linktype(const struct gcap_capfile *cf)
{
	return cf->linktype;
}

unsigned
gcap_capfile_finders(const struct gcap_capfile *cf, uint64_t *joined, uint64_t *listed,
		     uint64_t *stepped)
{
	return gcap_cf_find_stats(cf, joined, listed, stepped);
}

unsigned
gcap_capfile_decoders(const struct gcap_capfile *cf, uint64_t *units, uint64_t *pieces)
{
	*units = *pieces = 0;
	if (cf->src.par != NULL)
		return gcap_cf_par_counts(&cf->src, units, pieces);
	return cf->src.codec != NULL ? 1 : 0;
}

const char *
gcap_capfile_codec(const struct gcap_capfile *cf)
{
	return cf->src.codec != NULL ? cf->src.codec->name : NULL;
}

unsigned
gcap_capfile_nifs(struct gcap_capfile *cf)
{
	return cf->nifs_open > 0 ? cf->nifs_open : 1;
}

void
gcap_capfile_if(const struct gcap_capfile *cf, unsigned i, struct gcap_writer_if *wif)
{
	const struct gcap_cf_if *f = &cf->ifs[i < cf->nifs_open ? i : 0];

	wif->linktype = cf->linktype;
	wif->fcs_bits = f->fcs_bits;
	wif->ts_form = f->ts_form;
	wif->tsresol = f->tsresol;
	wif->tsoffset = f->tsoffset;
	if (f->name != NULL)
		wif->name = f->name;
	if (f->opts_len > 0) {
		wif->opts = f->opts;
		wif->opts_len = f->opts_len;
	}
}

int
gcap_capfile_fill_span(struct gcap_capfile *cf, uint8_t *buf, uint32_t size,
		       struct gcap_pkt *desc, uint64_t *raw, unsigned max, uint32_t *used,
		       const uint8_t **span)
{
	*span = buf;
	if (!gcap_capfile_mapped(cf)) /* no mapping, or libpcap reads on */
		return gcap_capfile_fill(cf, buf, size, desc, raw, max, used);
	cf->use_map = true; /* the mapping is what is read from here on */
	return cf->done ? cf->err :
			  map_fill(cf, buf, size, desc, raw, max, used, size, span);
}

bool
gcap_capfile_mapped(const struct gcap_capfile *cf)
{
	return cf->map != NULL && cf->fmt != NULL;
}

const char *
gcap_capfile_name(const struct gcap_capfile *cf)
{
	return cf->path != NULL ? cf->path : "";
}

const char *
gcap_capfile_errmsg(const struct gcap_capfile *cf)
{
	return cf->msg;
}

uint64_t
gcap_capfile_offset(const struct gcap_capfile *cf)
{
	/* read by a progress line from another thread */
	return __atomic_load_n(&cf->src.raw_bytes, __ATOMIC_RELAXED);
}

uint64_t
gcap_capfile_size(const struct gcap_capfile *cf)
{
	return cf->size;
}
