/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * A small streaming JSON writer for host code: inline kernels' report
 * hooks (gcap_kernel_report(), through gcap_kernel.h) and gpu-capture's
 * own reports (--summary-json, --kernel-state) write JSON through it, so
 * commas, indentation and string escapes are handled in one place.
 * Header-only and self-contained (a kernel's host build includes it).
 *
 * A document of its own (a program's report file): gcap_json_begin(),
 * members, gcap_json_end().
 */
#ifndef GCAP_JSON_H
#define GCAP_JSON_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#if !defined(__cplusplus)
#include <stdbool.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** Most nesting levels of a JSON report. */
#define GCAP_JSON_MAX_DEPTH 32

/**
 * A JSON writer, handed to gcap_kernel_report() inside the top-level
 * object. Use the gcap_json_*() helpers only; they handle commas,
 * indentation and string escapes.
 */
struct gcap_json {
	FILE *f;                              /**< where the text goes */
	int depth;                            /**< current nesting */
	int err;                              /**< set on misuse (too deep, unbalanced) */
	unsigned char n[GCAP_JSON_MAX_DEPTH]; /**< members written per level */
};

/** Start a document on f: the top-level object is open, members follow. */
static inline void
gcap_json_begin(struct gcap_json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	fputc('{', f);
	j->depth = 1;
}

/** Comma, newline and indentation before a member. */
static inline void
gcap_json__sep(struct gcap_json *j)
{
	if (j->depth > 0 && j->depth <= GCAP_JSON_MAX_DEPTH) {
		if (j->n[j->depth - 1])
			fputc(',', j->f);
		j->n[j->depth - 1] = 1;
	}
	fputc('\n', j->f);
	for (int i = 0; i < j->depth; i++)
		fputs("  ", j->f);
}

/** Write n bytes of s as a JSON string (escaped; non-ASCII as \\u00XX). */
static inline void
gcap_json__strn(struct gcap_json *j, const char *s, size_t n)
{
	fputc('"', j->f);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			fprintf(j->f, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(j->f, "\\u%04x", c);
		else
			fputc(c, j->f);
	}
	fputc('"', j->f);
}

/** Separator, then `"key": ` when key is not NULL (members of objects). */
static inline void
gcap_json__key(struct gcap_json *j, const char *key)
{
	gcap_json__sep(j);
	if (key) {
		gcap_json__strn(j, key, strlen(key));
		fputs(": ", j->f);
	}
}

/* Open a level with its bracket, a member `key` or (NULL) an element. */
static inline void
gcap_json__open(struct gcap_json *j, const char *key, char bracket)
{
	gcap_json__key(j, key);
	fputc(bracket, j->f);
	if (j->depth >= GCAP_JSON_MAX_DEPTH) {
		j->err = 1;
		return;
	}
	j->n[j->depth++] = 0;
}

/* Close the innermost level with its bracket, on a line of its own
 * where it holds anything. */
static inline void
gcap_json__close(struct gcap_json *j, char bracket)
{
	if (j->depth <= 0) {
		j->err = 1;
		return;
	}
	int had = j->n[--j->depth];
	if (had) {
		fputc('\n', j->f);
		for (int i = 0; i < j->depth; i++)
			fputs("  ", j->f);
	}
	fputc(bracket, j->f);
}

/** Open an object: a member `key` of the current object, or an array
 *  element when key is NULL. */
static inline void
gcap_json_object_begin(struct gcap_json *j, const char *key)
{
	gcap_json__open(j, key, '{');
}

/** Close the innermost object. */
static inline void
gcap_json_object_end(struct gcap_json *j)
{
	gcap_json__close(j, '}');
}

/** Open an array (key as for gcap_json_object_begin()). */
static inline void
gcap_json_array_begin(struct gcap_json *j, const char *key)
{
	gcap_json__open(j, key, '[');
}

/** Close the innermost array. */
static inline void
gcap_json_array_end(struct gcap_json *j)
{
	gcap_json__close(j, ']');
}

/**
 * Close the document gcap_json_begin() started (levels left open are
 * closed as objects, so the text stays parseable) and flush it.
 * @return 0; -EINVAL after misuse (unbalanced or too deep); -EIO when
 * the stream had a write error.
 */
static inline int
gcap_json_end(struct gcap_json *j)
{
	int balanced = j->depth == 1 && !j->err;

	while (j->depth > 1)
		gcap_json_object_end(j);
	fputs(j->n[0] ? "\n}\n" : "}\n", j->f);
	if (fflush(j->f) != 0 || ferror(j->f))
		return -EIO;
	return balanced ? 0 : -EINVAL;
}

/** `"key": v` (key NULL: an array element). */
static inline void
gcap_json_key_u64(struct gcap_json *j, const char *key, uint64_t v)
{
	gcap_json__key(j, key);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

/** `"key": v` for a signed value. */
static inline void
gcap_json_key_i64(struct gcap_json *j, const char *key, int64_t v)
{
	gcap_json__key(j, key);
	fprintf(j->f, "%lld", (long long)v);
}

/**
 * `"key": v` with digits decimals (printf's %.*f); a value that is not
 * finite writes null (JSON has no NaN or infinity).
 */
static inline void
gcap_json_key_f64(struct gcap_json *j, const char *key, double v, int digits)
{
	gcap_json__key(j, key);
	if (__builtin_isfinite(v))
		fprintf(j->f, "%.*f", digits, v);
	else
		fputs("null", j->f);
}

/** `"key": true|false`. */
static inline void
gcap_json_key_bool(struct gcap_json *j, const char *key, bool v)
{
	gcap_json__key(j, key);
	fputs(v ? "true" : "false", j->f);
}

/** `"key": "s"` (s escaped; NULL writes null). */
static inline void
gcap_json_key_str(struct gcap_json *j, const char *key, const char *s)
{
	gcap_json__key(j, key);
	if (s)
		gcap_json__strn(j, s, strlen(s));
	else
		fputs("null", j->f);
}

/** `"key": "s"` from n bytes of s (escaped). */
static inline void
gcap_json_key_strn(struct gcap_json *j, const char *key, const char *s, size_t n)
{
	gcap_json__key(j, key);
	gcap_json__strn(j, s, n);
}

/** `"key": "hex"` of n bytes. */
static inline void
gcap_json_key_hex(struct gcap_json *j, const char *key, const void *b, size_t n)
{
	const uint8_t *s = (const uint8_t *)b;
	gcap_json__key(j, key);
	fputc('"', j->f);
	for (size_t i = 0; i < n; i++)
		fprintf(j->f, "%02x", s[i]);
	fputc('"', j->f);
}

/**
 * `"key": "address"`: IPv4 dotted quad (version 4, first 4 bytes) or
 * IPv6 as eight groups of hex without zero compression (version 6).
 */
static inline void
gcap_json_key_ip(struct gcap_json *j, const char *key, const uint8_t *a, int version)
{
	gcap_json__key(j, key);
	if (version == 4) {
		fprintf(j->f, "\"%u.%u.%u.%u\"", a[0], a[1], a[2], a[3]);
		return;
	}
	fputc('"', j->f);
	for (int i = 0; i < 8; i++)
		fprintf(j->f, "%s%x", i ? ":" : "", (a[2 * i] << 8) | a[2 * i + 1]);
	fputc('"', j->f);
}

#ifdef __cplusplus
}
#endif

#endif /* GCAP_JSON_H */
