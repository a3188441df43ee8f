/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Capture file writer, the part every format shares: the public API of
 * gcap_writer.h, the configuration and the choice of format, the records'
 * path (the checks before and after one: when a file ends is
 * writer_rotate.c's, its next name writer_name.c's), stdout, the counters. The output to
 * one file (buffer, write(2), cut back on a failed write) is writer_io.c,
 * its write(2)s on a thread of their own writer_behind.c;
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

#include "gpucap/gcap_utf8.h"
#include "writer_internal.h"

#define WR_BUF_SIZE (1u << 20)     /* the output buffer, at least */
#define WR_DEFAULT_SNAPLEN 262144u /* libpcap's MAXIMUM_SNAPLEN */
#define WR_STR_MAX 0xfffcu         /* longest string kept: a pcapng option value */
/* How far ahead of the record it frames a run reads its buffer in: the
 * records come from memory this thread has not touched (the GPU wrote
 * them over PCIe, or an RX lcore on another CPU), and without it each
 * record's first load waits for its own miss (docs/benchmarks.md). */
#define WR_RUN_AHEAD 1024u
#define WR_LINE 64u

/* The formats, by enum gcap_fmt (GCAP_FMT_AUTO has no row). */
static const struct gcap_wr_fmt *const formats[] = {
	[GCAP_FMT_PCAP] = &gcap_wr_pcap,
	[GCAP_FMT_PCAPNG] = &gcap_wr_pcapng,
};

#define NFORMATS (sizeof(formats) / sizeof(formats[0]))

/* ---- records ---- */

/* A port the format cannot name (pcapng: no such interface). */
static bool
bad_port(const struct gcap_writer *w, const struct gcap_rec *rec)
{
	return w->fmt->per_if && rec->port >= w->nifs;
}

/* A record's time moves the writer's clock (-G's periods, the ISBs' end);
 * once the caller ticks (it keeps the clock), not a record further ahead
 * of the last tick than a period or 10 s: one record stamped in the
 * future (a NIC clock that jumped) would hold -G's rotation until real
 * time caught up with it, where tcpdump's -G follows the wall clock. */
static inline void
rec_clock(struct gcap_writer *w, uint64_t t)
{
	const uint64_t ahead = w->rotate_ns > 10000000000u ? w->rotate_ns : 10000000000u;

	if (t > w->clock_ns && (w->tick_ns == 0 || t - w->tick_ns <= ahead))
		w->clock_ns = t;
}

/* Checks and rotation before one record. */
static int
pre_rec(struct gcap_writer *w, const struct gcap_rec *rec)
{
	if (w->err != 0)
		return w->err;
	if (w->done)
		return -ECANCELED;
	if (w->stop_bytes != 0 && w->file_off + w->len >= w->stop_bytes)
		return gcap_wr_stop_done(w); /* -a filesize: reached */
	if (bad_port(w, rec))
		return -EINVAL;
	rec_clock(w, gcap_wr_ts_ns(w, rec));
	/* tcpdump's order: the time check first, then the size check
	 * (neither called per record where it is off) */
	int rc = gcap_wr_timed(w) ? gcap_wr_time_rotate(w, false) : 0;

	if (rc == 0 && (w->rotate_bytes != 0 || w->rotate_packets != 0))
		rc = gcap_wr_size_rotate(w, false);
	return rc;
}

/* The fast lane (w->lane, nothing to check before a record): a live
 * port's record with room for it in the buffer, framed in place by the
 * format. @return whether it took the record (else the general path:
 * checks and rotation, then the format's frame, or why it cannot). */
static inline bool
lane_put(struct gcap_writer *w, const struct gcap_rec *rec, const void *data)
{
	uint32_t incl = rec->caplen < w->snaplen ? rec->caplen : w->snaplen;
	size_t n;

	if (w->cap - w->len < GCAP_WR_RHDR_MAX + (size_t)incl + GCAP_WR_RTRL_MAX)
		return false;
	n = w->fmt->put_live(w, rec, incl, data, w->buf + w->len);
	if (n == 0)
		return false;
	rec_clock(w, rec->ts_ns);
	gcap_wr_took(w, rec, n);
	return true;
}

/* One record: the fast lane where it takes it, else the general path. */
static inline int
put_one(struct gcap_writer *w, const struct gcap_rec *rec, const void *data)
{
	int rc;

	if (w->lane && w->err == 0 && !w->done && lane_put(w, rec, data))
		return 0;
	rc = pre_rec(w, rec);
	if (rc == 0)
		rc = gcap_wr_put_rec(w, rec, data);
	if (rc == 0)
		gcap_wr_post_rec(w);
	return rc;
}

