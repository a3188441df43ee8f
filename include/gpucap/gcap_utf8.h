/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * UTF-8 text, as pcapng's strings must be (SHB comments, IDB names and
 * descriptions): checked where a user gives it, made so where it comes
 * from elsewhere (a port's name is whatever bytes its path holds).
 */
#ifndef GCAP_UTF8_H
#define GCAP_UTF8_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The bytes of the well-formed UTF-8 sequence s starts (1 to 4), or 0
 * where it starts none: a stray continuation byte, an overlong form, a
 * surrogate, past U+10FFFF, a sequence cut by the string's end.
 */
size_t gcap_utf8_seq(const char *s);

/** @return whether the string s is UTF-8 text. */
bool gcap_utf8_valid(const char *s);

/**
 * Copy src into dst (room for strlen(src) + 1 bytes), each byte that
 * starts no well-formed sequence replaced by '?'.
 * @return dst.
 */
char *gcap_utf8_copy(char *dst, const char *src);

#ifdef __cplusplus
}
#endif

#endif /* GCAP_UTF8_H */
