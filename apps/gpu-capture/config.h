/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --config FILE: an INI file (libinih) whose keys are gpu-capture's long
 * options, turned into "--key=value" arguments placed before the command
 * line's, so that one parser (options.c) checks both and the command line
 * wins.
 */
#ifndef GCAP_APP_CONFIG_H
#define GCAP_APP_CONFIG_H

#include <getopt.h>

/* Arguments for getopt_long, each with the file line it comes from. */
struct app_config_args {
	char **argv; /* NULL-terminated */
	int argc;
	int cap; /* argv holds cap + 1 pointers, lines cap entries */
	unsigned *lines;
};

struct app_config {
	struct app_config_args args; /* argv[0], the file's options the
				      * command line leaves, the command line's */
	struct app_config_args all;  /* argv[0] and every option of the file */
	int nfile;                   /* args.argv[1..nfile] come from the file */
	char *path;                  /* the file, or NULL */
	char *expr;                  /* its expression (continued on indented lines) */
	char where[4200];
};

/*
 * Read the --config file named on the command line (argc, argv), if any,
 * and build cfg->args: argv[0], "--key=value" for each of the file's keys
 * whose option the command line does not give (so -i or -w on the command
 * line replaces all the file's), then argv[1..]; and cfg->all, every key
 * of the file, for the parser to check the values the command line
 * replaces too. Keys are the long names
 * of longopts except "config", "help" and "version", plus "expression"
 * (used when the command line has none). Flags take true or false.
 * config_val is the value getopt returns for --config.
 * @return 0, or -1 after printing one error line naming the file and line.
 */
int
app_config_merge(int argc, char **argv, const char *shortopts,
		 const struct option *longopts, int config_val, struct app_config *cfg);

/* "FILE:LINE" of l->argv[idx] (l: &cfg->args or &cfg->all) when it
 * comes from the file, else NULL. */
const char *
app_config_where(struct app_config *cfg, const struct app_config_args *l, int idx);

/* Free what app_config_merge() allocated. */
void app_config_free(struct app_config *cfg);

#endif
