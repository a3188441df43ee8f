/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Capture file reader for -r: pcap (both magics, both byte orders) and
 * pcapng, plain or compressed (gzip, zstd, lz4: found by the first bytes,
 * whatever the name), from a file or a pipe ("-"). Records are parsed in
 * place in the caller's buffer, which is filled by large reads: no copy
 * per record. libpcap opens each input (its header checks and messages),
 * and reads whatever the reader does not interpret with certainty (damaged
 * records, old format variants, unusual pcapng blocks), so a damaged file
 * ends as libpcap ends it.
 *
 * One reader is used by one thread at a time.
 *
 * A plain regular file is read through a mapping, guarded against another
 * process cutting the file short while it is read (a read past the new
 * end raises SIGBUS): the reader installs a SIGBUS handler, over the one
 * there was, that maps zeros past the new end and passes any other SIGBUS
 * on; the input ends there with -EIO (gcap_capfile_fill()).
 */
#ifndef GCAP_CAPFILE_H
#define GCAP_CAPFILE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include <pcap/pcap.h>

#include "gcap_common.h"
#include "gcap_pkt.h"
#include "gcap_writer.h"

#ifdef __cplusplus
extern "C" {
#endif

struct gcap_capfile;

/**
 * Open a capture file ("-": standard input) and read its header.
 * @return the reader, or NULL with errno and a one-line message in
 *         errbuf: the open's errno (ENOENT, EACCES, ...), EINVAL for what
 *         libpcap refuses (its message), EIO for a damaged compressed
 *         stream, ENOMEM.
 */
struct gcap_capfile *gcap_capfile_open(const char *path, char *errbuf);

/** How an input is read (gcap_capfile_open_conf()). */
struct gcap_capfile_conf {
	/** Threads decompressing a compressed input. Where its stream
	 *  splits into independent units (zstd files of several frames,
	 *  lz4 frames of independent blocks: lz4(1)'s default, BGZF's gzip
	 *  members: bgzip's) as many as the codec can use (4 for zstd and
	 *  lz4, 8 for gzip) decode
	 *  units side by side; elsewhere one of them decodes. 0 or 1: one
	 *  thread, beside the reader. */
	unsigned decoders;
	/** Threads finding the records of a plain pcap or pcapng file
	 *  ahead of the reader (mapped, of 4 MB or more), up to
	 *  GCAP_CAPFILE_FINDERS_MAX: each lists the records of the next
	 *  megabyte, and the reader takes the lists from record starts it
	 *  reached itself (the records are the same, in the same order). 0:
	 *  the reader finds every record. */
	unsigned finders;
};

/** The most finders an input gets (gcap_capfile_conf.finders). */
#define GCAP_CAPFILE_FINDERS_MAX 8u

/**
 * gcap_capfile_open(), with conf (NULL: the defaults).
 * @return as gcap_capfile_open(); a thread that cannot start: NULL, with
 *         the error of pthread_create (EAGAIN) and a message.
 */
struct gcap_capfile *
gcap_capfile_open_conf(const char *path, const struct gcap_capfile_conf *conf,
		       char *errbuf);

/**
 * How the input is decompressed so far: *units, the units decoded side by
 * side; *pieces, the pieces (of up to 1 MB) of frames that do not split,
 * decoded in turn.
 * @return the threads decompressing (0: the input is not compressed).
 */
unsigned
gcap_capfile_decoders(const struct gcap_capfile *cf, uint64_t *units, uint64_t *pieces);

/**
 * The most memory a reader of path opened with conf takes of its own (the
 * finders' lists of a plain file, the decompressing threads' slots of a
 * compressed one), for a caller that checks a run's cost before it opens
 * it; from the file's size and first bytes. Not counted: the codec
 * library's own state (zstd's window, at most 8 MB at its usual levels).
 * @return bytes (0 for a pipe or a small plain file), or -errno when the
 *         file cannot be opened.
 */
int64_t gcap_capfile_mem(const char *path, const struct gcap_capfile_conf *conf);

/**
 * How the input's records were found so far: *listed, the megabytes the
 * finders listed; *joined, those whose lists the reader took from their
 * first record; *stepped, the records the reader found itself (where no
 * list had its position). *joined and *stepped are the reader's: read
 * them on its thread or after it.
 * @return the finders (0: the reader found every record).
 */
unsigned gcap_capfile_finders(const struct gcap_capfile *cf, uint64_t *joined,
			      uint64_t *listed, uint64_t *stepped);

/**
 * Read the rest of an input that libpcap already opened (p is used, not
 * taken: the caller closes it after gcap_capfile_close()). Every record
 * is read by libpcap.
 * @return the reader, or NULL with errno ENOMEM.
 */
struct gcap_capfile *gcap_capfile_from_pcap(pcap_t *p, char *errbuf);

/** Close the reader (NULL allowed). */
void gcap_capfile_close(struct gcap_capfile *cf);

/** @return the libpcap handle of the input's header: compile its
 *          filters on it, as tcpdump -r does. */
pcap_t *gcap_capfile_pcap(const struct gcap_capfile *cf);

/** @return the input's link type (DLT_*). */
int gcap_capfile_linktype(const struct gcap_capfile *cf);

/** @return the compression of the input: "gzip", "zstd", "lz4" or NULL. */
const char *gcap_capfile_codec(const struct gcap_capfile *cf);

/**
 * The input's interfaces known so far (pcap: one; pcapng: the IDBs before
 * the first packet). Later pcapng interfaces are written as interface 0
 * (they share its link type: libpcap refuses others).
 * @return how many.
 */
unsigned gcap_capfile_nifs(struct gcap_capfile *cf);

/**
 * Interface i as an output describes it: link type, FCS bits, the input's
 * own interface name and its options (valid until close). Fields the
 * input lacks are left as they are in *wif.
 */
void
gcap_capfile_if(const struct gcap_capfile *cf, unsigned i, struct gcap_writer_if *wif);

/**
 * Fill a batch: read into buf (size bytes) and describe the records found
 * there, at most max; records lie in place in buf (libpcap's records are
 * copied there). desc[i].port is the input's interface index (interfaces
 * not known at the outputs' open: 0); desc[i].ts_ns the record's time in
 * ns since the epoch (a pcap fraction read unsigned; 0 before the epoch,
 * UINT64_MAX past the year 2554); raw[i] its own time fields, as
 * gcap_capfile_if() says they read (ts_form: pcap seconds << 32 | fraction,
 * a pcapng count of units), for an output to write them back as they were.
 * @return records described (> 0); 0 at the end of the input; -EIO when
 *         it is damaged (libpcap's message in gcap_capfile_errmsg; the
 *         records before the damage were returned), or when a mapped file
 *         shrank while it was read (the records that end within its new
 *         size were returned; records of earlier batches that lay past it
 *         now read zeros); -E2BIG when a record is larger than size;
 *         -ECANCELED when gcap_capfile_stop() ended a wait for a pipe's
 *         bytes (every record complete before was returned); -ENOMEM. From a pipe, the complete records
 *         read go out before a read that may wait for more.
 */
int gcap_capfile_fill(struct gcap_capfile *cf, uint8_t *buf, uint32_t size,
		      struct gcap_pkt *desc, uint64_t *raw, unsigned max, uint32_t *used);

/**
 * Stop the waits for bytes of an input that is not a regular file (a pipe,
 * a FIFO): a read that waits for them now, or would later, ends with
 * -ECANCELED within 50 ms instead of waiting on for the pipe's writer.
 * Regular files never wait. Any thread may call it, at any time before
 * gcap_capfile_close() (one atomic store).
 */
void gcap_capfile_stop(struct gcap_capfile *cf);

/** @return the input's name as opened ("-": standard input; "" for one
 *          from gcap_capfile_from_pcap). */
const char *gcap_capfile_name(const struct gcap_capfile *cf);

/**
 * Describe a plain regular file's records where they lie in its mapping
 * (no read into buf at all), for a consumer that reads host memory at any
 * address until the reader is closed; buf is still used for what libpcap
 * reads. Without a mapping (pipes, compressed inputs), nothing changes.
 */
void gcap_capfile_use_map(struct gcap_capfile *cf, bool on);

/**
 * Fill a batch as gcap_capfile_fill() does, for a consumer that copies
 * each batch's bytes itself (into memory a device reads): the records'
 * bytes lie in one span of at most size bytes, from *span, *used bytes
 * long, and desc[i].addr - *span is where record i lies in a copy of it.
 * A mapped input (gcap_capfile_mapped()) is described in its mapping,
 * with nothing read or copied; any other, and the records libpcap reads
 * after damage, are read into buf, which is then the span.
 * @return as gcap_capfile_fill(); -E2BIG also for a record longer than
 *         size in the mapping.
 */
int gcap_capfile_fill_span(struct gcap_capfile *cf, uint8_t *buf, uint32_t size,
			   struct gcap_pkt *desc, uint64_t *raw, unsigned max,
			   uint32_t *used, const uint8_t **span);

/** A mapped plain pcap file handed out in spans (gcap_capfile_spans_begin). */
struct gcap_capfile_spans {
	const uint8_t *map; /**< the file's mapping */
	uint64_t first;     /**< file offset of its first record */
	uint64_t end;       /**< its length */
	uint32_t snap;      /**< the longest caplen a span takes: the file's
			     *   snapshot, at most GCAP_SPAN_CAPLEN_MAX */
	uint32_t flags;     /**< GCAP_SPAN_SWAP, GCAP_SPAN_NANO */
};

/** @return whether gcap_capfile_spans_begin() would hand cf out in spans
 *          (a mapped plain pcap file of which nothing was read yet). */
bool gcap_capfile_spans_ok(const struct gcap_capfile *cf);

/**
 * For a consumer that finds the records itself (the gpu executor's span
 * batches): whether cf is a mapped plain pcap file of which nothing was
 * read yet, and if so its mapping and format in *sp; its finding threads
 * end (nobody takes their lists). The reader hands out spans until
 * gcap_capfile_spans_done().
 * @return 0, or -ENOTSUP (pcapng, compressed, a pipe, not mapped, or read
 *         already): the input reads as before.
 */
int gcap_capfile_spans_begin(struct gcap_capfile *cf, struct gcap_capfile_spans *sp);

/**
 * The bytes up to file offset pos were copied out of the mapping: the
 * progress line's count, and the thread that maps pages in ahead moves
 * on.
 * @return the file's end as far as the mapping holds its bytes up to pos:
 *         less than sp->end once the file was cut short while it is read
 *         (the mapping has zeros past it).
 */
uint64_t gcap_capfile_spans_at(struct gcap_capfile *cf, uint64_t pos);

/**
 * The spans end at the record that starts at file offset pos (the end of
 * the file, or a record the consumer did not take): gcap_capfile_fill()
 * and _fill_span() read on from there as they would have read it.
 */
void gcap_capfile_spans_done(struct gcap_capfile *cf, uint64_t pos);

/** @return whether the input is a plain regular file with a mapping its
 *          records can be read from (not compressed, not a pipe, not yet
 *          handed to libpcap after damage). */
bool gcap_capfile_mapped(const struct gcap_capfile *cf);

/**
 * For a SIGBUS handler installed over the reader's (see above): offer it
 * the signal first. Async-signal-safe.
 * @return true when it was a read past the end of a mapped input cut short
 *         while it was read: the pages from there on now read zeros and
 *         the input ends at its new end, so the handler returns (the read
 *         runs again); false for any other signal or address.
 */
bool gcap_capfile_fault(int sig, const siginfo_t *si);

/** @return the message of the last error ("" if none). */
const char *gcap_capfile_errmsg(const struct gcap_capfile *cf);

/** @return bytes taken from the file so far (compressed: its bytes). */
uint64_t gcap_capfile_offset(const struct gcap_capfile *cf);

/** @return the file's size when it is a regular file, else 0. */
uint64_t gcap_capfile_size(const struct gcap_capfile *cf);

#ifdef __cplusplus
}
#endif

#endif /* GCAP_CAPFILE_H */
