/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shape of gpu-capture's command line (args.c): an output's own
 * expression in one argument, the expression from -F FILE, and no
 * expression that no output uses.
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

#endif
