/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A mapped input's records found ahead of the reader by several threads.
 * Finding a record needs the one before it (its length says where the
 * next begins), so one thread walks the file and bounds -r once the
 * filtering is spread; the walk is bound by memory, one record header per
 * cache line or two, and a second core walks as fast again.
 *
 * The mapping is cut into chunks of FIND_CHUNK bytes. A finder takes the
 * next chunk, guesses where its first record starts (the format's
 * plausibility test on a few headers in a row; the first chunk starts
 * where the records do), walks from there with the format's own step to
 * the first record starting past the chunk, and lists what it found. The
 * guess may be wrong: the reader takes a chunk's list only from a record
 * start it reached itself (from the file's first record, through the
 * lists it took and its own steps), and the list from there on is what
 * its own walk would find, record for record: the step from a record
 * start depends only on what the file said before (the byte order, the
 * snapshot, pcapng's interfaces). The finders step with a frozen copy of
 * the reader's state as it was when they started; a pcapng interface
 * block, which would change it, ends a list, and the packets of the
 * interfaces it adds are the reader's to find. Where no list has the
 * reader's position (a wrong guess, a list cut short, a record the step does not
 * take: damage, the end, a record longer than the snapshot) the reader
 * steps itself, as without finders, so every input reads as before.
 *
 * At most FIND_RING chunks are found ahead of the reader, each list in the
 * slot of its chunk number modulo FIND_RING; a slot is taken again only
 * once the reader is past its chunk and its list is out (a finder that
 * stalled must not be lapped). The reader tells the finders its chunk as
 * it enters one, and a finder the others its slot as it is done (a lock
 * and a wake-up per megabyte, none per record).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "gpucap/gcap_thread.h"
#include "capfile_internal.h"

/* a chunk: a megabyte (the fuzz target builds it smaller) */
#ifndef GCAP_CF_FIND_SHIFT
#define GCAP_CF_FIND_SHIFT 20u
#endif
#define FIND_SHIFT GCAP_CF_FIND_SHIFT
#define FIND_CHUNK (1u << FIND_SHIFT)
/* chunks found ahead of the reader at most: a power of two */
#define FIND_RING 16u
/* records a chunk's list holds: records of 64 bytes or more fill a
 * chunk; smaller ones end the list early and the reader steps the rest */
#define FIND_ENTRIES (FIND_CHUNK / 64u)
/* how far into a chunk its first record is looked for */
#define FIND_SCAN (FIND_CHUNK / 4u)

struct find_chunk {
	_Atomic uint64_t done; /* chunk number + 1 once the list is out */
	bool busy;             /* a finder is writing it (under lock) */
	unsigned n;
	uint64_t end; /* after the last record listed */
	struct gcap_cf_ent *e;
};

struct gcap_cf_find {
	struct gcap_capfile *cf;  /* the reader's */
	struct gcap_capfile view; /* what the finders step with: cf as it
				   * was at their start, its interfaces copied */
	size_t base;              /* the first record (chunk 0 starts there) */
	uint64_t nchunks;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t next;           /* the next chunk to find (under lock) */
	uint64_t reader;         /* the reader's chunk (under lock) */
	bool stop;               /* under lock */
	uint64_t told;           /* the reader's chunk as last told (reader only) */
	struct find_chunk *cur;  /* the list being taken (reader only) */
	unsigned ci;             /* its next entry */
	uint64_t skip;           /* the list of the reader's chunk has no record
				 * start from the reader's position up to this
				 * (reader only) */
	_Atomic uint64_t listed; /* chunks whose lists are out */
	uint64_t joined;         /* lists taken from their first record on */
	uint64_t stepped;        /* records the reader stepped itself */
	unsigned nthr;
	pthread_t thr[GCAP_CAPFILE_FINDERS_MAX];
	struct find_chunk ring[FIND_RING];
};

