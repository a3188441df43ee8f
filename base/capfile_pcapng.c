/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pcapng format for the capture file reader: the section header, the
 * interfaces (IDBs: link type, snapshot length, if_tsresol, if_tsoffset,
 * if_name; their other options are kept for the outputs), enhanced packet
 * blocks, and the blocks libpcap passes over (statistics, name
 * resolution, custom...). What libpcap treats specially or refuses goes
 * to it: a new section, simple and obsolete packet blocks, an interface
 * whose link type or snapshot length differs from the first's (libpcap
 * refuses it), binary or sub-nanosecond time resolutions, and every block
 * whose lengths do not agree. Its blocks can be found ahead of the
 * reader (capfile_find.c): the lengths at both ends of a block make a
 * guessed start testable.
 */
#include <stdlib.h>
#include <string.h>

#include "capfile_internal.h"

#define NG_SHB 0x0a0d0d0au
#define NG_IDB 0x00000001u
#define NG_PB 0x00000002u
#define NG_SPB 0x00000003u
#define NG_EPB 0x00000006u
#define NG_BOM 0x1a2b3c4du
#define NG_MAX_BLOCK (16u << 20) /* libpcap's first limit */
/* blocks in a row that a guessed block start must pass */
#define PLAUSIBLE_RUN 4u

enum {
	OPT_END = 0,
	OPT_IF_NAME = 2,
	OPT_IF_TSRESOL = 9,
	OPT_IF_FILTER = 11,
	OPT_IF_TSOFFSET = 14
};

/* Keep an option for the outputs' IDB: not those the writer writes
 * itself, nor the time's (the outputs' times are nanoseconds since the
 * epoch). */
static bool
opt_carried(uint16_t code)
{
	return code != OPT_IF_NAME && code != OPT_IF_TSRESOL && code != OPT_IF_FILTER &&
	       code != OPT_IF_TSOFFSET;
}

/* An IDB of len bytes at p: a new interface, or CF_LIBPCAP. */
static enum gcap_cf_step
idb_add(struct gcap_capfile *cf, const uint8_t *p, size_t len)
{
	const bool sw = cf->swapped;
	struct gcap_cf_if *ifc;
	uint32_t snap, lt;
	size_t o = 16;

	if (len < 20 || cf->nifs >= GCAP_CF_MAX_IFS || gcap_cf_ifs_grow(cf) < 0)
		return CF_LIBPCAP;
	lt = cf_get16(p + 8, sw);
	snap = cf_get32(p + 12, sw);
	/* The first interface is the one libpcap opened the file with: its
	 * snapshot length is libpcap's (cf->snapshot). A later one is
	 * libpcap's to take or refuse unless it agrees as libpcap 1.10
	 * checks it: the field adjusted as libpcap adjusts it (0 or past
	 * INT_MAX: the link type's largest) equal to the snapshot, and the
	 * link type's code equal to the first's DLT (so that libpcap refuses
	 * a second interface of a link type whose two numbers differ). */
	if (snap == 0 || snap > INT32_MAX)
		snap = cf_max_snaplen(cf->linktype);
	if (cf->nifs == 0)
		cf->ng_linktype = lt;
	else if (lt != cf->ng_linktype || lt != (uint32_t)cf->linktype ||
		 snap != cf->snapshot)
		return CF_LIBPCAP;
	ifc = &cf->ifs[cf->nifs];
	memset(ifc, 0, sizeof(*ifc));
	ifc->linktype = cf->linktype;
	ifc->units = 1000000u;
	ifc->scale = 1000u;
	ifc->ts_form = GCAP_TS_UNITS;
	ifc->tsresol = 6;
	if (!sw)
		ifc->opts = malloc(len);
	while (o + 4 <= len - 4) {
		uint16_t code = cf_get16(p + o, sw), olen = cf_get16(p + o + 2, sw);
		size_t plen = ((size_t)olen + 3u) & ~(size_t)3u;

		if (code == OPT_END)
			break;
		if (o + 4 + plen > len - 4)
			goto bad;
		const uint8_t *v = p + o + 4;

		if (code == OPT_IF_TSRESOL) {
			uint64_t u = 1;

			if (olen != 1 || (v[0] & 0x80) != 0 || v[0] > 9)
				goto bad;
			for (unsigned k = 0; k < v[0]; k++)
				u *= 10;
			ifc->units = u;
			ifc->scale = (uint32_t)(1000000000u / u);
			ifc->tsresol = v[0];
		} else if (code == OPT_IF_TSOFFSET) {
			uint64_t off;

			if (olen != 8)
				goto bad;
			memcpy(&off, v, 8);
			ifc->tsoffset = (int64_t)(sw ? __builtin_bswap64(off) : off);
		} else if (code == OPT_IF_NAME && ifc->name == NULL) {
			ifc->name = strndup((const char *)v, olen);
		}
		if (ifc->opts != NULL && opt_carried(code)) {
			memcpy(ifc->opts + ifc->opts_len, p + o, 4 + plen);
			ifc->opts_len += 4 + plen;
		}
		o += 4 + plen;
	}
	if (gcap_cf_hdr_add(cf, p, len) < 0)
		goto bad;
	cf->nifs++;
	return CF_SKIP;
bad:
	free(ifc->opts);
	free(ifc->name);
	memset(ifc, 0, sizeof(*ifc));
	return CF_LIBPCAP;
}

