/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pcapng format for the writer, as dumpcap and DPDK's rte_pcapng write
 * it: a section header (SHB: shb_hardware, shb_os, shb_userappl, the
 * capture comments), one
 * interface description (IDB: if_name, if_description, if_MACaddr,
 * if_speed, if_tsresol, if_tsoffset, if_filter, if_os, if_hardware,
 * if_fcslen, then the options carried from an input file; each where
 * known) per interface, an enhanced packet block (EPB; with epb_flags inbound and
 * epb_queue for a live capture) per record and, when a file closes, one
 * interface statistics block (ISB) per interface.
 */
#include <errno.h>

#include "writer_internal.h"

#define NG_SHB 0x0a0d0d0au
#define NG_IDB 0x00000001u
#define NG_ISB 0x00000005u
#define NG_EPB 0x00000006u
#define NG_BOM 0x1a2b3c4du
#define NG_OPT_END 0
#define NG_OPT_COMMENT 1
#define NG_SHB_HARDWARE 2
#define NG_SHB_OS 3
#define NG_SHB_USERAPPL 4
#define NG_IF_NAME 2
#define NG_IF_DESCRIPTION 3
#define NG_IF_MACADDR 6
#define NG_IF_SPEED 8
#define NG_IF_TSRESOL 9
#define NG_IF_FILTER 11
#define NG_IF_OS 12
#define NG_IF_FCSLEN 13
#define NG_IF_TSOFFSET 14
#define NG_IF_HARDWARE 15
#define NG_FCS_GIVEN 0x04000000u /* pcap link-type field: FCS length given */
#define NG_EPB_FLAGS 2
#define NG_EPB_QUEUE 6
#define NG_EPB_INBOUND 1u /* epb_flags bits 0-1: 01 = inbound */
#define NG_ISB_STARTTIME 2
#define NG_ISB_ENDTIME 3
#define NG_ISB_IFRECV 4
#define NG_ISB_IFDROP 5
#define NG_ISB_FILTERACCEPT 6
#define NG_ISB_OSDROP 7
#define NG_ISB_USRDELIV 8
#define NG_EPB_HDR_LEN 28u  /* type, len, if id, ts hi, ts lo, caplen, len */
#define NG_EPB_OPTS_LEN 20u /* epb_flags 8, epb_queue 8, end 4 */
#define NG_ISB_LEN 112u     /* 20 + 7 options of 12 + end 4 + trailer 4 */

static inline size_t
pad4(size_t n)
{
	return (n + 3u) & ~(size_t)3u;
}

static size_t
ng_opt_len(size_t vlen)
{
	return 4 + pad4(vlen);
}

static uint8_t *
ng_opt(uint8_t *p, uint16_t code, const void *v, size_t vlen)
{
	wr_put16(p, code);
	wr_put16(p + 2, (uint16_t)vlen);
	if (vlen > 0)
		memcpy(p + 4, v, vlen);
	memset(p + 4 + vlen, 0, pad4(vlen) - vlen);
	return p + ng_opt_len(vlen);
}

static uint8_t *
ng_opt_ts(uint8_t *p, uint16_t code, uint64_t ns)
{
	wr_put16(p, code);
	wr_put16(p + 2, 8);
	wr_put32(p + 4, (uint32_t)(ns >> 32));
	wr_put32(p + 8, (uint32_t)ns);
	return p + 12;
}

static uint8_t *
ng_opt_u64(uint8_t *p, uint16_t code, uint64_t v)
{
	wr_put16(p, code);
	wr_put16(p + 2, 8);
	wr_put64(p + 4, v);
	return p + 12;
}

/* Put a string option at p (where p is not NULL); @return its length. */
static size_t
ng_str(uint8_t *p, uint16_t code, const char *v)
{
	if (v == NULL)
		return 0;
	if (p != NULL)
		ng_opt(p, code, v, strlen(v));
	return ng_opt_len(strlen(v));
}

/* The SHB's options at p (p NULL: only their length). */
static size_t
ng_shb_opts(const struct gcap_writer *w, uint8_t *p)
{
	size_t n = 0;

	n += ng_str(p ? p + n : NULL, NG_SHB_HARDWARE, w->shb_hw);
	n += ng_str(p ? p + n : NULL, NG_SHB_OS, w->shb_os);
	n += ng_str(p ? p + n : NULL, NG_SHB_USERAPPL, w->app_name);
	for (unsigned i = 0; i < w->ncomments; i++)
		n += ng_str(p ? p + n : NULL, NG_OPT_COMMENT, w->comments[i]);
	if (n > 0) {
		if (p != NULL)
			ng_opt(p + n, NG_OPT_END, NULL, 0);
		n += 4;
	}
	return n;
}

static size_t
ng_shb_len(const struct gcap_writer *w)
{
	/* type, len, bom, version, section length, trailer */
	return 28 + ng_shb_opts(w, NULL);
}

/* Interface i's IDB options at p, opt_endofopt included (p NULL: only
 * their length). */