/* Find chunk c's records into ch. */
static void
find_chunk(struct gcap_cf_find *f, uint64_t c, struct find_chunk *ch)
{
	const struct gcap_capfile *cf = &f->view;
	size_t from = f->base + (size_t)(c << FIND_SHIFT);
	size_t to = from + FIND_CHUNK < cf->map_len ? from + FIND_CHUNK : cf->map_len;
	size_t pos = from, scan = from + FIND_SCAN < to ? from + FIND_SCAN : to;
	unsigned n = 0;

	if (c > 0) {
		while (pos < scan &&
		       !cf->fmt->plausible(cf, cf->map + pos, cf->map_len - pos))
			pos++;
		if (pos == scan)
			pos = to; /* nothing listed: the reader steps */
	}
	while (pos < to && n < FIND_ENTRIES) {
		struct gcap_cf_ent *e = &ch->e[n];
		size_t adv = 0;
		uint32_t doff = 0;

		/* frozen: the step writes nothing to it */
		enum gcap_cf_step st =
			cf->fmt->step((struct gcap_capfile *)cf, cf->map + pos,
				      cf->map_len - pos, &e->d, &e->raw, &adv, &doff);

		if (st == CF_SKIP) {
			/* the reader passes over it too: the next entry's
			 * position says where its walk goes on */
			pos += adv;
			continue;
		}
		if (st != CF_PKT)
			break;
		e->d.addr = (uint64_t)(uintptr_t)(cf->map + pos + doff);
		e->pos = pos;
		n++;
		pos += adv;
	}
	ch->n = n;
	ch->end = pos;
}

static void *
find_main(void *arg)
{
	struct gcap_cf_find *f = arg;

	for (;;) {
		uint64_t c;

		pthread_mutex_lock(&f->lock);
		/* chunks the reader passed are not worth listing */
		if (f->next < f->reader)
			f->next = f->reader;
		/* the slot's last chunk must be behind the reader, and its
		 * list out: a finder that stalled may still be writing it */
		while (!f->stop && f->next < f->nchunks &&
		       (f->next >= f->reader + FIND_RING ||
			f->ring[f->next % FIND_RING].busy)) {
			pthread_cond_wait(&f->cond, &f->lock);
			if (f->next < f->reader)
				f->next = f->reader;
		}
		if (f->stop || f->next >= f->nchunks) {
			pthread_mutex_unlock(&f->lock);
			return NULL;
		}
		c = f->next++;
		struct find_chunk *ch = &f->ring[c % FIND_RING];

		ch->busy = true;
		pthread_mutex_unlock(&f->lock);
		find_chunk(f, c, ch);
		atomic_store_explicit(&ch->done, c + 1, memory_order_release);
		atomic_fetch_add_explicit(&f->listed, 1, memory_order_relaxed);
		pthread_mutex_lock(&f->lock);
		ch->busy = false;
		pthread_cond_broadcast(&f->cond);
		pthread_mutex_unlock(&f->lock);
	}
}

/* a smaller file is found before threads would start */
#define FIND_MIN (4u * FIND_CHUNK)

uint64_t
gcap_cf_find_mem(uint64_t size, unsigned finders)
{
	if (finders == 0 || size < FIND_MIN)
		return 0;
	return sizeof(struct gcap_cf_find) +
	       (uint64_t)FIND_RING * FIND_ENTRIES * sizeof(struct gcap_cf_ent);
}

void
gcap_cf_find_start(struct gcap_capfile *cf, unsigned finders)
{
	struct gcap_cf_find *f;
	size_t left = cf->map_len - cf->map_pos;

	if (finders > GCAP_CAPFILE_FINDERS_MAX)
		finders = GCAP_CAPFILE_FINDERS_MAX;
	if (cf->find != NULL || cf->map == NULL || cf->fmt->plausible == NULL ||
	    finders < 1 || left < FIND_MIN || (f = calloc(1, sizeof(*f))) == NULL)
		return;
	f->cf = cf;
	f->view = *cf;
	f->view.frozen = true;
	/* what the reader frees or moves: a step that read it would fault
	 * here rather than race */
	f->view.find = NULL;
	f->view.pop = NULL;
	f->view.guard = NULL;
	f->view.path = NULL;
	f->view.p = f->view.lp = NULL;
	f->view.pf = f->view.lpf = NULL;
	f->view.hdr = f->view.carry = NULL;
	f->view.replay = NULL;
	memset(&f->view.src, 0, sizeof(f->view.src));
	f->view.ifs = malloc((cf->nifs > 0 ? cf->nifs : 1) * sizeof(*cf->ifs));
	if (f->view.ifs == NULL) {
		free(f);
		return;
	}
	memcpy(f->view.ifs, cf->ifs, cf->nifs * sizeof(*cf->ifs));
	f->view.ifs_cap = cf->nifs;
	f->base = cf->map_pos;
	f->nchunks = (left + FIND_CHUNK - 1) >> FIND_SHIFT;
	for (unsigned i = 0; i < FIND_RING; i++)
		if ((f->ring[i].e = malloc(FIND_ENTRIES * sizeof(struct gcap_cf_ent))) ==
		    NULL)
			goto fail;
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->cond, NULL);
	for (; f->nthr < finders; f->nthr++) {
		if (gcap_thread_start(&f->thr[f->nthr], NULL, find_main, f) != 0)
			break;
		pthread_setname_np(f->thr[f->nthr], "gcap-find"); /* for top -H */
	}
	if (f->nthr == 0) {
		pthread_cond_destroy(&f->cond);
		pthread_mutex_destroy(&f->lock);
		goto fail;
	}
	cf->find = f;
	return;
