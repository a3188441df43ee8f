/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Capture file writer: pcap (nanosecond magic) and pcapng, tcpdump-style
 * rotation (-C/-G/-W), stdout.
 *
 * Output goes through one buffer per writer (allocated at open) and
 * write(2). The buffer only ever holds whole items (file header, records,
 * ISBs), so when a write fails part way the writer can walk the buffer to
 * the last item that reached the file whole and ftruncate() the file back
 * to it: a file is always a valid capture up to its last whole record.
 * Items larger than the buffer are written directly from the caller's
 * memory (writev) after the buffer is flushed, with the same rollback.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <pcap/dlt.h>

#include "gpucap/gcap_writer.h"

#define NS_PER_SEC 1000000000ull
#define WR_BUF_SIZE (1u << 20)        /* the output buffer, at least */
#define WR_DEFAULT_SNAPLEN 262144u    /* libpcap's MAXIMUM_SNAPLEN */
#define WR_NAME_MAX (PATH_MAX + 16)   /* a file name with its number */

/* pcap */
#define PCAP_MAGIC_NS 0xa1b23c4du
#define PCAP_FHDR_LEN 24u
#define PCAP_RHDR_LEN 16u

/* pcapng block types and option codes */
#define NG_SHB 0x0a0d0d0au
#define NG_IDB 0x00000001u
#define NG_ISB 0x00000005u
#define NG_EPB 0x00000006u
#define NG_BOM 0x1a2b3c4du
#define NG_OPT_END 0
#define NG_SHB_USERAPPL 4
#define NG_IF_NAME 2
#define NG_IF_TSRESOL 9
#define NG_IF_FILTER 11
#define NG_ISB_STARTTIME 2
#define NG_ISB_ENDTIME 3
#define NG_ISB_IFRECV 4
#define NG_ISB_IFDROP 5
#define NG_ISB_FILTERACCEPT 6
#define NG_EPB_HDR_LEN 28u /* type, len, if id, ts hi, ts lo, caplen, len */
#define NG_ISB_LEN 88u     /* 20 + 5 options of 12 + end 4 + trailer 4 */
#define NG_OPT_MAX 0xfffcu /* longest option value we write */

struct wr_if {
	const char *name; /* points into the writer's string area, or NULL */
	uint16_t linktype;
};

struct gcap_writer {
	/* configuration, copied at open */
	char *tmpl;              /* conf->path */
	const char *filter_expr; /* or NULL */
	const char *app_name;    /* or NULL */
	struct wr_if *ifs;
	unsigned nifs;
	enum gcap_fmt fmt;       /* GCAP_FMT_PCAP or GCAP_FMT_PCAPNG */
	uint32_t snaplen;
	uint64_t rotate_bytes;
	uint64_t rotate_ns;
	uint32_t max_files;
	int wchars;              /* digits of the file number under -W */
	bool flush_each;
	bool is_stdout;

	/* the current file */
	int fd;                  /* -1: none */
	bool fd_reg;             /* a regular file: can be truncated */
	bool created;            /* we created it (O_EXCL) */
	off_t base;              /* file offset where our output starts */
	uint64_t file_off;       /* bytes of this file that reached the fd */
	char *cur;               /* its name */

	/* the buffer: whole items only */
	uint8_t *buf;
	size_t cap;
	size_t len;
	uint32_t buf_recs;       /* records in buf */

	/* rotation */
	unsigned cflag_count;    /* -C file number */
	unsigned gflag_count;    /* -G rotations done */
	uint64_t start_ns;       /* capture start (isb_starttime) */
	uint64_t period_ns;      /* start of the current -G period */
	uint64_t clock_ns;       /* latest of ticks and record timestamps */

	/* state */
	int err;                 /* sticky negative errno, 0 if none */
	bool done;               /* -W with -G: last file written */
	uint64_t nrec;
	uint64_t nbytes;
	char msg[GCAP_ERRBUF_SIZE];
};

static inline size_t
pad4(size_t n)
{
	return (n + 3u) & ~(size_t)3u;
}

static inline void
put16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, sizeof(v));
}

static inline void
put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static inline void
put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

