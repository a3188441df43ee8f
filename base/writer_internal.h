/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared by the writer's core (writer.c, writer_io.c, writer_out.c,
 * writer_behind.c, writer_name.c, writer_rotate.c) and its file formats (writer_pcap.c, writer_pcapng.c):
 * the writer's state, the table row a format fills in (struct
 * gcap_wr_fmt), and the core's helpers. The core
 * reaches a format only through its row; a format calls gcap_wr_emit and
 * nothing else of the core, and never sees the fd, the rotation or the
 * rollback. A new format is one writer_<name>.c defining its row, a
 * GCAP_FMT_* value and the row's entry in writer.c's table.
 */
#ifndef GCAP_WRITER_INTERNAL_H
#define GCAP_WRITER_INTERNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>

#include "gpucap/gcap_writer.h"

#define GCAP_WR_NS_PER_SEC 1000000000ull
#define GCAP_WR_RHDR_MAX 28u /* longest record header a format writes */
#define GCAP_WR_RTRL_MAX 32u /* longest record trailer (padding, options, length) */
/* a file name made from the path: tcpdump's number or dumpcap's
 * "_NNNNN_YYYYmmddHHMMSS" added */
#define GCAP_WR_NAME_MAX (PATH_MAX + 32)

struct gcap_writer;

/** What one record adds around its packet bytes, as a format frames it. */
struct gcap_wr_frame {
	uint8_t hdr[GCAP_WR_RHDR_MAX];
	uint8_t trl[GCAP_WR_RTRL_MAX];
	size_t hdr_len;
	size_t trl_len; /* 0: none */
};

/**
 * One file format: what the core asks of it. Items (records, close-time
 * blocks) are framed by the format and placed by the core, which keeps
 * them whole in its buffer so that a failed write can be cut back.
 */
struct gcap_wr_fmt {
	/** GCAP_FMT_AUTO picks this format for a path ending in it (NULL: none) */
	const char *suffix;
	/** records name their interface: rec->port must be below nifs */
	bool per_if;
	/** the time rec_frame is given (ts, from gcap_wr_ts): false, a pcap
	 *  record's fields (seconds << 32 | fraction in the file's
	 *  resolution); true, a count of the interface's out_res units */
	bool ts_units;
	/**
	 * NULL, or refuse a configuration the format cannot hold.
	 * @return 0, or a negative errno with its message in errbuf.
	 */
	int (*check)(const struct gcap_writer_conf *conf, char *errbuf);
	/** @return the file header's length for this writer's interfaces */
	size_t (*hdr_len)(const struct gcap_writer *w);
	/** Write the file header, hdr_len(w) bytes, at p. */
	void (*put_hdr)(const struct gcap_writer *w, uint8_t *p);
	/**
	 * Frame one record whose first incl bytes (already cut to the snap
	 * length) are written, at time ts as the format writes it (see
	 * ts_units; not rec->ts_ns); the original length is rec->wirelen,
	 * as tcpdump writes it, even when below caplen.
	 * @return 0, or -EINVAL when the format cannot hold the record.
	 */
	int (*rec_frame)(const struct gcap_writer *w, const struct gcap_rec *rec,
			 uint64_t ts, uint32_t incl, struct gcap_wr_frame *f);
	/**
	 * NULL, or write one record straight at p: its frame around incl
	 * bytes of data, as rec_frame and the core would place them. The
	 * core's fast lane (struct gcap_writer.lane): every interface's
	 * records are GCAP_TS_NS (rec->ts_ns is ns since the epoch) and p
	 * has GCAP_WR_RHDR_MAX + incl + GCAP_WR_RTRL_MAX bytes of room.
	 * @return the bytes written; 0 for a record the format refuses
	 *         (nothing written: the general path says why).
	 */
	size_t (*put_live)(const struct gcap_writer *w, const struct gcap_rec *rec,
			   uint32_t incl, const void *data, uint8_t *p);
	/**
	 * @return the length of the whole item at p in the output buffer;
	 *         *is_rec tells whether it is a record.
	 */
	size_t (*item_len)(const uint8_t *p, bool *is_rec);
	/**
	 * NULL, or append the blocks written at close (one gcap_wr_emit per
	 * block); stats has nifs entries, end_ns is the capture's end.
	 * @return 0 or the error of gcap_wr_emit.
	 */
	int (*put_stats)(struct gcap_writer *w, const struct gcap_writer_if_stats *stats,
			 uint64_t end_ns);
};

