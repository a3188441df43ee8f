/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The inline kernel host loader: compile a kernel source with the host C
 * compiler into a shared object, cache it by content hash, dlopen it,
 * allocate and initialise the state. See gcap_khost.h.
 *
 * A cached object is code the run executes, often as root: the cache is
 * used only when no other user can write it (gcap_cache_dir_prepare), an
 * entry only when it is the user's own (gcap_cache_open_entry), and the
 * object loaded must carry the key it was cached under. Compiles happen
 * in a private mkdtemp directory, so the unit, the log and the object
 * cannot be redirected through a planted link.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gcap_config.h"
#include "gpucap/gcap_cache.h"
#include "gpucap/gcap_khost.h"
#include "gpucap/gcap_outfile.h"
#include "gpucap/gcap_thread.h"
#include "kfile.h"
#include "ktext.h"

extern char **environ;

/* Name diagnostics give to the loader's footer (never the user's file). */
#define FOOTER_NAME "<gpucap-kernel-footer>"

struct gcap_khost {
	char *path; /* as given */
	char *src;  /* source text */
	size_t src_len;
	char *incdir; /* holds gpucap/gcap_kernel.h */
	char *header; /* gcap_kernel.h as read once, for the GPU's TU */
	size_t header_len;
	char *object; /* the .so loaded */
	char *args;   /* --kernel-arg, or NULL */
	uint64_t hash;
	char key[65]; /* the SHA-256 the cache name comes from, in hex */
	void *dl;
	gcap_kernel_fn entry;
	gcap_kernel_init_fn init;
	gcap_kernel_report_fn report;
	void *order;  /* gcap_kernel_order, when defined */
	char *errmsg; /* the object's gcap_kernel_errmsg */
	void *state;
	size_t state_size;
	size_t map_size;
	uintptr_t text_lo, text_hi, base; /* its executable segments */
};

/* one NUL-terminated field of the cache key (the NUL separates fields) */
static void
key_str(struct gcap_sha256 *h, const char *s)
{
	gcap_sha256_update(h, s ? s : "", (s ? strlen(s) : 0) + 1);
}

/* One warning line: the library's callers carry no warning channel. */
static void
khost_warn(const char *what)
{
	fprintf(stderr, "warning: %s; compiled without the cache\n", what);
}

/* The cache directory, created; NULL when none is usable (one warning
 * when another user could write it). */
static char *
cache_dir(const struct gcap_khost_opts *o)
{
	char p[PATH_MAX], warn[GCAP_ERRBUF_SIZE];
	const char *e;
	p[0] = '\0';
	if (o->cache_dir)
		snprintf(p, sizeof(p), "%s", o->cache_dir);
	else if ((e = getenv("GCAP_KERNEL_CACHE")) && *e)
		snprintf(p, sizeof(p), "%s", e);
	else if (gcap_cache_dir(p, sizeof(p)) != 0)
		p[0] = '\0';
	if (!p[0])
		return NULL;
	if (gcap_cache_dir_prepare(p, sizeof(p), warn) == -EPERM) {
		khost_warn(warn);
		return NULL;
	}
	if (warn[0] || access(p, W_OK) != 0)
		return NULL;
	return strdup(p);
}

/* Append s to a #line-safe string literal body. */
static void
put_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		if (*s == '\n')
			continue;
		fputc(*s, f);
	}
}

/* Write the translation unit the compiler sees. */
static int
write_unit(const char *upath, const struct gcap_khost *k)
{
	int fd = open(upath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return -e;
	}
	fputs("#line 1 \"", f);
	put_escaped(f, k->path);
	fputs("\"\n", f);
	fwrite(k->src, 1, k->src_len, f);
	fputs("\n#line 1 \"" FOOTER_NAME "\"\n"
	      "__attribute__((visibility(\"default\")))\n"
	      "char gcap_kernel_errmsg[GCAP_KERNEL_ERR_SIZE];\n"
	      "__attribute__((visibility(\"default\")))\n"
	      "const unsigned long long gcap_kernel_state_size =\n"
	      "\tsizeof(struct gcap_kstate);\n"
	      "__attribute__((visibility(\"default\")))\n"
	      "const char gcap_kernel_key[] = \"",
	      f);
	fputs(k->key, f);
	fputs("\";\n", f);
	if (fclose(f) != 0)
		return -errno;
	return 0;
}