fail:
	for (unsigned i = 0; i < FIND_RING; i++)
		free(f->ring[i].e);
	free(f->view.ifs);
	free(f);
}

/* The reader entered chunk c: the finders may reuse the slots before it. */
static void
reader_in(struct gcap_cf_find *f, uint64_t c)
{
	f->told = c;
	f->cur = NULL;
	f->skip = 0;
	pthread_mutex_lock(&f->lock);
	f->reader = c;
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
}

unsigned
gcap_cf_find_run(struct gcap_capfile *cf, size_t pos, const struct gcap_cf_ent **e,
		 size_t *end)
{
	struct gcap_cf_find *f = cf->find;
	struct find_chunk *ch;
	uint64_t c;

	if (pos < f->base)
		return 0;
	c = (pos - f->base) >> FIND_SHIFT;
	if (c != f->told)
		reader_in(f, c);
	ch = f->cur;
	if (ch == NULL || f->ci >= ch->n || ch->e[f->ci].pos != pos) {
		/* join chunk c's list where it has pos, if it is out */
		struct find_chunk *k = &f->ring[c % FIND_RING];
		unsigned lo = 0, hi;

		f->cur = NULL;
		if (pos < f->skip ||
		    atomic_load_explicit(&k->done, memory_order_acquire) != c + 1) {
			f->stepped++;
			return 0;
		}
		hi = k->n;
		while (lo < hi) {
			unsigned mid = (lo + hi) / 2;

			if (k->e[mid].pos < pos)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == k->n || k->e[lo].pos != pos) {
			/* a guess that the reader's walk has not met (yet) */
			f->skip = lo < k->n ? k->e[lo].pos : UINT64_MAX;
			f->stepped++;
			return 0;
		}
		if (lo == 0)
			f->joined++;
		f->cur = ch = k;
		f->ci = lo;
	}
	*e = &ch->e[f->ci];
	*end = ch->end;
	return ch->n - f->ci;
}

void
gcap_cf_find_used(struct gcap_capfile *cf, unsigned k)
{
	cf->find->ci += k;
}

unsigned
gcap_cf_find_stats(const struct gcap_capfile *cf, uint64_t *joined, uint64_t *listed,
		   uint64_t *stepped)
{
	struct gcap_cf_find *f = cf->find;

	if (f == NULL) {
		*joined = cf->find_joined;
		*listed = cf->find_listed;
		*stepped = cf->find_stepped;
		return cf->find_nthr;
	}
	*joined = f->joined;
	*listed = atomic_load_explicit(&f->listed, memory_order_relaxed);
	*stepped = f->stepped;
	return f->nthr;
}

void
gcap_cf_find_stop(struct gcap_capfile *cf)
{
	struct gcap_cf_find *f = cf->find;

	if (f == NULL)
		return;
	pthread_mutex_lock(&f->lock);
	f->stop = true;
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
	for (unsigned i = 0; i < f->nthr; i++)
		pthread_join(f->thr[i], NULL);
	cf->find_nthr = f->nthr;
	cf->find_joined = f->joined;
	cf->find_listed = atomic_load(&f->listed);
	cf->find_stepped = f->stepped;
	pthread_cond_destroy(&f->cond);
	pthread_mutex_destroy(&f->lock);
	for (unsigned i = 0; i < FIND_RING; i++)
		free(f->ring[i].e);
	free(f->view.ifs);
	free(f);
	cf->find = NULL;
}