/** The rows of writer.c's table. */
extern const struct gcap_wr_fmt gcap_wr_pcap;
extern const struct gcap_wr_fmt gcap_wr_pcapng;

/** One interface as the files record it (strings: in the writer's
 *  string area, or NULL). */
struct gcap_wr_if {
	const char *name;
	const char *description;
	const char *os;
	const char *hardware;
	const char *filter; /* its own, else the writer's, or NULL */
	uint8_t mac[6];
	bool has_mac;
	uint16_t linktype;   /* LINKTYPE_* */
	uint64_t speed;      /* bits per second, 0: not given */
	uint64_t nrec;       /* records written, all files (isb_usrdeliv) */
	uint32_t fcs_bits;   /* gcap_writer_if's */
	const uint8_t *opts; /* carried IDB options (the string area), or NULL */
	size_t opts_len;
	uint8_t ts_form;  /* enum gcap_ts_form of its records */
	uint8_t tsresol;  /* the records' resolution as read (decimal exponent) */
	uint8_t out_res;  /* as written: pcap, the file's (6 or 9); pcapng, its IDB's */
	int64_t tsoffset; /* GCAP_TS_UNITS: seconds (written as if_tsoffset) */
};

/** A file of dumpcap's ring (GCAP_NAMES_DUMPCAP with max_files), kept
 *  so that the one that falls out of the ring is removed, and only if it
 *  is still the file the writer made. */
struct gcap_wr_kept {
	int64_t t; /* seconds: the time in its name */
	dev_t dev;
	ino_t ino;
	bool used;
};

struct gcap_writer {
	/* configuration, copied at open */
	char *tmpl;              /* conf->path */
	const char *filter_expr; /* or NULL */
	const char *app_name;    /* or NULL */
	const char *shb_os;      /* or NULL */
	const char *shb_hw;      /* or NULL */
	const char **comments;   /* ncomments SHB comments */
	unsigned ncomments;
	struct gcap_wr_if *ifs;
	unsigned nifs;
	const struct gcap_wr_fmt *fmt;
	size_t hdr_len; /* fmt->hdr_len(), the same for every file */
	uint32_t snaplen;
	uint32_t hdr_snaplen; /* what the headers say (conf's, else snaplen) */
	uint64_t rotate_bytes;
	uint64_t rotate_ns;
	uint32_t max_files;
	uint64_t stop_bytes; /* -a filesize */
	uint32_t stop_files; /* -a files */
	uint32_t nrotated;   /* files opened after the first */
	int wchars;          /* digits of the file number under -W */
	enum gcap_names names;
	uint64_t interval_ns; /* -b interval: (0: off) */
	size_t dc_split;      /* dumpcap's names: bytes of tmpl before its suffix */
	uint64_t dc_seq;      /* dumpcap's names: files opened so far */
	struct gcap_wr_kept *dc_kept; /* dumpcap's ring: max_files slots, or NULL */
	bool flush_each;
	/* records go by fmt->put_live: it has one, every interface is
	 * GCAP_TS_NS and nothing is checked before a record (no -G, -C, -b
	 * packets:N, -a filesize) */
	bool lane;
	bool is_stdout;
	mode_t file_mode;
	bool set_owner;
	uid_t owner;
	gid_t group;
	bool ts_micro;
	bool ts_override; /* ts_micro holds for a capture file's records too */
	bool epb_rx;
	uint64_t rotate_packets;
	struct gcap_writer_if_stats *rot_st; /* nifs entries, for stats_fn */
	gcap_writer_stats_fn stats_fn;
	void *stats_arg;
	gcap_writer_closed_fn closed_fn;
	void *closed_arg;

