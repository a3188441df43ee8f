/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Capture file writer: pcap (nanosecond magic) and pcapng, rotation by size,
 * time and count (tcpdump's -C, -G, -W), "-" for stdout. Records come from
 * export buffers (struct gcap_rec + bytes); the writer never changes packet
 * bytes. Files are valid after any stop: the header is written and flushed
 * when a file is opened, records are appended whole, and a failed write
 * (e.g. ENOSPC) truncates the file back to its last whole record.
 *
 * One writer is one output (one -w). It is used by one thread at a time.
 */
#ifndef GCAP_WRITER_H
#define GCAP_WRITER_H

/** Most SHB comments a writer takes (gcap_writer_conf.comments). */
#define GCAP_WRITER_MAX_COMMENTS 64u
/** The most bytes the SHB's comments take in all (each 4 of option header
 *  and its text padded to 4): libpcap refuses a section header block
 *  over 1 MiB, and the SHB's other options need the rest. */
#define GCAP_WRITER_COMMENTS_MAX_BYTES (960u * 1024u)

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "gcap_common.h"
#include "gcap_pkt.h"

#ifdef __cplusplus
extern "C" {
#endif

/** File formats. */
enum gcap_fmt {
	GCAP_FMT_AUTO = 0, /**< pcapng if the name ends in .pcapng, else pcap */
	GCAP_FMT_PCAP,     /**< pcap, nanosecond magic (0xa1b23c4d) */
	GCAP_FMT_PCAPNG,   /**< pcapng: SHB, one IDB per interface, EPBs, ISBs */
};

/** How the files of a rotating output are named. */
enum gcap_names {
	/** tcpdump's: path, path1, path2, ... (-C; path0.. in a ring of -W),
	 *  path through strftime(3) (-G) */
	GCAP_NAMES_TCPDUMP = 0,
	/** dumpcap's (-b): every file, the first too, is PREFIX_NNNNN_
	 *  YYYYmmddHHMMSS.EXT, path cut before the last '.' of its last
	 *  component, NNNNN the file's number from 00001 (modulo 100000),
	 *  the local time it was opened at; with max_files a ring: opening
	 *  file max_files + 1 removes the oldest, and -G's stop at max_files
	 *  does not apply */
	GCAP_NAMES_DUMPCAP,
	/** dumpcap's -b nametimenum:2: as GCAP_NAMES_DUMPCAP, the time
	 *  before the number: PREFIX_YYYYmmddHHMMSS_NNNNN.EXT */
	GCAP_NAMES_DUMPCAP_TIMENUM,
};

/**
 * How gcap_rec.ts_ns is to be read for an interface's records. Live ports
 * give nanoseconds; a capture file's records keep their own fields, so
 * that they are written back as they were, whatever their values (a
 * fraction of 2^31 or more, seconds past what nanoseconds since the epoch
 * hold in 64 bits).
 */
enum gcap_ts_form {
	GCAP_TS_NS = 0,  /**< nanoseconds since the Unix epoch */
	GCAP_TS_PCAP_US, /**< a pcap record's fields: seconds << 32 | microseconds */
	GCAP_TS_PCAP_NS, /**< a pcap record's fields: seconds << 32 | nanoseconds */
	GCAP_TS_UNITS,   /**< a pcapng timestamp: units of 10^-tsresol s since
			       the epoch plus tsoffset seconds */
};

/**
 * One interface, i.e. one pcapng IDB (index = gcap_rec.port). Every field
 * after linktype may be left zero (NULL): the option is then not written.
 */
struct gcap_writer_if {
	const char *name;        /**< if_name option, e.g. "net_pcap0" or "eth0" */
	int linktype;            /**< DLT_* */
	const char *description; /**< if_description (e.g. the driver and device) */
	const char *os;          /**< if_os */
	const char *hardware;    /**< if_hardware */
	const uint8_t *mac;      /**< if_MACaddr: 6 bytes */
	uint64_t speed;          /**< if_speed, bits per second */
	/** the upper 16 bits of a pcap header's link-type field as read
	 *  (bit 26 set: bits 28-31 are the FCS length in 16-bit words):
	 *  pcap writes the field back whole, pcapng writes if_fcslen */
	uint32_t fcs_bits;
	/** if_filter of this interface: NULL means gcap_writer_conf's
	 *  filter_expr (no option where that is NULL too) */
	const char *filter;
	/** further IDB options carried from an input file as they were,
	 *  already encoded (code, length, value padded to 4, host byte
	 *  order), without opt_endofopt; opts_len bytes, a multiple of 4 */
	const uint8_t *opts;
	size_t opts_len;
	/** how its records' ts_ns reads (enum gcap_ts_form); a pcap output
	 *  takes the finest resolution its interfaces need (microseconds
	 *  for GCAP_TS_PCAP_US and for GCAP_TS_UNITS of tsresol 6 or less,
	 *  else nanoseconds), a pcapng IDB its own (if_tsresol, if_tsoffset) */
	uint8_t ts_form;
	uint8_t tsresol;  /**< GCAP_TS_UNITS: decimal exponent, 0..9 */
	int64_t tsoffset; /**< GCAP_TS_UNITS: seconds added (if_tsoffset) */
};

/**
 * Per-interface counters written into pcapng ISBs, each since the start
 * of the capture (as the pcapng specification defines them). The
 * writer adds isb_usrdeliv itself: the records of the interface it has
 * written so far, over all its files.
 */
struct gcap_writer_if_stats {
	uint64_t received;        /**< isb_ifrecv */
	uint64_t dropped;         /**< isb_ifdrop: dropped by the interface (NIC) */
	uint64_t filter_accepted; /**< isb_filteraccept */
	uint64_t os_dropped; /**< isb_osdrop: dropped by the host (pipeline, writer) */
};

/**
 * Fill nifs entries of st with the counters now (for the ISBs of a file
 * that rotation closes). Called from the writer's thread.
 */
typedef void (*gcap_writer_stats_fn)(void *arg, struct gcap_writer_if_stats *st,
				     unsigned nifs);

/** A file of the output was closed by rotation, or closed whole by
 *  gcap_writer_close() after the writer ended the output (tcpdump's -z). */
typedef void (*gcap_writer_closed_fn)(void *arg, const char *path);

/** What a writer is opened with. */
struct gcap_writer_conf {
	const char *path; /**< file name, "-" for stdout */
	enum gcap_fmt fmt;
	uint32_t snaplen; /**< records longer than this are cut (0: 262144) */
	unsigned nifs;    /**< interfaces (>= 1) */
	const struct gcap_writer_if *ifs;
	/** -C: before a record, a file larger than this many bytes is closed
	 *  and the next opened: path, path1, path2, ... (0: off). With
	 *  GCAP_NAMES_DUMPCAP (-b filesize:) the record that brings the file
	 *  to this many bytes ends it */
	uint64_t rotate_bytes;
	/** -G: new file every this many seconds; path goes through
	 *  strftime(3) with the local time of the file's start (0: off) */
	uint32_t rotate_secs;
	/** dumpcap's -b interval:: a file also ends at the next multiple of
	 *  this many seconds since the epoch (UTC: a new file each hour on
	 *  the hour), beside rotate_secs's end if that is set (0: off; with
	 *  dumpcap's names only) */
	uint32_t rotate_interval;
	/** -W: with -C, a ring of files path0..path{W-1} (zero-padded to the
	 *  width of W-1); with -G alone, stop after W files; needs -C or -G.
	 *  With GCAP_NAMES_DUMPCAP (-b files:), a ring of the last W files
	 *  that removes the oldest */
	uint32_t max_files;
	/** dumpcap's -a filesize: done (as -W with -G) with the record that
	 *  brings the file to this many bytes (0: off; not with rotate_bytes) */
	uint64_t stop_bytes;
	/** dumpcap's -a files: done instead of opening file stop_files + 1
	 *  (0: off; with rotate_bytes, rotate_secs or rotate_packets) */
	uint32_t stop_files;
	const char *filter_expr; /**< recorded in the pcapng IDB (if_filter), may be NULL */
	const char *app_name;    /**< shb_userappl, may be NULL */
	bool flush_each;         /**< flush after every write call (-U) */
	/** write(2) from a thread of the writer's own: the caller's thread
	 *  frames records into one buffer of a ring while the thread writes
	 *  the full ones, in order. Files, counts, errors and the cut back
	 *  to the last whole record are as without it; a failure is
	 *  reported by a later call that hands over a buffer, or by the
	 *  next flush. Ignored with flush_each. */
	bool write_behind;
	/**
	 * Start of the first file (ns since the epoch): names it under -G
	 * (strftime) and starts its -G period; also isb_starttime.
	 * 0: the current time (CLOCK_REALTIME) at gcap_writer_open.
	 */
	uint64_t start_ns;
	/** mode of each file the writer creates, before the umask
	 *  (0: 0666, as tcpdump's; dumpcap's -g: 0640) */
	mode_t file_mode;
	/** give each file the writer creates to owner:group (fchown), for a
	 *  process that drops privileges after opening its first files
	 *  (tcpdump -Z); a file it truncates keeps its owner */
	bool set_owner;
	uid_t owner;
	gid_t group;
	/** microsecond timestamps (tcpdump's --time-stamp-precision micro):
	 *  pcap's microsecond magic, pcapng's if_tsresol 6; times are cut
	 *  (not rounded) to the microsecond. Else nanoseconds. Applies to
	 *  the interfaces whose records are GCAP_TS_NS; those that carry a
	 *  capture file's own times keep the file's resolution unless
	 *  ts_override is set. */
	bool ts_micro;
	/** ts_micro (or, false, nanoseconds) for every interface, also
	 *  those carrying a capture file's times (converted as libpcap
	 *  converts them): the user asked for a precision on -r */
	bool ts_override;
	/** pcapng: every EPB carries epb_flags (inbound) and epb_queue
	 *  (gcap_rec.queue): packets received by a port */
	bool epb_rx;
	const char *shb_os;       /**< shb_os, may be NULL */
	const char *shb_hardware; /**< shb_hardware, may be NULL */
	/** pcapng: the SHB's comments (opt_comment), in order, as dumpcap's
	 *  --capture-comment writes them; pcap has no place for them (the
	 *  caller refuses them there). At most GCAP_WRITER_MAX_COMMENTS,
	 *  GCAP_WRITER_COMMENTS_MAX_BYTES in all */
	const char *const *comments;
	unsigned ncomments;
	/** dumpcap's -b packets:N: a new file once the current one holds
	 *  this many records (0: off): before the next record, named as -C
	 *  names them; with GCAP_NAMES_DUMPCAP, right after the record that
	 *  fills it */
	uint64_t rotate_packets;
	/** NULL, or the counters for the ISBs of each file rotation closes
	 *  (pcapng; without it, only the last file gets ISBs) */
	gcap_writer_stats_fn stats_fn;
	void *stats_arg;
	/** NULL, or told the name of each file rotation closed, and of the
	 *  last where the writer ended the output itself (-G with -W, stop_files,
	 *  stop_bytes) once gcap_writer_close() closed it */
	gcap_writer_closed_fn closed_fn;
	void *closed_arg;
	/** the snap length the file header (pcap) and IDBs (pcapng) say,
	 *  where it is not snaplen (0: snaplen): tcpdump -r -w writes its
	 *  input's. Records are cut at the smaller of the two, so that none
	 *  is longer than the header says */
	uint32_t hdr_snaplen;
	/** how the files are named: dumpcap's (GCAP_NAMES_DUMPCAP,
	 *  _DUMPCAP_TIMENUM) need rotate_bytes, rotate_secs, rotate_interval
	 *  or rotate_packets */
	enum gcap_names names;
};

struct gcap_writer;

/**
 * The format a configuration's path and fmt give (GCAP_FMT_AUTO resolved
 * by the name's suffix), without opening anything.
 * @return GCAP_FMT_PCAP or GCAP_FMT_PCAPNG.
 */
enum gcap_fmt gcap_writer_fmt_of(const char *path, enum gcap_fmt fmt);

/**
 * A record's time in ns since the epoch, read as interface wif's records
 * are (ts_form, tsresol, tsoffset): to order or compare records of
 * interfaces whose times read differently.
 * @return the time; 0 before the epoch, UINT64_MAX past what 64 bits of
 *         nanoseconds hold (the year 2554).
 */
uint64_t gcap_writer_ts_ns(const struct gcap_writer_if *wif, uint64_t ts);

/**
 * Open a writer: creates (or truncates) the first file and writes its
 * header(s). Checks that the path is writable before returning.
 * @return the writer, or NULL with errno set and a one-line message in
 *         errbuf (EINVAL bad conf, EACCES/ENOENT/EISDIR/... from open, EPERM from
 *         giving a created file to conf->owner).
 */
struct gcap_writer *gcap_writer_open(const struct gcap_writer_conf *conf, char *errbuf);

/**
 * Append one record (header + caplen bytes at data). The record is cut to
 * the snap length; rec->port names the pcapng interface (ignored for pcap).
 * Before the record, -G (time) and then -C (size) rotation are checked;
 * the writer's clock is the latest of rec->ts_ns and gcap_writer_tick's
 * now_ns (once the caller ticks, a record further ahead of the last tick
 * than a period or 10 s does not move it).
 * @return 0; -EINVAL for rec->port >= nifs (pcapng; nothing written);
 *         -ENOSPC/-EIO/-EFBIG/... on a write error (the file stays valid up
 *         to its last whole record, further calls fail the same way; the
 *         message is in gcap_writer_errmsg); an open error of the next
 *         file on rotation (-EACCES, ...); -ECANCELED once -W with -G has
 *         written its last file (done, the record is not written).
 */
int
gcap_writer_write(struct gcap_writer *w, const struct gcap_rec *rec, const void *data);

/**
 * Step through the records of an export buffer (struct gcap_rec headers,
 * each followed by its bytes padded to 8): the one walk both the writer
 * and the pipeline use. The header at *off is copied to *rec (the buffer
 * needs no alignment), *data points at its bytes and *off moves past it.
 * @return 1 for a record; 0 at the end (*off == len); -EINVAL where the
 *         record at *off does not lie inside len (*off is left there).
 */
static inline int
gcap_rec_step(const uint8_t *buf, uint32_t len, uint32_t *off, struct gcap_rec *rec,
	      const uint8_t **data)
{
	uint32_t o = *off;
	uint64_t sz;

	if (o >= len)
		return o == len ? 0 : -EINVAL;
	if (len - o < sizeof(*rec))
		return -EINVAL;
	memcpy(rec, buf + o, sizeof(*rec));
	/* in 64 bits: a corrupt caplen near 2^32 must not wrap */
	sz = sizeof(*rec) + (((uint64_t)rec->caplen + 7u) & ~UINT64_C(7));
	if (sz > len - o)
		return -EINVAL;
	*data = buf + o + sizeof(*rec);
	*off = o + (uint32_t)sz;
	return 1;
}

/**
 * Append every record of an export buffer whose outmask has bit `bit`.
 * The whole buffer is validated first: each record must lie inside len.
 * @return records written (>= 0); -EINVAL for bit >= 64, a corrupt buffer
 *         or a bad port (nothing of the buffer is written); or a negative
 *         errno as gcap_writer_write (records before it were written).
 */
int gcap_writer_write_buf(struct gcap_writer *w, const uint8_t *buf, uint32_t len,
			  unsigned bit);

/**
 * Append the records of an export buffer from *off on, in order, as
 * gcap_writer_write would, while each one's time is at most ts_max and its
 * outmask has bit `bit`, up to max records: a run of one queue's records
 * that come before any other's, without a call per record. It stops,
 * without an error, at the first record it does not take: one outside
 * ts_max or the bit, one outside len, one that needs a check before it
 * (rotation, -a, -U, a full buffer to hand on, a sticky error): the
 * caller writes that one with gcap_writer_write (or steps it with
 * gcap_rec_step to find what is wrong) and may call again after it.
 * @return records written (>= 0), *off moved past them; -EINVAL for a
 *         NULL writer or off, or bit >= 64.
 */
int gcap_writer_write_run(struct gcap_writer *w, const uint8_t *buf, uint32_t len,
			  uint32_t *off, uint32_t max, uint64_t ts_max, unsigned bit);

/**
 * Called periodically with the current time (ns since the epoch) so that
 * -G rotates even when no packet arrives.
 * @return 0; -ECANCELED once -W with -G is done; the sticky write error;
 *         an error opening the next file.
 */
int gcap_writer_tick(struct gcap_writer *w, uint64_t now_ns);

/**
 * Close the current file now (with its ISBs, as rotation closes one) and
 * open the next, named as -G names it (a new period starting now) under
 * -G, else as -C names it; with GCAP_NAMES_DUMPCAP the next number. Not
 * for stdout.
 * @return 0; -EINVAL for stdout; -ECANCELED once done; the sticky write
 *         error; an error opening the next file.
 */
int gcap_writer_rotate(struct gcap_writer *w);

/**
 * Flush buffered records to the file (write(2); no fsync).
 * @return 0 or a negative errno (-ENOSPC, -EIO, ...: sticky, as in
 *         gcap_writer_write).
 */
int gcap_writer_flush(struct gcap_writer *w);

/**
 * Send buffered records on their way to the file without waiting for
 * them: with write_behind, the buffer being filled goes to the I/O thread,
 * which is woken to write it (this waits only where every buffer of its
 * ring waits to be written, as a full buffer does); without it, as
 * gcap_writer_flush. For the periodic flush of a writer that keeps
 * writing: a slow file system then costs it no more than its pace.
 * @return 0 or a negative errno (the sticky write error, as
 *         gcap_writer_flush; -EINVAL for a NULL w).
 */
int gcap_writer_push(struct gcap_writer *w);

/**
 * Records and bytes written so far (all files; bytes count everything
 * appended to the files: headers, records, ISBs). After a write error
 * records lost from the buffer are no longer counted, so the counts match
 * what the files hold. Either pointer may be NULL. Another thread may
 * call it while the writer writes (telemetry, metrics): each count is
 * read whole, as of a moment ago.
 */
void gcap_writer_counts(const struct gcap_writer *w, uint64_t *records, uint64_t *bytes);

/**
 * With write_behind: how many times the caller's thread found every
 * buffer of the I/O thread's ring waiting to be written and waited for
 * one (gcap_writer_write's and gcap_writer_push's), and for how long in
 * all (ns). Where these grow while a capture runs, the file system takes
 * the bytes slower than they come. gcap_writer_flush's, rotation's and
 * close's waits for the ring to empty are not counted. 0 without
 * write_behind (also with flush_each, which writes on the caller's
 * thread). Safe to call while the writer writes, as gcap_writer_counts.
 * w may be NULL (0).
 */
void gcap_writer_io_wait(const struct gcap_writer *w, uint64_t *waits, uint64_t *ns);

/**
 * Make a write blocked on a pipe or FIFO give up: the file becomes
 * non-blocking, so that once a signal interrupts the write, it and every
 * later one fail with EAGAIN (sticky, as gcap_writer_write's errors).
 * Called from another thread while the writer's thread is stuck; a stop
 * that cannot wait for a stalled reader uses it. With write_behind the
 * writer's own thread is sent SIGURG, whose handler must be installed
 * without SA_RESTART for the write to end. w may be NULL.
 */
void gcap_writer_interrupt(struct gcap_writer *w);

/**
 * @return the one-line message of the first error ("" if none); valid
 *         until gcap_writer_close.
 */
const char *gcap_writer_errmsg(const struct gcap_writer *w);

/**
 * @return the name of the file being written ("-" for stdout); valid
 *         until the next write, tick or close.
 */
const char *gcap_writer_filename(const struct gcap_writer *w);

/**
 * Flush, write pcapng ISBs (stats may be NULL; else nifs entries), close.
 * The writer is freed in all cases (w may be NULL). After a write error
 * nothing more is written: the file keeps its last whole record.
 * @return 0 or the first error seen (-ENOSPC, -EIO, ..., with its message
 *         in errbuf); -ECANCELED (-W with -G done) is not an error here.
 */
int gcap_writer_close(struct gcap_writer *w, const struct gcap_writer_if_stats *stats,
		      char *errbuf);

#ifdef __cplusplus
}
#endif

#endif /* GCAP_WRITER_H */
