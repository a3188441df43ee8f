/* SPDX-License-Identifier: BSD-3-Clause */
/* A kernel's files read from disk (kfile.c), for the loader. */
#ifndef GCAP_KFILE_H
#define GCAP_KFILE_H

#include <stddef.h>

/* A whole file in a malloc'd NUL-terminated buffer (len may be NULL).
 * NULL with errno set. */
char *gcap_kfile_read(const char *path, size_t *len);

/*
 * gpucap/gcap_kernel.h under incdir, its parts inlined, in a malloc'd
 * NUL-terminated buffer; *len gets its length. NULL with errno set
 * (ENOENT, ENOMEM, ELOOP past 8 levels of parts, E2BIG past their list).
 */
char *gcap_kfile_header(const char *incdir, size_t *len);

/*
 * The directory holding gpucap/gcap_kernel.h, into buf (n bytes): given
 * (gcap_khost_opts.include_dir) if not NULL, else $GCAP_INCLUDE_DIR, else
 * the install's include directory found from where this code lies, else,
 * for code in its build tree only, the source tree's, else the configured
 * prefix's (kincdir.c). @return 0, or -1 when none holds the header.
 */
int gcap_kfile_incdir(const char *given, char *buf, size_t n);

#endif /* GCAP_KFILE_H */
