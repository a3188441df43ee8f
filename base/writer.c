/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Capture file writer, the part every format shares: the public API of
 * gcap_writer.h, the configuration and the choice of format, tcpdump-style
 * rotation (-C/-G/-W) and file names, stdout, the counters. The output to
 * one file (buffer, write(2), cut back on a failed write) is writer_io.c;
 * the bytes of a file come from its format (writer_pcap.c,
 * writer_pcapng.c), reached only through the table below.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pcap/dlt.h>

#include "writer_internal.h"

#define WR_BUF_SIZE (1u << 20)      /* the output buffer, at least */
#define WR_DEFAULT_SNAPLEN 262144u  /* libpcap's MAXIMUM_SNAPLEN */
#define WR_NAME_MAX (PATH_MAX + 16) /* a file name with its number */
#define WR_STR_MAX 0xfffcu          /* longest string kept: a pcapng option value */

/* The formats, by enum gcap_fmt (GCAP_FMT_AUTO has no row). */
static const struct gcap_wr_fmt *const formats[] = {
	[GCAP_FMT_PCAP] = &gcap_wr_pcap,
	[GCAP_FMT_PCAPNG] = &gcap_wr_pcapng,
};

#define NFORMATS (sizeof(formats) / sizeof(formats[0]))

static uint64_t
realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * GCAP_WR_NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* ---- file names and rotation ---- */

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
		time_t t = (time_t)(w->period_ns / GCAP_WR_NS_PER_SEC);
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

