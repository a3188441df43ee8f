/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --config FILE (see config.h): the file is read with libinih, one
 * "key = value" a line, # and ; comments, an optional [gpu-capture]
 * section. Every key is a long option of the getopt table, so an option
 * added there is a key at once, and its value goes through the same
 * parser as the command line's. libinih hands the handler no line number:
 * the reader counts the lines it gives it.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ini.h>

#include "app_err.h"
#include "config.h"

const char *app_err_where;

struct cfg_parse {
	struct app_config *cfg;
	FILE *f;
	unsigned line;
	bool indented; /* the line read last starts with a blank */
	bool failed;
	const struct option *longopts;
	const int *seen;            /* what getopt returned for the command line */
	const char *const *seenarg; /* and its optarg (NULL: none) */
	int nseen;
};

static int __attribute__((format(printf, 2, 3)))
cfg_err(struct cfg_parse *p, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (p->cfg->path == NULL)
		app_err("%s", msg);
	else
		app_err("%s:%u: %s", p->cfg->path, p->line, msg);
	p->failed = true;
	return 0;
}

/* libinih's fgets: counts lines; a line longer than libinih's buffer
 * (its build's INI_MAX_LINE) is refused rather than cut. */
static char *
cfg_read(char *s, int num, void *stream)
{
	struct cfg_parse *p = stream;
	size_t n;

	if (p->failed || fgets(s, num, p->f) == NULL)
		return NULL;
	p->line++;
	n = strlen(s);
	if (n == (size_t)num - 1 && s[n - 1] != '\n' && !feof(p->f)) {
		cfg_err(p,
			"line longer than %d characters (continue the expression "
			"on indented lines)",
			num - 2);
		return NULL;
	}
	p->indented = s[0] == ' ' || s[0] == '\t';
	/* a section is checked on its own line (libinih reports none) */
	n = strspn(s, " \t");
	if (s[n] == '[' && strncmp(s + n, "[gpu-capture]", 13) != 0) {
		cfg_err(p,
			"unknown section %.*s (keys go before any section or under "
			"[gpu-capture])",
			(int)strcspn(s + n, "\r\n"), s + n);
		return NULL;
	}
	return s;
}

static int
parse_bool(const char *v, bool *out)
{
	static const char *const yes[] = { "true", "yes", "on", "1" };
	static const char *const no[] = { "false", "no", "off", "0" };

	for (unsigned i = 0; i < 4; i++) {
		if (strcasecmp(v, yes[i]) == 0)
			return *out = true, 0;
		if (strcasecmp(v, no[i]) == 0)
			return *out = false, 0;
	}
	return -1;
}

/* Append arg (malloc'd, taken) from line to l, the arrays doubled when
 * full: an expression given as words is one argument per word, tens of
 * thousands of them, and growing by one each would copy them all at every
 * word. @return 0 or -ENOMEM. */
static int
cfg_add(struct app_config_args *l, unsigned line, char *arg)
{
	if (l->argc == l->cap) {
		int cap = l->cap ? 2 * l->cap : 16;
		char **a = realloc(l->argv, ((size_t)cap + 1) * sizeof(*a));
		unsigned *ln;

		if (a != NULL)
			l->argv = a;
		ln = a != NULL ? realloc(l->lines, (size_t)cap * sizeof(*ln)) : NULL;
		if (ln != NULL)
			l->lines = ln;
		if (a == NULL || ln == NULL) {
			free(arg);
			return -ENOMEM;
		}
		l->cap = cap;
	}
	l->lines[l->argc] = line;
	l->argv[l->argc++] = arg;
	l->argv[l->argc] = NULL;
	return 0;
}

/* Append arg to the merged arguments. @return 1, or 0 after the error. */
static int
cfg_push(struct cfg_parse *p, char *arg)
{
	if (arg == NULL || cfg_add(&p->cfg->args, p->line, arg) < 0)
		return cfg_err(p, "out of memory");
	return 1;
}

