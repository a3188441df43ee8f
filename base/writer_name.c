/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * How the writer names an output's files: tcpdump's (-C numbers the path,
 * -W makes it a ring of numbers, -G passes it through strftime(3)) and
 * dumpcap's (-b: PREFIX_NNNNN_YYYYmmddHHMMSS.EXT for every file, a ring
 * of files:N that removes its oldest). writer_rotate.c decides when a file
 * ends; this file only names the next one and keeps dumpcap's ring.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "writer_internal.h"

/* dumpcap's file numbers: five digits, modulo RINGBUFFER_MAX_NUM_FILES */
#define DC_NUM_MOD 100000u

/* tcpdump's width of the file number under -W: digits of W-1. */
static int
wflag_chars(uint32_t w)
{
	int c = 0;

	for (uint32_t x = w > 0 ? w - 1 : 0; x > 0; x /= 10)
		c++;
	return c;
}

/* dumpcap's split of the path: the suffix starts at the last '.' of its
 * last component (none: the whole path is the prefix). */
static size_t
dc_split(const char *path)
{
	const char *dot = strrchr(path, '.');

	if (dot == NULL || strchr(dot, '/') != NULL)
		return strlen(path);
	return (size_t)(dot - path);
}

int
gcap_wr_name_setup(struct gcap_writer *w, const struct gcap_writer_conf *conf)
{
	w->names = conf->names;
	w->wchars = wflag_chars(conf->max_files);
	if (!gcap_wr_dc(w))
		return 0;
	tzset(); /* the names carry the local time: read TZ now */
	w->dc_split = dc_split(w->tmpl);
	if (w->max_files != 0) {
		w->dc_kept = calloc(w->max_files, sizeof(*w->dc_kept));
		if (w->dc_kept == NULL)
			return -ENOMEM;
	}
	return 0;
}

void
gcap_wr_name_free(struct gcap_writer *w)
{
	free(w->dc_kept);
	w->dc_kept = NULL;
}

int
gcap_wr_name_base(const struct gcap_writer *w, uint64_t period_ns, char *base)
{
	if (w->rotate_ns != 0) {
		time_t t = (time_t)(period_ns / GCAP_WR_NS_PER_SEC);
		struct tm tm;

		if (localtime_r(&t, &tm) == NULL)
			return -EINVAL;
		if (strftime(base, PATH_MAX, w->tmpl, &tm) == 0)
			return -ENAMETOOLONG;
	} else {
		if (strlen(w->tmpl) >= PATH_MAX)
			return -ENAMETOOLONG;
		strcpy(base, w->tmpl);
	}
	return 0;
}

/* dumpcap's name of file number k (from 1), opened at t seconds. */
static int
dc_name(const struct gcap_writer *w, uint64_t k, int64_t t, char *out)
{
	time_t tt = (time_t)t;
	struct tm tm;
	char ts[32];

	if (localtime_r(&tt, &tm) == NULL ||
	    strftime(ts, sizeof(ts), "%Y%m%d%H%M%S", &tm) == 0)
		return -EINVAL;
	char num[8];
	bool tf = w->names == GCAP_NAMES_DUMPCAP_TIMENUM; /* nametimenum:2 */

	snprintf(num, sizeof(num), "%05u", (unsigned)(k % DC_NUM_MOD));
	if (snprintf(out, GCAP_WR_NAME_MAX, "%.*s_%s_%s%s", (int)w->dc_split, w->tmpl,
		     tf ? ts : num, tf ? num : ts,
		     w->tmpl + w->dc_split) >= GCAP_WR_NAME_MAX)
		return -ENAMETOOLONG;
	return 0;
}

/* The time in the name of the file opened now: the writer's clock (the
 * caller's ticks, the records' times), as dumpcap names a file by the
 * time it opens it. */
static int64_t
dc_now(const struct gcap_writer *w)
{
	return (int64_t)(w->clock_ns / GCAP_WR_NS_PER_SEC);
}

int
gcap_wr_name_next(const struct gcap_writer *w, unsigned cnt, int chars, char *out)
{
	char base[PATH_MAX];
	int rc;

	if (gcap_wr_dc(w))
		return dc_name(w, w->dc_seq + 1, dc_now(w), out);
	rc = gcap_wr_name_base(w, w->period_ns, base);
	if (rc != 0)
		return rc;
	if (cnt == 0 && chars == 0) {
		strcpy(out, base);
		return 0;
	}
	if (snprintf(out, GCAP_WR_NAME_MAX, "%s%0*u", base, chars, cnt) >=
	    GCAP_WR_NAME_MAX)
		return -ENAMETOOLONG;
	return 0;
}

void
gcap_wr_name_expire(struct gcap_writer *w)
{
	char name[GCAP_WR_NAME_MAX];
	struct stat st;

	if (w->dc_kept == NULL || w->dc_seq < w->max_files)
		return;
	/* file dc_seq + 1 takes the slot of file dc_seq + 1 - max_files */
	struct gcap_wr_kept *k = &w->dc_kept[w->dc_seq % w->max_files];

	if (!k->used)
		return;
	k->used = false;
	if (dc_name(w, w->dc_seq + 1 - w->max_files, k->t, name) != 0)
		return;
	/* only the file the writer made: one put at its name since (after
	 * a -z command moved it away) is someone else's. A file that cannot
	 * be removed stays, as dumpcap leaves it. */
	if (lstat(name, &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == k->dev &&
	    st.st_ino == k->ino)
		(void)unlink(name);
}

void
gcap_wr_name_opened(struct gcap_writer *w)
{
	struct stat st;

	if (!gcap_wr_dc(w))
		return;
	if (w->dc_kept != NULL && fstat(w->fd, &st) == 0) {
		struct gcap_wr_kept *k = &w->dc_kept[w->dc_seq % w->max_files];

		k->t = dc_now(w);
		k->dev = st.st_dev;
		k->ino = st.st_ino;
		k->used = true;
	}
	w->dc_seq++;
}
