/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The writer's times: what a record's ts_ns says for its interface (enum
 * gcap_ts_form: nanoseconds from a live port, or a capture file's own
 * fields), and how each format writes it. A file's fields go back as they
 * were where the output can hold them: a pcap input's seconds and
 * fraction, whatever their values, into a pcap output of its resolution;
 * a pcapng input's 64-bit count, with its resolution and offset, into a
 * pcapng output. Elsewhere the time is converted as libpcap converts it
 * (seconds and the fraction scaled; pcap keeps seconds modulo 2^32). A
 * live port's nanoseconds are written in the resolution ts_micro asks
 * for; with ts_override, so are a file's records (the user gave tcpdump's
 * --time-stamp-precision on -r).
 */
#include "writer_internal.h"

static const uint64_t pow10_[10] = {
	1u,      10u,      100u,      1000u,      10000u,
	100000u, 1000000u, 10000000u, 100000000u, 1000000000u,
};

static const struct gcap_wr_if *
rec_if(const struct gcap_writer *w, const struct gcap_rec *rec)
{
	return &w->ifs[rec->port < w->nifs ? rec->port : 0];
}

/* The record's time as seconds (64-bit, signed) and a fraction of 10^-res
 * s (res 6 or 9), from what its interface's form says. */
static void
split(unsigned form, unsigned tsresol, int64_t tsoffset, uint64_t ts, unsigned res,
      int64_t *sec, uint64_t *frac)
{
	uint64_t hi = ts >> 32, lo = (uint32_t)ts, units, fr;

	switch (form) {
	case GCAP_TS_PCAP_US:
	case GCAP_TS_PCAP_NS: {
		unsigned in = form == GCAP_TS_PCAP_US ? 6 : 9;

		if (in == res) {
			*sec = (int64_t)hi;
			*frac = lo;
			return;
		}
		/* another resolution: the fraction's whole seconds carried */
		*sec = (int64_t)(hi + lo / pow10_[in]);
		fr = lo % pow10_[in];
		*frac = in < res ? fr * pow10_[res - in] : fr / pow10_[in - res];
		return;
	}
	case GCAP_TS_UNITS:
		units = pow10_[tsresol];
		*sec = (int64_t)(ts / units) + tsoffset;
		fr = ts % units;
		*frac = tsresol < res ? fr * pow10_[res - tsresol] :
					fr / pow10_[tsresol - res];
		return;
	default:
		/* every record of a live port comes here: constant divisors
		 * (a multiply each), not a division by a table's entry */
		*sec = (int64_t)(ts / 1000000000u);
		fr = ts % 1000000000u;
		*frac = res == 9 ? fr : res == 6 ? fr / 1000u : fr / pow10_[9 - res];
		return;
	}
}

/* The resolution f's records hold as they are (pcapng: its own units;
 * pcap: 6 for a microsecond pcap input or a pcapng input of microseconds
 * or coarser, which microseconds hold as tcpdump -w writes them; else
 * 9). */
static unsigned
own_res(const struct gcap_writer *w, const struct gcap_wr_if *f)
{
	if (w->fmt->ts_units && f->ts_form == GCAP_TS_UNITS)
		return f->tsresol;
	if (f->ts_form == GCAP_TS_PCAP_US ||
	    (f->ts_form == GCAP_TS_UNITS && f->tsresol <= 6))
		return 6;
	return 9;
}

/* The resolution f's records are to be written in: a live port's, or
 * every record with ts_override, as ts_micro says; else their own. */
static unsigned
want_res(const struct gcap_writer *w, const struct gcap_wr_if *f)
{
	if (f->ts_form == GCAP_TS_NS || w->ts_override)
		return w->ts_micro ? 6 : 9;
	return own_res(w, f);
}

void
gcap_wr_ts_setup(struct gcap_writer *w)
{
	/* pcap: one resolution for the file, the finest its interfaces'
	 * records need (nothing is cut that the inputs held) */
	unsigned file_res = 6;

	for (unsigned i = 0; i < w->nifs; i++)
		if (want_res(w, &w->ifs[i]) > file_res)
			file_res = want_res(w, &w->ifs[i]);
	for (unsigned i = 0; i < w->nifs; i++)
		w->ifs[i].out_res =
			(uint8_t)(w->fmt->ts_units ? want_res(w, &w->ifs[i]) : file_res);
}