/*
 * Rewrite the first error of a compiler log as "FILE:LINE: error: msg"
 * into errbuf, and the whole log (columns dropped) into o->log.
 */
static void
diag_rewrite(const char *logtext, const struct gcap_khost *k,
	     const struct gcap_khost_opts *o, char *errbuf)
{
	char first[GCAP_ERRBUF_SIZE] = "";
	const char *fallback = NULL;
	size_t lo = 0;
	const char *s = logtext;

	while (*s) {
		const char *e = strchr(s, '\n');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		char line[1024];
		if (n >= sizeof(line))
			n = sizeof(line) - 1;
		memcpy(line, s, n);
		line[n] = '\0';
		s += n + (e ? 1 : 0);

		/* FILE:LINE:COL: ... -> FILE:LINE: ... */
		char out[1100];
		snprintf(out, sizeof(out), "%s", line);
		char *c1 = NULL;
		size_t plen = strlen(k->path);
		if (strncmp(line, k->path, plen) == 0 && line[plen] == ':')
			c1 = line + plen;
		else if (strncmp(line, FOOTER_NAME ":", sizeof(FOOTER_NAME)) == 0)
			c1 = line + sizeof(FOOTER_NAME) - 1;
		if (c1) {
			char *c2 = c1 + 1 + strspn(c1 + 1, "0123456789");
			if (*c2 == ':' && c2 > c1 + 1) {
				char *c3 = c2 + 1 + strspn(c2 + 1, "0123456789");
				if (*c3 == ':' && c3 > c2 + 1)
					snprintf(out, sizeof(out), "%.*s%s",
						 (int)(c2 - line), line, c3);
			}
		}
		if (!first[0] &&
		    (strstr(out, ": error:") || strstr(out, ": fatal error:"))) {
			if (strncmp(out, FOOTER_NAME, sizeof(FOOTER_NAME) - 1) == 0 &&
			    strstr(out, "gcap_kstate"))
				snprintf(first, sizeof(first),
					 "%s: no struct gcap_kstate defined"
					 " (declare one, with at least one member)",
					 k->path);
			else
				snprintf(first, sizeof(first), "%.500s", out);
		}
		if (!fallback && strstr(out, "undefined reference"))
			fallback = strstr(out, "undefined reference");
		if (!first[0] && fallback)
			snprintf(first, sizeof(first), "%.250s: %.250s", k->path,
				 fallback);
		if (o->log && o->log_size > 1 && lo + 1 < o->log_size) {
			int w = snprintf(o->log + lo, o->log_size - lo, "%s\n", out);
			if (w > 0)
				lo += (size_t)w < o->log_size - lo ? (size_t)w :
								     o->log_size - lo - 1;
		}
	}
	if (!first[0])
		snprintf(first, sizeof(first), "%s: compilation failed", k->path);
	gcap_err(errbuf, ENOEXEC, "%s", first);
}

/* Split a space-separated flag string into argv (modifies s). */
static int
split_flags(char *s, char **argv, int max)
{
	int n = 0;
	for (char *t = strtok(s, " \t"); t && n < max; t = strtok(NULL, " \t"))
		argv[n++] = t;
	return n;
}

