/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu-capture's error line: every part of the program (options, checks,
 * runs, reports) says what went wrong the same way, in one printf-checked
 * call.
 */
#ifndef GCAP_APP_ERR_H
#define GCAP_APP_ERR_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

/* "FILE:LINE" of the --config entry being parsed, or NULL (config.c): the
 * options parser's errors then name the line they come from. */
extern const char *app_err_where;

/*
 * Whether stderr is the journal: JOURNAL_STREAM (set by systemd) names
 * the device and inode of the stream it gave, as sd-daemon(3) says to
 * check, so a redirected stderr gets no level prefixes.
 */
static inline bool
app_err_journal(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long dev, ino;
	struct stat st;

	return e != NULL && sscanf(e, "%lu:%lu", &dev, &ino) == 2 &&
	       fstat(STDERR_FILENO, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

/*
 * Print "gpu-capture: [FILE:LINE: ]MESSAGE\n" on stderr; to the journal
 * with its level, "<3>" (error) or "<4>" for a message that starts with
 * "warning:" (lines without one are info, the journal's default).
 * @return 1, the exit status of a run that failed (the option parser
 * returns -app_err(...)).
 */
static inline int __attribute__((format(printf, 1, 2))) app_err(const char *fmt, ...)
{
	/* one write for the whole line: another thread's line (DPDK's)
	 * must not land inside it, between its level and its text */
	char line[8192];
	size_t n;
	va_list ap;

	n = (size_t)snprintf(line, sizeof(line), "%sgpu-capture: %s%s",
			     !app_err_journal()               ? "" :
			     strncmp(fmt, "warning:", 8) == 0 ? SD_WARNING :
								SD_ERR,
			     app_err_where != NULL ? app_err_where : "",
			     app_err_where != NULL ? ": " : "");
	if (n < sizeof(line)) {
		va_start(ap, fmt);
		int m = vsnprintf(line + n, sizeof(line) - n, fmt, ap);

		va_end(ap);
		n = m < 0 ? n : n + (size_t)m;
	}
	if (n > sizeof(line) - 2)
		n = sizeof(line) - 2; /* cut, still one line */
	line[n++] = '\n';
	fflush(stderr); /* what was printed before goes first */
	(void)!write(STDERR_FILENO, line, n);
	return 1;
}

#endif
