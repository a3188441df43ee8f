/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shape of gpu-capture's command line (args.c): an output's own
 * expression in one argument, the expression from -F FILE, no expression
 * that no output uses, and the tcpdump/dumpcap options mapped onto ours.
 */
#ifndef GCAP_APP_ARGS_H
#define GCAP_APP_ARGS_H

#include <getopt.h>

#include "options.h"

/*
 * Before the options are parsed (getopt then permutes argv): refuse words
 * that follow a -w FILE:EXPR as if they continued its expression (in the
 * middle of the options, or at the end when every output has its own
 * expression). @return 0, or -1 after printing the error.
 */
int app_args_check_split(int argc, char **argv, const char *shortopts,
			 const struct option *longopts);

/*
 * After the options: refuse an expression (the trailing words, or -F's
 * file when filter_file is not NULL) that no output uses.
 * @return 0, or -1 after printing the error.
 */
int app_args_check_expr(const struct app_opts *o, const char *filter_file);

/*
 * -F FILE: the expression in FILE, '#' comments blanked as tcpdump does.
 * @return 0 with *expr malloc'd, or -1 after printing the error.
 */
int app_args_read_filter_file(const char *path, char **expr);

/*
 * A strict unsigned value of option opt: digits only, in [min, max].
 * @return 0, or -1 after printing the error.
 */
int
app_args_u64(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out);

/*
 * -b KEY:VALUE, dumpcap's ring buffer (packets, filesize in kB of 1,000
 * bytes, duration, interval, files, nametimenum) onto the rotation's
 * fields; any -b names the files as dumpcap does (ring_buffer).
 * @return 0, or -1 after printing the error.
 */
int app_args_ring_buffer(const char *s, struct app_opts *o);

/*
 * -a COND:VALUE, dumpcap's autostop conditions (duration, filesize in kB
 * of 1,000 bytes, files, packets), into o; the first condition met stops.
 * @return 0, or -1 after printing the error.
 */
int app_args_autostop(const char *arg, struct app_opts *o);

/*
 * dumpcap's --capture-comment TEXT into o: UTF-8 text of 1 to 65,532
 * bytes (a pcapng string option), at most GCAP_WRITER_MAX_COMMENTS.
 * @return 0, or -1 after printing the error.
 */
int app_args_comment(struct app_opts *o, const char *text);

/*
 * tcpdump's -Q DIRECTION (in, out or inout, any case) into o.
 * @return 0, or -1 after printing the error.
 */
int app_args_direction(struct app_opts *o, const char *dir);

/*
 * With the inputs and outputs known: -Q out refused on ports (their RX
 * queues see what they receive; -r ignores -Q, as tcpdump), and
 * --capture-comment where an output is pcap. @return 0, or -1 after
 * printing the error.
 */
int app_args_check_habits(const struct app_opts *o);

/*
 * After the options: -i N resolved, -D and -L printed (@return 1, exit 0),
 * -y checked against the ports, -B and --immediate-mode mapped onto
 * --ring, --busy-poll and -U. @return 0 to go on, 1 when done, -1 after
 * printing the error.
 */
int app_args_finish(struct app_opts *o);

/*
 * getopt's error for word (argv[optind - 1]) and optopt, in one line: a
 * flag given a value (hint follows), a letter that takes one (':' after
 * it in shortopts) without it, a long option without its value, or an
 * unknown option.
 * @return -1 after printing it.
 */
int app_args_bad_option(const char *word, int optopt, const char *shortopts,
			const struct option *longopts, const char *hint);

#endif