static size_t
ng_idb_opts(const struct gcap_writer *w, unsigned i, uint8_t *p)
{
	const struct gcap_wr_if *f = &w->ifs[i];
	uint8_t tsresol = f->out_res; /* 10^-out_res s (writer_ts.c) */
	size_t n = 0;

#define NG_AT (p != NULL ? p + n : NULL)
	n += ng_str(NG_AT, NG_IF_NAME, f->name);
	n += ng_str(NG_AT, NG_IF_DESCRIPTION, f->description);
	if (f->has_mac) {
		if (p != NULL)
			ng_opt(p + n, NG_IF_MACADDR, f->mac, 6);
		n += ng_opt_len(6);
	}
	if (f->speed != 0) {
		if (p != NULL)
			ng_opt_u64(p + n, NG_IF_SPEED, f->speed);
		n += 12;
	}
	if (p != NULL)
		ng_opt(p + n, NG_IF_TSRESOL, &tsresol, 1);
	n += ng_opt_len(1);
	if (f->ts_form == GCAP_TS_UNITS && f->tsoffset != 0) {
		if (p != NULL)
			ng_opt_u64(p + n, NG_IF_TSOFFSET, (uint64_t)f->tsoffset);
		n += 12;
	}
	if (f->filter != NULL) {
		size_t fl = strlen(f->filter);

		if (p != NULL) {
			/* first byte 0: a libpcap filter string */
			uint8_t *q = p + n;

			wr_put16(q, NG_IF_FILTER);
			wr_put16(q + 2, (uint16_t)(fl + 1));
			q[4] = 0;
			memcpy(q + 5, f->filter, fl);
			memset(q + 5 + fl, 0, pad4(fl + 1) - (fl + 1));
		}
		n += ng_opt_len(fl + 1);
	}
	n += ng_str(NG_AT, NG_IF_OS, f->os);
	n += ng_str(NG_AT, NG_IF_HARDWARE, f->hardware);
	if (f->fcs_bits & NG_FCS_GIVEN) {
		/* pcap's FCS length in 16-bit words, as bits */
		uint8_t bits = (uint8_t)(((f->fcs_bits >> 28) & 0xfu) * 16u);

		if (p != NULL)
			ng_opt(p + n, NG_IF_FCSLEN, &bits, 1);
		n += ng_opt_len(1);
	}
	if (f->opts_len > 0) {
		if (p != NULL) /* carried as read */
			memcpy(p + n, f->opts, f->opts_len);
		n += f->opts_len;
	}
	if (p != NULL)
		ng_opt(p + n, NG_OPT_END, NULL, 0);
#undef NG_AT
	return n + 4;
}

static size_t
ng_idb_len(const struct gcap_writer *w, unsigned i)
{
	/* type, len, linktype, reserved, snaplen, options, trailer */
	return 20 + ng_idb_opts(w, i, NULL);
}

static size_t
ng_hdr_len(const struct gcap_writer *w)
{
	size_t n = ng_shb_len(w);

	for (unsigned i = 0; i < w->nifs; i++)
		n += ng_idb_len(w, i);
	return n;
}

static uint8_t *
ng_put_shb(const struct gcap_writer *w, uint8_t *p)
{
	size_t len = ng_shb_len(w);

	wr_put32(p, NG_SHB);
	wr_put32(p + 4, (uint32_t)len);
	wr_put32(p + 8, NG_BOM);
	wr_put16(p + 12, 1);
	wr_put16(p + 14, 0);
	wr_put64(p + 16, UINT64_MAX); /* section length not given */
	p += 24;
	p += ng_shb_opts(w, p);
	wr_put32(p, (uint32_t)len);
	return p + 4;
}

static uint8_t *
ng_put_idb(const struct gcap_writer *w, unsigned i, uint8_t *p)
{
	size_t len = ng_idb_len(w, i);

	wr_put32(p, NG_IDB);
	wr_put32(p + 4, (uint32_t)len);
	wr_put16(p + 8, w->ifs[i].linktype);
	wr_put16(p + 10, 0);
	wr_put32(p + 12, w->hdr_snaplen);
	p += 16;
	p += ng_idb_opts(w, i, p);
	wr_put32(p, (uint32_t)len);
	return p + 4;
}

static void
ng_put_hdr(const struct gcap_writer *w, uint8_t *p)
{
	p = ng_put_shb(w, p);
	for (unsigned i = 0; i < w->nifs; i++)
		p = ng_put_idb(w, i, p);
}

/* An EPB's bytes before its data, at p: total is the block's length,
 * ts the time in the interface's units. */
static void
ng_epb_head(uint8_t *p, const struct gcap_rec *rec, uint64_t ts, uint32_t incl,
	    size_t total)
{
	wr_put32(p, NG_EPB);
	wr_put32(p + 4, (uint32_t)total);
	wr_put32(p + 8, rec->port);
	wr_put32(p + 12, (uint32_t)(ts >> 32));
	wr_put32(p + 16, (uint32_t)ts);
	wr_put32(p + 20, incl);
	wr_put32(p + 24, rec->wirelen);
}