	/* the current file */
	int fd;             /* -1: none */
	bool fd_reg;        /* a regular file: can be truncated */
	bool created;       /* we created it (O_EXCL) */
	off_t base;         /* file offset where our output starts */
	uint64_t file_off;  /* bytes of this file that reached the fd */
	uint64_t file_recs; /* records of this file (-b packets:N) */
	char *cur;          /* its name */

	/* the buffer: whole items only (with write_behind, the one of the
	 * ring being filled) */
	struct gcap_wr_behind *behind; /* NULL: write(2) on the caller's thread */
	uint8_t *mem; /* the allocation buf lies in: cap + GCAP_WR_ALIGN bytes */
	uint8_t *buf;
	size_t cap;
	size_t len;
	uint32_t buf_recs; /* records in buf */

	/* rotation */
	unsigned cflag_count; /* -C file number */
	unsigned gflag_count; /* -G rotations done */
	uint64_t start_ns;    /* capture start (isb_starttime) */
	uint64_t period_ns;   /* start of the current -G period */
	uint64_t clock_ns;    /* latest of ticks and record timestamps */
	uint64_t tick_ns;     /* latest of ticks (the caller's clock); 0: none yet */

	/* state */
	int err;   /* sticky negative errno, 0 if none */
	bool done; /* -W with -G, -a files: or filesize:: last file written */
	uint64_t nrec;
	uint64_t nbytes;
	/* the caller's waits for a free buffer of the I/O thread's ring and
	 * their time: stored atomically, read by other threads */
	uint64_t io_waits;
	uint64_t io_wait_ns;
	char msg[GCAP_ERRBUF_SIZE];
};

/* ---- writer_ts.c: times ---- */

/** Set each interface's written resolution (out_res) for w's format. */
void gcap_wr_ts_setup(struct gcap_writer *w);

/** Whether w names its files as dumpcap does (-b). */
static inline bool
gcap_wr_dc(const struct gcap_writer *w)
{
	return w->names == GCAP_NAMES_DUMPCAP || w->names == GCAP_NAMES_DUMPCAP_TIMENUM;
}

/* ---- when a file ends (writer_rotate.c) ---- */

/** Files end by time: -G, -b duration: or interval:. */
static inline bool
gcap_wr_timed(const struct gcap_writer *w)
{
	return w->rotate_ns != 0 || w->interval_ns != 0;
}

/** Files are numbered as -C numbers them (-C, -b packets:N). */
static inline bool
gcap_wr_numbered(const struct gcap_writer *w)
{
	return w->rotate_bytes != 0 || w->rotate_packets != 0;
}

/** Done (-W with -G, -a): the file stays open so that close can still
 *  append its blocks (pcapng ISBs). @return -ECANCELED, or the flush's
 *  error. */
int gcap_wr_stop_done(struct gcap_writer *w);
/** -G, -b duration:/interval:: a new file where the period ended (or now,
 *  with force). @return 0, -ECANCELED once done, or the error. */
int gcap_wr_time_rotate(struct gcap_writer *w, bool force);
/** -C, -b packets:/filesize: before a record (or now, with force).
 *  @return 0, -ECANCELED once done, or the error. */
int gcap_wr_size_rotate(struct gcap_writer *w, bool force);
/** The end gcap_wr_post_rec found: -a filesize:'s, or dumpcap's next file. */
void gcap_wr_post_end(struct gcap_writer *w);

/** After a record of the general path: -a filesize: and dumpcap's
 *  packets:/filesize: end the file with the record that fills it, as
 *  dumpcap switches (or stops) right after writing it, not at a next
 *  record that an idle link may never bring. The record is written
 *  whatever follows: an end or a failed switch is what the next call
 *  returns (w->done, the sticky error). */
static inline void
gcap_wr_post_rec(struct gcap_writer *w)
{
	if ((w->stop_bytes != 0 && w->file_off + w->len >= w->stop_bytes) ||
	    (gcap_wr_dc(w) &&
	     ((w->rotate_packets != 0 && w->file_recs >= w->rotate_packets) ||
	      (w->rotate_bytes != 0 && w->file_off + w->len >= w->rotate_bytes))))
		gcap_wr_post_end(w);
}

