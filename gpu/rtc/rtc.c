/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NVRTC through dlopen, and the on-disk CUBIN cache (gcap_rtc.h).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gcap_config.h"
#include "gpucap/gcap_cache.h"
#include "gpucap/gcap_rtc.h"

void
gcap_rtc_sha256(const void *data, size_t len, uint8_t out[32])
{
	struct gcap_sha256 s;

	gcap_sha256_init(&s);
	gcap_sha256_update(&s, data, len);
	gcap_sha256_final(&s, out);
}

/* a length-prefixed field, so that ("ab","c") and ("a","bc") differ */
static void
sha256_field(struct gcap_sha256 *s, const void *data, size_t len)
{
	uint64_t n = len;

	gcap_sha256_update(s, &n, sizeof(n));
	gcap_sha256_update(s, data, len);
}

/* ---- NVRTC through dlopen ---- */

typedef int nvrtc_result;
typedef struct nvrtc_prog *nvrtc_program;

static struct {
	pthread_once_t once;
	void *handle;
	int err;
	char msg[GCAP_ERRBUF_SIZE];
	const char *(*get_error_string)(nvrtc_result);
	nvrtc_result (*version)(int *, int *);
	nvrtc_result (*create)(nvrtc_program *, const char *, const char *, int,
			       const char *const *, const char *const *);
	nvrtc_result (*destroy)(nvrtc_program *);
	nvrtc_result (*compile)(nvrtc_program, int, const char *const *);
	nvrtc_result (*cubin_size)(nvrtc_program, size_t *);
	nvrtc_result (*cubin)(nvrtc_program, char *);
	nvrtc_result (*log_size)(nvrtc_program, size_t *);
	nvrtc_result (*log)(nvrtc_program, char *);
} nv = { .once = PTHREAD_ONCE_INIT };

#define NVRTC_SUCCESS 0
#define NVRTC_ERROR_COMPILATION 6

static void
nvrtc_open(void)
{
	static const char *const names[] = { "libnvrtc.so.13", "libnvrtc.so.12",
					     "libnvrtc.so" };
	const char *dirs[3] = { getenv("GCAP_CUDA_HOME"), GCAP_CUDA_HOME,
				"/usr/local/cuda" };
	char path[PATH_MAX];

	for (unsigned i = 0; i < 3 && nv.handle == NULL; i++)
		nv.handle = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	for (unsigned d = 0; d < 3 && nv.handle == NULL; d++) {
		if (dirs[d] == NULL || dirs[d][0] == '\0')
			continue;
		for (unsigned i = 0; i < 3 && nv.handle == NULL; i++) {
			snprintf(path, sizeof(path), "%s/lib64/%s", dirs[d], names[i]);
			nv.handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		}
	}
	if (nv.handle == NULL) {
		nv.err = gcap_err(
			nv.msg, ENOTSUP,
			"NVRTC not found (tried libnvrtc.so.13, .so.12, .so in the "
			"library path, $GCAP_CUDA_HOME/lib64, %s/lib64, "
			"/usr/local/cuda/lib64)",
			GCAP_CUDA_HOME);
		return;
	}
#define SYM(field, name)                                                               \
	do {                                                                           \
		*(void **)&nv.field = dlsym(nv.handle, name);                          \
		if (nv.field == NULL) {                                                \
			nv.err = gcap_err(nv.msg, ENOTSUP, "libnvrtc lacks %s", name); \
			return;                                                        \
		}                                                                      \
	} while (0)
	SYM(get_error_string, "nvrtcGetErrorString");
	SYM(version, "nvrtcVersion");
	SYM(create, "nvrtcCreateProgram");
	SYM(destroy, "nvrtcDestroyProgram");
	SYM(compile, "nvrtcCompileProgram");
	SYM(cubin_size, "nvrtcGetCUBINSize");
	SYM(cubin, "nvrtcGetCUBIN");
	SYM(log_size, "nvrtcGetProgramLogSize");
	SYM(log, "nvrtcGetProgramLog");
#undef SYM
}

int
gcap_rtc_load(char *errbuf)
{
	pthread_once(&nv.once, nvrtc_open);
	if (nv.err != 0)
		return gcap_err(errbuf, -nv.err, "%s", nv.msg);
	return 0;
}

