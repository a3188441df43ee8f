/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The inline kernel host loader: compiles a kernel source (see
 * gcap_kernel.h) with the host C compiler into a shared object, caches it,
 * loads it, allocates and initialises the kernel state, runs the kernel on
 * packets (the cpu executor) and writes the state as JSON.
 *
 * The gpu executor uses it too: for the source text it hands to NVRTC, the
 * initialised state it uploads into VRAM, and the report it writes from a
 * host copy of the GPU's state, so that both executors report identically.
 *
 * Thread safety: gcap_khost_run() may be called from many threads at once
 * on one loaded kernel (the kernel updates its state with atomics); the
 * other functions must not run concurrently with each other.
 */
#ifndef GCAP_KHOST_H
#define GCAP_KHOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gcap_common.h"
#include "gcap_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

struct gcap_khost;

/** Loader options; a zeroed struct (or NULL) gives the defaults. */
struct gcap_khost_opts {
	/** C compiler (default: env GCAP_CC, else the compiler that built
	 *  gpucap, else "cc"). */
	const char *cc;
	/** directory holding gpucap/gcap_kernel.h (default: env
	 *  GCAP_INCLUDE_DIR, else the installed headers found from where
	 *  gpucap's code lies, else (in the build tree only) the source
	 *  tree's, else the configured prefix's) */
	const char *include_dir;
	/** where compiled kernels are cached (default: env GCAP_KERNEL_CACHE,
	 *  else $XDG_CACHE_HOME/gpucap, else ~/.cache/gpucap, else a
	 *  temporary directory removed after loading) */
	const char *cache_dir;
	bool no_cache;    /**< always compile, never reuse a cached object */
	size_t max_state; /**< state size limit (0: GCAP_KSTATE_MAX) */
	/** when not NULL, receives the compiler's diagnostics (rewritten to
	 *  FILE:LINE: ...), NUL-terminated, cut to log_size */
	char *log;
	size_t log_size;
};

/**
 * Compile (or take from the cache), load and initialise a kernel.
 * The source is compiled as `#line 1 "path"` + its text + a loader footer,
 * so diagnostics name the user's file; its directory is on the quote
 * include path.
 * @param path    the kernel source (.c)
 * @param args    --kernel-arg string handed to gcap_kernel_init (may be NULL)
 * @param opts    options (NULL: defaults)
 * @param errbuf  GCAP_ERRBUF_SIZE bytes for a one-line message
 * @return the loaded kernel, or NULL with errno set and errbuf filled:
 *         ENOENT (source unreadable), ENOEXEC (compile error: errbuf holds
 *         the first error as "FILE:LINE: error: message"), ENOSYS (no
 *         function gcap_kernel), EFBIG (state too large), ECANCELED
 *         (gcap_kernel_init failed), ENOMEM, EIO (compiler could not run,
 *         dlopen failed).
 */
struct gcap_khost *gcap_khost_load_opts(const char *path, const char *args,
					const struct gcap_khost_opts *opts, char *errbuf);

/**
 * gcap_khost_load_opts() with the default options.
 * @return as gcap_khost_load_opts().
 */
struct gcap_khost *gcap_khost_load(const char *path, const char *args, char *errbuf);

/** Unload a kernel and free its state. NULL is a no-op. */
void gcap_khost_free(struct gcap_khost *k);

/**
 * Run the kernel on one packet, updating the host state.
 * @return the verdict (see GCAP_DROP, GCAP_CAPTURE, GCAP_SNAP, GCAP_OUTPUT).
 */
uint32_t gcap_khost_run(struct gcap_khost *k, const struct gcap_kpkt *pkt);

/** @return the entry point itself, for callers that batch calls. */
gcap_kernel_fn gcap_khost_entry(const struct gcap_khost *k);

/** @return the host state (page aligned, state_size bytes). */
void *gcap_khost_state(struct gcap_khost *k);

/** @return sizeof(struct gcap_kstate) of the kernel. */
size_t gcap_khost_state_size(const struct gcap_khost *k);