/* Close the current file and open the next one under name (cnt, chars). */
static int
next_file(struct gcap_writer *w, unsigned cnt, int chars)
{
	char eb[GCAP_ERRBUF_SIZE];
	int rc = gcap_wr_file_close(w);

	if (rc != 0)
		return rc;
	rc = make_name(w, cnt, chars, w->cur);
	if (rc != 0)
		return gcap_wr_fail(w, -rc,
				    "cannot make the next file name from "
				    "'%s': %s",
				    w->tmpl, strerror(-rc));
	rc = gcap_wr_file_open(w, eb);
	if (rc != 0)
		return gcap_wr_fail(w, -rc, "%s", eb);
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
	if (w->rotate_bytes == 0 && w->max_files > 0 && w->gflag_count >= w->max_files) {
		/* done, as tcpdump exits here; the last file stays open so
		 * that close can still append its blocks (pcapng ISBs) */
		int rc = gcap_wr_flush(w);

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

/* A port the format cannot name (pcapng: no such interface). */
static bool
bad_port(const struct gcap_writer *w, const struct gcap_rec *rec)
{
	return w->fmt->per_if && rec->port >= w->nifs;
}

/* Checks and rotation before one record. */
static int
pre_rec(struct gcap_writer *w, const struct gcap_rec *rec)
{
	if (w->err != 0)
		return w->err;
	if (w->done)
		return -ECANCELED;
	if (bad_port(w, rec))
		return -EINVAL;
	uint64_t t = gcap_wr_ts_ns(w, rec);

	if (t > w->clock_ns)
		w->clock_ns = t;
	/* tcpdump's order: the time check first, then the size check */
	int rc = time_rotate(w);

	return rc != 0 ? rc : size_rotate(w);
}

int
gcap_writer_write(struct gcap_writer *w, const struct gcap_rec *rec, const void *data)
{
	int rc;

	if (w == NULL || rec == NULL || (data == NULL && rec->caplen > 0))
		return -EINVAL;
	rc = pre_rec(w, rec);
	if (rc != 0)
		return rc;
	rc = gcap_wr_put_rec(w, rec, data);
	if (rc != 0)
		return rc;
	return w->flush_each ? gcap_wr_flush(w) : 0;
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
		if ((rec.outmask & mask) && bad_port(w, &rec))
			return -EINVAL;
	if (rc < 0)
		return rc;

	for (off = 0; gcap_rec_step(buf, len, &off, &rec, &data) > 0;) {
		if (rec.outmask & mask) {
			rc = pre_rec(w, &rec);
			if (rc == 0)
				rc = gcap_wr_put_rec(w, &rec, data);
			if (rc != 0)
				return rc;
			n++;
		}
	}
	if (w->flush_each && n > 0) {
		rc = gcap_wr_flush(w);
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
	return gcap_wr_flush(w);
}

void
gcap_writer_counts(const struct gcap_writer *w, uint64_t *records, uint64_t *bytes)
{
	if (records != NULL)
		*records = w != NULL ? w->nrec : 0;
	if (bytes != NULL)
		*bytes = w != NULL ? w->nbytes : 0;
}

void
gcap_writer_interrupt(struct gcap_writer *w)
{
	int fd = w != NULL ? w->fd : -1;
	int fl = fd >= 0 ? fcntl(fd, F_GETFL) : -1;

	if (fl >= 0)
		(void)fcntl(fd, F_SETFL, fl | O_NONBLOCK);
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
	if (rc == 0 && w->fd >= 0 && w->fmt->put_stats != NULL && stats != NULL) {
		/* the end: now, or the latest record or tick if later */
		uint64_t end = realtime_ns();

		if (w->clock_ns > end)
			end = w->clock_ns;
		rc = w->fmt->put_stats(w, stats, end);
	}
	/* errors are sticky: after one this writes nothing, it only closes */
	if (rc == 0)
		rc = gcap_wr_file_close(w);
	else
		(void)gcap_wr_file_close(w);
	if (rc != 0)
		gcap_err(errbuf, -rc, "%s", w->msg);
	wr_free(w);
	return rc;
}

/* ---- open ---- */

/*
 * Files carry LINKTYPE_* values; they equal the DLT_* values except for a
 * few DLTs whose numbers differ between systems (libpcap maps them the same
 * way when it writes a file). pcap and pcapng share the numbers, so the
 * interfaces are mapped once here, at open, for every format.
 */
static uint16_t
dlt_to_linktype(int dlt)
{
	switch (dlt) {
#ifdef DLT_ATM_RFC1483
	case DLT_ATM_RFC1483: return 100;
#endif
#ifdef DLT_RAW
	case DLT_RAW: return 101;
#endif
#ifdef DLT_SLIP_BSDOS
	case DLT_SLIP_BSDOS: return 102;
#endif
#ifdef DLT_PPP_BSDOS
	case DLT_PPP_BSDOS: return 103;
#endif
#ifdef DLT_ATM_CLIP
	case DLT_ATM_CLIP: return 106;
#endif
	default: return (uint16_t)dlt;
	}
}

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
	if ((unsigned)c->fmt >= NFORMATS)
		return gcap_err(errbuf, EINVAL, "writer: unknown format %d", (int)c->fmt);
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
		if (c->ifs[i].name != NULL && strlen(c->ifs[i].name) > WR_STR_MAX)
			return gcap_err(errbuf, EINVAL,
					"writer: interface %u: name too long", i);
		if (c->ifs[i].ts_form > GCAP_TS_UNITS ||
		    (c->ifs[i].ts_form == GCAP_TS_UNITS && c->ifs[i].tsresol > 9))
			return gcap_err(errbuf, EINVAL,
					"writer: interface %u: bad time form", i);
		if (c->ifs[i].opts_len % 4 != 0 || c->ifs[i].opts_len > 0xffff0000u ||
		    (c->ifs[i].opts_len > 0 && c->ifs[i].opts == NULL))
			return gcap_err(errbuf, EINVAL,
					"writer: interface %u: bad carried options", i);
	}
	if (c->filter_expr != NULL && strlen(c->filter_expr) + 1 > WR_STR_MAX)
		return gcap_err(errbuf, EINVAL, "writer: filter expression too long");
	if (c->app_name != NULL && strlen(c->app_name) > WR_STR_MAX)
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

/* The format of conf: its own, else the one whose suffix the path has. */
static const struct gcap_wr_fmt *
resolve_fmt(const struct gcap_writer_conf *c)
{
	if (c->fmt != GCAP_FMT_AUTO)
		return formats[c->fmt];
	for (size_t i = 0; i < NFORMATS; i++)
		if (formats[i] != NULL && formats[i]->suffix != NULL &&
		    ends_with(c->path, formats[i]->suffix))
			return formats[i];
	return formats[GCAP_FMT_PCAP];
}

struct gcap_writer *
gcap_writer_open(const struct gcap_writer_conf *conf, char *errbuf)
{
	const struct gcap_wr_fmt *fmt;
	struct gcap_writer *w;
	size_t strs;
	char *sp;
	int rc;

	rc = check_conf(conf, errbuf);
	if (rc != 0) {
		errno = -rc;
		return NULL;
	}
	fmt = resolve_fmt(conf);
	if (fmt->check != NULL) {
		rc = fmt->check(conf, errbuf);
		if (rc != 0) {
			errno = -rc;
			return NULL;
		}
	}

	/* one allocation for the writer, its interfaces and strings */
	strs = strlen(conf->path) + 1 + WR_NAME_MAX;
	if (conf->filter_expr != NULL)
		strs += strlen(conf->filter_expr) + 1;
	if (conf->app_name != NULL)
		strs += strlen(conf->app_name) + 1;
	for (unsigned i = 0; i < conf->nifs; i++) {
		if (conf->ifs[i].name != NULL)
			strs += strlen(conf->ifs[i].name) + 1;
		strs += conf->ifs[i].opts_len;
	}
	w = calloc(1, sizeof(*w) + conf->nifs * sizeof(struct gcap_wr_if) + strs);
	if (w == NULL)
		return gcap_err_null(errbuf, ENOMEM, "writer: out of memory");
	w->ifs = (struct gcap_wr_if *)(w + 1);
	sp = (char *)(w->ifs + conf->nifs);
#define WR_DUP(dst, src)                     \
	do {                                 \
		size_t l_ = strlen(src) + 1; \
		memcpy(sp, (src), l_);       \
		(dst) = sp;                  \
		sp += l_;                    \
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
		w->ifs[i].fcs_bits = conf->ifs[i].fcs_bits;
		w->ifs[i].ts_form = conf->ifs[i].ts_form;
		w->ifs[i].tsresol = conf->ifs[i].tsresol;
		w->ifs[i].tsoffset = conf->ifs[i].tsoffset;
		if (conf->ifs[i].opts_len > 0) {
			memcpy(sp, conf->ifs[i].opts, conf->ifs[i].opts_len);
			w->ifs[i].opts = (const uint8_t *)sp;
			w->ifs[i].opts_len = conf->ifs[i].opts_len;
			sp += conf->ifs[i].opts_len;
		}
	}
#undef WR_DUP
	w->nifs = conf->nifs;
	w->fmt = fmt;
	w->snaplen = conf->snaplen != 0 ? conf->snaplen : WR_DEFAULT_SNAPLEN;
	w->rotate_bytes = conf->rotate_bytes;
	w->rotate_ns = (uint64_t)conf->rotate_secs * GCAP_WR_NS_PER_SEC;
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

	gcap_wr_ts_setup(w);
	w->hdr_len = fmt->hdr_len(w);
	w->cap = w->hdr_len > WR_BUF_SIZE ? w->hdr_len : WR_BUF_SIZE;
	w->buf = malloc(w->cap);
	if (w->buf == NULL) {
		wr_free(w);
		return gcap_err_null(errbuf, ENOMEM, "writer: out of memory");
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
	rc = gcap_wr_file_open(w, errbuf);
	if (rc != 0) {
		wr_free(w);
		errno = -rc;
		return NULL;
	}
	return w;
}