static enum gcap_cf_step
ng_step(struct gcap_capfile *cf, const uint8_t *p, size_t avail, struct gcap_pkt *d,
	uint64_t *raw, size_t *adv, uint32_t *data_off)
{
	const bool sw = cf->swapped;
	uint32_t type, len;

	*adv = 0;
	if (avail < 8)
		return CF_MORE;
	type = cf_get32(p, sw);
	len = cf_get32(p + 4, sw);
	if (type == NG_SHB || len < 12 || (len & 3u) != 0 || len > NG_MAX_BLOCK)
		return CF_LIBPCAP;
	*adv = len;
	if (avail < len)
		return CF_MORE;
	if (cf_get32(p + len - 4, sw) != len)
		return CF_LIBPCAP;
	switch (type) {
	case NG_EPB: {
		uint32_t ifid, caplen;
		uint64_t t;

		if (len < 32)
			return CF_LIBPCAP;
		ifid = cf_get32(p + 8, sw);
		caplen = cf_get32(p + 20, sw);
		if (ifid >= cf->nifs || caplen > len - 32 || caplen > cf->snapshot)
			return CF_LIBPCAP;
		const struct gcap_cf_if *ifc = &cf->ifs[ifid];

		t = (uint64_t)cf_get32(p + 12, sw) << 32 | cf_get32(p + 16, sw);
		*raw = t; /* GCAP_TS_UNITS: the count as it is */
		d->ts_ns = gcap_cf_ts_ns((int64_t)(t / ifc->units) + ifc->tsoffset,
					 t % ifc->units * ifc->scale);
		if (ifid >= cf->nifs_open && (ifc->units != cf->ifs[0].units ||
					      ifc->tsoffset != cf->ifs[0].tsoffset)) {
			/* an interface that came after the outputs opened is
			 * written as interface 0: the count in its units and
			 * offset, as libpcap's time is put in them (lp_ts) */
			const struct gcap_cf_if *f0 = &cf->ifs[0];
			int64_t sec = (int64_t)(t / ifc->units) + ifc->tsoffset;

			*raw = (uint64_t)(sec - f0->tsoffset) * f0->units +
			       t % ifc->units * ifc->scale / f0->scale;
		}
		d->caplen = caplen;
		d->wirelen = cf_get32(p + 24, sw);
		d->port = (uint16_t)(ifid < cf->nifs_open ? ifid : 0);
		*data_off = 28;
		return CF_PKT;
	}
	case NG_IDB: return cf->frozen ? CF_LIBPCAP : idb_add(cf, p, len);
	case NG_PB:
	case NG_SPB: return CF_LIBPCAP;
	default: return CF_SKIP; /* libpcap passes over it */
	}
}

/* A block start, as far as PLAUSIBLE_RUN blocks in a row can say (or
 * fewer, ending where the mapping does): a type of the specification
 * other than a section header, a length a multiple of 4 that the block's
 * trailer repeats, and for a packet an interface already known and a
 * captured length within the block. The trailer makes a wrong guess rare:
 * a length read from packet bytes must be found again where it points. */
static bool
ng_plausible(const struct gcap_capfile *cf, const uint8_t *p, size_t avail)
{
	const bool sw = cf->swapped;

	for (unsigned k = 0; k < PLAUSIBLE_RUN; k++) {
		if (avail == 0)
			return k > 0;
		if (avail < 12)
			return false;
		uint32_t type = cf_get32(p, sw), len = cf_get32(p + 4, sw);
		bool known = (type >= NG_IDB && type <= 0x0au) || type == 0x00000badu ||
			     type == 0x40000badu;

		/* a list never starts at an interface or an old packet block
		 * (the step ends it there) */
		if (k == 0 && type <= NG_SPB)
			return false;
		if (!known || len < 12 || (len & 3u) != 0 || len > NG_MAX_BLOCK ||
		    len > avail || cf_get32(p + len - 4, sw) != len)
			return false;
		if (type == NG_EPB && (len < 32 || cf_get32(p + 8, sw) >= cf->nifs ||
				       cf_get32(p + 20, sw) > len - 32))
			return false;
		p += len;
		avail -= len;
	}
	return true;
}

static size_t
ng_header(struct gcap_capfile *cf, const uint8_t *p, size_t len)
{
	uint32_t bom, blen;
	size_t off;

	if (len < 28)
		return 0;
	memcpy(&bom, p + 8, 4);
	if (bom != NG_BOM && bom != __builtin_bswap32(NG_BOM))
		return 0;
	cf->swapped = bom != NG_BOM;
	blen = cf_get32(p + 4, cf->swapped);
	if (cf_get16(p + 12, cf->swapped) != 1 || cf_get16(p + 14, cf->swapped) != 0 ||
	    blen > len || blen < 28 || (blen & 3u) != 0 ||
	    cf_get32(p + blen - 4, cf->swapped) != blen)
		return 0;
	if (cf->swapped && !cf_swap_ok(cf->linktype))
		return 0;
	if (gcap_cf_hdr_add(cf, p, blen) < 0)
		return 0;
	/* the interfaces before the first packet: the outputs describe them */
	off = blen;
	for (;;) {
		struct gcap_pkt d;
		uint64_t raw;
		size_t adv;
		uint32_t doff;
		uint32_t type = len - off >= 8 ? cf_get32(p + off, cf->swapped) : 0;

		if (type == NG_EPB ||
		    ng_step(cf, p + off, len - off, &d, &raw, &adv, &doff) != CF_SKIP)
			break;
		off += adv;
	}
	cf->nifs_open = cf->nifs;
	return off;
}

const struct gcap_cf_fmt gcap_cf_pcapng = {
	.name = "pcapng",
	.header = ng_header,
	.step = ng_step,
	.plausible = ng_plausible,
};