/* An EPB's bytes after its data, at p: the data's padding to 4 (zeros),
 * the options, the length again. @return their length. */
static size_t
ng_epb_tail(const struct gcap_writer *w, const struct gcap_rec *rec, uint32_t incl,
	    size_t total, uint8_t *p)
{
	size_t dpad = pad4(incl) - incl;
	uint8_t *t = p + dpad;

	memset(p, 0, dpad);
	if (w->epb_rx) {
		uint32_t flags = NG_EPB_INBOUND, queue = rec->queue;

		t = ng_opt(t, NG_EPB_FLAGS, &flags, 4);
		t = ng_opt(t, NG_EPB_QUEUE, &queue, 4);
		t = ng_opt(t, NG_OPT_END, NULL, 0);
	}
	wr_put32(t, (uint32_t)total);
	return (size_t)(t + 4 - p);
}

static size_t
ng_epb_len(const struct gcap_writer *w, uint32_t incl)
{
	return NG_EPB_HDR_LEN + pad4(incl) + (w->epb_rx ? NG_EPB_OPTS_LEN : 0) + 4;
}

static int
ng_rec_frame(const struct gcap_writer *w, const struct gcap_rec *rec, uint64_t ts,
	     uint32_t incl, struct gcap_wr_frame *f)
{
	size_t total = ng_epb_len(w, incl);

	if (total > UINT32_MAX)
		return -EINVAL;
	/* ts: in the interface's units (writer_ts.c) */
	ng_epb_head(f->hdr, rec, ts, incl, total);
	f->hdr_len = NG_EPB_HDR_LEN;
	f->trl_len = ng_epb_tail(w, rec, incl, total, f->trl);
	return 0;
}

static size_t
ng_put_live(const struct gcap_writer *w, const struct gcap_rec *rec, uint32_t incl,
	    const void *data, uint8_t *p)
{
	/* the core checks a bad port on its general path */
	size_t total = ng_epb_len(w, incl);

	if (rec->port >= w->nifs)
		return 0;
	/* nanoseconds, or microseconds (if_tsresol 6): what gcap_wr_ts()
	 * makes of a live port's time */
	ng_epb_head(p, rec,
		    w->ifs[rec->port].out_res == 6 ? rec->ts_ns / 1000u : rec->ts_ns,
		    incl, total);
	memcpy(p + NG_EPB_HDR_LEN, data, incl);
	ng_epb_tail(w, rec, incl, total, p + NG_EPB_HDR_LEN + incl);
	return total;
}

static size_t
ng_item_len(const uint8_t *p, bool *is_rec)
{
	*is_rec = wr_get32(p) == NG_EPB;
	return wr_get32(p + 4);
}

static int
ng_put_isbs(struct gcap_writer *w, const struct gcap_writer_if_stats *stats, uint64_t end)
{
	for (unsigned i = 0; i < w->nifs; i++) {
		uint8_t b[NG_ISB_LEN], *p = b;
		struct iovec iov = { .iov_base = b, .iov_len = sizeof(b) };
		int rc;

		wr_put32(p, NG_ISB);
		wr_put32(p + 4, NG_ISB_LEN);
		/* times in the interface's units (writer_ts.c) */
		uint64_t e = gcap_wr_ns_units(w, i, end);

		wr_put32(p + 8, i);
		wr_put32(p + 12, (uint32_t)(e >> 32));
		wr_put32(p + 16, (uint32_t)e);
		p += 20;
		p = ng_opt_ts(p, NG_ISB_STARTTIME, gcap_wr_ns_units(w, i, w->start_ns));
		p = ng_opt_ts(p, NG_ISB_ENDTIME, e);
		p = ng_opt_u64(p, NG_ISB_IFRECV, stats[i].received);
		p = ng_opt_u64(p, NG_ISB_IFDROP, stats[i].dropped);
		p = ng_opt_u64(p, NG_ISB_FILTERACCEPT, stats[i].filter_accepted);
		p = ng_opt_u64(p, NG_ISB_OSDROP, stats[i].os_dropped);
		p = ng_opt_u64(p, NG_ISB_USRDELIV, w->ifs[i].nrec);
		p = ng_opt(p, NG_OPT_END, NULL, 0);
		wr_put32(p, NG_ISB_LEN);
		rc = gcap_wr_emit(w, &iov, 1, sizeof(b), false);
		if (rc != 0)
			return rc;
	}
	return 0;
}

const struct gcap_wr_fmt gcap_wr_pcapng = {
	.suffix = ".pcapng",
	.per_if = true,
	.ts_units = true,
	.check = NULL,
	.hdr_len = ng_hdr_len,
	.put_hdr = ng_put_hdr,
	.rec_frame = ng_rec_frame,
	.put_live = ng_put_live,
	.item_len = ng_item_len,
	.put_stats = ng_put_isbs,
};