int
gcap_writer_write(struct gcap_writer *w, const struct gcap_rec *rec, const void *data)
{
	int rc;

	if (w == NULL || rec == NULL || (data == NULL && rec->caplen > 0))
		return -EINVAL;
	rc = put_one(w, rec, data);
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
			rc = put_one(w, &rec, data);
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
gcap_writer_write_run(struct gcap_writer *w, const uint8_t *buf, uint32_t len,
		      uint32_t *off, uint32_t max, uint64_t ts_max, unsigned bit)
{
	const uint8_t *data;
	struct gcap_rec rec;
	uint32_t o, n;
	uint64_t mask;

	if (w == NULL || off == NULL || (buf == NULL && len > 0) || bit >= 64)
		return -EINVAL;
	/* -U flushes after each record: record by record there */
	if (!w->lane || w->err != 0 || w->done || w->flush_each)
		return 0;
	if (*off >= len) /* nothing to read from there */
		return 0;
	mask = 1ull << bit;
	uint64_t pf = *off & ~(WR_LINE - 1); /* the next line to ask for */

	for (n = 0, o = *off; n < max; n++) {
		uint32_t next = o;
		uint64_t ahead = (uint64_t)o + WR_RUN_AHEAD;

		if (ahead > len)
			ahead = len;
		for (; pf < ahead; pf += WR_LINE)
			__builtin_prefetch(buf + pf);
		if (gcap_rec_step(buf, len, &next, &rec, &data) <= 0 ||
		    rec.ts_ns > ts_max || !(rec.outmask & mask) ||
		    !lane_put(w, &rec, data))
			break;
		o = next;
	}
	*off = o;
	return (int)n;
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
	if (now_ns > w->tick_ns)
		w->tick_ns = now_ns;
	if (now_ns > w->clock_ns)
		w->clock_ns = now_ns;
	return gcap_wr_time_rotate(w, false); /* -C is only checked before a record */
}

int
gcap_writer_rotate(struct gcap_writer *w)
{
	if (w == NULL || w->is_stdout)
		return -EINVAL;
	if (w->err != 0)
		return w->err;
	if (w->done)
		return -ECANCELED;
	if (!gcap_wr_timed(w))
		return gcap_wr_size_rotate(w, true);
	/* -G: the new period starts now (its name from now's time) */
	uint64_t now = gcap_wr_clock_ns(CLOCK_REALTIME);

	if (now > w->tick_ns)
		w->tick_ns = now;
	if (now > w->clock_ns)
		w->clock_ns = now;
	return gcap_wr_time_rotate(w, true);
}

int
gcap_writer_flush(struct gcap_writer *w)
{
	if (w == NULL)
		return -EINVAL;
	return gcap_wr_flush(w);
}

int
gcap_writer_push(struct gcap_writer *w)
{
	if (w == NULL)
		return -EINVAL;
	if (w->behind != NULL && w->fd >= 0)
		return gcap_wr_behind_hand(w, GCAP_WR_PUSH);
	return gcap_wr_flush(w);
}

void
gcap_writer_counts(const struct gcap_writer *w, uint64_t *records, uint64_t *bytes)
{
	if (records != NULL)
		*records = w != NULL ? __atomic_load_n(&w->nrec, __ATOMIC_RELAXED) : 0;
	if (bytes != NULL)
		*bytes = w != NULL ? __atomic_load_n(&w->nbytes, __ATOMIC_RELAXED) : 0;
}

void
gcap_writer_io_wait(const struct gcap_writer *w, uint64_t *waits, uint64_t *ns)
{
	if (waits != NULL)
		*waits = w != NULL ? __atomic_load_n(&w->io_waits, __ATOMIC_RELAXED) : 0;
	if (ns != NULL)
		*ns = w != NULL ? __atomic_load_n(&w->io_wait_ns, __ATOMIC_RELAXED) : 0;
}

void
gcap_writer_interrupt(struct gcap_writer *w)
{
	int fd = w != NULL ? w->fd : -1;
	int fl = fd >= 0 ? fcntl(fd, F_GETFL) : -1;

	if (fl >= 0)
		(void)fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	if (w != NULL) /* the write blocked may be its thread's */
		gcap_wr_behind_kick(w);
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
	gcap_wr_behind_stop(w);
	gcap_wr_name_free(w);
	free(w->mem);
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
		uint64_t end = gcap_wr_clock_ns(CLOCK_REALTIME);

		if (w->clock_ns > end)
			end = w->clock_ns;
		rc = w->fmt->put_stats(w, stats, end);
	}
	/* errors are sticky: after one this writes nothing, it only closes */
	bool whole = rc == 0 && w->fd >= 0;

	if (rc == 0)
		rc = gcap_wr_file_close(w);
	else
		(void)gcap_wr_file_close(w);
	if (rc != 0)
		gcap_err(errbuf, -rc, "%s", w->msg);
	/* an output the writer ended itself (-G with -W, -a files: or
	 * filesize:) ends with a whole last file: closed_fn has it too, as
	 * tcpdump runs -z on the file -G's last period closes; not a file a
	 * stop cut short */
	else if (whole && w->done && w->closed_fn != NULL)
		w->closed_fn(w->closed_arg, w->cur);
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
		const char *strs[] = { c->ifs[i].name, c->ifs[i].description,
				       c->ifs[i].os, c->ifs[i].hardware };

		for (size_t k = 0; k < sizeof(strs) / sizeof(strs[0]); k++)
			if (strs[k] != NULL && strlen(strs[k]) > WR_STR_MAX)
				return gcap_err(errbuf, EINVAL,
						"writer: interface %u: name or "
						"description too long",
						i);
		if (c->ifs[i].filter != NULL && strlen(c->ifs[i].filter) + 1 > WR_STR_MAX)
			return gcap_err(errbuf, EINVAL,
					"writer: interface %u: filter too long", i);
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
	if ((c->app_name != NULL && strlen(c->app_name) > WR_STR_MAX) ||
	    (c->shb_os != NULL && strlen(c->shb_os) > WR_STR_MAX) ||
	    (c->shb_hardware != NULL && strlen(c->shb_hardware) > WR_STR_MAX))
		return gcap_err(errbuf, EINVAL,
				"writer: application, OS or hardware name too long");
	if (c->ncomments > GCAP_WRITER_MAX_COMMENTS)
		return gcap_err(errbuf, EINVAL, "writer: more than %u comments",
				GCAP_WRITER_MAX_COMMENTS);
	if (c->ncomments > 0 && c->comments == NULL)
		return gcap_err(errbuf, EINVAL, "writer: %u comments, none given",
				c->ncomments);
	size_t cbytes = 0;

	for (unsigned i = 0; i < c->ncomments; i++) {
		if (c->comments[i] == NULL || strlen(c->comments[i]) > WR_STR_MAX)
			return gcap_err(errbuf, EINVAL,
					"writer: comment %u missing or too long", i + 1);
		cbytes += 4 + ((strlen(c->comments[i]) + 3) & ~(size_t)3);
	}
	if (cbytes > GCAP_WRITER_COMMENTS_MAX_BYTES)
		return gcap_err(errbuf, EINVAL, "writer: comments over %u bytes in all",
				GCAP_WRITER_COMMENTS_MAX_BYTES);
	if (strcmp(c->path, "-") == 0 && (c->rotate_bytes != 0 || c->rotate_secs != 0 ||
					  c->rotate_packets != 0 || c->max_files != 0))
		return gcap_err(errbuf, EINVAL,
				"writer: cannot rotate (-C/-G/-W) when writing to "
				"stdout ('-')");
	if (c->max_files != 0 && c->rotate_bytes == 0 && c->rotate_secs == 0 &&
	    c->rotate_packets == 0)
		return gcap_err(errbuf, EINVAL,
				"writer: a file count (-W) needs -C or -G");
	if (c->names != GCAP_NAMES_TCPDUMP && c->names != GCAP_NAMES_DUMPCAP &&
	    c->names != GCAP_NAMES_DUMPCAP_TIMENUM)
		return gcap_err(errbuf, EINVAL, "writer: unknown naming %d",
				(int)c->names);
	if (c->rotate_interval != 0 && c->names == GCAP_NAMES_TCPDUMP)
		return gcap_err(
			errbuf, EINVAL,
			"writer: an interval (-b interval:) needs dumpcap's names");
	if (c->names != GCAP_NAMES_TCPDUMP && c->rotate_bytes == 0 &&
	    c->rotate_secs == 0 && c->rotate_interval == 0 && c->rotate_packets == 0)
		return gcap_err(errbuf, EINVAL,
				"writer: dumpcap's names (-b) need a condition to "
				"switch files (packets:, filesize: or duration:)");
	return 0;
}

