/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The file path's spans (-r of one plain pcap file on the gpu backend,
 * records found on the GPU): the reader hands the executor spans of the
 * file's mapping, each copied into a slot's staging area by the copier's
 * threads, and never looks at a record; the executor finds, numbers,
 * filters and writes each span's records (gpu/span.c and its kernel).
 * Where the executor stops (a record the reader's own step would not
 * take: damage, a snapshot past GCAP_SPAN_CAPLEN_MAX, a file cut short)
 * the spans end: every span in flight is consumed, and the reader goes on
 * from that record by its own path (pipeline_file.c), so that the output
 * is what that path alone writes.
 */
#include <errno.h>
#include <stdatomic.h>
#include <time.h>

#include "gpucap/gcap_capfile.h"
#include "pipeline_internal.h"

/* the least bytes a span is cut to for the export memory's sake */
#define SPAN_MIN 65536u

/* Most record bytes a span's records make in the export buffer: each
 * record that starts in its first len bytes lies within its avail bytes
 * (16 bytes of header and caplen), and its export record is the caplen
 * padded to 8 and a 32-byte header, 23 bytes more than its file bytes at
 * most; 16-byte records are the most records len bytes can start. */
static uint64_t
span_rec_bytes(uint32_t len, uint32_t avail)
{
	return (uint64_t)avail + 23u * ((uint64_t)len / GCAP_SPAN_RHDR + 1u);
}

int
gcap_pl_file_run_spans(struct gcap_pipeline *pl, struct gcap_capfile *cf, bool *more)
{
	struct pl_queue *q = &pl->q[0];
	struct gcap_capfile_spans fs;
	struct pl_copier *cp;
	uint64_t off, end, index = 0;
	uint32_t each = 0;
	int r = 0, rd;

	*more = true;
	if (gcap_capfile_spans_begin(cf, &fs) < 0)
		return 0; /* not a file for spans: the reader's own path */
	if ((cp = gcap_pl_copier_start(pl->conf.file_copiers, &r)) == NULL)
		return r;
	q->span_stop = GCAP_SPAN_GOES_ON;
	off = fs.first;
	end = fs.end;
	while (off < end && q->span_stop == GCAP_SPAN_GOES_ON) {
		struct gcap_batch *b = gcap_pl_file_next(pl, q, &r);
		uint64_t have;
		uint32_t len, avail;

		if (b == NULL) {
			*more = false; /* stopped, or failed (r) */
			break;
		}
		if (each == 0) { /* the slots' staging size, known now */
			if (b->stage_size <= GCAP_SPAN_TAIL)
				break; /* no room for a span: the reader's own path */
			each = b->stage_size - GCAP_SPAN_TAIL;
			if (pl->conf.file_span_bytes != 0 &&
			    pl->conf.file_span_bytes < each)
				each = pl->conf.file_span_bytes;
			/* two spans' records at least in the export memory */
			while (each > SPAN_MIN &&
			       2 * span_rec_bytes(each, each + GCAP_SPAN_TAIL) >
				       q->xa.cap)
				each /= 2;
			if (2 * span_rec_bytes(each, each + GCAP_SPAN_TAIL) > q->xa.cap)
				break; /* the reader's own path */
		}
		avail = end - off < (uint64_t)each + GCAP_SPAN_TAIL ?
				(uint32_t)(end - off) :
				each + GCAP_SPAN_TAIL;
		uint64_t t0 = now_ns(CLOCK_MONOTONIC);

		gcap_pl_copier_post(cp, b->stage, fs.map + off, avail);
		gcap_pl_copier_wait(cp);
		STAT_ADD(q->st.file_wait_copy_ns, now_ns(CLOCK_MONOTONIC) - t0);
		/* a file cut while it is read: its bytes end where it did (the
		 * executor stops at the record across the cut) */
		have = gcap_capfile_spans_at(cf, off + avail);
		if (have < end)
			end = have;
		if (off >= end) { /* cut before this span: the reader says so */
			b->flags = 0;
			break;
		}
		if (off + avail > end)
			avail = (uint32_t)(end - off);
		len = avail < each ? avail : each;
		b->flags = GCAP_BATCH_SPAN;
		b->span.off = off;
		b->span.index = index;
		b->span.entry = fs.first;
		b->span.len = len;
		b->span.avail = avail;
		b->span.snap = fs.snap;
		b->span.flags = fs.flags;
		q->rec_bytes = (uint32_t)span_rec_bytes(len, avail);
		if ((r = gcap_pl_file_submit(pl, q)) < 0) {
			b->flags = 0; /* not submitted: the slot is the next path's */
			if (r == -ECANCELED) {
				r = 0;
				*more = false;
			}
			break;
		}
		off += len;
		index++;
		STAT_ADD(q->st.file_spans, 1);
	}
	gcap_pl_copier_stop(cp);
	/* every span consumed: the records numbered, where it stopped known */
	rd = gcap_pl_file_drain(pl, q);
	if (r == 0)
		r = rd;
	STAT_ADD(q->st.file_span_bytes, each);
	if (q->span_stop != GCAP_SPAN_GOES_ON)
		STAT_ADD(q->st.file_span_stop, q->span_stop);
	if (r == 0 && *more) {
		/* where the spans stopped (a record start), else where they
		 * ended: the file's end, or a cut before the next span, which
		 * the reader then finds and says */
		uint64_t at = q->span_stop != GCAP_SPAN_GOES_ON ? q->span_stop : off;

		if (at < fs.first || at > fs.end) {
			pl_set_error(pl, -EIO,
				     "the executor's spans ended outside the file");
			return -EIO;
		}
		gcap_capfile_spans_done(cf, at);
	}
	return r;
}
