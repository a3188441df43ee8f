/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shape of gpu-capture's command line, as a tcpdump user writes it:
 * options anywhere (getopt permutes argv, as tcpdump's does), the
 * expression from the trailing words or from a file (-F, as tcpdump
 * reads it), an output's own expression in one argument (-w FILE:EXPR),
 * and no expression that no output would use.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app_err.h"
#include "args.h"

/* the longest piece of an argument an error line quotes */
#define SHOW_MAX 60

/* Whether a -w argument has its own expression (an unescaped ':'). */
static bool
has_own_expr(const char *warg)
{
	for (const char *s = warg; *s != '\0'; s++) {
		if (s[0] == '\\' && s[1] == ':')
			s++;
		else if (*s == ':')
			return true;
	}
	return false;
}

/* An option word as getopt sees it: "-x...", not "-" alone. */
static bool
is_option(const char *arg)
{
	return arg[0] == '-' && arg[1] != '\0';
}

/* argv[from, to) joined with spaces into buf (cut with "..."). */
static void
join_words(char *const *argv, int from, int to, char *buf, size_t size)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = from; i < to && off < size; i++)
		off += (size_t)snprintf(buf + off, size - off, "%s%s",
					i > from ? " " : "", argv[i]);
	if (off >= size && size > 4)
		memcpy(buf + size - 4, "...", 4);
}

int
app_args_check_split(int argc, char **argv, const char *shortopts,
		     const struct option *longopts)
{
	char plus[128], words[SHOW_MAX + 4];
	const char *wexpr = NULL; /* the -w FILE:EXPR just before, if any */
	const char *split_w = NULL;
	int split_from = 0, split_to = 0, c;
	bool bare_w = false, final_split = false;

	/* in order (no permutation), to see which option each run of
	 * words follows */
	snprintf(plus, sizeof(plus), "+%s", shortopts);
	opterr = 0;
	optind = 0;
	for (;;) {
		c = getopt_long(argc, argv, plus, longopts, NULL);
		if (c == 'w') {
			wexpr = has_own_expr(optarg) ? optarg : NULL;
			bare_w |= wexpr == NULL;
			continue;
		}
		if (c != -1) {
			wexpr = NULL;
			continue;
		}
		if (optind >= argc)
			break;
		if (optind > 1 && strcmp(argv[optind - 1], "--") == 0) {
			/* after "--" every word is the expression's */
			if (wexpr != NULL && split_w == NULL) {
				split_w = wexpr;
				split_from = optind;
				split_to = argc;
				final_split = true;
			}
			break;
		}
		int to = optind;

		while (to < argc && !is_option(argv[to]))
			to++;
		if (wexpr != NULL && split_w == NULL) {
			split_w = wexpr;
			split_from = optind;
			split_to = to;
			final_split = to == argc;
		}
		wexpr = NULL;
		if (to >= argc)
			break;
		optind = to;
	}
	optind = 0; /* the real parse starts over, permuting */
	/* the last words after an output's own expression are the trailing
	 * expression of the outputs without one, where there are such */
	if (split_w == NULL || (final_split && bare_w))
		return 0;
	if (final_split && split_to - split_from == 1) {
		join_words(argv, split_from, split_to, words, sizeof(words));
		return -app_err("expression '%s' is used by no output: every -w has its "
				"own (FILE:EXPR)",
				words);
	}
	join_words(argv, split_from, split_to, words, sizeof(words));
	return -app_err("-w '%.*s%s' is followed by '%s': an output's expression is "
			"one argument: quote it, as -w '%.*s%s %s'",
			SHOW_MAX, split_w, strlen(split_w) > SHOW_MAX ? "..." : "", words,
			SHOW_MAX, split_w, strlen(split_w) > SHOW_MAX ? "..." : "",
			words);
}

int
app_args_check_expr(const struct app_opts *o, const char *filter_file)
{
	char shown[SHOW_MAX + 1];

	if (o->expr[0] == '\0' || o->nouts == 0)
		return 0;
	for (unsigned i = 0; i < o->nouts; i++)
		if (o->outs[i].expr == NULL)
			return 0;
	if (filter_file != NULL)
		return -app_err("-F %s: its expression is used by no output: every -w "
				"has its own (FILE:EXPR)",
				filter_file);
	snprintf(shown, sizeof(shown), "%s", o->expr);
	return -app_err("expression '%s%s' is used by no output: every -w has its own "
			"(FILE:EXPR)",
			shown, strlen(o->expr) > SHOW_MAX ? "..." : "");
}

/* Read all of fd, at most max bytes. @return a string, or NULL (errno). */
static char *
read_all(int fd, size_t max)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);

	if (buf == NULL)
		return NULL;
	for (;;) {
		ssize_t n;

		if (len + 1 >= cap) {
			char *nb;

			if (cap >= max) {
				free(buf);
				errno = EFBIG;
				return NULL;
			}
			nb = realloc(buf, cap * 2);
			if (nb == NULL) {
				free(buf);
				return NULL;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			free(buf);
			errno = e;
			return NULL;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	if (strlen(buf) != len) {
		free(buf);
		errno = EINVAL;
		return NULL;
	}
	return buf;
}

int
app_args_read_filter_file(const char *path, char **expr)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *s;

	if (fd < 0)
		return -app_err("-F %s: %s", path, strerror(errno));
	/* libpcap takes any length; 16 MiB is far past any real filter */
	s = read_all(fd, 16u << 20);
	if (s == NULL) {
		int e = errno;

		close(fd);
		if (e == EINVAL)
			return -app_err("-F %s: the file holds a NUL byte", path);
		return -app_err("-F %s: %s", path, strerror(e));
	}
	close(fd);
	/* as tcpdump: '#' starts a comment that runs to the end of its line */
	for (char *p = strchr(s, '#'); p != NULL; p = strchr(p, '#'))
		while (*p != '\0' && *p != '\n')
			*p++ = ' ';
	/* line ends are blanks to libpcap's scanner: one line for the
	 * error messages and the pcapng if_filter that quote it */
	for (char *p = s; *p != '\0'; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	*expr = s;
	return 0;
}
