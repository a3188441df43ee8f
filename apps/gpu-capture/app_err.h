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

/* "FILE:LINE" of the --config entry being parsed, or NULL (config.c): the
 * options parser's errors then name the line they come from. */
extern const char *app_err_where;

/*
 * Print "gpu-capture: [FILE:LINE: ]MESSAGE\n" on stderr.
 * @return 1, the exit status of a run that failed (the option parser
 * returns -app_err(...)).
 */
static inline int __attribute__((format(printf, 1, 2))) app_err(const char *fmt, ...)
{
	va_list ap;

	fputs("gpu-capture: ", stderr);
	if (app_err_where != NULL)
		fprintf(stderr, "%s: ", app_err_where);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

#endif
