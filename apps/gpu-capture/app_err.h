/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu-capture's error line: every part of the program (options, checks,
 * runs, reports) says what went wrong the same way, in one printf-checked
 * call.
 */
#ifndef GCAP_APP_ERR_H
#define GCAP_APP_ERR_H

#include <stdarg.h>
#include <stdio.h>

/*
 * Print "gpu-capture: MESSAGE\n" on stderr.
 * @return 1, the exit status of a run that failed (the option parser
 * returns -app_err(...)).
 */
static inline int __attribute__((format(printf, 1, 2))) app_err(const char *fmt, ...)
{
	va_list ap;

	fputs("gpu-capture: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

#endif
