/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pcap format for the writer: the file header (nanosecond magic, or
 * microsecond: ts_micro, or inputs of microseconds, see writer_ts.c)
 * and the 16-byte record header. pcap has one link type per file and no
 * interface ids, so it refuses interfaces of different link
 * types and ignores rec->port.
 */
#include <errno.h>

#include "writer_internal.h"

#define PCAP_MAGIC_NS 0xa1b23c4du
#define PCAP_MAGIC_US 0xa1b2c3d4u
#define PCAP_FHDR_LEN 24u
#define PCAP_RHDR_LEN 16u

static int
pcap_check(const struct gcap_writer_conf *c, char *errbuf)
{
	for (unsigned i = 1; i < c->nifs; i++)
		if (c->ifs[i].linktype != c->ifs[0].linktype)
			return gcap_err(errbuf, EINVAL,
					"writer: '%s': pcap has one link type, but "
					"interface %u has %d and interface 0 has %d "
					"(use pcapng)",
					c->path, i, c->ifs[i].linktype,
					c->ifs[0].linktype);
	return 0;
}

static size_t
pcap_hdr_len(const struct gcap_writer *w)
{
	(void)w;
	return PCAP_FHDR_LEN;
}

static void
pcap_put_hdr(const struct gcap_writer *w, uint8_t *p)
{
	/* the file's one resolution, the finest its interfaces need
	 * (writer_ts.c) */
	wr_put32(p, w->ifs[0].out_res == 6 ? PCAP_MAGIC_US : PCAP_MAGIC_NS);
	wr_put16(p + 4, 2);
	wr_put16(p + 6, 4);
	wr_put32(p + 8, 0);  /* thiszone */
	wr_put32(p + 12, 0); /* sigfigs */
	wr_put32(p + 16, w->hdr_snaplen);
	/* the link-type field as the input had it, FCS bits included */
	wr_put32(p + 20, w->ifs[0].linktype | (w->ifs[0].fcs_bits & 0xffff0000u));
}

/* The record header at p: ts is seconds << 32 | fraction. */
static void
pcap_put_rhdr(uint8_t *p, uint64_t ts, uint32_t incl, uint32_t wirelen)
{
	wr_put32(p, (uint32_t)(ts >> 32));
	wr_put32(p + 4, (uint32_t)ts);
	wr_put32(p + 8, incl);
	wr_put32(p + 12, wirelen);
}

static int
pcap_rec_frame(const struct gcap_writer *w, const struct gcap_rec *rec, uint64_t ts,
	       uint32_t incl, struct gcap_wr_frame *f)
{
	(void)w;
	/* seconds and fraction, as gcap_wr_ts() made them */
	pcap_put_rhdr(f->hdr, ts, incl, rec->wirelen);
	f->hdr_len = PCAP_RHDR_LEN;
	f->trl_len = 0;
	return 0;
}

static size_t
pcap_put_live(const struct gcap_writer *w, const struct gcap_rec *rec, uint32_t incl,
	      const void *data, uint8_t *p)
{
	/* what gcap_wr_ts() makes of nanoseconds: constant divisors */
	uint64_t sec = rec->ts_ns / GCAP_WR_NS_PER_SEC;
	uint32_t frac = (uint32_t)(rec->ts_ns % GCAP_WR_NS_PER_SEC);

	if (w->ifs[0].out_res == 6)
		frac /= 1000u;
	pcap_put_rhdr(p, (uint64_t)(uint32_t)sec << 32 | frac, incl, rec->wirelen);
	memcpy(p + PCAP_RHDR_LEN, data, incl);
	return PCAP_RHDR_LEN + (size_t)incl;
}

static size_t
pcap_item_len(const uint8_t *p, bool *is_rec)
{
	*is_rec = true; /* records are pcap's only items */
	return PCAP_RHDR_LEN + wr_get32(p + 8);
}

const struct gcap_wr_fmt gcap_wr_pcap = {
	.suffix = NULL, /* GCAP_FMT_AUTO's default */
	.per_if = false,
	.ts_units = false,
	.check = pcap_check,
	.hdr_len = pcap_hdr_len,
	.put_hdr = pcap_put_hdr,
	.rec_frame = pcap_rec_frame,
	.put_live = pcap_put_live,
	.item_len = pcap_item_len,
	.put_stats = NULL,
};
