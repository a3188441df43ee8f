/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pcap format for the capture file reader: the 24-byte file header
 * (microsecond and nanosecond magics, either byte order, version 2.4) and
 * the 16-byte record header. A record is parsed here when libpcap would
 * hand it out as it is stored: whole, no longer than the file's snapshot
 * length (libpcap cuts or refuses longer ones), and of a link type whose
 * bytes libpcap leaves alone. Other variants (older versions, whose
 * lengths libpcap may swap; the modified magics) are libpcap's alone.
 */
#include <string.h>

#include "capfile_internal.h"

#define PCAP_MAGIC_US 0xa1b2c3d4u
#define PCAP_MAGIC_NS 0xa1b23c4du
#define PCAP_FHDR_LEN 24u
#define PCAP_RHDR_LEN 16u
#define DLT_USB_LINUX_MMAPPED_ 220 /* libpcap fixes its lengths up */
/* record headers in a row that a guessed record start must pass */
#define PLAUSIBLE_RUN 4u
/* the longest wire length a guessed record start may have */
#define PLAUSIBLE_WIRELEN 262144u

static size_t
pcap_header(struct gcap_capfile *cf, const uint8_t *p, size_t len)
{
	uint32_t magic, lt;
	bool swap;

	if (len < PCAP_FHDR_LEN)
		return 0;
	memcpy(&magic, p, 4);
	swap = magic == __builtin_bswap32(PCAP_MAGIC_US) ||
	       magic == __builtin_bswap32(PCAP_MAGIC_NS);
	if (swap)
		magic = __builtin_bswap32(magic);
	if (magic != PCAP_MAGIC_US && magic != PCAP_MAGIC_NS)
		return 0;
	/* the link-type field's upper bits (FCS length...), written back as
	 * they were, whoever reads the records */
	lt = cf_get32(p + 20, swap);
	cf->ifs[0].fcs_bits = lt & 0xffff0000u;
	/* records keep their own fields, whoever reads them */
	cf->ifs[0].ts_form = magic == PCAP_MAGIC_NS ? GCAP_TS_PCAP_NS : GCAP_TS_PCAP_US;
	if (cf_get16(p + 4, swap) != 2 || cf_get16(p + 6, swap) != 4)
		return 0;
	cf->nano = magic == PCAP_MAGIC_NS;
	cf->swapped = swap;
	if (cf->linktype == DLT_USB_LINUX_MMAPPED_ || (swap && !cf_swap_ok(cf->linktype)))
		return 0;
	if (gcap_cf_hdr_add(cf, p, PCAP_FHDR_LEN) < 0)
		return 0;
	return PCAP_FHDR_LEN;
}

static enum gcap_cf_step
pcap_step(struct gcap_capfile *cf, const uint8_t *p, size_t avail, struct gcap_pkt *d,
	  uint64_t *raw, size_t *adv, uint32_t *data_off)
{
	uint32_t caplen, sec, frac;

	*adv = 0;
	if (avail < PCAP_RHDR_LEN)
		return CF_MORE;
	caplen = cf_get32(p + 8, cf->swapped);
	/* libpcap cuts a record past the snapshot, and refuses one past the
	 * link type's largest even within it: libpcap's to say */
	if (caplen > cf->snapshot || caplen > cf_max_snaplen(cf->linktype))
		return CF_LIBPCAP;
	*adv = PCAP_RHDR_LEN + (size_t)caplen;
	if (avail < *adv)
		return CF_MORE;
	/* the fields as they are (GCAP_TS_PCAP_US or _NS), written back so;
	 * the time both unsigned, so that a large fraction moves nothing */
	sec = cf_get32(p, cf->swapped);
	frac = cf_get32(p + 4, cf->swapped);
	*raw = (uint64_t)sec << 32 | frac;
	d->ts_ns = (uint64_t)sec * 1000000000u + (uint64_t)frac * (cf->nano ? 1u : 1000u);
	d->caplen = caplen;
	d->wirelen = cf_get32(p + 12, cf->swapped);
	d->port = 0;
	*data_off = PCAP_RHDR_LEN;
	return CF_PKT;
}

/* A record start, as far as PLAUSIBLE_RUN headers in a row can say (or
 * fewer, ending where the mapping does): each within the snapshot length
 * and its wire length, a wire length of at least a byte and at most
 * libpcap's largest snapshot, a fraction under a second. Times are not
 * compared: merged captures jump years between neighbours. A run that
 * starts inside a header, its fields shifted by one, fails on the wire
 * length (a packet's first bytes read as a number). */
static bool
pcap_plausible(const struct gcap_capfile *cf, const uint8_t *p, size_t avail)
{
	const uint32_t frac_max = cf->nano ? 1000000000u : 1000000u;

	for (unsigned k = 0; k < PLAUSIBLE_RUN; k++) {
		if (avail == 0)
			return k > 0;
		if (avail < PCAP_RHDR_LEN)
			return false;
		uint32_t frac = cf_get32(p + 4, cf->swapped);
		uint32_t caplen = cf_get32(p + 8, cf->swapped);
		uint32_t wirelen = cf_get32(p + 12, cf->swapped);

		if (caplen > cf->snapshot || caplen > wirelen || wirelen == 0 ||
		    wirelen > PLAUSIBLE_WIRELEN || frac >= frac_max ||
		    avail - PCAP_RHDR_LEN < caplen)
			return false;
		p += PCAP_RHDR_LEN + caplen;
		avail -= PCAP_RHDR_LEN + caplen;
	}
	return true;
}

const struct gcap_cf_fmt gcap_cf_pcap = {
	.name = "pcap",
	.header = pcap_header,
	.step = pcap_step,
	.plausible = pcap_plausible,
};
