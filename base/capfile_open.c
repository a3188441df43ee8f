/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Opening and closing a capture file (gcap_capfile.h): the input's codec
 * found by its first bytes (past any skippable frames: pzstd's files
 * start with one), the file header read by libpcap through the stream that
 * keeps what libpcap read (capfile.c), bytes read ahead so that the
 * interfaces before the first packet are known when the outputs open, and
 * a plain regular file mapped, its records then read where they lie.
 * Filling a caller's buffer with the records is capfile.c's.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capfile_internal.h"

/* Bytes read ahead at open, so that the interfaces before the first packet
 * are known when the outputs are opened. */
#define CF_PREFIX (64u << 10)
/* The most of skippable frames read at open to find the codec after them */
#define CF_SKIP_PEEK (1u << 20)

static const struct gcap_cf_codec *const codecs[] = {
	&gcap_cf_gzip,
	&gcap_cf_zstd,
	&gcap_cf_lz4,
};

/* ---- open and close ---- */

/* The bytes that say the codec (magic, the head's first 4): those of the
 * first frame after any skippable ones, whose magic zstd and lz4 share
 * (pzstd's files start with one), up to CF_SKIP_PEEK bytes in all. What
 * is read to find them is read again. @return 0 or -errno, s->msg set. */
static ssize_t
src_skippable(struct gcap_cf_src *s, uint8_t magic[4])
{
	uint8_t *b = NULL;
	size_t have = 0;
	ssize_t r = 0;

	memcpy(magic, s->head, 4);
	if (s->nhead < 4)
		return 0;
	s->headpos = s->nhead; /* read on past the head */
	while ((magic[0] & 0xF0) == 0x50 && memcmp(magic + 1, "\x2a\x4d\x18", 3) == 0) {
		uint8_t *nb;
		uint32_t len;

		/* its length, the frame, and the next frame's magic */
		if ((nb = realloc(b, have + 4)) == NULL)
			goto nomem;
		b = nb;
		if ((r = gcap_cf_raw_full(s, b + have, 4)) < 0)
			break;
		have += (size_t)r;
		if (r < 4)
			break;
		len = cf_le32(b + have - 4);
		if (have > CF_SKIP_PEEK || len > CF_SKIP_PEEK - have)
			break;
		if ((nb = realloc(b, have + len + 4)) == NULL)
			goto nomem;
		b = nb;
		if ((r = gcap_cf_raw_full(s, b + have, len + 4)) < 0)
			break;
		have += (size_t)r;
		if (r < (ssize_t)len + 4)
			break;
		memcpy(magic, b + have - 4, 4);
	}
	s->headpos = 0;
	if (r < 0) {
		free(b);
		return r;
	}
	if (gcap_cf_unread(s, b, have) < 0)
		goto nomem;
	free(b);
	return 0;
nomem:
	s->headpos = 0;
	free(b);
	snprintf(s->msg, sizeof(s->msg), "out of memory");
	return -ENOMEM;
}

const struct gcap_cf_codec *
gcap_cf_codec_find(const uint8_t *head, size_t n)
{
	for (size_t i = 0; i < sizeof(codecs) / sizeof(codecs[0]); i++)
		if (n >= codecs[i]->magic_len &&
		    memcmp(head, codecs[i]->magic, codecs[i]->magic_len) == 0)
			return codecs[i];
	return NULL;
}