/* The KEY of -b's and -a's KEY:VALUE (its length up to the ':'). */
static size_t
cond_key(const char *v)
{
	const char *c = strchr(v, ':');

	return c != NULL ? (size_t)(c - v) : strlen(v);
}

/* tcpdump's rotation (-C, -G, -W) and dumpcap's (-b) name files apart
 * and do not mix: either kind on the command line replaces the file's of
 * the other. */
static bool
other_rotation(int a, int b)
{
	bool ta = a == 'C' || a == 'G' || a == 'W', tb = b == 'C' || b == 'G' || b == 'W';

	return (ta && b == 'b') || (a == 'b' && tb);
}

/* Whether the command line gives val (with value v), or for -i and -r,
 * another input (-i, -r, -V): an input on the command line replaces the
 * file's, and a rotation of one kind the file's of the other. -b and -a
 * hold several conditions: one replaces the file's of its own KEY only
 * (-b packets:N leaves the file's files:N a bound). */
static bool
cmdline_gives(const struct cfg_parse *p, int val, const char *v)
{
	for (int i = 0; i < p->nseen; i++) {
		if (other_rotation(val, p->seen[i]))
			return true;
		if ((val == 'b' || val == 'a') && p->seen[i] == val) {
			const char *s = p->seenarg[i];
			size_t n = cond_key(v);

			if (s != NULL && cond_key(s) == n && strncmp(s, v, n) == 0)
				return true;
			continue;
		}
		if (p->seen[i] == val ||
		    ((val == 'i' || val == 'r') &&
		     (p->seen[i] == 'i' || p->seen[i] == 'r' || p->seen[i] == 'V')))
			return true;
	}
	return false;
}

static int
cfg_key(void *user, const char *section, const char *name, const char *value)
{
	struct cfg_parse *p = user;
	struct app_config *c = p->cfg;
	const struct option *o;
	char *arg = NULL;
	bool on;

	if (p->failed)
		return 0;
	if (section[0] != '\0' && strcmp(section, "gpu-capture") != 0)
		return cfg_err(p,
			       "unknown section [%s] (keys go before any section or "
			       "under [gpu-capture])",
			       section);
	if (strcmp(name, "expression") == 0) {
		size_t n = c->expr ? strlen(c->expr) : 0;
		char *e;

		if (c->expr != NULL && !p->indented)
			return cfg_err(p, "expression given twice (continue it on "
					  "indented lines)");
		e = realloc(c->expr, n + strlen(value) + 2);
		if (e == NULL)
			return cfg_err(p, "out of memory");
		sprintf(e + n, "%s%s", n ? " " : "", value);
		c->expr = e;
		return 1;
	}
	if (p->indented)
		return cfg_err(p,
			       "'%s': only the expression continues on an indented "
			       "line",
			       name);
	for (o = p->longopts; o->name != NULL; o++)
		if (strcmp(o->name, name) == 0)
			break;
	if (o->name == NULL || strcmp(name, "config") == 0 || strcmp(name, "help") == 0 ||
	    strcmp(name, "version") == 0)
		return cfg_err(p,
			       "unknown key '%s' (keys are the long options of "
			       "--help, and expression)",
			       name);
	if (o->has_arg == no_argument) {
		if (parse_bool(value, &on) < 0)
			return cfg_err(p,
				       "invalid value '%s' for %s (expected true or "
				       "false)",
				       value, name);
		if (!on)
			return 1;
		if (asprintf(&arg, "--%s", name) < 0)
			arg = NULL;
	} else if (asprintf(&arg, "--%s=%s", name, value) < 0) {
		arg = NULL;
	}
	if (arg == NULL)
		return cfg_err(p, "out of memory");
	/* every entry is checked by the options parser, replaced or not */
	if (cfg_add(&c->all, p->line, arg) < 0)
		return cfg_err(p, "out of memory");
	if (cmdline_gives(p, o->val, value))
		return 1; /* the command line's wins */
	return cfg_push(p, strdup(arg));
}

