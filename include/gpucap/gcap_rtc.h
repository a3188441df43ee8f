/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Run-time compilation of CUDA C with NVRTC into a CUBIN for one GPU
 * architecture, with an on-disk cache of the results.
 *
 * libnvrtc is loaded with dlopen ("libnvrtc.so.13", "libnvrtc.so.12",
 * "libnvrtc.so", then the same under $GCAP_CUDA_HOME/lib64, the build's
 * CUDA home and /usr/local/cuda/lib64), so a binary built with this module
 * runs where NVRTC is absent: the functions then fail with -ENOTSUP.
 * NVRTC needs no GPU.
 *
 * ## Cache
 * Key: SHA-256 over the source, the options, the architecture and the
 * NVRTC version. Directory: the cache_dir argument, else $GCAP_CACHE_DIR,
 * else $XDG_CACHE_HOME/gpucap, else ~/.cache/gpucap (created, mode 0700).
 * One file per entry, `<hex key>.cubin`: a header (magic "GCAPRTC", format
 * version, architecture, key, payload size, SHA-256 of the payload) and the
 * CUBIN. Entries are written to a temporary file and renamed into place, so
 * readers never see half an entry; corrupt, truncated or foreign entries
 * are ignored and rebuilt. An unusable directory is not an error: the
 * compile goes ahead without cache and gcap_rtc_info.cache_warning says why.
 *
 * Thread safety: all functions may be called from several threads.
 */
#ifndef GCAP_RTC_H
#define GCAP_RTC_H

#include <stddef.h>
#include <stdint.h>

#include "gcap_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Flag: neither read nor write the cache. */
#define GCAP_RTC_F_NO_CACHE (1u << 0)

/** What one gcap_rtc_compile() did. */
struct gcap_rtc_info {
	int cache_hit;         /**< 1: the image came from the cache */
	int cache_rebuilt;     /**< 1: an entry existed but was corrupt or foreign */
	int cache_written;     /**< 1: a new entry was stored */
	double compile_ms;     /**< time spent in NVRTC (0 on a hit) */
	double load_ms;        /**< time spent reading and checking the entry */
	int nvrtc_major;       /**< NVRTC version */
	int nvrtc_minor;       /**< NVRTC version */
	char key[65];          /**< cache key, hex SHA-256 */
	char cache_path[1024]; /**< the entry's file ("" without cache) */
	/** non-empty when the cache could not be used (the compile still ran) */
	char cache_warning[GCAP_ERRBUF_SIZE];
	/** NVRTC's full log (errors and warnings), malloc'd, or NULL;
	 *  release with gcap_rtc_info_clear() */
	char *log;
};

/**
 * Load libnvrtc if not done yet.
 * @param errbuf GCAP_ERRBUF_SIZE bytes or NULL
 * @return 0; -ENOTSUP when libnvrtc cannot be loaded or lacks a function
 *         (the message names what was tried).
 */
int gcap_rtc_load(char *errbuf);

/**
 * NVRTC's version.
 * @return 0; -ENOTSUP as gcap_rtc_load(); -EIO if NVRTC fails.
 */
int gcap_rtc_version(int *major, int *minor, char *errbuf);

/**
 * The cache directory used when gcap_rtc_compile() gets none:
 * $GCAP_CACHE_DIR, $XDG_CACHE_HOME/gpucap or $HOME/.cache/gpucap.
 * @return 0; -ENOENT when none of the variables is set; -ENAMETOOLONG.
 */
int gcap_rtc_default_cache_dir(char *buf, size_t len);

/**
 * Compile CUDA C source to a CUBIN for sm_<cc_major><cc_minor>, through the
 * cache.
 *
 * @param src         NUL-terminated CUDA C/C++ source
 * @param name        name NVRTC uses in messages (NULL: "gpucap.cu")
 * @param cc_major    compute capability, e.g. 9 for sm_90
 * @param cc_minor    e.g. 0
 * @param opts        extra NVRTC options (may be NULL when nopts is 0);
 *                    --gpu-architecture=sm_XY is always added
 * @param nopts       number of options
 * @param cache_dir   cache directory, NULL for the default (see above)
 * @param flags       GCAP_RTC_F_*
 * @param image       out: the CUBIN, malloc'd (free() it)
 * @param image_size  out: its size
 * @param info        out, may be NULL: hit/miss, times, warnings, log;
 *                    release with gcap_rtc_info_clear()
 * @param errbuf      GCAP_ERRBUF_SIZE bytes or NULL; on a compile error the
 *                    first error line (the whole log is in info->log)
 * @return 0;
 *         -EINVAL for bad arguments (no source, cc out of range);
 *         -ENOTSUP when NVRTC cannot be loaded;
 *         -ENOEXEC when NVRTC rejects the source (log in info->log);
 *         -EIO when NVRTC fails otherwise (e.g. unknown architecture);
 *         -ENOMEM.
 */
int gcap_rtc_compile(const char *src, const char *name, int cc_major, int cc_minor,
		     const char *const *opts, unsigned nopts, const char *cache_dir,
		     unsigned flags, void **image, size_t *image_size,
		     struct gcap_rtc_info *info, char *errbuf);

/** Free what gcap_rtc_compile() allocated in info (NULL allowed). */
void gcap_rtc_info_clear(struct gcap_rtc_info *info);

/** SHA-256 of len bytes (FIPS 180-4), written to out. Never fails. */
void gcap_rtc_sha256(const void *data, size_t len, uint8_t out[32]);

#ifdef __cplusplus
}
#endif

#endif /* GCAP_RTC_H */