static int
src_open(struct gcap_capfile *cf, const char *path, unsigned decoders, char *errbuf)
{
	struct gcap_cf_src *s = &cf->src;
	uint8_t magic[4];
	ssize_t r;

	if (strcmp(path, "-") == 0) {
		s->fd = STDIN_FILENO;
	} else {
		s->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (s->fd < 0)
			return gcap_err(errbuf, errno, "%s: %s", path, strerror(errno));
		s->own_fd = true;
	}
	(void)posix_fadvise(s->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	/* the codec is what the first bytes say, whatever the name */
	while (s->nhead < 4) {
		r = gcap_cf_raw_read(s, s->head + s->nhead, 4 - s->nhead);
		if (r < 0)
			return gcap_err(errbuf, (int)-r, "%s: %s", path, s->msg);
		if (r == 0)
			break;
		s->nhead += (size_t)r;
		s->headpos = s->nhead;
	}
	s->headpos = 0;
	/* a pipe: its reads from now on wait only until gcap_capfile_stop
	 * (set before any codec thread starts) */
	struct stat st;

	s->may_wait = fstat(s->fd, &st) == 0 && !S_ISREG(st.st_mode);
	if ((r = src_skippable(s, magic)) < 0)
		return gcap_err(errbuf, (int)-r, "%s: %s", path, s->msg);
	const struct gcap_cf_codec *k = gcap_cf_codec_find(magic, s->nhead);
	int e;

	if (k == NULL)
		return 0;
	s->codec = k;
	if ((e = k->open(s, errbuf)) < 0)
		return e;
	/* decompressing runs beside the reading */
	if (decoders > k->par_max)
		decoders = k->par_max;
	if (decoders > 1 && k->cut != NULL)
		return gcap_cf_par_start(s, decoders, errbuf);
	return gcap_cf_ahead_start(s, errbuf);
}

void
gcap_capfile_close(struct gcap_capfile *cf)
{
	if (cf == NULL)
		return;
	if (cf->lp != NULL && cf->lp != cf->p)
		pcap_close(cf->lp);
	if (cf->p != NULL && cf->own_p)
		pcap_close(cf->p);
	gcap_cf_find_stop(cf);
	gcap_cf_pop_stop(cf);
	if (cf->map != NULL) {
		gcap_cf_guard_del(cf->guard);
		munmap((void *)cf->map, cf->map_len);
	}
	gcap_cf_par_stop(&cf->src);
	gcap_cf_ahead_stop(&cf->src);
	if (cf->src.codec != NULL)
		cf->src.codec->close(&cf->src);
	if (cf->src.own_fd)
		close(cf->src.fd);
	for (unsigned i = 0; i < cf->nifs; i++) {
		free(cf->ifs[i].name);
		free(cf->ifs[i].opts);
	}
	free(cf->ifs);
	free(cf->hdr);
	free(cf->carry);
	free(cf->replay);
	free(cf->src.back);
	free(cf->path);
	free(cf);
}

static struct gcap_capfile *
cf_alloc(char *errbuf)
{
	struct gcap_capfile *cf = calloc(1, sizeof(*cf));

	if (cf == NULL || gcap_cf_ifs_grow(cf) < 0) {
		free(cf);
		return gcap_err_null(errbuf, ENOMEM, "capture file: out of memory");
	}
	cf->src.fd = -1;
	return cf;
}

struct gcap_capfile *
gcap_capfile_from_pcap(pcap_t *p, char *errbuf)
{
	struct gcap_capfile *cf = cf_alloc(errbuf);

	if (cf == NULL)
		return NULL;
	cf->p = cf->lp = p;
	cf->linktype = pcap_datalink(p);
	cf->snapshot = (uint32_t)pcap_snapshot(p);
	cf->ifs[0].linktype = cf->linktype;
	cf->nifs = cf->nifs_open = 1;
	return cf;
}

/* Read ahead to CF_PREFIX bytes in the carry (or the end). */
static int
prefix_fill(struct gcap_capfile *cf)
{
	while (!cf->src_eof && cf->carry_len < CF_PREFIX) {
		uint8_t tmp[8192];
		ssize_t r = gcap_cf_src_read(&cf->src, tmp, sizeof(tmp));

		if (r < 0)
			return (int)r;
		if (r == 0)
			cf->src_eof = true;
		else if (gcap_cf_buf_add(&cf->carry, &cf->carry_len, &cf->carry_cap, tmp,
					 (size_t)r) < 0)
			return -ENOMEM;
	}
	return 0;
}

struct gcap_capfile *
gcap_capfile_open(const char *path, char *errbuf)
{
	return gcap_capfile_open_conf(path, NULL, errbuf);
}

struct gcap_capfile *
gcap_capfile_open_conf(const char *path, const struct gcap_capfile_conf *conf,
		       char *errbuf)
{
	char perr[PCAP_ERRBUF_SIZE];
	struct gcap_capfile *cf = cf_alloc(errbuf);
	struct stat st;
	size_t off = 0;
	int r;

	if (cf == NULL)
		return NULL;
	cf->path = strdup(path);
	if (cf->path == NULL) {
		gcap_capfile_close(cf);
		return gcap_err_null(errbuf, ENOMEM, "capture file: out of memory");
	}
	cf->finders = conf != NULL ? conf->finders : 0;
	r = src_open(cf, path, conf != NULL ? conf->decoders : 1, errbuf);
	if (r < 0) {
		gcap_capfile_close(cf);
		errno = -r;
		return NULL;
	}
	if (fstat(cf->src.fd, &st) == 0 && S_ISREG(st.st_mode))
		cf->size = (uint64_t)st.st_size;
	/* libpcap reads the header through a stream that keeps its bytes */
	cf->recording = true;
	cf->pf = gcap_cf_ck_open(cf);
	if (cf->pf != NULL)
		cf->p = pcap_fopen_offline_with_tstamp_precision(
			cf->pf, PCAP_TSTAMP_PRECISION_NANO, perr);
	cf->recording = false;
	if (cf->p == NULL) {
		if (cf->pf == NULL)
			snprintf(perr, sizeof(perr), "%s", strerror(errno));
		else
			fclose(cf->pf);
		/* the codec says what was wrong where libpcap saw EIO */
		if (cf->src.rmsg[0] != '\0')
			snprintf(perr, sizeof(perr), "%s", cf->src.rmsg);
		gcap_capfile_close(cf);
		return gcap_err_null(errbuf, EINVAL, "%s", perr);
	}
	cf->own_p = true;
	cf->lp = cf->p;
	cf->linktype = pcap_datalink(cf->p);
	cf->snapshot = (uint32_t)pcap_snapshot(cf->p);
	cf->ifs[0].linktype = cf->linktype;
	cf->nifs = 1;
	/* not from a pipe: a capture still being written must not wait */
	if (cf->size > 0 && (r = prefix_fill(cf)) < 0) {
		snprintf(perr, sizeof(perr), "%s",
			 cf->src.rmsg[0] ? cf->src.rmsg : strerror(-r));
		gcap_capfile_close(cf);
		return gcap_err_null(errbuf, -r, "%s: %s", path, perr);
	}
	if (cf->carry_len >= 4) {
		const struct gcap_cf_fmt *f = cf_get32(cf->carry, false) == 0x0a0d0d0au ?
						      &gcap_cf_pcapng :
						      &gcap_cf_pcap;

		if (f == &gcap_cf_pcapng)
			cf->nifs = 0;
		off = f->header(cf, cf->carry, cf->carry_len);
		if (off > 0)
			cf->fmt = f;
		else if (f == &gcap_cf_pcapng) {
			cf->nifs = 1; /* libpcap's one view of it */
			cf->ifs[0].linktype = cf->linktype;
		}
	}
	cf->nifs_open = cf->nifs;
	if (cf->fmt != NULL && cf->src.codec == NULL && cf->size > off &&
	    cf->size <= SIZE_MAX) {
		void *m = mmap(NULL, (size_t)cf->size, PROT_READ, MAP_PRIVATE, cf->src.fd,
			       0);

		/* unguarded, a cut file would kill the process: read it instead */
		if (m != MAP_FAILED &&
		    (cf->guard = gcap_cf_guard_add(m, (size_t)cf->size)) == NULL) {
			munmap(m, (size_t)cf->size);
			m = MAP_FAILED;
		}
		if (m != MAP_FAILED) {
			(void)madvise(m, (size_t)cf->size, MADV_SEQUENTIAL);
			cf->map = m;
			cf->map_len = (size_t)cf->size;
			cf->map_rd = cf->map_len; /* nothing to serve yet */
			cf->map_pos = off;
			/* the finders start at once: what they find while the
			 * caller sets up is found ahead */
			gcap_cf_find_start(cf, cf->finders);
		}
	}
	if (cf->fmt != NULL) {
		cf->carry_pos = off; /* the records, parsed from here */
	} else {
		/* libpcap reads on where its header read stopped: what it has
		 * not taken of the carry is served before the source */
		cf->carry_pos =
			cf->carry_pos < cf->carry_len ? cf->carry_pos : cf->carry_len;
	}
	return cf;
}
