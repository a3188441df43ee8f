/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CUDA translation unit the gpu executor runs, as NVRTC compiles it:
 * the filters translated from BPF by gcap_bpfc (with compiled filters or an
 * inline kernel), the inline kernel with gcap_kernel.h inlined (its line
 * numbers kept), then the persistent kernel's source. Text only: no GPU,
 * no compiler; module.c compiles what this builds.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpucap/gcap_bpfc.h"
#include "gpucap/gcap_gpu.h"
#include "gpu_internal.h"

/* the code gcap_bpfc generates for conf's filters (functions prefixed
 * gcap_flt_, gcap_flt_mask() used by the kernel) */
static char *
filter_code(const struct gcap_exec_conf *conf, char *errbuf)
{
	return gcap_bpfc_translate(conf->filters, conf->nfilters, "gcap_flt", 0, errbuf);
}

/* Is this line `#include <gpucap/gcap_kernel.h>` (or "...")? */
static bool
is_kernel_h_include(const char *l, size_t n)
{
	char t[64];

	return gcap_khost_include_of(l, n, t, sizeof(t)) != 0 &&
	       strcmp(t, "gpucap/gcap_kernel.h") == 0;
}

/* A growing string; on failure *ok is cleared and later appends do nothing. */
struct gbuf {
	char *p;
	size_t len, cap;
	bool ok;
};

static void
gb_put(struct gbuf *b, const char *s, size_t n)
{
	if (!b->ok)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = (b->len + n + 1) * 2;
		char *p = realloc(b->p, cap);

		if (p == NULL) {
			b->ok = false;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void
gb_str(struct gbuf *b, const char *s)
{
	gb_put(b, s, strlen(s));
}

/* a C string literal of s (for #line): quotes and backslashes escaped */
static void
gb_quoted(struct gbuf *b, const char *s)
{
	gb_put(b, "\"", 1);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			gb_put(b, "\\", 1);
		if (*s == '\n')
			gb_put(b, " ", 1);
		else
			gb_put(b, s, 1);
	}
	gb_put(b, "\"", 1);
}

static unsigned
count_lines(const char *s, size_t n)
{
	unsigned k = 0;

	for (size_t i = 0; i < n; i++)
		k += s[i] == '\n';
	return k;
}

/* the inline kernel part: gcap_kernel.h inlined, then the user's source
 * (its own include of the header commented out, line numbers kept) */
static int
gpu_code_inline(struct gbuf *b, const struct gcap_khost *k, char *errbuf)
{
	char line[64], sz[32];
	const char *src = gcap_khost_source(k, NULL), *l;
	size_t hlen = 0;
	/* the header the host build of this kernel used */
	const char *hdr = gcap_khost_header(k, &hlen);

	if (hdr == NULL)
		return gcap_err(errbuf, EINVAL,
				"gpu code: the kernel was "
				"loaded without its header");
	/* the order key, when the kernel has one (gcap_kernel.h) */
	if (gcap_khost_ordered(k))
		gb_str(b, "#define GCAP_KERNEL_ORDERED 1\n");
	gb_str(b, "/* ---- begin gpucap/gcap_kernel.h (inlined from ");
	gb_str(b, gcap_khost_include_dir(k));
	gb_str(b, ") ---- */\n");
	gb_put(b, hdr, hlen);
	if (hlen && hdr[hlen - 1] != '\n')
		gb_str(b, "\n");
	gb_str(b, "/* ---- end gpucap/gcap_kernel.h ---- */\n");

	gb_str(b, "#line 1 ");
	gb_quoted(b, gcap_khost_path(k));
	gb_str(b, "\n");
	for (l = src; *l != '\0';) {
		const char *e = strchr(l, '\n');
		size_t n = e ? (size_t)(e - l) : strlen(l);

		if (is_kernel_h_include(l, n))
			gb_str(b, "/* #include <gpucap/gcap_kernel.h>: inlined above */");
		else
			gb_put(b, l, n);
		gb_str(b, "\n");
		l += n + (e != NULL);
	}
	/* the host copy of the state is read with the host build's layout */
	snprintf(sz, sizeof(sz), "%zu", gcap_khost_state_size(k));
	gb_str(b, "static_assert(sizeof(struct gcap_kstate) == ");
	gb_str(b, sz);
	gb_str(b, ", \"struct gcap_kstate: the GPU build's size differs from "
		  "the host build's\");\n");
	/* the rest names the TU itself, with its real line numbers */
	snprintf(line, sizeof(line), "#line %u ",
		 b->ok ? count_lines(b->p, b->len) + 2 : 1);
	gb_str(b, line);
	gb_quoted(b, "gpucap_pipeline.cu");
	gb_str(b, "\n#define GCAP_GPU_INLINE_KERNEL 1\n");
	return 0;
}

char *
gcap_gpu_code_kernel(const struct gcap_exec_conf *conf, const struct gcap_khost *k,
		     char *errbuf)
{
	struct gbuf b = { NULL, 0, 0, true };
	char *flt = NULL, head[512];
	const char *ksrc = (const char *)gcap_gpu_kernel_src;
	int rc;

	if (conf == NULL || conf->nfilters == 0 || conf->nfilters > GCAP_MAX_OUTPUTS ||
	    conf->filters == NULL)
		return gcap_err_null(errbuf, EINVAL,
				     "gpu code: 1 to %u filters "
				     "needed",
				     GCAP_MAX_OUTPUTS);
	/* an inline kernel is compiled with NVRTC: so are the filters */
	if (conf->compile_filters || k != NULL) {
		flt = filter_code(conf, errbuf);
		if (flt == NULL)
			return NULL;
	}
	snprintf(head, sizeof(head),
		 "/* gpucap persistent kernel: %u output(s), %s%s */\n", conf->nfilters,
		 flt ? "filters compiled from BPF by gcap_bpfc" :
		       "filters interpreted (gcap_bpf_interp)",
		 k ? ", inline kernel" : "");
	gb_str(&b, head);
	if (flt != NULL) {
		gb_str(&b, flt);
		gb_str(&b, "\n#define GCAP_GPU_COMPILED_FILTERS 1\n");
	}
	free(flt);
	if (k != NULL) {
		rc = gpu_code_inline(&b, k, errbuf);
		if (rc) {
			free(b.p);
			errno = -rc;
			return NULL;
		}
	}
	gb_str(&b, ksrc);
	if (!b.ok) {
		free(b.p);
		return gcap_err_null(errbuf, ENOMEM, "gpu code: out of memory");
	}
	return b.p;
}

char *
gcap_gpu_code(const struct gcap_exec_conf *conf, char *errbuf)
{
	struct gcap_khost *k = NULL;
	char *out;
	int e;

	if (conf != NULL && conf->kernel_path != NULL) {
		/* the host build validates the kernel (FILE:LINE errors) and
		 * finds the gcap_kernel.h it was built with */
		k = gcap_khost_load(conf->kernel_path, conf->kernel_arg, errbuf);
		if (k == NULL)
			return NULL;
	}
	out = gcap_gpu_code_kernel(conf, k, errbuf);
	e = errno;
	gcap_khost_free(k);
	errno = e;
	return out;
}