/* ---- file names (writer_name.c) ---- */

/** Set the naming of w from conf (w->tmpl, max_files set): -W's width,
 *  dumpcap's split and ring. @return 0 or -ENOMEM. */
int gcap_wr_name_setup(struct gcap_writer *w, const struct gcap_writer_conf *conf);
/** Free what gcap_wr_name_setup allocated. */
void gcap_wr_name_free(struct gcap_writer *w);
/** The part of a tcpdump name before its number, for the -G period that
 *  starts at period_ns (PATH_MAX bytes at base). @return 0 or -errno. */
int gcap_wr_name_base(const struct gcap_writer *w, uint64_t period_ns, char *base);
/** The name of the next file (GCAP_WR_NAME_MAX bytes at out): tcpdump's
 *  with number cnt padded to chars digits (neither: none), dumpcap's
 *  with the next number and the writer's clock. @return 0 or -errno. */
int gcap_wr_name_next(const struct gcap_writer *w, unsigned cnt, int chars, char *out);
/** Before the next file opens: dumpcap's ring removes the file that
 *  falls out of it. */
void gcap_wr_name_expire(struct gcap_writer *w);
/** The next file (w->cur, w->fd) is open: dumpcap's count and ring. */
void gcap_wr_name_opened(struct gcap_writer *w);

/** rec's time as the format writes it (see gcap_wr_fmt.ts_units). */
uint64_t gcap_wr_ts(const struct gcap_writer *w, const struct gcap_rec *rec);

/** rec's time in ns since the epoch, for the writer's clock (0 before the
 *  epoch, UINT64_MAX past 2554). */
uint64_t gcap_wr_ts_ns(const struct gcap_writer *w, const struct gcap_rec *rec);

/** pcapng: ns since the epoch in interface i's units (its out_res and
 *  offset), for the times of its statistics. */
uint64_t gcap_wr_ns_units(const struct gcap_writer *w, unsigned i, uint64_t ns);

/* ---- writer_io.c: the output to one file ---- */

/**
 * Append one item (a record when rec, else a block) of total bytes given
 * as n pieces. Small items are copied into the buffer; one larger than the
 * buffer goes straight to the file after the buffer is flushed. The one
 * core function a format calls.
 * @return 0 or the writer's sticky write error.
 */
int gcap_wr_emit(struct gcap_writer *w, struct iovec *iov, int n, size_t total, bool rec);

/**
 * Append one record, framed by the format and cut to the snap length;
 * rotation and the port have been checked.
 * @return 0, the format's -EINVAL, or the sticky write error.
 */
int gcap_wr_put_rec(struct gcap_writer *w, const struct gcap_rec *rec, const void *data);

/**
 * Write the buffer to the file. On a failure the file is cut back to its
 * last whole item and the counts follow.
 * @return 0 or the sticky write error (also when one was seen before).
 */
int gcap_wr_flush(struct gcap_writer *w);

/**
 * Open w->cur (stdout for "-") and write its header. On failure the fd is
 * closed, a file we created is removed and the error returned with its
 * message in errbuf; the writer is not marked failed (the caller decides).
 */
int gcap_wr_file_open(struct gcap_writer *w, char *errbuf);

/**
 * Flush and close the current file (stdout is only flushed).
 * @return 0 or the sticky error (a failed close(2) becomes one).
 */
int gcap_wr_file_close(struct gcap_writer *w);

/* ---- writer_out.c: the bytes to the fd, for both paths ---- */

/**
 * Write all of iov to fd (EINTR retried); *done gets the bytes that
 * reached it, also on failure.
 * @return 0 or a negative errno (-EIO where write(2) wrote nothing).
 */
int gcap_wr_writev_all(int fd, struct iovec *iov, int n, size_t *done);

/**
 * Walk len bytes of whole items in buf (as fmt frames them) from the
 * start: the length of the prefix of items that lie within the first upto
 * bytes, and in *recs the records among them.
 */