static inline uint32_t
get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t
realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* Record the first error; every later call returns it. */
static int
wr_fail(struct gcap_writer *w, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int
wr_fail(struct gcap_writer *w, int err, const char *fmt, ...)
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

/* ---- low-level output ---- */

/* Write all of iov; *done gets the bytes that reached the fd. */
static int
writev_all(int fd, struct iovec *iov, int n, size_t *done)
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

/*
 * Walk the buffer from its start: the length of the prefix of whole items
 * that lie within the first `upto` bytes, and the records among them.
 */
static size_t
buf_whole_prefix(const struct gcap_writer *w, size_t upto, uint32_t *recs)
{
	size_t pos = 0;
	uint32_t n = 0;

	/* the file header never sits in the buffer: file_open writes it */
	while (pos < w->len) {
		size_t sz;
		bool is_rec;

		if (w->fmt == GCAP_FMT_PCAP) {
			sz = PCAP_RHDR_LEN + get32(w->buf + pos + 8);
			is_rec = true;
		} else {
			sz = get32(w->buf + pos + 4);
			is_rec = get32(w->buf + pos) == NG_EPB;
		}
		if (pos + sz > upto)
			break;
		pos += sz;
		n += is_rec;
	}
	*recs = n;
	return pos;
}

/*
 * A write failed after `done` more bytes than file_off reached the file,
 * `whole` of which form whole items. Cut the file back to them.
 */
static void
roll_back(struct gcap_writer *w, uint64_t whole)
{
	if (w->fd_reg)
		(void)!ftruncate(w->fd, w->base + (off_t)(w->file_off + whole));
	w->file_off += whole;
}

static int
fail_write(struct gcap_writer *w, int rc)
{
	if (!w->fd_reg)
		return wr_fail(w, -rc, "write to '%s' failed: %s (not a regular "
			       "file: it may end in a partial record)", w->cur,
			       strerror(-rc));
	return wr_fail(w, -rc, "write to '%s' failed: %s (file cut back to its "
		       "last whole record, %llu bytes)", w->cur, strerror(-rc),
		       (unsigned long long)w->file_off);
}

static int
buf_flush(struct gcap_writer *w)
{
	struct iovec iov;
	size_t done;
	int rc;

	if (w->err != 0)
		return w->err;
	if (w->len == 0 || w->fd < 0)
		return 0;
	iov.iov_base = w->buf;
	iov.iov_len = w->len;
	rc = writev_all(w->fd, &iov, 1, &done);
	if (rc == 0) {
		w->file_off += w->len;
		w->len = 0;
		w->buf_recs = 0;
		return 0;
	}
	/* keep the whole items that made it, forget the rest */
	uint32_t kept;
	size_t whole = buf_whole_prefix(w, done, &kept);

	w->nrec -= w->buf_recs - kept;
	w->nbytes -= w->len - whole;
	roll_back(w, whole);
	w->len = 0;
	w->buf_recs = 0;
	return fail_write(w, rc);
}

/*
 * Append one item (a record or a block) given as pieces. Small items are
 * copied into the buffer; an item larger than the buffer goes straight to
 * the fd after the buffer is flushed.
 */
static int
emit(struct gcap_writer *w, struct iovec *iov, int n, size_t total, bool rec)
{
	int rc;

	if (w->len + total > w->cap) {
		rc = buf_flush(w);
		if (rc != 0)
			return rc;
	}
	if (total > w->cap) {
		size_t done;

		rc = writev_all(w->fd, iov, n, &done);
		if (rc != 0) {
			roll_back(w, 0);
			return fail_write(w, rc);
		}
		w->file_off += total;
	} else {
		for (int i = 0; i < n; i++) {
			memcpy(w->buf + w->len, iov[i].iov_base, iov[i].iov_len);
			w->len += iov[i].iov_len;
		}
		w->buf_recs += rec;
	}
	w->nrec += rec;
	w->nbytes += total;
	return 0;
}

/* ---- pcapng blocks ---- */

static size_t
ng_opt_len(size_t vlen)
{
	return 4 + pad4(vlen);
}

static uint8_t *
ng_opt(uint8_t *p, uint16_t code, const void *v, size_t vlen)
{
	put16(p, code);
	put16(p + 2, (uint16_t)vlen);
	if (vlen > 0)
		memcpy(p + 4, v, vlen);
	memset(p + 4 + vlen, 0, pad4(vlen) - vlen);
	return p + ng_opt_len(vlen);
}

static size_t
ng_shb_len(const struct gcap_writer *w)
{
	size_t n = 28; /* type, len, bom, version, section length, trailer */

	if (w->app_name != NULL)
		n += ng_opt_len(strlen(w->app_name)) + 4;
	return n;
}

static size_t
ng_idb_len(const struct gcap_writer *w, unsigned i)
{
	size_t n = 20; /* type, len, linktype, reserved, snaplen, trailer */

	if (w->ifs[i].name != NULL)
		n += ng_opt_len(strlen(w->ifs[i].name));
	n += ng_opt_len(1); /* if_tsresol */
	if (w->filter_expr != NULL)
		n += ng_opt_len(1 + strlen(w->filter_expr));
	return n + 4; /* opt_endofopt */
}

static size_t
file_hdr_len(const struct gcap_writer *w)
{
	size_t n;

	if (w->fmt == GCAP_FMT_PCAP)
		return PCAP_FHDR_LEN;
	n = ng_shb_len(w);
	for (unsigned i = 0; i < w->nifs; i++)
		n += ng_idb_len(w, i);
	return n;
}

/* Write the file header into the (empty, large enough) buffer. */
static void
put_file_hdr(struct gcap_writer *w)
{
	uint8_t *p = w->buf + w->len, *start = p;

	if (w->fmt == GCAP_FMT_PCAP) {
		put32(p, PCAP_MAGIC_NS);
		put16(p + 4, 2);
		put16(p + 6, 4);
		put32(p + 8, 0);  /* thiszone */
		put32(p + 12, 0); /* sigfigs */
		put32(p + 16, w->snaplen);
		put32(p + 20, w->ifs[0].linktype);
		w->len += PCAP_FHDR_LEN;
		w->nbytes += PCAP_FHDR_LEN;
		return;
	}

	size_t len = ng_shb_len(w);

	put32(p, NG_SHB);
	put32(p + 4, (uint32_t)len);
	put32(p + 8, NG_BOM);
	put16(p + 12, 1);
	put16(p + 14, 0);
	put64(p + 16, UINT64_MAX); /* section length not given */
	p += 24;
	if (w->app_name != NULL) {
		p = ng_opt(p, NG_SHB_USERAPPL, w->app_name, strlen(w->app_name));
		p = ng_opt(p, NG_OPT_END, NULL, 0);
	}
	put32(p, (uint32_t)len);
	p += 4;

	for (unsigned i = 0; i < w->nifs; i++) {
		uint8_t tsresol = 9; /* 10^-9 s */

		len = ng_idb_len(w, i);
		put32(p, NG_IDB);
		put32(p + 4, (uint32_t)len);
		put16(p + 8, w->ifs[i].linktype);
		put16(p + 10, 0);
		put32(p + 12, w->snaplen);
		p += 16;
		if (w->ifs[i].name != NULL)
			p = ng_opt(p, NG_IF_NAME, w->ifs[i].name,
				   strlen(w->ifs[i].name));
		p = ng_opt(p, NG_IF_TSRESOL, &tsresol, 1);
		if (w->filter_expr != NULL) {
			size_t fl = strlen(w->filter_expr);

			/* first byte 0: a libpcap filter string */
			put16(p, NG_IF_FILTER);
			put16(p + 2, (uint16_t)(fl + 1));
			p[4] = 0;
			memcpy(p + 5, w->filter_expr, fl);
			memset(p + 5 + fl, 0, pad4(fl + 1) - (fl + 1));
			p += ng_opt_len(fl + 1);
		}
		p = ng_opt(p, NG_OPT_END, NULL, 0);
		put32(p, (uint32_t)len);
		p += 4;
	}
	w->len += (size_t)(p - start);
	w->nbytes += (size_t)(p - start);
}

static uint8_t *
ng_opt_ts(uint8_t *p, uint16_t code, uint64_t ns)
{
	put16(p, code);
	put16(p + 2, 8);
	put32(p + 4, (uint32_t)(ns >> 32));
	put32(p + 8, (uint32_t)ns);
	return p + 12;
}

static uint8_t *
ng_opt_u64(uint8_t *p, uint16_t code, uint64_t v)
{
	put16(p, code);
	put16(p + 2, 8);
	put64(p + 4, v);
	return p + 12;
}

static int
put_isbs(struct gcap_writer *w, const struct gcap_writer_if_stats *stats)
{
	uint64_t end = realtime_ns();

	if (w->clock_ns > end)
		end = w->clock_ns;
	for (unsigned i = 0; i < w->nifs; i++) {
		uint8_t b[NG_ISB_LEN], *p = b;
		struct iovec iov = { .iov_base = b, .iov_len = sizeof(b) };
		int rc;

		put32(p, NG_ISB);
		put32(p + 4, NG_ISB_LEN);
		put32(p + 8, i);
		put32(p + 12, (uint32_t)(end >> 32));
		put32(p + 16, (uint32_t)end);
		p += 20;
		p = ng_opt_ts(p, NG_ISB_STARTTIME, w->start_ns);
		p = ng_opt_ts(p, NG_ISB_ENDTIME, end);
		p = ng_opt_u64(p, NG_ISB_IFRECV, stats[i].received);
		p = ng_opt_u64(p, NG_ISB_IFDROP, stats[i].dropped);
		p = ng_opt_u64(p, NG_ISB_FILTERACCEPT, stats[i].filter_accepted);
		p = ng_opt(p, NG_OPT_END, NULL, 0);
		put32(p, NG_ISB_LEN);
		rc = emit(w, &iov, 1, sizeof(b), false);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/*
 * Files carry LINKTYPE_* values; they equal the DLT_* values except for a
 * few DLTs whose numbers differ between systems (libpcap maps them the same
 * way when it writes a file).
 */
static uint16_t
dlt_to_linktype(int dlt)
{
	switch (dlt) {
#ifdef DLT_ATM_RFC1483
	case DLT_ATM_RFC1483:
		return 100;
#endif
#ifdef DLT_RAW
	case DLT_RAW:
		return 101;
#endif
#ifdef DLT_SLIP_BSDOS
	case DLT_SLIP_BSDOS:
		return 102;
#endif
#ifdef DLT_PPP_BSDOS
	case DLT_PPP_BSDOS:
		return 103;
#endif
#ifdef DLT_ATM_CLIP
	case DLT_ATM_CLIP:
		return 106;
#endif
	default:
		return (uint16_t)dlt;
	}
}

/* ---- files ---- */

/* tcpdump's width of the file number under -W: digits of W-1. */
static int
wflag_chars(uint32_t w)
{
	int c = 0;

	for (uint32_t x = w > 0 ? w - 1 : 0; x > 0; x /= 10)
		c++;
	return c;
}

/*
 * The name of a file, as tcpdump makes it: the path through strftime(3)
 * (under -G, local time of the period start), then the number cnt padded
 * to chars digits unless both are 0.
 */
static int
make_name(struct gcap_writer *w, unsigned cnt, int chars, char *out)
{
	char base[PATH_MAX];

	if (w->rotate_ns != 0) {
		time_t t = (time_t)(w->period_ns / NS_PER_SEC);
		struct tm tm;

		if (localtime_r(&t, &tm) == NULL)
			return -EINVAL;
		if (strftime(base, sizeof(base), w->tmpl, &tm) == 0)
			return -ENAMETOOLONG;
	} else {
		if (strlen(w->tmpl) >= sizeof(base))
			return -ENAMETOOLONG;
		strcpy(base, w->tmpl);
	}
	if (cnt == 0 && chars == 0) {
		strcpy(out, base);
		return 0;
	}
	if (snprintf(out, WR_NAME_MAX, "%s%0*u", base, chars, cnt) >= WR_NAME_MAX)
		return -ENAMETOOLONG;
	return 0;
}

/*
 * Open w->cur and write its header. On failure the fd is closed, a file
 * we created is removed, and the error (with its message) returned; the
 * writer is not marked failed (the caller decides).
 */
static int
file_open(struct gcap_writer *w, char *errbuf)
{
	struct stat st;
	int rc;

	w->file_off = 0;
	w->len = 0;
	w->buf_recs = 0;
	w->created = false;
	w->base = 0;
	if (w->is_stdout) {
		w->fd = STDOUT_FILENO;
		w->fd_reg = fstat(w->fd, &st) == 0 && S_ISREG(st.st_mode);
		if (w->fd_reg) {
			w->base = lseek(w->fd, 0, SEEK_CUR);
			if (w->base < 0)
				w->fd_reg = false;
		}
	} else {
		w->fd = open(w->cur, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (w->fd >= 0)
			w->created = true;
		else if (errno == EEXIST)
			w->fd = open(w->cur, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
				     0666);
		if (w->fd < 0) {
			rc = -errno;
			return gcap_err(errbuf, -rc, "cannot write '%s': %s", w->cur,
					strerror(-rc));
		}
		w->fd_reg = fstat(w->fd, &st) == 0 && S_ISREG(st.st_mode);
	}

	/* the header reaches the file before any record: a crash keeps it */
	uint64_t nbytes = w->nbytes;
	struct iovec iov;
	size_t done;

	put_file_hdr(w);
	iov.iov_base = w->buf;
	iov.iov_len = w->len;
	rc = writev_all(w->fd, &iov, 1, &done);
	if (rc == 0) {
		w->file_off = w->len;
		w->len = 0;
		return 0;
	}
	w->len = 0;
	w->nbytes = nbytes;
	if (!w->is_stdout) {
		if (w->created)
			(void)unlink(w->cur);
		else if (w->fd_reg)
			(void)!ftruncate(w->fd, 0);
		close(w->fd);
	}
	w->fd = -1;
	return gcap_err(errbuf, -rc, "cannot write '%s': %s", w->cur,
			strerror(-rc));
}

/* Flush and close the current file (stdout is only flushed). */
static int
file_close(struct gcap_writer *w)
{
	int rc = buf_flush(w);

	if (w->fd >= 0 && !w->is_stdout) {
		if (close(w->fd) != 0 && rc == 0)
			rc = wr_fail(w, errno, "closing '%s' failed: %s", w->cur,
				     strerror(errno));
	}
	w->fd = -1;
	return rc;
}

/* Close the current file and open the next one under name (cnt, chars). */
static int
next_file(struct gcap_writer *w, unsigned cnt, int chars)
{
	char eb[GCAP_ERRBUF_SIZE];
	int rc = file_close(w);

	if (rc != 0)
		return rc;
	rc = make_name(w, cnt, chars, w->cur);
	if (rc != 0)
		return wr_fail(w, -rc, "cannot make the next file name from '%s': %s",
			       w->tmpl, strerror(-rc));
	rc = file_open(w, eb);
	if (rc != 0)
		return wr_fail(w, -rc, "%s", eb);
	return 0;
}

/* -G: a new file once rotate_secs have passed since the period start. */
static int
time_rotate(struct gcap_writer *w)
{
	if (w->rotate_ns == 0 || w->clock_ns < w->period_ns ||
	    w->clock_ns - w->period_ns < w->rotate_ns)
		return 0;
	w->gflag_count++;
	if (w->rotate_bytes == 0 && w->max_files > 0 &&
	    w->gflag_count >= w->max_files) {
		/* done, as tcpdump exits here; the last file stays open so
		 * that close can still append the ISBs */
		int rc = buf_flush(w);

		w->done = true;
		return rc != 0 ? rc : -ECANCELED;
	}
	/* tcpdump: the new period starts now, the -C number restarts */
	w->period_ns = w->clock_ns;
	w->cflag_count = 0;
	return next_file(w, 0, w->rotate_bytes != 0 ? w->wchars : 0);
}

/* -C: a new file when the current one is larger than rotate_bytes. */
static int
size_rotate(struct gcap_writer *w)
{
	if (w->rotate_bytes == 0 || w->file_off + w->len <= w->rotate_bytes)
		return 0;
	w->cflag_count++;
	if (w->max_files > 0 && w->cflag_count >= w->max_files)
		w->cflag_count = 0;
	return next_file(w, w->cflag_count, w->wchars);
}

/* ---- records ---- */

/* One record; rotation and the port have been checked. */
static int
put_rec(struct gcap_writer *w, const struct gcap_rec *rec, const void *data)
{
	uint32_t incl = rec->caplen < w->snaplen ? rec->caplen : w->snaplen;
	uint32_t orig = rec->wirelen; /* as tcpdump: even when < caplen */
	uint64_t ts = rec->ts_ns;
	uint8_t hdr[NG_EPB_HDR_LEN], trl[8];
	struct iovec iov[4];
	size_t total;
	int n;

	if (w->fmt == GCAP_FMT_PCAP) {
		total = PCAP_RHDR_LEN + (size_t)incl;
		if (w->len + total <= w->cap) {
			uint8_t *p = w->buf + w->len;

			put32(p, (uint32_t)(ts / NS_PER_SEC));
			put32(p + 4, (uint32_t)(ts % NS_PER_SEC));
			put32(p + 8, incl);
			put32(p + 12, orig);
			memcpy(p + PCAP_RHDR_LEN, data, incl);
			w->len += total;
			w->buf_recs++;
			w->nrec++;
			w->nbytes += total;
			return 0;
		}
		put32(hdr, (uint32_t)(ts / NS_PER_SEC));
		put32(hdr + 4, (uint32_t)(ts % NS_PER_SEC));
		put32(hdr + 8, incl);
		put32(hdr + 12, orig);
		iov[0] = (struct iovec){ hdr, PCAP_RHDR_LEN };
		iov[1] = (struct iovec){ (void *)(uintptr_t)data, incl };
		return emit(w, iov, 2, total, true);
	}

	size_t dpad = pad4(incl) - incl;

	total = NG_EPB_HDR_LEN + (size_t)incl + dpad + 4;
	if (total > UINT32_MAX)
		return -EINVAL;
	put32(hdr, NG_EPB);
	put32(hdr + 4, (uint32_t)total);
	put32(hdr + 8, rec->port);
	put32(hdr + 12, (uint32_t)(ts >> 32));
	put32(hdr + 16, (uint32_t)ts);
	put32(hdr + 20, incl);
	put32(hdr + 24, orig);
	memset(trl, 0, sizeof(trl));
	put32(trl + dpad, (uint32_t)total);
	if (w->len + total <= w->cap) {
		uint8_t *p = w->buf + w->len;

		memcpy(p, hdr, NG_EPB_HDR_LEN);
		memcpy(p + NG_EPB_HDR_LEN, data, incl);
		memcpy(p + NG_EPB_HDR_LEN + incl, trl, dpad + 4);
		w->len += total;
		w->buf_recs++;
		w->nrec++;
		w->nbytes += total;
		return 0;
	}
	n = 0;
	iov[n++] = (struct iovec){ hdr, NG_EPB_HDR_LEN };
	iov[n++] = (struct iovec){ (void *)(uintptr_t)data, incl };
	iov[n++] = (struct iovec){ trl, dpad + 4 };
	return emit(w, iov, n, total, true);
}

/* Checks and rotation before one record. */
static int
pre_rec(struct gcap_writer *w, const struct gcap_rec *rec)
{
	if (w->err != 0)
		return w->err;
	if (w->done)
		return -ECANCELED;
	if (w->fmt == GCAP_FMT_PCAPNG && rec->port >= w->nifs)
		return -EINVAL;
	if (rec->ts_ns > w->clock_ns)
		w->clock_ns = rec->ts_ns;
	/* tcpdump's order: the time check first, then the size check */
	int rc = time_rotate(w);

	return rc != 0 ? rc : size_rotate(w);
}

int
gcap_writer_write(struct gcap_writer *w, const struct gcap_rec *rec,
		  const void *data)
{
	int rc;

	if (w == NULL || rec == NULL || (data == NULL && rec->caplen > 0))
		return -EINVAL;
	rc = pre_rec(w, rec);
	if (rc != 0)
		return rc;
	rc = put_rec(w, rec, data);
	if (rc != 0)
		return rc;
	return w->flush_each ? buf_flush(w) : 0;
}

int
gcap_writer_write_buf(struct gcap_writer *w, const uint8_t *buf, uint32_t len,
		      unsigned bit)
{
	const uint8_t *data;
	struct gcap_rec rec;
	uint64_t mask;
	uint32_t off;
	int n = 0, rc;

	if (w == NULL || (buf == NULL && len > 0) || bit >= 64)
		return -EINVAL;
	mask = 1ull << bit;

	/* validate the whole buffer first: a corrupt one writes nothing */
	for (off = 0; (rc = gcap_rec_step(buf, len, &off, &rec, &data)) > 0;)
		if ((rec.outmask & mask) && w->fmt == GCAP_FMT_PCAPNG &&
		    rec.port >= w->nifs)
			return -EINVAL;
	if (rc < 0)
		return rc;

	for (off = 0; gcap_rec_step(buf, len, &off, &rec, &data) > 0;) {
		if (rec.outmask & mask) {
			rc = pre_rec(w, &rec);
			if (rc == 0)
				rc = put_rec(w, &rec, data);
			if (rc != 0)
				return rc;
			n++;
		}
	}
	if (w->flush_each && n > 0) {
		rc = buf_flush(w);
		if (rc != 0)
			return rc;
	}
	return n;
}

int
gcap_writer_tick(struct gcap_writer *w, uint64_t now_ns)
{
	if (w == NULL)
		return -EINVAL;
	if (w->err != 0)
		return w->err;
	if (w->done)
		return -ECANCELED;
	if (now_ns > w->clock_ns)
		w->clock_ns = now_ns;
	return time_rotate(w); /* -C is only checked before a record */
}

int
gcap_writer_flush(struct gcap_writer *w)
{
	if (w == NULL)
		return -EINVAL;
	return buf_flush(w);
}

void
gcap_writer_counts(const struct gcap_writer *w, uint64_t *records,
		   uint64_t *bytes)
{
	if (records != NULL)
		*records = w != NULL ? w->nrec : 0;
	if (bytes != NULL)
		*bytes = w != NULL ? w->nbytes : 0;
}

const char *
gcap_writer_errmsg(const struct gcap_writer *w)
{
	return w != NULL ? w->msg : "";
}

const char *
gcap_writer_filename(const struct gcap_writer *w)
{
	return w != NULL ? w->cur : "";
}

static void
wr_free(struct gcap_writer *w)
{
	free(w->buf);
	free(w);
}

int
gcap_writer_close(struct gcap_writer *w, const struct gcap_writer_if_stats *stats,
		  char *errbuf)
{
	int rc;

	if (w == NULL)
		return 0;
	rc = w->err;
	if (rc == 0 && w->fd >= 0 && w->fmt == GCAP_FMT_PCAPNG && stats != NULL)
		rc = put_isbs(w, stats);
	if (rc == 0) {
		rc = file_close(w);
	} else if (w->fd >= 0 && !w->is_stdout) {
		close(w->fd);
		w->fd = -1;
	}
	if (rc != 0)
		gcap_err(errbuf, -rc, "%s", w->msg);
	wr_free(w);
	return rc;
}

/* ---- open ---- */

static bool
ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int
check_conf(const struct gcap_writer_conf *c, char *errbuf)
{
	if (c == NULL)
		return gcap_err(errbuf, EINVAL, "writer: no configuration");
	if (c->path == NULL || c->path[0] == '\0')
		return gcap_err(errbuf, EINVAL, "writer: empty file name");
	if (strlen(c->path) >= PATH_MAX)
		return gcap_err(errbuf, ENAMETOOLONG, "writer: file name too long");
	if ((unsigned)c->fmt > GCAP_FMT_PCAPNG)
		return gcap_err(errbuf, EINVAL, "writer: unknown format %d",
				(int)c->fmt);
	if (c->nifs == 0 || c->ifs == NULL)
		return gcap_err(errbuf, EINVAL, "writer: no interfaces");
	if (c->nifs > 65536u)
		return gcap_err(errbuf, EINVAL, "writer: %u interfaces, at most 65536",
				c->nifs);
	for (unsigned i = 0; i < c->nifs; i++) {
		if (c->ifs[i].linktype < 0 || c->ifs[i].linktype > 0xffff)
			return gcap_err(errbuf, EINVAL,
					"writer: interface %u: bad link type %d", i,
					c->ifs[i].linktype);
		if (c->ifs[i].name != NULL && strlen(c->ifs[i].name) > NG_OPT_MAX)
			return gcap_err(errbuf, EINVAL,
					"writer: interface %u: name too long", i);
	}
	if (c->filter_expr != NULL && strlen(c->filter_expr) + 1 > NG_OPT_MAX)
		return gcap_err(errbuf, EINVAL, "writer: filter expression too long");
	if (c->app_name != NULL && strlen(c->app_name) > NG_OPT_MAX)
		return gcap_err(errbuf, EINVAL, "writer: application name too long");
	if (strcmp(c->path, "-") == 0 &&
	    (c->rotate_bytes != 0 || c->rotate_secs != 0 || c->max_files != 0))
		return gcap_err(errbuf, EINVAL,
				"writer: cannot rotate (-C/-G/-W) when writing to "
				"stdout ('-')");
	if (c->max_files != 0 && c->rotate_bytes == 0 && c->rotate_secs == 0)
		return gcap_err(errbuf, EINVAL,
				"writer: a file count (-W) needs -C or -G");
	return 0;
}

static enum gcap_fmt
resolve_fmt(const struct gcap_writer_conf *c)
{
	if (c->fmt != GCAP_FMT_AUTO)
		return c->fmt;
	return ends_with(c->path, ".pcapng") ? GCAP_FMT_PCAPNG : GCAP_FMT_PCAP;
}

struct gcap_writer *
gcap_writer_open(const struct gcap_writer_conf *conf, char *errbuf)
{
	struct gcap_writer *w;
	size_t strs, hdr;
	char *sp;
	int rc;

	rc = check_conf(conf, errbuf);
	if (rc != 0) {
		errno = -rc;
		return NULL;
	}
	enum gcap_fmt fmt = resolve_fmt(conf);

	if (fmt == GCAP_FMT_PCAP) {
		for (unsigned i = 1; i < conf->nifs; i++)
			if (conf->ifs[i].linktype != conf->ifs[0].linktype) {
				gcap_err(errbuf, EINVAL,
					 "writer: '%s': pcap has one link type, but "
					 "interface %u has %d and interface 0 has %d "
					 "(use pcapng)", conf->path, i,
					 conf->ifs[i].linktype, conf->ifs[0].linktype);
				errno = EINVAL;
				return NULL;
			}
	}

	/* one allocation for the writer, its interfaces and strings */
	strs = strlen(conf->path) + 1 + WR_NAME_MAX;
	if (conf->filter_expr != NULL)
		strs += strlen(conf->filter_expr) + 1;
	if (conf->app_name != NULL)
		strs += strlen(conf->app_name) + 1;
	for (unsigned i = 0; i < conf->nifs; i++)
		if (conf->ifs[i].name != NULL)
			strs += strlen(conf->ifs[i].name) + 1;
	w = calloc(1, sizeof(*w) + conf->nifs * sizeof(struct wr_if) + strs);
	if (w == NULL) {
		gcap_err(errbuf, ENOMEM, "writer: out of memory");
		errno = ENOMEM;
		return NULL;
	}
	w->ifs = (struct wr_if *)(w + 1);
	sp = (char *)(w->ifs + conf->nifs);
#define WR_DUP(dst, src) do { \
		size_t l_ = strlen(src) + 1; \
		memcpy(sp, (src), l_); \
		(dst) = sp; \
		sp += l_; \
	} while (0)
	WR_DUP(w->tmpl, conf->path);
	w->cur = sp;
	sp += WR_NAME_MAX;
	if (conf->filter_expr != NULL)
		WR_DUP(w->filter_expr, conf->filter_expr);
	if (conf->app_name != NULL)
		WR_DUP(w->app_name, conf->app_name);
	for (unsigned i = 0; i < conf->nifs; i++) {
		if (conf->ifs[i].name != NULL)
			WR_DUP(w->ifs[i].name, conf->ifs[i].name);
		w->ifs[i].linktype = dlt_to_linktype(conf->ifs[i].linktype);
	}
#undef WR_DUP
	w->nifs = conf->nifs;
	w->fmt = fmt;
	w->snaplen = conf->snaplen != 0 ? conf->snaplen : WR_DEFAULT_SNAPLEN;
	w->rotate_bytes = conf->rotate_bytes;
	w->rotate_ns = (uint64_t)conf->rotate_secs * NS_PER_SEC;
	w->max_files = conf->max_files;
	w->wchars = wflag_chars(conf->max_files);
	w->flush_each = conf->flush_each;
	w->is_stdout = strcmp(conf->path, "-") == 0;
	w->fd = -1;
	w->start_ns = conf->start_ns != 0 ? conf->start_ns : realtime_ns();
	if (w->rotate_ns != 0)
		tzset(); /* -G names use the local time: read TZ now */
	w->period_ns = w->start_ns;
	w->clock_ns = w->start_ns;

	hdr = file_hdr_len(w);
	w->cap = hdr > WR_BUF_SIZE ? hdr : WR_BUF_SIZE;
	w->buf = malloc(w->cap);
	if (w->buf == NULL) {
		wr_free(w);
		gcap_err(errbuf, ENOMEM, "writer: out of memory");
		errno = ENOMEM;
		return NULL;
	}

	if (w->is_stdout) {
		strcpy(w->cur, "-");
	} else {
		rc = make_name(w, 0, w->rotate_bytes != 0 ? w->wchars : 0, w->cur);
		if (rc != 0) {
			gcap_err(errbuf, -rc, "cannot make a file name from '%s': %s",
				 w->tmpl, strerror(-rc));
			wr_free(w);
			errno = -rc;
			return NULL;
		}
	}
	rc = file_open(w, errbuf);
	if (rc != 0) {
		wr_free(w);
		errno = -rc;
		return NULL;
	}
	return w;
}
