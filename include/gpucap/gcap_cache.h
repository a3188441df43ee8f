/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * What gpucap's on-disk caches share (NVRTC cubins, compiled inline
 * kernels): where the cache lives, creating it, the checks that keep
 * other users' files out of it, and SHA-256 for keys.
 */
#ifndef GCAP_CACHE_H
#define GCAP_CACHE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** SHA-256 state (FIPS 180-4). */
struct gcap_sha256 {
	uint32_t h[8];
	uint64_t len; /**< bytes hashed so far */
	uint8_t buf[64];
	unsigned nbuf;
};

/** Start a hash. */
void gcap_sha256_init(struct gcap_sha256 *s);

/** Hash len more bytes. */
void gcap_sha256_update(struct gcap_sha256 *s, const void *data, size_t len);

/** Finish: the 32-byte digest. The state must be initialised again to reuse. */
void gcap_sha256_final(struct gcap_sha256 *s, uint8_t out[32]);

/**
 * The cache directory: $GCAP_CACHE_DIR, else $XDG_CACHE_HOME/gpucap (an
 * absolute XDG_CACHE_HOME), else $HOME/.cache/gpucap. Not created.
 * @return 0; -ENOENT when none applies; -ENAMETOOLONG.
 */
int gcap_cache_dir(char *buf, size_t len);

/**
 * mkdir -p: create dir and its parents (mode 0700 for what it creates).
 * @return 0 (also when it exists); -ENAMETOOLONG; mkdir's -errno.
 */
int gcap_mkdirs(const char *dir);

/**
 * Create a cache directory (gcap_mkdirs) and check that no other user
 * can plant or swap its entries: it is a directory owned by the effective
 * user and not writable by group or others, and each directory above it
 * (symbolic links resolved) is the user's or root's and writable by
 * others only when sticky. A cache that fails is not to be used; one
 * that passes is used by the path checked: dir becomes it (symbolic
 * links resolved), since a link on the way may be another user's to
 * point elsewhere after the check.
 * @param dir   the directory (len bytes): its resolved path on success
 * @param warn  GCAP_ERRBUF_SIZE bytes (NULL allowed): why, one line
 * @return 0; -EPERM (unsafe); -ENAMETOOLONG; mkdir's or realpath's
 *         -errno.
 */
int gcap_cache_dir_prepare(char *dir, size_t len, char *warn);

/**
 * Open a cache entry for reading, refusing one another user could have
 * made or changed: a symbolic link is not followed, and the file opened
 * must be a regular file owned by the effective user, not writable by
 * group or others.
 * @param warn  GCAP_ERRBUF_SIZE bytes (NULL allowed): why not, one line
 * @return the descriptor (O_CLOEXEC); -ENOENT (absent, warn left empty);
 *         -EPERM (unsafe); open's -errno.
 */
int gcap_cache_open_entry(const char *path, char *warn);

#ifdef __cplusplus
}
#endif

#endif /* GCAP_CACHE_H */