int
gcap_rtc_version(int *major, int *minor, char *errbuf)
{
	int r = gcap_rtc_load(errbuf);

	if (r < 0)
		return r;
	if (nv.version(major, minor) != NVRTC_SUCCESS)
		return gcap_err(errbuf, EIO, "nvrtcVersion failed");
	return 0;
}

/* ---- cache ---- */

#define ENTRY_MAGIC "GCAPRTC"
#define ENTRY_VERSION 1u

struct entry_hdr {
	char magic[8];
	uint32_t version;
	uint32_t arch; /* cc_major * 10 + cc_minor */
	uint8_t key[32];
	uint64_t size;   /* payload bytes */
	uint8_t sum[32]; /* SHA-256 of the payload */
};

int
gcap_rtc_default_cache_dir(char *buf, size_t len)
{
	return gcap_cache_dir(buf, len);
}

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*
 * read an entry: 1 hit (image filled), 0 absent, -1 present but unusable,
 * -2 not the user's own (a link, another owner, writable by others: warn
 * filled; neither used nor replaced). The key in its header must be the
 * one computed, so an entry renamed from another source is a miss.
 */
static int
cache_read(const char *path, uint32_t arch, const uint8_t key[32], void **image,
	   size_t *image_size, char *warn)
{
	struct entry_hdr h;
	struct stat st;
	uint8_t sum[32];
	void *buf;
	ssize_t n;
	int fd = gcap_cache_open_entry(path, warn);

	if (fd < 0)
		return fd == -ENOENT ? 0 : fd == -EPERM ? -2 : -1;
	if (fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(h) ||
	    read(fd, &h, sizeof(h)) != (ssize_t)sizeof(h) ||
	    memcmp(h.magic, ENTRY_MAGIC, sizeof(ENTRY_MAGIC)) != 0 ||
	    h.version != ENTRY_VERSION || h.arch != arch || memcmp(h.key, key, 32) != 0 ||
	    h.size == 0 || h.size != (uint64_t)st.st_size - sizeof(h)) {
		close(fd);
		return -1;
	}
	buf = malloc(h.size);
	if (buf == NULL) {
		close(fd);
		return -1;
	}
	n = read(fd, buf, h.size);
	close(fd);
	if (n != (ssize_t)h.size) {
		free(buf);
		return -1;
	}
	gcap_rtc_sha256(buf, h.size, sum);
	if (memcmp(sum, h.sum, 32) != 0) {
		free(buf);
		return -1;
	}
	*image = buf;
	*image_size = h.size;
	return 1;
}

static int
write_all(int fd, const void *p, size_t len)
{
	const char *c = p;

	while (len > 0) {
		ssize_t n = write(fd, c, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		c += n;
		len -= (size_t)n;
	}
	return 0;
}

/* store atomically: temporary file in the same directory, then rename */
static int
cache_write(const char *dir, const char *path, uint32_t arch, const uint8_t key[32],
	    const void *image, size_t size, char *warn)
{
	struct entry_hdr h;
	char tmp[PATH_MAX];
	int fd;

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, ENTRY_MAGIC, sizeof(ENTRY_MAGIC));
	h.version = ENTRY_VERSION;
	h.arch = arch;
	memcpy(h.key, key, 32);
	h.size = size;
	gcap_rtc_sha256(image, size, h.sum);
	if (snprintf(tmp, sizeof(tmp), "%s/.tmp-XXXXXX", dir) >= (int)sizeof(tmp))
		return gcap_err(warn, ENAMETOOLONG, "cache path too long");
	fd = mkstemp(tmp);
	if (fd < 0)
		return gcap_err(warn, errno,
				"cannot create a file in cache directory %s: %s; "
				"compiled without cache",
				dir, strerror(errno));
	if (write_all(fd, &h, sizeof(h)) != 0 || write_all(fd, image, size) != 0 ||
	    close(fd) != 0) {
		int e = errno ? errno : EIO;

		unlink(tmp);
		return gcap_err(warn, e, "cannot write cache entry in %s: %s", dir,
				strerror(e));
	}
	if (rename(tmp, path) != 0) {
		int e = errno;

		unlink(tmp);
		return gcap_err(warn, e, "cannot store cache entry %s: %s", path,
				strerror(e));
	}
	return 0;
}

