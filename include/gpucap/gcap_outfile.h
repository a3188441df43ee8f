/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Opening the files a run writes (capture files, --summary-json, the
 * kernel state) so that a symbolic link another user planted in a shared
 * directory such as /tmp is not followed.
 */
#ifndef GCAP_OUTFILE_H
#define GCAP_OUTFILE_H

#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * open(2) for an output file. Where the file's directory is sticky and
 * writable by others (/tmp), O_NOFOLLOW is added, as the kernel's
 * fs.protected_symlinks would: a symbolic link there, dangling or not,
 * is refused rather than written through or created at its target.
 * @param errbuf  GCAP_ERRBUF_SIZE bytes (NULL allowed): "cannot write
 *                'PATH': why", one line
 * @return the descriptor; -ELOOP (a symbolic link refused); open's
 *         -errno.
 */
int gcap_open_output(const char *path, int flags, mode_t mode, char *errbuf);

#ifdef __cplusplus
}
#endif

#endif /* GCAP_OUTFILE_H */