static int
cfg_read_file(struct cfg_parse *p)
{
	int r;

	struct stat st;

	p->f = fopen(p->cfg->path, "re");
	if (p->f == NULL)
		return -app_err("cannot read configuration '%s': %s", p->cfg->path,
				strerror(errno));
	/* as root the file says what runs as root (kernel =, eal = -d
	 * PLUGIN, where root writes): only root may have written it, as
	 * sudo and logrotate ask of theirs */
	if (geteuid() == 0 && fstat(fileno(p->f), &st) == 0 &&
	    (st.st_uid != 0 || (st.st_mode & 022) != 0)) {
		fclose(p->f);
		return -app_err("configuration '%s' is %s: a run as root takes its keys "
				"from root's file only (chown root, chmod go-w)",
				p->cfg->path,
				st.st_uid != 0 ? "not root's" :
						 "writable by others than root");
	}
	/* a value is the whole rest of its line: '; ' belongs to a path */
	ini_allow_inline_comments = false;
	r = ini_parse_stream(cfg_read, p, cfg_key, p);
	if (r == 0 && ferror(p->f)) {
		p->line++;
		cfg_err(p, "read error: %s", strerror(errno));
	}
	fclose(p->f);
	if (r > 0 && !p->failed) {
		p->line = (unsigned)r;
		cfg_err(p, "expected 'key = value', a [section] or a comment");
	}
	if (r < 0 && !p->failed)
		return -app_err("%s: out of memory", p->cfg->path);
	return p->failed ? -1 : 0;
}

int
app_config_merge(int argc, char **argv, const char *shortopts,
		 const struct option *longopts, int config_val, struct app_config *cfg)
{
	struct cfg_parse p = { .cfg = cfg, .longopts = longopts };
	size_t nopts = 1;
	int *seen, c, rc = -1;
	const char **seenarg;

	/* one option a letter at most: a word may cluster several (-nnvU) */
	for (int i = 1; i < argc; i++)
		nopts += strlen(argv[i]);
	seen = calloc(nopts, sizeof(*seen));
	seenarg = calloc(nopts, sizeof(*seenarg));

	memset(cfg, 0, sizeof(*cfg));
	if (seen == NULL || seenarg == NULL) {
		free(seen);
		free(seenarg);
		return -app_err("out of memory");
	}
	/* which options the command line gives, and the file */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (c == config_val && cfg->path != NULL) {
			app_err("--config given twice");
			goto out;
		}
		if (c == config_val && (cfg->path = strdup(optarg)) == NULL) {
			app_err("out of memory");
			goto out;
		}
		seenarg[p.nseen] = optarg;
		seen[p.nseen++] = c;
	}
	optind = 0;
	p.seen = seen;
	p.seenarg = seenarg;
	if (cfg_push(&p, strdup(argv[0])) == 0 ||
	    cfg_add(&cfg->all, 0, strdup(argv[0])) < 0)
		goto out;
	if (cfg->path != NULL && cfg_read_file(&p) < 0)
		goto out;
	cfg->nfile = cfg->args.argc - 1;
	for (int i = 1; i < argc; i++)
		if (cfg_push(&p, strdup(argv[i])) == 0)
			goto out;
	rc = 0;
out:
	free(seen);
	free(seenarg);
	return rc;
}

const char *
app_config_where(struct app_config *cfg, const struct app_config_args *l, int idx)
{
	if (idx < 1 || idx >= l->argc || (l == &cfg->args && idx > cfg->nfile))
		return NULL;
	snprintf(cfg->where, sizeof(cfg->where), "%s:%u", cfg->path, l->lines[idx]);
	return cfg->where;
}

static void
args_free(struct app_config_args *l)
{
	for (int i = 0; i < l->argc; i++)
		free(l->argv[i]);
	free(l->argv);
	free(l->lines);
}

void
app_config_free(struct app_config *cfg)
{
	args_free(&cfg->args);
	args_free(&cfg->all);
	free(cfg->path);
	free(cfg->expr);
	memset(cfg, 0, sizeof(*cfg));
}