/* Compile the unit into obj. Returns 0, -ENOEXEC (errbuf set), or -EIO. */
static int
compile(struct gcap_khost *k, const struct gcap_khost_opts *o, const char *cc,
	const char *extra, const char *unit, const char *obj, const char *logpath,
	char *errbuf)
{
	char srcdir[PATH_MAX];
	char *argv[96];
	int argc = 0;
	char *extra_copy = extra ? strdup(extra) : NULL;
	char *cc_copy = strdup(cc);
	int rc;

	snprintf(srcdir, sizeof(srcdir), "%s", k->path);
	char *sl = strrchr(srcdir, '/');
	if (sl)
		*(sl == srcdir ? sl + 1 : sl) = '\0';
	else
		snprintf(srcdir, sizeof(srcdir), ".");

	if (!cc_copy || (extra && !extra_copy)) {
		free(cc_copy);
		free(extra_copy);
		return gcap_err(errbuf, ENOMEM, "out of memory");
	}
	argc += split_flags(cc_copy, argv, 8); /* "ccache cc" works */
	argv[argc++] = "-std=gnu11";
	argv[argc++] = "-O2";
	argv[argc++] = "-shared";
	argv[argc++] = "-fPIC";
	argv[argc++] = "-fvisibility=hidden";
	argv[argc++] = "-Wall";
	argv[argc++] = "-Wno-unused-function";
	argv[argc++] = "-Werror=implicit-function-declaration";
	argv[argc++] = "-Wl,-z,defs";
	argv[argc++] = "-fdiagnostics-color=never";
	argv[argc++] = "-I";
	argv[argc++] = k->incdir;
	argv[argc++] = "-iquote";
	argv[argc++] = srcdir;
	if (extra_copy)
		argc += split_flags(extra_copy, argv + argc, 64);
	argv[argc++] = "-o";
	argv[argc++] = (char *)obj;
	argv[argc++] = "-x";
	argv[argc++] = "c";
	argv[argc++] = (char *)unit;
	argv[argc] = NULL;

	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, logpath,
					 O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	/* ASCII diagnostics whatever the locale: LC_ALL=C for the compiler */
	size_t nenv = 0;
	while (environ[nenv])
		nenv++;
	char **envp = calloc(nenv + 2, sizeof(*envp));
	if (!envp) {
		posix_spawn_file_actions_destroy(&fa);
		rc = gcap_err(errbuf, ENOMEM, "out of memory");
		goto out;
	}
	size_t ne = 0;
	for (size_t i = 0; i < nenv; i++)
		if (strncmp(environ[i], "LC_ALL=", 7) != 0)
			envp[ne++] = environ[i];
	envp[ne++] = "LC_ALL=C";
	envp[ne] = NULL;
	/* the compiler with the signals build_and_bind() holds back let
	 * through: a terminal's Ctrl-C ends it at once */
	posix_spawnattr_t sa;
	sigset_t mask, held;

	posix_spawnattr_init(&sa);
	pthread_sigmask(SIG_SETMASK, NULL, &mask);
	gcap_sigs_set(&held);
	for (int sig = 1; sig < NSIG; sig++)
		if (sigismember(&held, sig) == 1)
			sigdelset(&mask, sig);
	posix_spawnattr_setsigmask(&sa, &mask);
	posix_spawnattr_setflags(&sa, POSIX_SPAWN_SETSIGMASK);
	pid_t pid;
	rc = posix_spawnp(&pid, argv[0], &fa, &sa, argv, envp);
	posix_spawnattr_destroy(&sa);
	free(envp);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0) {
		rc = gcap_err(errbuf, EIO, "%s: cannot run the C compiler '%s': %s",
			      k->path, argv[0], strerror(rc));
		goto out;
	}
	int st;
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			rc = gcap_err(errbuf, EIO, "waitpid: %s", strerror(errno));
			goto out;
		}
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		rc = 0;
		goto out;
	}
	char *logtext = gcap_kfile_read(logpath, NULL);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 127 && logtext && !logtext[0])
		rc = gcap_err(errbuf, EIO, "%s: cannot run the C compiler '%s'", k->path,
			      argv[0]);
	else {
		diag_rewrite(logtext ? logtext : "", k, o, errbuf);
		rc = -ENOEXEC;
	}
	free(logtext);