uint64_t
gcap_wr_ts(const struct gcap_writer *w, const struct gcap_rec *rec)
{
	const struct gcap_wr_if *f = rec_if(w, rec);
	int64_t sec;
	uint64_t frac;

	if (w->fmt->ts_units && f->out_res == own_res(w, f)) {
		/* pcapng: the count in the IDB's units (the input's own, or
		 * the pcap fields taken together: not moved, whatever the
		 * fraction) */
		if (f->ts_form == GCAP_TS_UNITS || f->ts_form == GCAP_TS_NS)
			return rec->ts_ns;
		return (rec->ts_ns >> 32) * pow10_[f->out_res] + (uint32_t)rec->ts_ns;
	}
	if (w->fmt->ts_units) {
		/* pcapng in another resolution (ts_micro, ts_override): the
		 * count scaled, if_tsoffset kept in the IDB */
		split(f->ts_form, f->tsresol, 0, rec->ts_ns, f->out_res, &sec, &frac);
		return (uint64_t)sec * pow10_[f->out_res] + frac;
	}
	if (f->ts_form == GCAP_TS_PCAP_US || f->ts_form == GCAP_TS_PCAP_NS) {
		/* pcap into pcap of another resolution, as libpcap scales a
		 * savefile's fields: the seconds kept, the fraction read as a
		 * signed 32-bit count and scaled toward zero, so that a damaged
		 * one is written as tcpdump writes it */
		int64_t fr = (int32_t)(uint32_t)rec->ts_ns;
		unsigned in = f->ts_form == GCAP_TS_PCAP_US ? 6 : 9;

		fr = in == f->out_res ? fr : in < f->out_res ? fr * 1000 : fr / 1000;
		return (rec->ts_ns & ~(uint64_t)UINT32_MAX) | (uint32_t)fr;
	}
	split(f->ts_form, f->tsresol, f->tsoffset, rec->ts_ns, w->ifs[0].out_res, &sec,
	      &frac);
	/* pcap: 32-bit fields, as libpcap's pcap_dump() writes them */
	return (uint64_t)(uint32_t)sec << 32 | (uint32_t)frac;
}

/* The instant in ns since the epoch: 0 before it, UINT64_MAX past 2554. */
static uint64_t
instant_ns(unsigned form, unsigned tsresol, int64_t tsoffset, uint64_t ts)
{
	int64_t sec;
	uint64_t frac;

	if (form == GCAP_TS_NS)
		return ts;
	split(form, tsresol, tsoffset, ts, 9, &sec, &frac);
	if (sec < 0)
		return 0;
	if ((uint64_t)sec > (UINT64_MAX - frac) / 1000000000u)
		return UINT64_MAX;
	return (uint64_t)sec * 1000000000u + frac;
}

uint64_t
gcap_wr_ts_ns(const struct gcap_writer *w, const struct gcap_rec *rec)
{
	const struct gcap_wr_if *f = rec_if(w, rec);

	return instant_ns(f->ts_form, f->tsresol, f->tsoffset, rec->ts_ns);
}

uint64_t
gcap_writer_ts_ns(const struct gcap_writer_if *wif, uint64_t ts)
{
	return instant_ns(wif->ts_form, wif->tsresol > 9 ? 9 : wif->tsresol,
			  wif->tsoffset, ts);
}

/* pcapng: ns since the epoch in interface i's units (ISB times). */
uint64_t
gcap_wr_ns_units(const struct gcap_writer *w, unsigned i, uint64_t ns)
{
	const struct gcap_wr_if *f = &w->ifs[i];
	uint64_t u = ns / pow10_[9 - f->out_res];
	int64_t off = f->ts_form == GCAP_TS_UNITS ? f->tsoffset : 0;
	uint64_t offu = (uint64_t)(off < 0 ? -off : off) * pow10_[f->out_res];

	if (off > 0)
		return u > offu ? u - offu : 0;
	return u + offu;
}
