/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared by the capture file reader's parts (base/capfile*.c): the byte
 * source (a file descriptor, through a decompressor chosen by the first
 * bytes: one table row per codec, one file each), the record formats
 * (pcap, pcapng: one table row each, one file each), and the reader's
 * state. The reader (capfile_open.c opens an input, capfile.c fills
 * buffers with its records) reaches a codec or a format only through its
 * row.
 *
 * How the formats and libpcap share the work: libpcap opens every input
 * (its checks and messages for the file header are tcpdump's), then a
 * format row parses the records in place, in the caller's buffer, as
 * long as each is one whose meaning is certain (libpcap would hand it out
 * unchanged). At the first record that is not (damage, an unusual block,
 * a truncated end), the rest of the input goes to a fresh libpcap handle
 * that reads the file header again and then the bytes from that record
 * on: damaged files end exactly as libpcap ends them.
 */
#ifndef GCAP_CAPFILE_INTERNAL_H
#define GCAP_CAPFILE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <pcap/pcap.h>

#include "gpucap/gcap_capfile.h"

/* ------------------------------------------------------------ sources */

struct gcap_cf_src;

/**
 * An independent piece of a compressed stream (a zstd frame, an lz4
 * block of a frame whose blocks are independent): decompressed by any
 * thread, without the pieces before it.
 */
struct gcap_cf_unit {
	uint8_t *in; /* its compressed bytes, owned by the unit */
	size_t in_len, in_cap;
	size_t out_max; /* the most bytes it gives */
	uint32_t kind;  /* the codec's: how to decode it */
	uint32_t check; /* the codec's: what the in-order check does */
	uint64_t sum;   /* the codec's: a checksum the unit carries */
	uint64_t size;  /* the codec's: a size the unit carries */
};

/** What a codec's cut found. */
enum gcap_cf_cut {
	CF_CUT_END = 0,    /**< the input's end */
	CF_CUT_UNIT = 1,   /**< a unit, in u */
	CF_CUT_SERIAL = 2, /**< what follows is one frame for serial() */
};

/** One codec: the bytes that start its streams, and its stream. */
struct gcap_cf_codec {
	const char *name; /**< "gzip", ... */
	uint8_t magic[4]; /**< the first bytes of its stream */
	size_t magic_len; /**< 0: matches anything (plain, last row) */
	/** Set up s->z. @return 0 or -errno with a message in errbuf. */
	int (*open)(struct gcap_cf_src *s, char *errbuf);
	/** Up to len decompressed bytes. @return bytes, 0 at the end, or
	 *  -errno with s->msg set. */
	ssize_t (*read)(struct gcap_cf_src *s, uint8_t *buf, size_t len);
	void (*close)(struct gcap_cf_src *s);
	/* Several threads (capfile_par.c); NULL where the stream never
	 * splits. cut() and serial() are called by one thread at a time, in
	 * stream order; decode() by any, with its thread's context. */
	/** The most threads worth running: past them the reader, which
	 *  copies the decoded bytes out, bounds the input. */
	unsigned par_max;
	/** The most bytes a unit holds compressed and gives decoded: what
	 *  one slot of the threads' ring takes (capfile_par.c). */
	size_t unit_in_max, unit_out_max;
	/** Cut the next unit, its bytes read into u->in (grown as needed).
	 *  @return enum gcap_cf_cut, or -errno with s->msg set. */
	int (*cut)(struct gcap_cf_src *s, struct gcap_cf_unit *u);
	/** After CF_CUT_SERIAL: up to len bytes of that frame, 0 at its end.
	 *  @return bytes, 0, or -errno with s->msg set. */
	ssize_t (*serial)(struct gcap_cf_src *s, uint8_t *buf, size_t len);
	/** A decoding thread's context (NULL: out of memory). */
	void *(*ctx_new)(void);
	void (*ctx_free)(void *ctx);
	/** Decompress u into out (u->out_max bytes of room).
	 *  @return bytes, or -errno with msg (len bytes) set. */
	ssize_t (*decode)(void *ctx, const struct gcap_cf_unit *u, uint8_t *out,
			  char *msg, size_t len);
	/** Optional: check the units' output in stream order (a frame's
	 *  checksum over all its units), by one thread at a time; its state
	 *  is apart from the cut's. @return 0 or -errno with msg (mlen
	 *  bytes) set. */
	int (*check)(struct gcap_cf_src *s, const struct gcap_cf_unit *u,
		     const uint8_t *out, size_t len, char *msg, size_t mlen);
};

extern const struct gcap_cf_codec gcap_cf_gzip;
extern const struct gcap_cf_codec gcap_cf_zstd;
extern const struct gcap_cf_codec gcap_cf_lz4;

/** The input's bytes: the file descriptor, through its codec. */
struct gcap_cf_src {
	int fd;
	bool own_fd;
	uint8_t head[8]; /* bytes read to find the codec, served first */
	size_t nhead, headpos;
	uint8_t *back; /* bytes a codec gave back, served next */
	size_t nback, backpos, backcap;
	uint64_t raw_bytes; /* bytes taken from the fd */
	const struct gcap_cf_codec *codec;
	void *z;                     /* the codec's state */
	struct gcap_cf_ahead *ahead; /* the codec's thread (capfile_ahead.c) */
	struct gcap_cf_par *par;     /* or its threads (capfile_par.c) */
	bool may_wait;               /* not a regular file: a read may wait for bytes */
	int stopped;    /* gcap_capfile_stop (atomic: a codec's thread reads it) */
	char msg[256];  /* what the codec and the reads say of an error */
	char rmsg[256]; /* the reader's copy, for the error of
			 * gcap_cf_src_read(): the codec's threads may still
			 * write msg */
};

/** Whether the source is a pipe whose next read would wait: no byte
 *  now, none held back. A codec returns what it decoded rather than read
 *  on then (a quiet pipe's records must not wait for the next bytes). */
bool gcap_cf_src_idle(const struct gcap_cf_src *s);
/** Decompress on a thread of its own from now on. @return 0 or -errno
 *  with a message in errbuf. */
int gcap_cf_ahead_start(struct gcap_cf_src *s, char *errbuf);
/** As a codec's read, from the thread's chunks. */
ssize_t gcap_cf_ahead_read(struct gcap_cf_src *s, uint8_t *buf, size_t len);
/** Stop and join the thread (none: nothing). */
void gcap_cf_ahead_stop(struct gcap_cf_src *s);

/** The codec whose stream starts with the n bytes at head (NULL: none,
 *  a plain file). */
const struct gcap_cf_codec *gcap_cf_codec_find(const uint8_t *head, size_t n);
/** The memory the decompressing thread takes (capfile_ahead.c). */
uint64_t gcap_cf_ahead_mem(void);
/** The memory n decompressing threads of codec k take at most, their
 *  ring's slots (capfile_par.c). */
uint64_t gcap_cf_par_mem(const struct gcap_cf_codec *k, unsigned n);

/** Decompress on n threads (n >= 2, the codec has cut()) from now on.
 *  @return 0 or -errno with a message in errbuf. */
int gcap_cf_par_start(struct gcap_cf_src *s, unsigned n, char *errbuf);
/** As a codec's read, from the threads' units in stream order. */
ssize_t gcap_cf_par_read(struct gcap_cf_src *s, uint8_t *buf, size_t len);
/** Stop and join the threads (none: nothing). */
void gcap_cf_par_stop(struct gcap_cf_src *s);
/** Units decoded on the threads and pieces of frames decoded serially
 *  so far. @return the threads. */
unsigned
gcap_cf_par_counts(const struct gcap_cf_src *s, uint64_t *units, uint64_t *pieces);

/** Up to len bytes from the fd (the head and given-back bytes first).
 *  @return bytes, 0 at the end, -errno. The codecs read their input
 *  through it. */
ssize_t gcap_cf_raw_read(struct gcap_cf_src *s, uint8_t *buf, size_t len);
/** Exactly len bytes (fewer only at the end). @return bytes or -errno. */
ssize_t gcap_cf_raw_full(struct gcap_cf_src *s, uint8_t *buf, size_t len);
/** Give n bytes back, to be read again before anything not yet read.
 *  @return 0 or -ENOMEM. */
int gcap_cf_unread(struct gcap_cf_src *s, const uint8_t *p, size_t n);
/** Room for n bytes in u->in. @return 0 or -ENOMEM. */
int gcap_cf_unit_room(struct gcap_cf_unit *u, size_t n);

/* ------------------------------------------------------------ formats */

/** What a format's parse step found at the bytes it was given. */
enum gcap_cf_step {
	CF_MORE = 0,     /**< a record starts here, not all of it is there */
	CF_PKT = 1,      /**< a packet: its descriptor filled */
	CF_SKIP = 2,     /**< a block to pass over (pcapng: statistics...) */
	CF_LIBPCAP = -1, /**< a record only libpcap may interpret */
};

/** One record format. */
struct gcap_cf_fmt {
	const char *name;
	/**
	 * Read the file header at p (len bytes, at least what libpcap took)
	 * into cf. @return the header's length (records follow), 0 when
	 * libpcap reads this file alone (an old or unusual variant).
	 */
	size_t (*header)(struct gcap_capfile *cf, const uint8_t *p, size_t len);
	/**
	 * The record at p (avail bytes): *adv gets its length (CF_PKT,
	 * CF_SKIP; CF_MORE: the length when known, else 0), d the packet
	 * (caplen, wirelen, ts_ns in ns, port = the input's interface; addr
	 * set by the caller), *raw its time fields (the interface's form).
	 * The finders call it on a frozen copy of cf (cf->frozen, its
	 * interfaces those known when they started): there it must change
	 * nothing, and returns CF_LIBPCAP for a record that would.
	 */
	enum gcap_cf_step (*step)(struct gcap_capfile *cf, const uint8_t *p, size_t avail,
				  struct gcap_pkt *d, uint64_t *raw, size_t *adv,
				  uint32_t *data_off);
	/**
	 * Does a record seem to start at p (avail bytes to the mapping's
	 * end)? Only a guess, for the finders (capfile_find.c): a wrong one
	 * costs time, never a record. NULL: the format's records are found
	 * by the reader alone.
	 */
	bool (*plausible)(const struct gcap_capfile *cf, const uint8_t *p, size_t avail);
};

extern const struct gcap_cf_fmt gcap_cf_pcap;
extern const struct gcap_cf_fmt gcap_cf_pcapng;

/** One input interface (pcap: the one; pcapng: an IDB). */
struct gcap_cf_if {
	int linktype;      /* DLT_* */
	uint32_t fcs_bits; /* pcap: the link-type field's upper bits */
	uint8_t ts_form;   /* enum gcap_ts_form of its records' ts_ns */
	uint8_t tsresol;   /* GCAP_TS_UNITS: decimal exponent */
	uint64_t units;    /* pcapng: timestamp units per second */
	uint32_t scale;    /* ns per unit */
	int64_t tsoffset;  /* pcapng if_tsoffset, seconds */
	char *name;        /* pcapng if_name, or NULL */
	uint8_t *opts;     /* options carried to the output (host order) */
	size_t opts_len;
};

#define GCAP_CF_MAX_IFS 65536u

struct gcap_capfile {
	struct gcap_cf_src src;
	char *path;
	pcap_t *p;                     /* opened on the header: filters compile on it */
	FILE *pf;                      /* p's stream */
	const struct gcap_cf_fmt *fmt; /* NULL: libpcap reads every record */
	pcap_t *lp;                    /* the handle reading records (p, or the
				       * one opened where the format stopped) */
	FILE *lpf;
	int linktype;
	uint32_t ng_linktype; /* pcapng: the first IDB's LINKTYPE_* */
	uint32_t snapshot;
	bool nano;    /* pcap: nanosecond fractions */
	bool swapped; /* the section's byte order is not the host's */
	bool swap_ok; /* swapped, and libpcap leaves this link type's bytes */
	struct gcap_cf_if *ifs;
	unsigned nifs, ifs_cap;
	unsigned nifs_open; /* interfaces known when the outputs opened */
	/* the file header as read (pcap) or the section's SHB and IDBs
	 * (pcapng): what a libpcap handle opened mid-file reads first */
	uint8_t *hdr;
	size_t hdr_len, hdr_cap;
	/* bytes read but not yet parsed: at open what libpcap's header
	 * read took (pos: how far libpcap got), later a partial record */
	uint8_t *carry;
	size_t carry_len, carry_cap, carry_pos;
	/* the replay stream of a handle opened mid-file */
	uint8_t *replay;
	size_t replay_len, replay_pos;
	bool src_eof;
	bool recording; /* libpcap's header read: keep what it reads */
	bool own_p;
	bool done;
	int err;     /* what ended the input (after its last records) */
	int src_err; /* the source's error, after the batch that read up to it */
	/* libpcap's record that the last batch had no room for */
	bool pend;
	struct pcap_pkthdr pend_h;
	const u_char *pend_data;
	uint64_t size; /* a regular file's size, else 0 */
	/* a plain regular file, mapped: records described where they lie
	 * in the page cache (for readers whose consumer reads host memory) */
	const uint8_t *map;
	size_t map_len, map_pos; /* map_pos: the next record */
	size_t map_rd;           /* a mid-file libpcap handle's next byte */
	bool use_map;
	bool pop_tried;            /* its populating thread's start was tried */
	struct gcap_cf_pop *pop;   /* it (capfile_populate.c), or NULL */
	unsigned finders;          /* threads finding records ahead (conf) */
	bool frozen;               /* a finder's copy: the step changes nothing */
	struct gcap_cf_find *find; /* them (capfile_find.c), or NULL */
	/* what they did, once stopped (gcap_cf_find_stats) */
	unsigned find_nthr;
	uint64_t find_joined, find_listed, find_stepped;
	uint64_t avg_rec;            /* bytes per record, moving average */
	struct gcap_cf_guard *guard; /* the mapping's (capfile_guard.c) */
	bool shrank; /* the file shrank under the mapping: cf->msg says so */
	char msg[PCAP_ERRBUF_SIZE + 64];
};

/* ---------------------------------------------- capfile.c */

/** Where the mapping stops holding the file's bytes, the file having
 *  shrunk while it was read (capfile_guard.c maps zeros past its new
 *  end): SIZE_MAX while it holds them, as far as the bytes up to pos can
 *  tell. Whole, that is a probe and a load; the size is asked (fstat)
 *  only once the guard saw a cut, in the mapping's last page (a cut there
 *  faults nowhere), or where ask says. */
size_t gcap_cf_map_whole(struct gcap_capfile *cf, size_t pos, bool ask);
/** The input's next bytes (through the codec, or its threads once they
 *  run). @return bytes, 0 at the end, or -errno with s->rmsg set. */
ssize_t gcap_cf_src_read(struct gcap_cf_src *s, uint8_t *buf, size_t len);
/** The stream libpcap reads cf through: the replay bytes first, then the
 *  carry (while cf->recording, what the source gives is kept in the carry
 *  too), then the mapping or the source. @return it, or NULL with errno
 *  set. */
FILE *gcap_cf_ck_open(struct gcap_capfile *cf);

/* ---------------------------------------------- capfile_populate.c */

struct gcap_cf_pop;
/** Start mapping cf's pages in ahead of the reader (nothing when the
 *  thread cannot start: the reader then takes its own faults). */
void gcap_cf_pop_start(struct gcap_capfile *cf);
/** The reader is at pos of the mapping (cheap: acts once per chunk). */
void gcap_cf_pop_reader_at(struct gcap_capfile *cf, size_t pos);
/** End the thread (before the mapping goes). NULL pop: no-op. */
void gcap_cf_pop_stop(struct gcap_capfile *cf);

/* ---------------------------------------------- capfile_guard.c */

struct gcap_cf_guard;
/** Guard the mapping [map, map + len) of a file that may be cut short
 *  while it is read (the SIGBUS handler is installed at the first call).
 *  @return its guard, or NULL (no slot left, or no handler): the caller
 *  then reads the file without mapping it. */
struct gcap_cf_guard *gcap_cf_guard_add(const void *map, size_t len);
/** Guard the mapping no more (before it is unmapped). NULL: no-op. */
void gcap_cf_guard_del(struct gcap_cf_guard *g);
/** Whether the file was cut as far as the bytes up to pos can tell: the
 *  mapping's first page boundary at or past pos is read (a cut before it
 *  faults there), then the mark. *last: no boundary is left before the
 *  mapping's end (a cut within its last page faults nowhere: ask the
 *  file's size). @return the offset from which the mapping reads zeros,
 *  SIZE_MAX while it reads the file. One load and a fence: once per
 *  batch. */
size_t gcap_cf_guard_probe(const struct gcap_cf_guard *g, size_t pos, bool *last);

/* ---------------------------------------------- capfile_find.c */

struct gcap_cf_find;
/** The memory finders threads take for a mapped file of size bytes (0:
 *  none would start). */
uint64_t gcap_cf_find_mem(uint64_t size, unsigned finders);
/** Start finders threads finding records ahead of the reader, where the
 *  format can guess record starts and the mapping is large enough
 *  (nothing when none can start: the reader finds every record). */
void gcap_cf_find_start(struct gcap_capfile *cf, unsigned finders);
/** A record a finder listed: as the format's step gives it (d's addr set;
 *  its queue and seq not), and where it starts in the mapping. */
struct gcap_cf_ent {
	struct gcap_pkt d;
	uint64_t raw;
	uint64_t pos;
};
/** The records listed from pos on, when a finder listed pos from a record
 *  start the reader reached: *e the first, *end the byte after the last.
 *  @return how many (0: the reader steps the record at pos itself). */
unsigned gcap_cf_find_run(struct gcap_capfile *cf, size_t pos,
			  const struct gcap_cf_ent **e, size_t *end);
/** The first k records of the last run were used (the rest are left for
 *  the next batch). */
void gcap_cf_find_used(struct gcap_capfile *cf, unsigned k);
/** @return the finders (0: none), with the chunks whose lists the reader
 *  joined at their first record, the chunks listed so far, and the
 *  records the reader stepped itself (joined and stepped: the reader's
 *  thread only). */
unsigned gcap_cf_find_stats(const struct gcap_capfile *cf, uint64_t *joined,
			    uint64_t *listed, uint64_t *stepped);
/** End the threads, keeping their counts (before the mapping goes, and
 *  when libpcap takes the records over). NULL find: no-op. */
void gcap_cf_find_stop(struct gcap_capfile *cf);

/** Room for n more interfaces' entries. @return 0 or -ENOMEM. */
int gcap_cf_ifs_grow(struct gcap_capfile *cf);
/** Append n bytes at p to the growable buffer *b (*len used, *cap
 *  allocated). @return 0 or -ENOMEM. */
int gcap_cf_buf_add(uint8_t **b, size_t *len, size_t *cap, const uint8_t *p, size_t n);
/** Append len bytes to the header kept for a mid-file libpcap handle. */
int gcap_cf_hdr_add(struct gcap_capfile *cf, const uint8_t *p, size_t len);
/** sec seconds and frac_ns as ns since the epoch (0 before it,
 *  UINT64_MAX past the year 2554). */
uint64_t gcap_cf_ts_ns(int64_t sec, uint64_t frac_ns);

static inline uint16_t
cf_bswap16(uint16_t v)
{
	return (uint16_t)((v >> 8) | (v << 8));
}

static inline uint32_t
cf_get32(const uint8_t *p, bool swap)
{
	uint32_t v;

	__builtin_memcpy(&v, p, 4);
	return swap ? __builtin_bswap32(v) : v;
}

/** A little-endian 32-bit field (the codecs' headers). */
static inline uint32_t
cf_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/**
 * A streaming decoder's error after done bytes of the call: those are
 * handed out first and *pending keeps the error for the next call (so
 * that one thread hands out what precedes damage, as the units do).
 * @return what the call returns.
 */
static inline ssize_t
cf_fail(int *pending, size_t done, int err)
{
	if (done == 0)
		return err;
	*pending = err;
	return (ssize_t)done;
}

static inline uint16_t
cf_get16(const uint8_t *p, bool swap)
{
	uint16_t v;

	__builtin_memcpy(&v, p, 2);
	return swap ? cf_bswap16(v) : v;
}

/** libpcap's largest caplen for a link type (max_snaplen_for_dlt). */
static inline uint32_t
cf_max_snaplen(int dlt)
{
	switch (dlt) {
	case 231: return 128u * 1024u * 1024u; /* DLT_DBUS */
	case 279: return 8u * 1024u * 1024u;   /* DLT_EBHSCR */
	case 249: return 1024u * 1024u;        /* DLT_USBPCAP */
	default: return 262144u;
	}
}

/** Link types whose bytes libpcap hands out unchanged from a file of the
 *  other byte order (it swaps pseudo-headers of some others). */
static inline bool
cf_swap_ok(int dlt)
{
	return dlt == 1 || dlt == 12 || dlt == 14 || dlt == 101 || dlt == 228 ||
	       dlt == 229;
}

#endif /* GCAP_CAPFILE_INTERNAL_H */