out:
	free(cc_copy);
	free(extra_copy);
	return rc;
}

/* Bind the object's symbols and check them; -ESTALE: not built from this
 * kernel's key. */
static int
bind_object(struct gcap_khost *k, const char *obj, const struct gcap_khost_opts *o,
	    char *errbuf)
{
	k->dl = dlopen(obj, RTLD_NOW | RTLD_LOCAL);
	if (!k->dl)
		return gcap_err(errbuf, EIO, "%s: dlopen: %s", k->path, dlerror());
	const char *key = dlsym(k->dl, "gcap_kernel_key");
	if (!key || strncmp(key, k->key, sizeof(k->key)) != 0) {
		dlclose(k->dl);
		k->dl = NULL;
		return gcap_err(errbuf, ESTALE, "%s: %s was not built from this kernel",
				k->path, obj);
	}
	*(void **)&k->entry = dlsym(k->dl, "gcap_kernel");
	if (!k->entry)
		return gcap_err(errbuf, ENOSYS, "%s: no function gcap_kernel", k->path);
	const unsigned long long *sz = dlsym(k->dl, "gcap_kernel_state_size");
	if (!sz)
		return gcap_err(errbuf, EIO,
				"%s: no gcap_kernel_state_size "
				"(not built by the gpucap loader)",
				k->path);
	size_t max = o->max_state ? o->max_state : (size_t)GCAP_KSTATE_MAX;
	if (*sz > max)
		return gcap_err(errbuf, EFBIG,
				"%s: state too large: struct gcap_kstate is %llu bytes"
				" (limit %zu)",
				k->path, *sz, max);
	k->state_size = (size_t)*sz;
	*(void **)&k->init = dlsym(k->dl, "gcap_kernel_init");
	*(void **)&k->report = dlsym(k->dl, "gcap_kernel_report");
	k->order = dlsym(k->dl, "gcap_kernel_order");
	k->errmsg = dlsym(k->dl, "gcap_kernel_errmsg");
	/* now: dl_iterate_phdr() is not async-signal-safe */
	if (gcap_ktext_find(*(void **)&k->entry, &k->text_lo, &k->text_hi, &k->base) < 0)
		k->text_lo = k->text_hi = k->base = 0;
	return 0;
}

/*
 * Compile into a fresh private directory (mkdtemp from tmpl, mode 0700),
 * so that no other user can plant or redirect the unit, the log or the
 * object, and load the object from there; then, with dest, move it into
 * the cache. The directory is removed; k->object names dest, or the
 * object as loaded. A stop signal meanwhile waits for that.
 */
static int build_in(struct gcap_khost *k, const struct gcap_khost_opts *o, const char *cc,
		    const char *extra, char *tmpl, const char *dest, char *errbuf);

static int
build_and_bind(struct gcap_khost *k, const struct gcap_khost_opts *o, const char *cc,
	       const char *extra, char *tmpl, const char *dest, char *errbuf)
{
	sigset_t old;
	int rc;

	/* the program's stop and request signals (gcap_thread.h) held back
	 * while the private directory exists (a stop would leave it and its
	 * files in the cache), delivered once it is gone; the threads gpucap
	 * and DPDK start hold them too, so none of them takes one meanwhile */
	gcap_sigs_hold(&old);
	rc = build_in(k, o, cc, extra, tmpl, dest, errbuf);
	gcap_sigs_restore(&old);
	return rc;
}

