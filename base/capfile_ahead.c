/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A compressed input's decompression, on a thread of its own: it fills a
 * ring of large chunks ahead of the reader, so that decompressing runs in
 * parallel with parsing and filtering (the reader only copies a chunk's
 * bytes out). One lock and wake-up per chunk, none per record; either side
 * sleeps while the other has nothing for it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gpucap/gcap_thread.h"
#include "capfile_internal.h"

#define AHEAD_CHUNK (1u << 20)
#define AHEAD_CHUNKS 4u

struct gcap_cf_ahead {
	pthread_t thr;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint8_t *buf[AHEAD_CHUNKS];
	size_t len[AHEAD_CHUNKS];
	unsigned head, tail; /* chunks filled, chunks consumed */
	size_t pos;          /* read position in the tail chunk */
	int err;             /* the codec's error, after the chunks before it */
	bool end, stop;
	char msg[sizeof(((struct gcap_cf_src *)0)->msg)];
};

static void *
ahead_main(void *arg)
{
	struct gcap_cf_src *s = arg;
	struct gcap_cf_ahead *a = s->ahead;

	for (;;) {
		unsigned k;
		size_t got = 0;
		ssize_t r = 1;

		bool stop;

		pthread_mutex_lock(&a->lock);
		while (!a->stop && a->head - a->tail == AHEAD_CHUNKS)
			pthread_cond_wait(&a->cond, &a->lock);
		k = a->head % AHEAD_CHUNKS;
		stop = a->stop;
		pthread_mutex_unlock(&a->lock);
		if (stop)
			break;
		/* a pipe's chunk goes once its writer has no more for now:
		 * what was decoded must not wait for the next bytes */
		while (got < AHEAD_CHUNK && (got == 0 || !gcap_cf_src_idle(s)) &&
		       (r = s->codec->read(s, a->buf[k] + got, AHEAD_CHUNK - got)) > 0)
			got += (size_t)r;
		pthread_mutex_lock(&a->lock);
		a->len[k] = got;
		if (got > 0)
			a->head++;
		if (r <= 0) {
			a->end = true;
			a->err = r < 0 ? (int)r : 0;
			memcpy(a->msg, s->msg, sizeof(a->msg));
		}
		pthread_cond_broadcast(&a->cond);
		pthread_mutex_unlock(&a->lock);
		if (r <= 0)
			break;
	}
	return NULL;
}

uint64_t
gcap_cf_ahead_mem(void)
{
	return (uint64_t)AHEAD_CHUNKS * AHEAD_CHUNK;
}

int
gcap_cf_ahead_start(struct gcap_cf_src *s, char *errbuf)
{
	struct gcap_cf_ahead *a = calloc(1, sizeof(*a));
	int r;

	if (a == NULL)
		return gcap_err(errbuf, ENOMEM, "capture file: out of memory");
	for (unsigned i = 0; i < AHEAD_CHUNKS; i++)
		if ((a->buf[i] = malloc(AHEAD_CHUNK)) == NULL) {
			for (unsigned j = 0; j < i; j++)
				free(a->buf[j]);
			free(a);
			return gcap_err(errbuf, ENOMEM, "capture file: out of memory");
		}
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->cond, NULL);
	s->ahead = a;
	r = gcap_thread_start(&a->thr, NULL, ahead_main, s);
	if (r != 0) {
		s->ahead = NULL;
		for (unsigned i = 0; i < AHEAD_CHUNKS; i++)
			free(a->buf[i]);
		free(a);
		return gcap_err(errbuf, r, "capture file: cannot start a thread: %s",
				strerror(r));
	}
	return 0;
}

ssize_t
gcap_cf_ahead_read(struct gcap_cf_src *s, uint8_t *buf, size_t len)
{
	struct gcap_cf_ahead *a = s->ahead;
	unsigned k;
	size_t n;

	pthread_mutex_lock(&a->lock);
	while (a->head == a->tail && !a->end)
		pthread_cond_wait(&a->cond, &a->lock);
	if (a->head == a->tail) {
		int err = a->err;

		if (err < 0)
			memcpy(s->rmsg, a->msg, sizeof(s->rmsg));
		pthread_mutex_unlock(&a->lock);
		return err;
	}
	pthread_mutex_unlock(&a->lock);
	/* the tail chunk is the reader's until it is given back */
	k = a->tail % AHEAD_CHUNKS;
	n = a->len[k] - a->pos < len ? a->len[k] - a->pos : len;
	memcpy(buf, a->buf[k] + a->pos, n);
	a->pos += n;
	if (a->pos == a->len[k]) {
		pthread_mutex_lock(&a->lock);
		a->tail++;
		a->pos = 0;
		pthread_cond_broadcast(&a->cond);
		pthread_mutex_unlock(&a->lock);
	}
	return (ssize_t)n;
}

void
gcap_cf_ahead_stop(struct gcap_cf_src *s)
{
	struct gcap_cf_ahead *a = s->ahead;

	if (a == NULL)
		return;
	pthread_mutex_lock(&a->lock);
	a->stop = true;
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->lock);
	pthread_join(a->thr, NULL);
	pthread_cond_destroy(&a->cond);
	pthread_mutex_destroy(&a->lock);
	for (unsigned i = 0; i < AHEAD_CHUNKS; i++)
		free(a->buf[i]);
	free(a);
	s->ahead = NULL;
}
