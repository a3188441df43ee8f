/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Opening the files a run writes (capture files, --summary-json, the
 * kernel state) so that no other user can redirect or take them: not
 * through a symbolic link or a file planted in a shared directory such
 * as /tmp, nor through a directory the user a root run drops to can
 * write.
 */
#ifndef GCAP_OUTFILE_H
#define GCAP_OUTFILE_H

#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The most supplementary groups gcap_outfile_as() takes. */
#define GCAP_OUTFILE_GROUPS_MAX 256

/**
 * Open the outputs from now on with uid's, gid's and groups' identity
 * (setfsuid, setfsgid and the setgroups system call, the calling thread
 * only, around each open) where the process is root: a run that drops to
 * a user (-Z) opens its first files as it will open its later ones, so
 * that what that user can plant in its own directories (a link to
 * /etc/passwd) gets no more than the user could, and the user's groups
 * count as they will after the drop. Call once, before any thread that
 * opens outputs starts.
 * @return 0; -EINVAL (ngroups out of [0, GCAP_OUTFILE_GROUPS_MAX]).
 */
int gcap_outfile_as(uid_t uid, gid_t gid, const gid_t *groups, int ngroups);

/**
 * open(2) for an output file, as gcap_outfile_as says. Where a directory
 * on the way or the file's own is writable by others or by its group, or
 * is another user's (/tmp, a shared capture directory, a user's home for
 * a root run), what the kernel's fs.protected_symlinks,
 * fs.protected_regular=2 and fs.protected_fifos=2 refuse in /tmp is
 * refused there, whatever those are set to: a symbolic link on the way
 * that is neither the opener's nor the directory owner's, the file itself
 * as a link (O_NOFOLLOW), and an existing file or FIFO that is neither's
 * (checked before O_TRUNC cuts it; a FIFO is waited on for its reader
 * only once it is known to be theirs).
 * @param errbuf  GCAP_ERRBUF_SIZE bytes (NULL allowed): "cannot write
 *                'PATH': why", one line
 * @return the descriptor; -ELOOP (a symbolic link refused); -EPERM
 *         (another user's file refused); -ENAMETOOLONG; lstat's, stat's,
 *         getgroups' or open's -errno.
 */
int gcap_open_output(const char *path, int flags, mode_t mode, char *errbuf);

#ifdef __cplusplus
}
#endif

#endif /* GCAP_OUTFILE_H */