static int
build_in(struct gcap_khost *k, const struct gcap_khost_opts *o, const char *cc,
	 const char *extra, char *tmpl, const char *dest, char *errbuf)
{
	char unit[PATH_MAX], logp[PATH_MAX], obj[PATH_MAX];
	int rc;

	if (!mkdtemp(tmpl))
		return gcap_err(errbuf, EIO, "mkdtemp %s: %s", tmpl, strerror(errno));
	if (snprintf(unit, sizeof(unit), "%s/k.c", tmpl) >= (int)sizeof(unit) ||
	    snprintf(logp, sizeof(logp), "%s/k.log", tmpl) >= (int)sizeof(logp) ||
	    snprintf(obj, sizeof(obj), "%s/k-%016llx.so", tmpl,
		     (unsigned long long)k->hash) >= (int)sizeof(obj)) {
		rmdir(tmpl);
		return gcap_err(errbuf, ENAMETOOLONG, "%s: name too long", tmpl);
	}
	rc = write_unit(unit, k);
	if (rc == 0)
		rc = compile(k, o, cc, extra, unit, obj, logp, errbuf);
	else
		gcap_err(errbuf, -rc, "%s: %s", unit, strerror(-rc));
	unlink(unit);
	unlink(logp);
	/* loaded from its private name: never an older object of the same
	 * name that the process already has open */
	if (rc == 0)
		rc = bind_object(k, obj, o, errbuf);
	if (rc == 0 && dest && rename(obj, dest) != 0)
		rc = gcap_err(errbuf, EIO, "rename %s: %s", dest, strerror(errno));
	if (rc == 0 && !(k->object = strdup(dest ? dest : obj)))
		rc = gcap_err(errbuf, ENOMEM, "out of memory");
	unlink(obj);
	rmdir(tmpl);
	return rc;
}

static int
state_init(struct gcap_khost *k, char *errbuf)
{
	memset(k->state, 0, k->state_size);
	if (!k->init)
		return 0;
	if (k->errmsg)
		k->errmsg[0] = '\0';
	int rc = k->init((struct gcap_kstate *)k->state, k->args);
	if (rc != 0) {
		const char *why = k->errmsg && k->errmsg[0] ? k->errmsg : "";
		return gcap_err(errbuf, ECANCELED, "%s: gcap_kernel_init failed (%d)%s%s",
				k->path, rc, why[0] ? ": " : "", why);
	}
	return 0;
}