/* The format of a path and fmt: fmt, else the one whose suffix the path
 * has. */
static const struct gcap_wr_fmt *
resolve_fmt(const char *path, enum gcap_fmt fmt)
{
	if (fmt != GCAP_FMT_AUTO && (unsigned)fmt < NFORMATS)
		return formats[fmt];
	for (size_t i = 0; i < NFORMATS; i++)
		if (formats[i] != NULL && formats[i]->suffix != NULL && path != NULL &&
		    ends_with(path, formats[i]->suffix))
			return formats[i];
	return formats[GCAP_FMT_PCAP];
}

enum gcap_fmt
gcap_writer_fmt_of(const char *path, enum gcap_fmt fmt)
{
	const struct gcap_wr_fmt *f = resolve_fmt(path, fmt);

	for (size_t i = 0; i < NFORMATS; i++)
		if (formats[i] == f)
			return (enum gcap_fmt)i;
	return GCAP_FMT_PCAP;
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
	fmt = resolve_fmt(conf->path, conf->fmt);
	if (fmt->check != NULL) {
		rc = fmt->check(conf, errbuf);
		if (rc != 0) {
			errno = -rc;
			return NULL;
		}
	}

	/* one allocation for the writer, its interfaces and strings */
	strs = strlen(conf->path) + 1 + GCAP_WR_NAME_MAX;
	if (conf->filter_expr != NULL)
		strs += strlen(conf->filter_expr) + 1;
	const char *const top[] = { conf->app_name, conf->shb_os, conf->shb_hardware };

	for (size_t k = 0; k < sizeof(top) / sizeof(top[0]); k++)
		strs += top[k] != NULL ? strlen(top[k]) + 1 : 0;
	for (unsigned i = 0; i < conf->ncomments; i++)
		strs += strlen(conf->comments[i]) + 1;
	for (unsigned i = 0; i < conf->nifs; i++) {
		const struct gcap_writer_if *f = &conf->ifs[i];
		const char *const ss[] = { f->name, f->description, f->os, f->hardware,
					   f->filter };

		for (size_t k = 0; k < sizeof(ss) / sizeof(ss[0]); k++)
			strs += ss[k] != NULL ? strlen(ss[k]) + 1 : 0;
		strs += f->opts_len;
	}
	w = calloc(1, sizeof(*w) +
			      conf->nifs * (sizeof(struct gcap_wr_if) +
					    sizeof(struct gcap_writer_if_stats)) +
			      conf->ncomments * sizeof(char *) + strs);
	if (w == NULL)
		return gcap_err_null(errbuf, ENOMEM, "writer: out of memory");
	w->rot_st = (struct gcap_writer_if_stats *)(w + 1);
	w->ifs = (struct gcap_wr_if *)(w->rot_st + conf->nifs);
	w->comments = (const char **)(w->ifs + conf->nifs);
	sp = (char *)(w->comments + conf->ncomments);
#define WR_DUP(dst, src)                     \
	do {                                 \
		size_t l_ = strlen(src) + 1; \
		memcpy(sp, (src), l_);       \
		(dst) = sp;                  \
		sp += l_;                    \
	} while (0)
	WR_DUP(w->tmpl, conf->path);
	w->cur = sp;
	sp += GCAP_WR_NAME_MAX;
	if (conf->filter_expr != NULL)
		WR_DUP(w->filter_expr, conf->filter_expr);
/* pcapng's strings are UTF-8: a port's name is whatever bytes its path
 * holds, a host's names whatever uname gives */
#define WR_DUP_OPT(dst, src)                               \
	do {                                               \
		if ((src) != NULL) {                       \
			(dst) = gcap_utf8_copy(sp, (src)); \
			sp += strlen(sp) + 1;              \
		}                                          \
	} while (0)
	WR_DUP_OPT(w->app_name, conf->app_name);
	WR_DUP_OPT(w->shb_os, conf->shb_os);
	WR_DUP_OPT(w->shb_hw, conf->shb_hardware);
	for (unsigned i = 0; i < conf->ncomments; i++)
		WR_DUP(w->comments[i], conf->comments[i]);
	w->ncomments = conf->ncomments;
	for (unsigned i = 0; i < conf->nifs; i++) {
		const struct gcap_writer_if *f = &conf->ifs[i];
		struct gcap_wr_if *t = &w->ifs[i];

		WR_DUP_OPT(t->name, f->name);
		WR_DUP_OPT(t->description, f->description);
		WR_DUP_OPT(t->os, f->os);
		WR_DUP_OPT(t->hardware, f->hardware);
		WR_DUP_OPT(t->filter, f->filter);
		if (f->filter == NULL)
			t->filter = w->filter_expr;
		if (f->mac != NULL) {
			memcpy(t->mac, f->mac, sizeof(t->mac));
			t->has_mac = true;
		}
		t->speed = f->speed;
		t->linktype = dlt_to_linktype(f->linktype);
		t->fcs_bits = f->fcs_bits;
		t->ts_form = f->ts_form;
		t->tsresol = f->tsresol;
		t->tsoffset = f->tsoffset;
		if (f->opts_len > 0) {
			memcpy(sp, f->opts, f->opts_len);
			t->opts = (const uint8_t *)sp;
			t->opts_len = f->opts_len;
			sp += f->opts_len;
		}
	}
#undef WR_DUP_OPT
#undef WR_DUP
	w->nifs = conf->nifs;
	w->fmt = fmt;
	w->snaplen = conf->snaplen != 0 ? conf->snaplen : WR_DEFAULT_SNAPLEN;
	w->hdr_snaplen = conf->hdr_snaplen != 0 ? conf->hdr_snaplen : w->snaplen;
	if (w->hdr_snaplen < w->snaplen)
		w->snaplen = w->hdr_snaplen; /* no record past what the header says */
	w->rotate_bytes = conf->rotate_bytes;
	w->rotate_ns = (uint64_t)conf->rotate_secs * GCAP_WR_NS_PER_SEC;
	w->interval_ns = (uint64_t)conf->rotate_interval * GCAP_WR_NS_PER_SEC;
	w->max_files = conf->max_files;
	w->stop_bytes = conf->stop_bytes;
	w->stop_files = conf->stop_files;
	w->flush_each = conf->flush_each;
	w->file_mode = conf->file_mode != 0 ? conf->file_mode : 0666;
	w->set_owner = conf->set_owner;
	w->owner = conf->owner;
	w->group = conf->group;
	w->ts_micro = conf->ts_micro;
	w->ts_override = conf->ts_override;
	w->epb_rx = conf->epb_rx;
	w->rotate_packets = conf->rotate_packets;
	w->stats_fn = conf->stats_fn;
	w->stats_arg = conf->stats_arg;
	w->closed_fn = conf->closed_fn;
	w->closed_arg = conf->closed_arg;
	w->is_stdout = strcmp(conf->path, "-") == 0;
	w->fd = -1;
	w->start_ns =
		conf->start_ns != 0 ? conf->start_ns : gcap_wr_clock_ns(CLOCK_REALTIME);
	if (w->rotate_ns != 0)
		tzset(); /* -G names use the local time: read TZ now */
	w->period_ns = w->start_ns;
	w->clock_ns = w->start_ns; /* tick_ns: 0 until the first tick */
	if (gcap_wr_name_setup(w, conf) != 0) {
		wr_free(w);
		return gcap_err_null(errbuf, ENOMEM, "writer: out of memory");
	}

	gcap_wr_ts_setup(w);
	w->hdr_len = fmt->hdr_len(w);
	w->lane = fmt->put_live != NULL && !gcap_wr_timed(w) && w->rotate_bytes == 0 &&
		  w->rotate_packets == 0 && w->stop_bytes == 0;
	for (unsigned i = 0; i < w->nifs; i++)
		w->lane = w->lane && w->ifs[i].ts_form == GCAP_TS_NS;
	/* -U writes each call's records at once: no thread for that */
	bool behind = conf->write_behind && !conf->flush_each;

	w->cap = behind                   ? gcap_wr_behind_cap(w->hdr_len) :
		 w->hdr_len > WR_BUF_SIZE ? w->hdr_len :
					    WR_BUF_SIZE;
	void *mem;

	if (posix_memalign(&mem, GCAP_WR_ALIGN, w->cap + GCAP_WR_ALIGN) != 0) {
		wr_free(w);
		return gcap_err_null(errbuf, ENOMEM, "writer: out of memory");
	}
	w->mem = mem;
	if (behind && (rc = gcap_wr_behind_start(w, errbuf)) != 0) {
		wr_free(w);
		errno = -rc;
		return NULL;
	}

	if (w->is_stdout) {
		strcpy(w->cur, "-");
	} else {
		rc = gcap_wr_name_next(w, 0, gcap_wr_numbered(w) ? w->wchars : 0, w->cur);
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
	gcap_wr_name_opened(w);
	return w;
}
