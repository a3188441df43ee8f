/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The doctor's only way to the file system: every path it reads is a host
 * path ("/sys/bus/pci/devices/...") put under the root prefix here, so that
 * a test or a container can point the whole doctor at another tree, and
 * the report can name the host path as its evidence.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpucap/gcap_common.h"
#include "doctor_internal.h"

int
dr_root_set(struct dr *d, const char *root, char *errbuf)
{
	char real[PATH_MAX];
	struct stat st;

	if (root == NULL || root[0] == '\0')
		root = "/";
	if (realpath(root, real) == NULL || stat(real, &st) != 0 || !S_ISDIR(st.st_mode))
		return gcap_err(errbuf, ENOTDIR,
				"--doctor-root %s: not a "
				"directory",
				root);
	/* "/" itself is no prefix: host paths are used as they are */
	snprintf(d->root, sizeof(d->root), "%s", strcmp(real, "/") ? real : "");
	return 0;
}

static const char *
full(const struct dr *d, const char *path, char *buf, size_t n)
{
	if (snprintf(buf, n, "%s%s", d->root, path) >= (int)n)
		return NULL;
	return buf;
}

FILE *
dr_fopen(const struct dr *d, const char *path)
{
	char p[PATH_MAX];

	if (full(d, path, p, sizeof(p)) == NULL) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	return fopen(p, "r");
}

int
dr_read(const struct dr *d, const char *path, char *buf, size_t n)
{
	FILE *f = dr_fopen(d, path);
	int e;

	if (n == 0)
		return -EINVAL;
	buf[0] = '\0';
	if (f == NULL)
		return -errno;
	if (fgets(buf, (int)n, f) == NULL) {
		e = ferror(f) ? EIO : 0;
		fclose(f);
		return -e;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

int
dr_read_ll(const struct dr *d, const char *path, long long *v)
{
	char s[64], *end;
	int rc = dr_read(d, path, s, sizeof(s));

	if (rc)
		return rc;
	errno = 0;
	*v = strtoll(s, &end, 0);
	if (errno != 0 || end == s)
		return -EINVAL;
	return 0;
}

int
dr_link_base(const struct dr *d, const char *path, char *buf, size_t n)
{
	char p[PATH_MAX], t[PATH_MAX];
	const char *b;
	ssize_t len;

	if (full(d, path, p, sizeof(p)) == NULL)
		return -ENAMETOOLONG;
	len = readlink(p, t, sizeof(t) - 1);
	if (len < 0)
		return -errno;
	t[len] = '\0';
	b = strrchr(t, '/');
	snprintf(buf, n, "%s", b ? b + 1 : t);
	return 0;
}

int
dr_real(const struct dr *d, const char *path, char *buf, size_t n)
{
	char p[PATH_MAX], r[PATH_MAX];
	size_t rl = strlen(d->root);

	if (full(d, path, p, sizeof(p)) == NULL)
		return -ENAMETOOLONG;
	if (realpath(p, r) == NULL)
		return -errno;
	/* a link that leaves the tree is not the tree's */
	if (rl > 0 && (strncmp(r, d->root, rl) != 0 || r[rl] != '/'))
		return -EXDEV;
	snprintf(buf, n, "%s", r + rl);
	return 0;
}

bool
dr_exists(const struct dr *d, const char *path)
{
	char p[PATH_MAX];

	return full(d, path, p, sizeof(p)) != NULL && access(p, F_OK) == 0;
}

static int
no_dots(const struct dirent *e)
{
	return strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
}

int
dr_scan(const struct dr *d, const char *path, struct dirent ***list)
{
	char p[PATH_MAX];
	int n;

	*list = NULL;
	if (full(d, path, p, sizeof(p)) == NULL)
		return -ENAMETOOLONG;
	n = scandir(p, list, no_dots, alphasort);
	if (n < 0)
		return -errno;
	return n;
}

void
dr_scan_free(struct dirent **list, int n)
{
	for (int i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

bool
dr_find_lib(const struct dr *d, const char *name, char *buf, size_t n)
{
	static const char *const dirs[] = {
		"/usr/lib/x86_64-linux-gnu",
		"/usr/lib/aarch64-linux-gnu",
		"/usr/lib64",
		"/usr/lib",
		"/lib/x86_64-linux-gnu",
		"/lib/aarch64-linux-gnu",
		"/lib64",
		"/lib",
		"/usr/local/lib",
	};

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(buf, n, "%s/%s", dirs[i], name);
		if (dr_exists(d, buf))
			return true;
	}
	buf[0] = '\0';
	return false;
}
