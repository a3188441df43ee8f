/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where the loader finds gpucap/gcap_kernel.h (see kfile.h). An installed
 * gpucap finds its own headers from where its code lies (the program in
 * bindir, or libgpucap in libdir, wherever the tree was installed or
 * copied: DESTDIR, a relocated prefix); only code that lies in its build
 * tree uses the source tree beside it, so an installed program never reads
 * the tree it was built from.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gcap_config.h"
#include "kfile.h"

#ifndef GCAP_KHOST_INSTALL_INCDIR
#define GCAP_KHOST_INSTALL_INCDIR "/usr/local/include"
#endif
/* includedir relative to bindir and to libdir (kernels/meson.build) */
#ifndef GCAP_KHOST_REL_INCDIRS
#define GCAP_KHOST_REL_INCDIRS "../include", "../include"
#endif

static bool
has_header(const char *dir)
{
	char p[PATH_MAX];

	if (dir == NULL || dir[0] == '\0')
		return false;
	if (snprintf(p, sizeof(p), "%s/gpucap/gcap_kernel.h", dir) >= (int)sizeof(p))
		return false;
	return access(p, R_OK) == 0;
}

static int
take(const char *dir, char *buf, size_t n)
{
	if (snprintf(buf, n, "%s", dir) >= (int)n)
		return -1;
	return 0;
}

/* The directory of the file holding this code (the program, or
 * libgpucap.so), resolved; false when unknown. */
static bool
code_dir(char *dir, size_t n)
{
	Dl_info info;
	char real[PATH_MAX];
	char *sl;

	if (dladdr((void *)code_dir, &info) == 0 || info.dli_fname == NULL)
		return false;
	/* a program's dli_fname is argv[0]-like: /proc/self/exe is sure */
	if (strchr(info.dli_fname, '/') == NULL ||
	    realpath(info.dli_fname, real) == NULL) {
		ssize_t l = readlink("/proc/self/exe", real, sizeof(real) - 1);

		if (l <= 0)
			return false;
		real[l] = '\0';
	}
	sl = strrchr(real, '/');
	if (sl == NULL || (size_t)(sl - real) >= n)
		return false;
	memcpy(dir, real, (size_t)(sl - real));
	dir[sl - real] = '\0';
	return true;
}

int
gcap_kfile_incdir(const char *given, char *buf, size_t n)
{
	static const char *const rel[] = { GCAP_KHOST_REL_INCDIRS };
	const char *e = getenv("GCAP_INCLUDE_DIR");
	char dir[PATH_MAX], p[PATH_MAX];

	if (given != NULL && given[0] != '\0')
		return has_header(given) ? take(given, buf, n) : -1;
	if (e != NULL && e[0] != '\0')
		return has_header(e) ? take(e, buf, n) : -1;
	if (code_dir(dir, sizeof(dir))) {
		/* installed: includedir relative to bindir, then to libdir */
		for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
			if (rel[i][0] == '\0')
				continue;
			if (snprintf(p, sizeof(p), "%s/%s", dir, rel[i]) <
				    (int)sizeof(p) &&
			    has_header(p) && realpath(p, buf) != NULL && strlen(buf) < n)
				return 0;
		}
		/* in the build tree: the source tree's headers */
		size_t bl = strlen(GCAP_BUILD_ROOT);

		if (strncmp(dir, GCAP_BUILD_ROOT, bl) == 0 &&
		    (dir[bl] == '/' || dir[bl] == '\0'))
			return has_header(GCAP_SOURCE_ROOT "/include") ?
				       take(GCAP_SOURCE_ROOT "/include", buf, n) :
				       -1;
	}
	return has_header(GCAP_KHOST_INSTALL_INCDIR) ?
		       take(GCAP_KHOST_INSTALL_INCDIR, buf, n) :
		       -1;
}
