/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A kernel's files from disk: its source, and the kernel header as one
 * text, gpucap/gcap_kernel.h read from an include directory with the
 * quoted includes of its parts (the files beside it) inlined in place,
 * each once. The loader hashes that text into the cache key and hands it
 * to the gpu executor, whose translation unit NVRTC compiles without
 * include paths.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpucap/gcap_khost.h"
#include "kfile.h"

char *
gcap_kfile_read(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		size_t r = fread(buf + n, 1, cap - n - 1, f);
		n += r;
		if (n + 1 < cap) {
			if (ferror(f)) {
				free(buf);
				buf = NULL;
				errno = EIO;
			}
			break;
		}
		char *nb = realloc(buf, cap * 2);
		if (!nb) {
			free(buf);
			buf = NULL;
			errno = ENOMEM;
			break;
		}
		buf = nb;
		cap *= 2;
	}
	fclose(f);
	if (!buf)
		return NULL;
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

int
gcap_khost_include_of(const char *l, size_t n, char *out, size_t outsz)
{
	size_t i = 0, j;
	char close;

	while (i < n && (l[i] == ' ' || l[i] == '\t'))
		i++;
	if (i >= n || l[i++] != '#')
		return 0;
	while (i < n && (l[i] == ' ' || l[i] == '\t'))
		i++;
	if (n - i < 8 || memcmp(l + i, "include", 7) != 0)
		return 0;
	i += 7;
	while (i < n && (l[i] == ' ' || l[i] == '\t'))
		i++;
	if (i >= n || (l[i] != '"' && l[i] != '<'))
		return 0;
	close = l[i] == '"' ? '"' : '>';
	for (j = ++i; j < n && l[j] != close; j++)
		;
	if (j >= n || j == i || j - i >= outsz)
		return 0;
	memcpy(out, l + i, j - i);
	out[j - i] = '\0';
	return close == '"' ? '"' : '<';
}

/* `#include "NAME"` with NAME a plain file name: a part of the kernel
 * header, beside it. */
static bool
part_include(const char *l, size_t n, char *out, size_t outsz)
{
	return gcap_khost_include_of(l, n, out, outsz) == '"' && strchr(out, '/') == NULL;
}

/* Append a header to *buf, its own parts (quoted includes of files beside
 * it) inlined in place, each part once, so that the text is one
 * self-contained unit (NVRTC compiles it without include paths). */
static int
inline_header(const char *dir, const char *name, char **buf, size_t *len, unsigned depth,
	      char *seen, size_t seensz)
{
	char path[PATH_MAX], part[256];
	size_t flen;
	char *text, *l;

	if (depth > 8)
		return -ELOOP;
	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	text = gcap_kfile_read(path, &flen);
	if (!text)
		return errno ? -errno : -EIO;
	for (l = text; *l;) {
		char *e = strchr(l, '\n');
		size_t n = e ? (size_t)(e - l) : strlen(l);
		const char *add = l;
		size_t addn = n + (e != NULL);
		int rc = 0;

		if (part_include(l, n, part, sizeof(part))) {
			char tag[260];
			snprintf(tag, sizeof(tag), "|%s|", part);
			if (strstr(seen, tag) == NULL) {
				if (strlen(seen) + strlen(tag) >= seensz) {
					free(text);
					return -E2BIG;
				}
				strcat(seen, tag);
				rc = inline_header(dir, part, buf, len, depth + 1, seen,
						   seensz);
			}
			add = NULL;
		}
		if (rc != 0) {
			free(text);
			return rc;
		}
		if (add) {
			char *nb = realloc(*buf, *len + addn + 2);
			if (!nb) {
				free(text);
				return -ENOMEM;
			}
			*buf = nb;
			memcpy(*buf + *len, add, addn);
			*len += addn;
			(*buf)[*len] = '\0';
		}
		l += n + (e != NULL);
	}
	if (*len && (*buf)[*len - 1] != '\n') {
		(*buf)[(*len)++] = '\n';
		(*buf)[*len] = '\0';
	}
	free(text);
	return 0;
}

char *
gcap_kfile_header(const char *incdir, size_t *len)
{
	char dir[PATH_MAX], seen[2048] = "";
	char *buf = NULL;
	size_t n = 0;
	int rc;

	if (snprintf(dir, sizeof(dir), "%s/gpucap", incdir) >= (int)sizeof(dir)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	rc = inline_header(dir, "gcap_kernel.h", &buf, &n, 0, seen, sizeof(seen));
	if (rc != 0 || !buf) {
		free(buf);
		errno = rc ? -rc : EIO;
		return NULL;
	}
	*len = n;
	return buf;
}