struct gcap_khost *
gcap_khost_load_opts(const char *path, const char *args,
		     const struct gcap_khost_opts *opts, char *errbuf)
{
	static const struct gcap_khost_opts defaults;
	const struct gcap_khost_opts *o = opts ? opts : &defaults;
	struct gcap_khost *k;
	char *hdr = NULL, *cdir = NULL;
	char tmpl[PATH_MAX], objp[PATH_MAX], warn[GCAP_ERRBUF_SIZE];
	int rc;

	if (o->log && o->log_size)
		o->log[0] = '\0';
	if (!path) {
		gcap_err(errbuf, EINVAL, "no kernel source given");
		errno = EINVAL;
		return NULL;
	}
	k = calloc(1, sizeof(*k));
	if (!k) {
		gcap_err(errbuf, ENOMEM, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	k->path = strdup(path);
	k->args = args ? strdup(args) : NULL;
	if (!k->path || (args && !k->args)) {
		rc = gcap_err(errbuf, ENOMEM, "out of memory");
		goto fail;
	}
	k->src = gcap_kfile_read(path, &k->src_len);
	if (!k->src) {
		rc = gcap_err(errbuf, errno == ENOMEM ? ENOMEM : ENOENT, "%s: %s", path,
			      strerror(errno));
		goto fail;
	}
	char incbuf[PATH_MAX];
	const char *inc = gcap_kfile_incdir(o->include_dir, incbuf, sizeof(incbuf)) == 0 ?
				  incbuf :
				  NULL;
	if (!inc) {
		rc = gcap_err(errbuf, ENOENT,
			      "%s: gpucap/gcap_kernel.h not found "
			      "(set GCAP_INCLUDE_DIR)",
			      path);
		goto fail;
	}
	k->incdir = strdup(inc);
	char hpath[PATH_MAX + 32];
	snprintf(hpath, sizeof(hpath), "%s/gpucap/gcap_kernel.h", inc);
	hdr = gcap_kfile_header(inc, &k->header_len);
	if (!k->incdir || !hdr) {
		rc = gcap_err(errbuf, ENOMEM, "%s: cannot read %s", path, hpath);
		goto fail;
	}

	const char *cc = o->cc;
	if (!cc || !*cc)
		cc = getenv("GCAP_CC");
	if (!cc || !*cc)
		cc = GCAP_HOST_CC;
	if (!cc || !*cc)
		cc = "cc";
	const char *extra = getenv("GCAP_KERNEL_CFLAGS");

	struct gcap_sha256 key;
	uint8_t digest[32];
	uint64_t h = 0;

	gcap_sha256_init(&key);
	key_str(&key, "gpucap-khost-3");
	gcap_sha256_update(&key, k->src, k->src_len + 1);
	key_str(&key, hdr);
	key_str(&key, path);
	key_str(&key, inc);
	key_str(&key, cc);
	key_str(&key, extra);
	gcap_sha256_final(&key, digest);
	for (unsigned i = 0; i < 8; i++)
		h = h << 8 | digest[i];
	k->hash = h;
	for (unsigned i = 0; i < 32; i++)
		snprintf(k->key + 2 * i, 3, "%02x", digest[i]);

	if (!o->no_cache)
		cdir = cache_dir(o);
	bool cached = false;
	if (cdir) {
		int fd = -ENAMETOOLONG;
		if (snprintf(objp, sizeof(objp), "%s/k-%016llx.so", cdir,
			     (unsigned long long)h) < (int)sizeof(objp) &&
		    snprintf(tmpl, sizeof(tmpl), "%s/.tmp-XXXXXX", cdir) <
			    (int)sizeof(tmpl))
			fd = gcap_cache_open_entry(objp, warn);
		else
			snprintf(warn, sizeof(warn), "cache directory name too long");
		if (fd >= 0) {
			close(fd);
			cached = true;
		} else if (fd != -ENOENT) {
			/* not ours to trust, nor to replace: built aside */
			khost_warn(warn);
			free(cdir);
			cdir = NULL;
		}
	}
	if (cached) {
		rc = bind_object(k, objp, o, errbuf);
		if (rc == -ESTALE) {
			fprintf(stderr,
				"warning: cache entry %s not used: not built from %s;"
				" rebuilt\n",
				objp, path);
			cached = false;
		} else if (rc == 0 && !(k->object = strdup(objp)))
			rc = gcap_err(errbuf, ENOMEM, "out of memory");
		if (rc != 0 && cached)
			goto fail;
	}
	if (!cached) {
		if (!cdir)
			snprintf(tmpl, sizeof(tmpl), "/tmp/gpucap-kernel-XXXXXX");
		rc = build_and_bind(k, o, cc, extra, tmpl, cdir ? objp : NULL, errbuf);
		if (rc != 0)
			goto fail;
	}

	long pg = sysconf(_SC_PAGESIZE);
	k->map_size = (k->state_size + (size_t)pg - 1) & ~((size_t)pg - 1);
	if (k->map_size == 0)
		k->map_size = (size_t)pg;
	k->state = mmap(NULL, k->map_size, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (k->state == MAP_FAILED) {
		k->state = NULL;
		rc = gcap_err(errbuf, ENOMEM, "%s: state of %zu bytes: %s", path,
			      k->state_size, strerror(errno));
		goto fail;
	}
	rc = state_init(k, errbuf);
	if (rc != 0)
		goto fail;
	k->header = hdr;
	free(cdir);
	return k;
fail:
	free(hdr);
	free(cdir);
	gcap_khost_free(k);
	errno = -rc;
	return NULL;
}

struct gcap_khost *
gcap_khost_load(const char *path, const char *args, char *errbuf)
{
	return gcap_khost_load_opts(path, args, NULL, errbuf);
}

void
gcap_khost_free(struct gcap_khost *k)
{
	if (!k)
		return;
	if (k->state)
		munmap(k->state, k->map_size);
	if (k->dl)
		dlclose(k->dl);
	free(k->path);
	free(k->src);
	free(k->incdir);
	free(k->header);
	free(k->object);
	free(k->args);
	free(k);
}

uint32_t
gcap_khost_run(struct gcap_khost *k, const struct gcap_kpkt *pkt)
{
	return k->entry(pkt, (struct gcap_kstate *)k->state);
}

gcap_kernel_fn
gcap_khost_entry(const struct gcap_khost *k)
{
	return k->entry;
}

void *
gcap_khost_state(struct gcap_khost *k)
{
	return k->state;
}

size_t
gcap_khost_state_size(const struct gcap_khost *k)
{
	return k->state_size;
}

int
gcap_khost_reset(struct gcap_khost *k, char *errbuf)
{
	return state_init(k, errbuf);
}

int
gcap_khost_report_json(const struct gcap_khost *k, FILE *f, const void *state_override)
{
	struct gcap_json j;
	gcap_json_begin(&j, f);
	if (k->report)
		k->report((const struct gcap_kstate *)(state_override ? state_override :
									k->state),
			  &j);
	return gcap_json_end(&j);
}

int
gcap_khost_report_file(const struct gcap_khost *k, const char *path,
		       const void *state_override, char *errbuf)
{
	char tmp[PATH_MAX];
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return gcap_err(errbuf, ENAMETOOLONG, "%s: name too long", path);
	/* never through a link planted at the .tmp name; a stale .tmp (a
	 * run that died) is removed once, itself, not what it points at */
	int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
	int fd = gcap_open_output(tmp, flags, 0666, errbuf);
	if (fd == -EEXIST && unlink(tmp) == 0)
		fd = gcap_open_output(tmp, flags, 0666, errbuf);
	if (fd < 0)
		return fd;
	FILE *f = fdopen(fd, "w");
	if (!f) {
		int e = errno;
		close(fd);
		unlink(tmp);
		return gcap_err(errbuf, e, "%s: %s", tmp, strerror(e));
	}
	int rc = gcap_khost_report_json(k, f, state_override);
	if (fclose(f) != 0 && rc == 0)
		rc = -EIO;
	if (rc == -EIO) {
		unlink(tmp);
		return gcap_err(errbuf, EIO, "%s: write error", tmp);
	}
	if (rename(tmp, path) != 0) {
		int e = errno;
		unlink(tmp);
		return gcap_err(errbuf, e, "%s: %s", path, strerror(e));
	}
	if (rc == -EINVAL)
		return gcap_err(errbuf, EINVAL,
				"%s: the kernel's report left "
				"the JSON unbalanced",
				path);
	return 0;
}

bool
gcap_khost_has_report(const struct gcap_khost *k)
{
	return k->report != NULL;
}

bool
gcap_khost_ordered(const struct gcap_khost *k)
{
	return k->order != NULL;
}

const char *
gcap_khost_source(const struct gcap_khost *k, size_t *len)
{
	if (len)
		*len = k->src_len;
	return k->src;
}

const char *
gcap_khost_path(const struct gcap_khost *k)
{
	return k->path;
}

const char *
gcap_khost_include_dir(const struct gcap_khost *k)
{
	return k->incdir;
}

const char *
gcap_khost_header(const struct gcap_khost *k, size_t *len)
{
	if (len)
		*len = k->header_len;
	return k->header;
}

uint64_t
gcap_khost_hash(const struct gcap_khost *k)
{
	return k->hash;
}

const char *
gcap_khost_object(const struct gcap_khost *k)
{
	return k->object;
}

int
gcap_khost_text(const struct gcap_khost *k, uintptr_t *lo, uintptr_t *hi, uintptr_t *base)
{
	*lo = k->text_lo;
	*hi = k->text_hi;
	if (base != NULL)
		*base = k->base;
	return k->text_hi > k->text_lo ? 0 : -ENOENT;
}
