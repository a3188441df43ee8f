/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shape of gpu-capture's command line, as a tcpdump user writes it:
 * options anywhere (getopt permutes argv, as tcpdump's does), the
 * expression from the trailing words or from a file (-F, as tcpdump
 * reads it), an output's own expression in one argument (-w FILE:EXPR),
 * no expression that no output would use; and the tcpdump and dumpcap
 * options that map onto gpu-capture's own: -D, -L, -y, -i N (portlist.c),
 * -B, --immediate-mode, -a, -b, -Q, --capture-comment, and which
 * rotations mix; strict numbers; and what a bad option was, in one line.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpucap/gcap_utf8.h"
#include "app_err.h"
#include "args.h"
#include "portlist.h"

/* the longest piece of an argument an error line quotes */
#define SHOW_MAX 60
/* the packet data of one mbuf (RTE_MBUF_DEFAULT_DATAROOM) */
#define RING_MBUF_BYTES 2048u

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

int
app_args_u64(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (s[0] < '0' || s[0] > '9')
		goto bad;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		goto bad;
	*out = v;
	return 0;
bad:
	return -app_err("invalid value '%s' for %s (expected an integer from %" PRIu64
			" to %" PRIu64 ")",
			s, opt, min, max);
}

int
app_args_ring_buffer(const char *s, struct app_opts *o)
{
	const char *val = strchr(s, ':');
	size_t k = val != NULL ? (size_t)(val - s) : 0;
	uint64_t v;

	o->ring_buffer = true;
#define RB_KEY(name) (k == strlen(name) && strncmp(s, name, k) == 0)
	if (val != NULL && RB_KEY("packets")) {
		if (app_args_u64("-b packets", val + 1, 1, UINT64_MAX, &v) < 0)
			return -1;
		o->rotate_packets = v;
	} else if (val != NULL && RB_KEY("filesize")) {
		if (app_args_u64("-b filesize", val + 1, 1, UINT64_MAX / 1000u, &v) < 0)
			return -1;
		o->rotate_bytes = v * 1000u; /* dumpcap's kB: 1000 bytes */
	} else if (val != NULL && RB_KEY("duration")) {
		if (app_args_u64("-b duration", val + 1, 1, UINT32_MAX, &v) < 0)
			return -1;
		o->rotate_secs = (uint32_t)v;
	} else if (val != NULL && RB_KEY("interval")) {
		if (app_args_u64("-b interval", val + 1, 1, UINT32_MAX, &v) < 0)
			return -1;
		o->rotate_interval = (uint32_t)v;
	} else if (val != NULL && RB_KEY("nametimenum")) {
		/* dumpcap's: 1 the number first, any more the time first */
		if (app_args_u64("-b nametimenum", val + 1, 1, UINT32_MAX, &v) < 0)
			return -1;
		o->names_timenum = v > 1;
	} else if (val != NULL && RB_KEY("files")) {
		if (app_args_u64("-b files", val + 1, 1, 100000, &v) < 0)
			return -1;
		o->max_files = (uint32_t)v;
	} else {
		return -app_err(
			"-b '%s': expected packets:N, filesize:KB, duration:SECONDS, "
			"interval:SECONDS, files:N or nametimenum:N",
			s);
	}
#undef RB_KEY
	return 0;
}

int
app_args_autostop(const char *arg, struct app_opts *o)
{
	const char *v = strchr(arg, ':');
	size_t klen = v != NULL ? (size_t)(v - arg) : 0;
	char *end;
	unsigned long long n;

	if (v == NULL || v[1] < '0' || v[1] > '9')
		goto bad;
	errno = 0;
	n = strtoull(v + 1, &end, 10);
	if (errno != 0 || *end != '\0' || n == 0)
		goto bad;
	/* the first condition met stops the capture, as in dumpcap */
	if (klen == 8 && strncmp(arg, "duration", 8) == 0 && n <= UINT32_MAX) {
		if (o->autostop_secs == 0 || n < o->autostop_secs)
			o->autostop_secs = (unsigned)n;
	} else if (klen == 7 && strncmp(arg, "packets", 7) == 0) {
		if (o->autostop_packets == 0 || n < o->autostop_packets)
			o->autostop_packets = n;
	} else if (klen == 8 && strncmp(arg, "filesize", 8) == 0 &&
		   n <= UINT64_MAX / 1000) {
		/* dumpcap's kB: 1,000 bytes */
		if (o->autostop_bytes == 0 || n * 1000 < o->autostop_bytes)
			o->autostop_bytes = n * 1000;
	} else if (klen == 5 && strncmp(arg, "files", 5) == 0 && n <= UINT32_MAX) {
		if (o->autostop_files == 0 || n < o->autostop_files)
			o->autostop_files = (uint32_t)n;
	} else
		goto bad;
	return 0;
bad:
	return -app_err("-a '%s': expected duration:SECONDS, filesize:KB, files:N or "
			"packets:N (a positive integer)",
			arg);
}

/* -B KiB: the packets a queue holds between the port and the outputs
 * are its ring's, --ring batches of --batch mbufs of 2 KiB of data each */
static int
apply_buffer(struct app_opts *o)
{
	/* never below the default ring: -B asks for room (tcpdump's 4096,
	 * libpcap's 2 MiB would be smaller than the default's 8 MiB) */
	uint64_t bytes = (uint64_t)o->buffer_kib * 1024u,
		 per_batch = (uint64_t)o->batch * RING_MBUF_BYTES,
		 ring = APP_DEFAULT_RING;

	if (o->ring != APP_DEFAULT_RING)
		return -app_err("-B and --ring both size the ring: give one");
	while (ring * per_batch < bytes && ring < 4096)
		ring *= 2;
	if (ring * per_batch < bytes)
		return -app_err("-B %u: more than the largest ring holds (--ring 4096 of "
				"--batch %u: %" PRIu64 " KiB)",
				o->buffer_kib, o->batch, 4096 * per_batch / 1024);
	o->ring = (unsigned)ring;
	return 0;
}

/* -C, -G, -W (tcpdump's names) and -b (dumpcap's): one kind, a
 * condition that ends a file, files to name. @return 0, or -1 after the
 * error line. */
static int
rotation_check(const struct app_opts *o)
{
	bool rotates = app_opts_rotates(o);

	/* the two name their files apart: tcpdump FILE, FILE1, ...;
	 * dumpcap PREFIX_00001_TIME.EXT, ... */
	if (o->ring_buffer && o->tcpdump_rotation)
		return -app_err("-b names files as dumpcap does, -C, -G and -W as "
				"tcpdump does: give one kind");
	if (o->ring_buffer && !rotates)
		return -app_err("-b needs a condition to switch files: packets:N, "
				"filesize:KB, duration:SECONDS or interval:SECONDS");
	if (o->max_files != 0 && !rotates)
		return -app_err("-W needs -C or -G");
	for (unsigned i = 0; i < o->nouts && (rotates || o->max_files != 0); i++)
		if (strcmp(o->outs[i].path, "-") == 0)
			return -app_err("%s write%s files, not standard output (-w -)",
					o->ring_buffer ? "-b" : "-C, -G and -W",
					o->ring_buffer ? "s" : "");
	return 0;
}

int
app_args_finish(struct app_opts *o)
{
	for (unsigned i = 0; i < o->nports; i++) {
		if (app_portlist_resolve(o->doctor_conf.root, o->ports[i],
					 &o->port_names[i]) < 0)
			return -1;
		if (o->port_names[i] != NULL)
			o->ports[i] = o->port_names[i];
	}
	if (o->list_ports)
		return app_portlist_print(o->doctor_conf.root) == 0 ? 1 : -1;
	if (o->list_linktypes) {
		if (o->nports == 0)
			return -app_err(
				"-L lists the link types of the -i ports: give one");
		return app_portlist_print_linktypes(o->ports, o->nports) == 0 ? 1 : -1;
	}
	if (o->linktype_name != NULL) {
		if (o->read_file != NULL)
			return -app_err(
				"-y sets a port's link type; -r reads the file's");
		if (app_portlist_check_linktype(o->linktype_name, o->ports, o->nports) <
		    0)
			return -1;
	}
	/* -a beside --duration and -c: the first limit reached stops */
	if (o->autostop_secs != 0 && (o->duration == 0 || o->autostop_secs < o->duration))
		o->duration = o->autostop_secs;
	if (o->autostop_packets != 0 && (o->count == 0 || o->autostop_packets < o->count))
		o->count = o->autostop_packets;
	if (rotation_check(o) < 0)
		return -1;
	if (o->autostop_bytes != 0 && o->rotate_bytes != 0)
		return -app_err(
			"-a filesize: and %s both end a file by its size: give one",
			o->ring_buffer ? "-b filesize:" : "-C");
	if (o->autostop_files != 0 && !app_opts_rotates(o))
		return -app_err("-a files: counts the files of -C, -G or -b: give one");
	if (o->autostop_bytes != 0 || o->autostop_files != 0)
		for (unsigned i = 0; i < o->nouts; i++)
			if (strcmp(o->outs[i].path, "-") == 0)
				return -app_err("-a filesize: and files: count files, "
						"not standard output");
	if (o->buffer_kib != 0 && apply_buffer(o) < 0)
		return -1;
	/* libpcap's immediate mode: every packet handed on as it comes, no
	 * wait for more: no sleep on an idle queue, outputs flushed at
	 * every batch (a batch is what one poll received) */
	if (o->immediate) {
		o->busy_poll = true;
		o->packet_buffered = true;
	}
	return 0;
}

int
app_args_comment(struct app_opts *o, const char *text)
{
	if (o->ncomments == GCAP_WRITER_MAX_COMMENTS)
		return -app_err("--capture-comment: at most %u",
				GCAP_WRITER_MAX_COMMENTS);
	/* a pcapng option's value: 16 bits of length, padded */
	if (text[0] == '\0' || strlen(text) > 0xfffc)
		return -app_err("--capture-comment: 1 to 65532 bytes");
	if (!gcap_utf8_valid(text))
		return -app_err("--capture-comment: not UTF-8 text (pcapng's strings are "
				"UTF-8)");
	o->comments_bytes += 4 + ((strlen(text) + 3) & ~(size_t)3);
	if (o->comments_bytes > GCAP_WRITER_COMMENTS_MAX_BYTES)
		return -app_err("--capture-comment: more than %u KiB in all (libpcap "
				"refuses a section header over 1 MiB)",
				GCAP_WRITER_COMMENTS_MAX_BYTES / 1024u);
	o->comments[o->ncomments++] = text;
	return 0;
}

int
app_args_direction(struct app_opts *o, const char *dir)
{
	if (strcasecmp(dir, "in") != 0 && strcasecmp(dir, "out") != 0 &&
	    strcasecmp(dir, "inout") != 0)
		return -app_err("-Q '%s': expected in, out or inout", dir);
	o->direction_out = strcasecmp(dir, "out") == 0;
	return 0;
}

int
app_args_check_habits(const struct app_opts *o)
{
	if (o->read_file == NULL && o->direction_out)
		return -app_err("-Q out: the ports' RX queues see what they receive, not "
				"what they send");
	for (unsigned i = 0; i < o->nouts && o->ncomments > 0; i++) {
		bool chosen = o->fmt == GCAP_FMT_PCAP; /* -P or --format pcap */

		if (gcap_writer_fmt_of(o->outs[i].path, o->fmt) == GCAP_FMT_PCAP)
			return -app_err(
				"--capture-comment: -w %s is pcap%s, which has no "
				"place for it: write pcapng (%s)",
				o->outs[i].path, chosen ? " (-P or --format pcap)" : "",
				chosen ? "--format pcapng" :
					 "--format pcapng, or a name ending in "
					 ".pcapng");
	}
	return 0;
}

/* Whether getopt's error is for word, a flag of longopts (val) given as
 * --NAME=VALUE (NAME as getopt takes it: whole or a prefix); not where
 * word only precedes a cluster whose letter was the error. */
static bool
flag_with_value(const char *word, int val, const struct option *longopts)
{
	size_t len = strcspn(word, "=");

	if (val == 0 || strncmp(word, "--", 2) != 0 || word[len] != '=')
		return false;
	for (const struct option *l = longopts; l->name != NULL; l++)
		if (l->has_arg == no_argument && l->val == val &&
		    strncmp(l->name, word + 2, len - 2) == 0)
			return true;
	return false;
}

int
app_args_bad_option(const char *word, int optopt, const char *shortopts,
		    const struct option *longopts, const char *hint)
{
	const char *letter = optopt > 0 && optopt <= 0xff && optopt != ':' ?
				     strchr(shortopts, optopt) :
				     NULL;

	/* --flag=VALUE: getopt names the flag's letter, or takes it for a
	 * missing value */
	if (flag_with_value(word, optopt, longopts))
		return -app_err("option '%.*s' takes no value%s", (int)strcspn(word, "="),
				word, hint);
	if (letter != NULL && letter[1] == ':')
		return -app_err("option -%c needs a value", optopt);
	if (optopt > 0xff) /* a long option's value */
		return -app_err("option '%s' needs a value", word);
	if (optopt != 0)
		return -app_err("unknown option -%c (see --help)", optopt);
	return -app_err("unknown or incomplete option '%s' (see --help)", word);
}
