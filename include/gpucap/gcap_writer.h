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

#include <stdbool.h>
#include <stdint.h>

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

/** One interface, i.e. one pcapng IDB (index = gcap_rec.port). */
struct gcap_writer_if {
	const char *name;  /**< if_name option, e.g. "net_pcap0" or "eth0" */
	int linktype;      /**< DLT_* */
};

/** Per-interface counters written into pcapng ISBs at close. */
struct gcap_writer_if_stats {
	uint64_t received; /**< isb_ifrecv */
	uint64_t dropped;  /**< isb_ifdrop */
	uint64_t filter_accepted; /**< isb_filteraccept */
};

/** What a writer is opened with. */
struct gcap_writer_conf {
	const char *path;        /**< file name, "-" for stdout */
	enum gcap_fmt fmt;
	uint32_t snaplen;        /**< records longer than this are cut */
	unsigned nifs;           /**< interfaces (>= 1) */
	const struct gcap_writer_if *ifs;
	uint64_t rotate_bytes;   /**< -C: new file once this many bytes (0: off) */
	uint32_t rotate_secs;    /**< -G: new file every this many seconds (0: off) */
	uint32_t max_files;      /**< -W: with -C, ring of files; with -G, stop after */
	const char *filter_expr; /**< recorded in the pcapng IDB (if_filter), may be NULL */
	const char *app_name;    /**< shb_userappl, may be NULL */
	bool flush_each;         /**< flush after every write call (-U) */
};

struct gcap_writer;

/**
 * Open a writer: creates (or truncates) the first file and writes its
 * header(s). Checks that the path is writable before returning.
 * @return the writer, or NULL with errno set and a one-line message in
 *         errbuf (EINVAL bad conf, EACCES/ENOENT/EISDIR/... from open).
 */
struct gcap_writer *gcap_writer_open(const struct gcap_writer_conf *conf,
				     char *errbuf);

/**
 * Append one record (header + caplen bytes at data).
 * @return 0; -ENOSPC/-EIO/... on a write error (the file stays valid up to
 *         its last whole record, further writes fail the same way);
 *         -ECANCELED once -W with -G has written its last file (done).
 */
int gcap_writer_write(struct gcap_writer *w, const struct gcap_rec *rec,
		      const void *data);

/**
 * Append every record of an export buffer whose outmask has bit `bit`.
 * @return records written (>= 0), or a negative errno as gcap_writer_write.
 */
int gcap_writer_write_buf(struct gcap_writer *w, const uint8_t *buf,
			  uint32_t len, unsigned bit);

/**
 * Called periodically with the current time (ns) so that -G rotates even
 * when no packet arrives. @return 0 or a negative errno.
 */
int gcap_writer_tick(struct gcap_writer *w, uint64_t now_ns);

/** Flush buffered records to the file. @return 0 or a negative errno. */
int gcap_writer_flush(struct gcap_writer *w);

/** Records and bytes written so far (all files). */
void gcap_writer_counts(const struct gcap_writer *w, uint64_t *records,
			uint64_t *bytes);

/**
 * Flush, write pcapng ISBs (stats may be NULL; else nifs entries), close.
 * The writer is freed in all cases. @return 0 or the first error seen.
 */
int gcap_writer_close(struct gcap_writer *w,
		      const struct gcap_writer_if_stats *stats, char *errbuf);

#ifdef __cplusplus
}
#endif

#endif /* GCAP_WRITER_H */