/* ---- compile ---- */

/* first line of the log that says "error", else its first line */
static void
log_summary(const char *log, char *out, size_t len)
{
	const char *p = log ? strstr(log, "error") : NULL;
	const char *s, *e;

	if (log == NULL || log[0] == '\0') {
		snprintf(out, len, "(no log)");
		return;
	}
	s = p ? p : log;
	while (s > log && s[-1] != '\n')
		s--;
	e = strchr(s, '\n');
	snprintf(out, len, "%.*s", (int)(e ? (size_t)(e - s) : strlen(s)), s);
}

static int
nvrtc_build(const char *src, const char *name, const char *arch_opt,
	    const char *const *opts, unsigned nopts, void **image, size_t *size,
	    char **log_out, char *errbuf)
{
	const char **all = calloc(nopts + 1, sizeof(*all));
	nvrtc_program prog = NULL;
	nvrtc_result rc;
	size_t n = 0;
	char *log = NULL;
	int r = 0;

	if (all == NULL)
		return gcap_err(errbuf, ENOMEM, "out of memory");
	all[0] = arch_opt;
	for (unsigned i = 0; i < nopts; i++)
		all[i + 1] = opts[i];
	rc = nv.create(&prog, src, name, 0, NULL, NULL);
	if (rc != NVRTC_SUCCESS) {
		free(all);
		return gcap_err(errbuf, rc == 1 ? ENOMEM : EIO, "nvrtcCreateProgram: %s",
				nv.get_error_string(rc));
	}
	rc = nv.compile(prog, (int)nopts + 1, all);
	free(all);
	if (nv.log_size(prog, &n) == NVRTC_SUCCESS && n > 1) {
		log = malloc(n);
		if (log != NULL && nv.log(prog, log) != NVRTC_SUCCESS) {
			free(log);
			log = NULL;
		}
	}
	if (rc == NVRTC_ERROR_COMPILATION) {
		char line[GCAP_ERRBUF_SIZE - 96];

		log_summary(log, line, sizeof(line));
		r = gcap_err(errbuf, ENOEXEC, "NVRTC cannot compile %s for %s: %s", name,
			     arch_opt + sizeof("--gpu-architecture=") - 1, line);
	} else if (rc != NVRTC_SUCCESS) {
		r = gcap_err(errbuf, EIO, "NVRTC failed for %s (%s): %s", name, arch_opt,
			     nv.get_error_string(rc));
	} else if (nv.cubin_size(prog, size) != NVRTC_SUCCESS || *size == 0) {
		r = gcap_err(errbuf, EIO, "NVRTC produced no CUBIN for %s (%s)", name,
			     arch_opt);
	} else if ((*image = malloc(*size)) == NULL) {
		r = gcap_err(errbuf, ENOMEM, "out of memory");
	} else if (nv.cubin(prog, *image) != NVRTC_SUCCESS) {
		free(*image);
		*image = NULL;
		r = gcap_err(errbuf, EIO, "nvrtcGetCUBIN failed");
	}
	nv.destroy(&prog);
	if (log_out != NULL)
		*log_out = log;
	else
		free(log);
	return r;
}

void
gcap_rtc_info_clear(struct gcap_rtc_info *info)
{
	if (info == NULL)
		return;
	free(info->log);
	info->log = NULL;
}

static void
hex(const uint8_t *b, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = '\0';
}

int
gcap_rtc_compile(const char *src, const char *name, int cc_major, int cc_minor,
		 const char *const *opts, unsigned nopts, const char *cache_dir,
		 unsigned flags, void **image, size_t *image_size,
		 struct gcap_rtc_info *info, char *errbuf)
{
	struct gcap_rtc_info local;
	char arch_opt[64], dir[PATH_MAX], verbuf[32];
	uint8_t key[32];
	uint32_t arch;
	int use_cache = !(flags & GCAP_RTC_F_NO_CACHE), r;
	double t0;
	struct gcap_sha256 s;

