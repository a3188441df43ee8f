/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * UTF-8 text for pcapng's strings (see gcap_utf8.h): one sequence's
 * check, a string's, and a copy that makes any string text.
 */
#include <stdint.h>

#include "gpucap/gcap_utf8.h"

size_t
gcap_utf8_seq(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned n, c = p[0];
	uint32_t cp;

	if (c < 0x80)
		return c != 0;
	if (c >= 0xc2 && c <= 0xdf)
		n = 1, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 2, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 3, cp = c & 0x07;
	else
		return 0;
	for (unsigned k = 1; k <= n; k++) {
		if ((p[k] & 0xc0) != 0x80) /* the string's end too */
			return 0;
		cp = cp << 6 | (p[k] & 0x3f);
	}
	if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n + 1;
}

bool
gcap_utf8_valid(const char *s)
{
	size_t n;

	while (*s != '\0') {
		if ((n = gcap_utf8_seq(s)) == 0)
			return false;
		s += n;
	}
	return true;
}

char *
gcap_utf8_copy(char *dst, const char *src)
{
	char *d = dst;
	size_t n;

	while (*src != '\0') {
		if ((n = gcap_utf8_seq(src)) == 0) {
			*d++ = '?';
			src++;
			continue;
		}
		while (n-- > 0)
			*d++ = *src++;
	}
	*d = '\0';
	return dst;
}
