/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers the writer suite's parts share: the test records, a temporary
 * directory per test, writer open/close that fail the test, read-back
 * with libpcap, a pcapng block parser (for what libpcap does not expose:
 * interface ids, IDB options, ISBs) and the external readers (tshark,
 * capinfos). Each part (test_<concern>.c) returns its check cases.
 */
#ifndef WT_UTIL_H
#define WT_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#include <check.h>
#include <pcap/pcap.h>

#include "gpucap/gcap_writer.h"

#define NS 1000000000ull
/* 2024-01-02 03:04:05 UTC */
#define T0 (1704164645ull * NS)
/* 100-byte records: 116 bytes each in pcap; header 24 */
#define R100 116

/* ---- test records ---- */

struct wt_rec {
	struct gcap_rec h;
	uint8_t data[1600];
};

/** Record i: its time, lengths, port (i % nifs) and bytes follow from i. */
void wt_mkrec(struct wt_rec *r, unsigned i, uint32_t caplen, unsigned nifs);

/** @return the caplen of record i in the varied sets. */
uint32_t wt_vlen(unsigned i);

/* ---- temporary directories ---- */

/** Local time is UTC from now on (names through strftime(3)). */
void wt_utc(void);

/** The test's directory, made by wt_setup, removed by wt_teardown. */
extern char wt_dir[64];

void wt_setup(void);
void wt_teardown(void);

/** @return wt_dir/name (one of 8 rotating buffers). */
char *wt_path(const char *name);
bool wt_exists(const char *p);
/** @return the size of p, -1 if it does not exist. */
long long wt_fsize(const char *p);
/** @return the number of entries in wt_dir. */
unsigned wt_count_files(void);

/** A check case with the wt_setup/wt_teardown fixture. */
TCase *wt_tcase(const char *name);

/* ---- writer helpers ---- */

extern struct gcap_writer_if wt_eth1[1];
extern struct gcap_writer_if wt_eth3[3];

/** Every configuration writes from the writer's thread (--behind). */
extern bool wt_behind;

/** @return a configuration: path, AUTO format, snaplen 65535, wt_eth1, T0,
 *  write_behind as wt_behind. */
struct gcap_writer_conf wt_conf1(const char *path);
/** Open, failing the test with the message if it fails. */
struct gcap_writer *wt_open(const struct gcap_writer_conf *c);
/** Close, failing the test with the message if it fails. */
void wt_close(struct gcap_writer *w, const struct gcap_writer_if_stats *st);
/** Write record i (100 bytes, one interface) stamped ts_ns. @return
 *  gcap_writer_write()'s. */
int wt_write_at(struct gcap_writer *w, unsigned i, uint64_t ts_ns);
/** Write records [first, first+n) of caplen bytes (0: varied). */
void wt_write_n(struct gcap_writer *w, unsigned first, unsigned n, uint32_t caplen,
		unsigned nifs);

/**
 * Read path with libpcap (nanosecond precision): it must hold exactly
 * the records ids[0..n) of caplen (0: varied; caplens[k] if given), cut
 * to snaplen, with link type dlt. @return records read.
 */
int wt_check_file_ids(const char *path, const unsigned *ids, int n, uint32_t caplen,
		      const uint32_t *caplens, uint32_t snaplen, int dlt);
/** wt_check_file_ids() for records first..first+n-1. */
int wt_check_file(const char *path, unsigned first, int n, uint32_t caplen,
		  uint32_t snaplen, int dlt);

/* ---- pcapng parsing ---- */

struct wt_ng {
	unsigned nshb, nidb, nepb, nisb, nother;
	char userappl[128];
	uint16_t linktype[8];
	uint32_t snaplen[8];
	char ifname[8][64];
	int tsresol[8];
	char filter[8][256];
	uint32_t epb_if[512];
	uint32_t isb_if[8];
	uint64_t isb_recv[8], isb_drop[8], isb_acc[8], isb_start[8], isb_end[8];
	bool isb_has_start[8], isb_has_end[8];
	/* the options a capture's metadata adds ("" / 0: absent) */
	char shb_os[128], shb_hw[128];
	char if_descr[8][128], if_os[8][128], if_hw[8][128];
	uint8_t if_mac[8][6];
	bool if_has_mac[8], if_has_filter[8];
	uint64_t if_speed[8];
	uint32_t epb_flags[512], epb_queue[512];
	unsigned epb_nopts[512];
	uint64_t epb_ts[512];
	uint64_t isb_osdrop[8], isb_usrdeliv[8];
};

uint16_t wt_rd16(const uint8_t *p);
uint32_t wt_rd32(const uint8_t *p);
uint64_t wt_rd64(const uint8_t *p);
/** Parse a whole pcapng file into ni, checking every block's framing. */
void wt_ng_parse(const char *path, struct wt_ng *ni);

/* ---- external readers ---- */

/** @return whether p is installed (else a note on stderr: check skipped). */
bool wt_have_tool(const char *p);
/**
 * tshark -r path: every frame's interface id and length. @return frames,
 * -1 if tshark failed.
 */
int wt_tshark_read(const char *path, unsigned *ifid, unsigned *len, int max);
/** capinfos: the value of one "Name: value" line, as a number. */
long wt_capinfos_num(const char *path, const char *opt, const char *key);

/* ---- the suite's parts ---- */

TCase *wt_tcase_pcap(void);
TCase *wt_tcase_pcapng(void);
TCase *wt_tcase_durability(void);
TCase *wt_tcase_export_buffers(void);
TCase *wt_tcase_stdout(void);
TCase *wt_tcase_rotation(void);
TCase *wt_tcase_names(void);
TCase *wt_tcase_open_errors(void);
TCase *wt_tcase_write_errors(void);
TCase *wt_tcase_metadata(void);
TCase *wt_tcase_write_calls(void);
TCase *wt_tcase_io_wait(void);

#endif /* WT_UTIL_H */