	if (info == NULL)
		info = &local;
	memset(info, 0, sizeof(*info));
	if (src == NULL || image == NULL || image_size == NULL ||
	    (nopts > 0 && opts == NULL))
		return gcap_err(errbuf, EINVAL, "gcap_rtc_compile: missing argument");
	if (cc_major < 1 || cc_major > 99 || cc_minor < 0 || cc_minor > 9)
		return gcap_err(errbuf, EINVAL, "bad compute capability %d.%d", cc_major,
				cc_minor);
	if (flags & ~GCAP_RTC_F_NO_CACHE)
		return gcap_err(errbuf, EINVAL, "unknown flags 0x%x", flags);
	*image = NULL;
	*image_size = 0;
	if (name == NULL)
		name = "gpucap.cu";
	r = gcap_rtc_version(&info->nvrtc_major, &info->nvrtc_minor, errbuf);
	if (r < 0)
		return r;
	arch = (uint32_t)(cc_major * 10 + cc_minor);
	snprintf(arch_opt, sizeof(arch_opt), "--gpu-architecture=sm_%d%d", cc_major,
		 cc_minor);

	/* key: format, source, options, architecture, NVRTC version */
	gcap_sha256_init(&s);
	sha256_field(&s, "gcap-rtc-1", 10);
	sha256_field(&s, src, strlen(src));
	for (unsigned i = 0; i < nopts; i++)
		sha256_field(&s, opts[i], strlen(opts[i]));
	sha256_field(&s, arch_opt, strlen(arch_opt));
	snprintf(verbuf, sizeof(verbuf), "nvrtc %d.%d", info->nvrtc_major,
		 info->nvrtc_minor);
	sha256_field(&s, verbuf, strlen(verbuf));
	gcap_sha256_final(&s, key);
	hex(key, 32, info->key);

	if (use_cache) {
		if (cache_dir != NULL)
			r = snprintf(dir, sizeof(dir), "%s", cache_dir) >=
					    (int)sizeof(dir) ?
				    -ENAMETOOLONG :
				    0;
		else
			r = gcap_rtc_default_cache_dir(dir, sizeof(dir));
		if (r < 0) {
			gcap_err(info->cache_warning, -r,
				 "no cache directory (%s): "
				 "compiled without cache",
				 strerror(-r));
			use_cache = 0;
		} else if ((r = gcap_cache_dir_prepare(dir, sizeof(dir),
						       info->cache_warning)) == -EPERM) {
			/* another user could plant entries: one line says why */
			size_t l = strlen(info->cache_warning);

			snprintf(info->cache_warning + l, sizeof(info->cache_warning) - l,
				 "; compiled without cache");
			use_cache = 0;
		} else if (r < 0 || access(dir, W_OK | X_OK) != 0) {
			int e = r < 0 ? -r : errno;

			gcap_err(info->cache_warning, e,
				 "cache directory %s unusable (%s): "
				 "compiled without cache",
				 dir, strerror(e));
			use_cache = 0;
		} else if (snprintf(info->cache_path, sizeof(info->cache_path),
				    "%s/%s.cubin", dir,
				    info->key) >= (int)sizeof(info->cache_path)) {
			gcap_err(info->cache_warning, ENAMETOOLONG,
				 "cache path too long: "
				 "compiled without cache");
			info->cache_path[0] = '\0';
			use_cache = 0;
		}
	}
	if (use_cache) {
		t0 = now_ms();
		r = cache_read(info->cache_path, arch, key, image, image_size,
			       info->cache_warning);
		info->load_ms = now_ms() - t0;
		if (r == 1) {
			info->cache_hit = 1;
			return 0;
		}
		info->cache_rebuilt = r < 0;
		if (r == -2) {
			size_t l = strlen(info->cache_warning);

			snprintf(info->cache_warning + l, sizeof(info->cache_warning) - l,
				 "; compiled without cache");
			use_cache = 0;
		}
	}
	t0 = now_ms();
	r = nvrtc_build(src, name, arch_opt, opts, nopts, image, image_size, &info->log,
			errbuf);
	info->compile_ms = now_ms() - t0;
	if (info == &local)
		gcap_rtc_info_clear(&local);
	if (r < 0)
		return r;
	if (use_cache && cache_write(dir, info->cache_path, arch, key, *image,
				     *image_size, info->cache_warning) == 0)
		info->cache_written = 1;
	return 0;
}