/**
 * Zero the state and run gcap_kernel_init again with the same args.
 * @return 0, or -ECANCELED (init failed; message in errbuf).
 */
int gcap_khost_reset(struct gcap_khost *k, char *errbuf);

/**
 * Write the state as one JSON object (the kernel's report hook fills its
 * members; without a hook the object is empty), then a newline.
 * @param k               the kernel
 * @param f               where to write
 * @param state_override  a host copy of another state of this kernel
 *                        (e.g. downloaded from the GPU), or NULL for the
 *                        host state
 * @return 0, or -EIO (write error), -EINVAL (the report hook left the
 *         JSON unbalanced).
 */
int
gcap_khost_report_json(const struct gcap_khost *k, FILE *f, const void *state_override);

/**
 * gcap_khost_report_json() into a file, replaced atomically (written to
 * path.tmp, then renamed).
 * @return 0, or a negative errno (open, write or rename failed).
 */
int gcap_khost_report_file(const struct gcap_khost *k, const char *path,
			   const void *state_override, char *errbuf);

/** @return true when the kernel defines gcap_kernel_report. */
bool gcap_khost_has_report(const struct gcap_khost *k);

/**
 * @return true when the kernel defines gcap_kernel_order (an ordered
 * kernel: see gcap_kernel.h, "Ordered kernels"). The cpu executor runs
 * packets one by one and needs nothing; the gpu executor runs the packets
 * of one order key in packet order.
 */
bool gcap_khost_ordered(const struct gcap_khost *k);

/**
 * The kernel source text, as read when loading (for NVRTC).
 * @param len  receives its length (may be NULL)
 * @return the NUL-terminated text, owned by k.
 */
const char *gcap_khost_source(const struct gcap_khost *k, size_t *len);

/** @return the path the kernel was loaded from (for #line and messages). */
const char *gcap_khost_path(const struct gcap_khost *k);

/** @return the include directory holding gpucap/gcap_kernel.h that was used
 *  (for NVRTC's -I). */
const char *gcap_khost_include_dir(const struct gcap_khost *k);

/**
 * Read one source line as an include directive: `#include <T>` or
 * `#include "T"` (blanks allowed around '#' and "include"), T copied to
 * out (outsz bytes, NUL-terminated). The loader inlines the header's parts
 * with it, the gpu executor finds a kernel's own include of the header.
 * @return '<' or '"' for an include, 0 for any other line (or a target
 *         that does not fit in out).
 */
int gcap_khost_include_of(const char *line, size_t n, char *out, size_t outsz);

/**
 * The kernel header (gpucap/gcap_kernel.h) as it was read when loading,
 * read from disk once: the host build and the GPU's translation unit see
 * the same text, and the cache key covers it.
 * @param len  receives its length (may be NULL)
 * @return the NUL-terminated text, owned by k.
 */
const char *gcap_khost_header(const struct gcap_khost *k, size_t *len);

/** @return a 64-bit hash of the source, the header and the compile flags
 *  (the cache key; usable as a cache key on the GPU side too). */
uint64_t gcap_khost_hash(const struct gcap_khost *k);

/** @return the shared object that was loaded (a cached or temporary path). */
const char *gcap_khost_object(const struct gcap_khost *k);

/**
 * Where the loaded object's code lies, found once at load (a fatal-signal
 * handler may compare a faulting PC with it: dladdr() is not
 * async-signal-safe).
 * @param lo   receives the lowest address of its executable segments
 * @param hi   receives the end of the highest
 * @param base receives its load address (PCs print as offsets from it);
 *             may be NULL
 * @return 0; -ENOENT when the range could not be found (lo = hi = 0).
 */
int gcap_khost_text(const struct gcap_khost *k, uintptr_t *lo, uintptr_t *hi,
		    uintptr_t *base);

#ifdef __cplusplus
}
#endif

#endif /* GCAP_KHOST_H */
