/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A mapped plain pcap file handed out in spans of its mapping to a
 * consumer that finds the records itself (-r on the gpu backend, records
 * found on the GPU), then read on by the reader from the record where
 * the spans ended. The reader's own state does not move while the spans
 * go out: a pcap file's step depends on its header alone.
 */
#include <errno.h>

#include "capfile_internal.h"
#include "gpucap/gcap_span.h"

bool
gcap_capfile_spans_ok(const struct gcap_capfile *cf)
{
	/* nothing read: neither from the mapping nor through the stream */
	return cf->fmt == &gcap_cf_pcap && cf->map != NULL && !cf->done &&
	       !cf->pop_tried && cf->map_pos == cf->hdr_len &&
	       cf->carry_pos == cf->hdr_len && cf->nifs == 1;
}

int
gcap_capfile_spans_begin(struct gcap_capfile *cf, struct gcap_capfile_spans *sp)
{
	if (!gcap_capfile_spans_ok(cf))
		return -ENOTSUP;
	gcap_cf_find_stop(cf);
	cf->find_nthr = 0; /* they found nothing anyone took */
	sp->map = cf->map;
	sp->first = cf->map_pos;
	sp->end = cf->map_len;
	sp->snap =
		cf->snapshot < GCAP_SPAN_CAPLEN_MAX ? cf->snapshot : GCAP_SPAN_CAPLEN_MAX;
	sp->flags =
		(cf->swapped ? GCAP_SPAN_SWAP : 0u) | (cf->nano ? GCAP_SPAN_NANO : 0u);
	cf->pop_tried = true;
	gcap_cf_pop_start(cf);
	return 0;
}

uint64_t
gcap_capfile_spans_at(struct gcap_capfile *cf, uint64_t pos)
{
	size_t whole =
		gcap_cf_map_whole(cf, pos < cf->map_len ? pos : cf->map_len, false);

	__atomic_store_n(&cf->src.raw_bytes, pos, __ATOMIC_RELAXED);
	gcap_cf_pop_reader_at(cf, pos);
	return whole == SIZE_MAX ? cf->map_len : whole;
}

void
gcap_capfile_spans_done(struct gcap_capfile *cf, uint64_t pos)
{
	cf->map_pos = pos < cf->map_len ? pos : cf->map_len;
	cf->use_map = true; /* the mapping is what is read from here on */
	__atomic_store_n(&cf->src.raw_bytes, cf->map_pos, __ATOMIC_RELAXED);
}
