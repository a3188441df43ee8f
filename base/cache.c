/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the on-disk caches share (compiled filters, inline kernels): the
 * cache directory, mkdir -p, the checks that keep another user from
 * planting entries (a cached kernel is code a root run executes), and
 * SHA-256 for their keys.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpucap/gcap_cache.h"
#include "gpucap/gcap_common.h"

int
gcap_cache_dir(char *buf, size_t len)
{
	const char *v;
	int n;

	/* XDG: a relative XDG_CACHE_HOME is invalid and ignored */
	if ((v = getenv("GCAP_CACHE_DIR")) != NULL && v[0] != '\0')
		n = snprintf(buf, len, "%s", v);
	else if ((v = getenv("XDG_CACHE_HOME")) != NULL && v[0] == '/')
		n = snprintf(buf, len, "%s/gpucap", v);
	else if ((v = getenv("HOME")) != NULL && v[0] == '/')
		n = snprintf(buf, len, "%s/.cache/gpucap", v);
	else
		return -ENOENT;
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int
gcap_mkdirs(const char *dir)
{
	char tmp[PATH_MAX];
	size_t n = strlen(dir);

	if (n == 0 || n >= sizeof(tmp))
		return -ENAMETOOLONG;
	memcpy(tmp, dir, n + 1);
	for (char *p = tmp + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/*
 * Why one directory on the way to the cache lets another user in, or
 * NULL. The cache directory itself must be the user's and writable by no
 * one else; a directory above it may also be root's, and writable by
 * others only when sticky (they cannot rename what is not theirs).
 */
static const char *
dir_unsafe(const struct stat *st, bool last)
{
	uid_t me = geteuid();

	if (!S_ISDIR(st->st_mode))
		return "not a directory";
	if (last ? st->st_uid != me : st->st_uid != me && st->st_uid != 0)
		return "owned by another user";
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) && (last || !(st->st_mode & S_ISVTX)))
		return "writable by group or others";
	return NULL;
}

int
gcap_cache_dir_prepare(char *dir, size_t len, char *warn)
{
	char canon[PATH_MAX];
	struct stat st;
	const char *why;
	int rc;

	if (warn)
		warn[0] = '\0';
	rc = gcap_mkdirs(dir);
	if (rc < 0)
		return gcap_err(warn, -rc, "cache directory %s: %s", dir, strerror(-rc));
	if (realpath(dir, canon) == NULL)
		return gcap_err(warn, errno, "cache directory %s: %s", dir,
				strerror(errno));
	/* every directory of the resolved path, "/" first, the cache last */
	for (char *p = canon;; p++) {
		bool last = *p == '\0';

		if (*p != '/' && !last)
			continue;
		char c = *p;
		const char *d = p == canon ? "/" : canon;

		*p = '\0';
		if (lstat(d, &st) != 0) {
			*p = c;
			return gcap_err(warn, errno, "cache directory %s: %s: %s", dir, d,
					strerror(errno));
		}
		why = dir_unsafe(&st, last);
		if (why != NULL) {
			if (last)
				rc = gcap_err(warn, EPERM,
					      "cache directory %s not used: it is %s",
					      dir, why);
			else
				rc = gcap_err(warn, EPERM,
					      "cache directory %s not used: %s is %s",
					      dir, d, why);
			*p = c;
			return rc;
		}
		*p = c;
		if (last)
			break;
	}
	/* the directory checked is the one used: a link on the way that
	 * another user could point elsewhere after the check is not */
	if (strlen(canon) >= len)
		return gcap_err(warn, ENAMETOOLONG, "cache directory %s: %s", dir,
				strerror(ENAMETOOLONG));
	memmove(dir, canon, strlen(canon) + 1);
	return 0;
}

int
gcap_cache_open_entry(const char *path, char *warn)
{
	struct stat st;
	const char *why = NULL;
	/* O_NONBLOCK: a FIFO in its place must not hang the open */
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (warn)
		warn[0] = '\0';
	if (fd < 0) {
		if (errno == ENOENT)
			return -ENOENT;
		if (errno == ELOOP)
			return gcap_err(warn, EPERM,
					"cache entry %s not used: a symbolic link", path);
		return gcap_err(warn, errno, "cache entry %s not used: %s", path,
				strerror(errno));
	}
	if (fstat(fd, &st) != 0)
		why = strerror(errno);
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file";
	else if (st.st_uid != geteuid())
		why = "owned by another user";
	else if (st.st_mode & (S_IWGRP | S_IWOTH))
		why = "writable by group or others";
	if (why != NULL) {
		close(fd);
		return gcap_err(warn, EPERM, "cache entry %s not used: %s", path, why);
	}
	return fd;
}

/* ---- SHA-256 (FIPS 180-4) ---- */

static const uint32_t sha_k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
	0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
	0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
	0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t
ror32(uint32_t x, unsigned n)
{
	return (x >> n) | (x << (32 - n));
}

static void
sha256_block(struct gcap_sha256 *s, const uint8_t *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, h;

	for (unsigned i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (unsigned i = 16; i < 64; i++) {
		uint32_t s0 =
			ror32(w[i - 15], 7) ^ ror32(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 =
			ror32(w[i - 2], 17) ^ ror32(w[i - 2], 19) ^ (w[i - 2] >> 10);

		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	a = s->h[0];
	b = s->h[1];
	c = s->h[2];
	d = s->h[3];
	e = s->h[4];
	f = s->h[5];
	g = s->h[6];
	h = s->h[7];
	for (unsigned i = 0; i < 64; i++) {
		uint32_t t1 = h + (ror32(e, 6) ^ ror32(e, 11) ^ ror32(e, 25)) +
			      ((e & f) ^ (~e & g)) + sha_k[i] + w[i];
		uint32_t t2 = (ror32(a, 2) ^ ror32(a, 13) ^ ror32(a, 22)) +
			      ((a & b) ^ (a & c) ^ (b & c));

		h = g;
		g = f;
		f = e;
		e = d + t1;
		d = c;
		c = b;
		b = a;
		a = t1 + t2;
	}
	s->h[0] += a;
	s->h[1] += b;
	s->h[2] += c;
	s->h[3] += d;
	s->h[4] += e;
	s->h[5] += f;
	s->h[6] += g;
	s->h[7] += h;
}

void
gcap_sha256_init(struct gcap_sha256 *s)
{
	static const uint32_t h0[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};

	memcpy(s->h, h0, sizeof(h0));
	s->len = 0;
	s->nbuf = 0;
}

void
gcap_sha256_update(struct gcap_sha256 *s, const void *data, size_t len)
{
	const uint8_t *p = data;

	s->len += len;
	while (len > 0) {
		size_t n = 64 - s->nbuf;

		if (n > len)
			n = len;
		memcpy(s->buf + s->nbuf, p, n);
		s->nbuf += (unsigned)n;
		p += n;
		len -= n;
		if (s->nbuf == 64) {
			sha256_block(s, s->buf);
			s->nbuf = 0;
		}
	}
}

void
gcap_sha256_final(struct gcap_sha256 *s, uint8_t out[32])
{
	uint64_t bits = s->len * 8;
	uint8_t pad = 0x80, zero = 0, be[8];

	gcap_sha256_update(s, &pad, 1);
	while (s->nbuf != 56)
		gcap_sha256_update(s, &zero, 1);
	for (unsigned i = 0; i < 8; i++)
		be[i] = (uint8_t)(bits >> (56 - 8 * i));
	gcap_sha256_update(s, be, 8);
	for (unsigned i = 0; i < 8; i++) {
		out[4 * i] = (uint8_t)(s->h[i] >> 24);
		out[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
		out[4 * i + 2] = (uint8_t)(s->h[i] >> 8);
		out[4 * i + 3] = (uint8_t)s->h[i];
	}
}