size_t gcap_wr_whole_prefix(const struct gcap_wr_fmt *fmt, const uint8_t *buf, size_t len,
			    size_t upto, uint32_t *recs);

/** Cut a regular file back to len bytes after w->base (else nothing). */
void gcap_wr_cut_back(const struct gcap_writer *w, uint64_t len);

/**
 * Make a failed write of the current file sticky, with its message
 * (w->file_off: where the file was cut back to).
 * @return the sticky error.
 */
int gcap_wr_fail_write(struct gcap_writer *w, int rc);

/**
 * Record the first error and its message; every later call returns it.
 * @return the sticky error, -err for the first.
 */
int gcap_wr_fail(struct gcap_writer *w, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- writer_behind.c: write(2) on a thread of the writer's own ---- */

/** @return the size of each of the ring's buffers for a header of hdr_len. */
size_t gcap_wr_behind_cap(size_t hdr_len);

/**
 * Start the writer's thread; w->mem (w->cap + GCAP_WR_ALIGN bytes) becomes
 * the ring's first buffer. @return 0, or -ENOMEM/-EAGAIN with the message in errbuf.
 */
int gcap_wr_behind_start(struct gcap_writer *w, char *errbuf);

/** Why the buffer being filled goes to the thread. */
enum gcap_wr_hand {
	GCAP_WR_FULL,  /* it is full: wake the thread once half the ring waits */
	GCAP_WR_PUSH,  /* its records should reach the file soon: wake it now */
	GCAP_WR_DRAIN, /* everything must be in the file: wait for it */
};

/**
 * Hand the buffer being filled (if it holds anything) to the thread and
 * take a free one, waiting for one where every buffer waits to be
 * written (counted in io_waits); with GCAP_WR_DRAIN, wait until every
 * buffer is written. After the thread's failure: waits for it to hold
 * nothing, takes what never reached the file off the counts and makes the
 * error sticky.
 * @return 0 or the sticky error.
 */
int gcap_wr_behind_hand(struct gcap_writer *w, enum gcap_wr_hand why);

/** SIGURG to the thread (gcap_writer_interrupt), if there is one. */
void gcap_wr_behind_kick(const struct gcap_writer *w);

/** Stop and join the thread (after the last file's close), give w->mem
 *  back as one plain buffer. No-op without one. */
void gcap_wr_behind_stop(struct gcap_writer *w);

/*
 * An empty buffer's bytes start where the file offset they will reach
 * starts within a cache line: the kernel's copy into the page cache then
 * reads and writes at one alignment, where a source a few bytes off it
 * cost 6-17 % of a huge-page tmpfs file's rate (bench/file_bench
 * --offset, --src-offset).
 */
#define GCAP_WR_ALIGN 64u

/** Empty w->buf, placed in w->mem for the file offset it will be written at. */
static inline void
gcap_wr_buf_empty(struct gcap_writer *w)
{
	w->buf = w->mem + (uint64_t)(w->base + (off_t)w->file_off) % GCAP_WR_ALIGN;
	w->len = 0;
	w->buf_recs = 0;
}

/** A record of total bytes placed in the buffer: the counts. */
static inline void
gcap_wr_took(struct gcap_writer *w, const struct gcap_rec *rec, size_t total)
{
	/* isb_usrdeliv and -b packets:N (pcap has no interfaces: port 0) */
	w->ifs[w->fmt->per_if ? rec->port : 0].nrec++;
	w->file_recs++;
	w->len += total;
	w->buf_recs++;
	w->nrec++;
	w->nbytes += total;
}

/** clk's time now in ns (the files' times: CLOCK_REALTIME; waits:
 *  CLOCK_MONOTONIC). */
static inline uint64_t
gcap_wr_clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * GCAP_WR_NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* Fields in the writing host's byte order, as pcap and pcapng allow. */
static inline void
wr_put16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, sizeof(v));
}

static inline void
wr_put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static inline void
wr_put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

static inline uint32_t
wr_get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

#endif /* GCAP_WRITER_INTERNAL_H */
