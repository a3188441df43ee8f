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

#endif /* GCAP_KFILE_H */
