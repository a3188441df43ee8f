/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The persistent kernel's module on a device: the embedded fatbin (filters
 * interpreted), or, with compiled filters or an inline kernel, the
 * translation unit of code.c compiled at run time by NVRTC through
 * gcap_rtc (with its cache) for the device's compute capability; loaded
 * with cuModuleLoadData, then the inline kernel's state and the filter
 * programs uploaded into VRAM. Separate from the executor so that the
 * compile (no GPU needed) and the load are one layer it calls.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include "exec_gpu_internal.h"
#include "gpu_internal.h"
#ifdef GCAP_GPU_HAVE_RTC
#include "gpucap/gcap_rtc.h"
#endif

/* the filter programs are copied into VRAM as the kernel reads them */
_Static_assert(sizeof(struct bpf_insn) == 8, "bpf_insn layout");

#ifdef GCAP_GPU_HAVE_RTC
/* NVRTC writes "FILE(LINE): error: message"; the user reads "FILE:LINE:
 * error: message", as the host compiler's errors are reported. Takes the
 * first such line that says "error"; 0 when there is none. */
static int
rtc_log_error(const char *log, char *errbuf)
{
	const char *s = log;

	while (s != NULL && *s != '\0') {
		const char *e = strchr(s, '\n');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		const char *p = s, *q, *msg = NULL, *open = NULL;

		/* "(digits): " ending the file name */
		while ((q = memchr(p, ')', n - (size_t)(p - s))) != NULL) {
			const char *d = q;

			while (d > s && d[-1] >= '0' && d[-1] <= '9')
				d--;
			if (d < q && d > s && d[-1] == '(' && (size_t)(q - s) + 2 < n &&
			    q[1] == ':' && q[2] == ' ') {
				open = d - 1;
				msg = q + 3;
				break;
			}
			p = q + 1;
		}
		/* "error: ...", "catastrophic error: ...", not warnings */
		if (msg != NULL && (size_t)(msg - s) < n &&
		    (strncmp(msg, "error", 5) == 0 ||
		     strncmp(msg, "catastrophic error", 18) == 0 ||
		     strncmp(msg, "fatal error", 11) == 0)) {
			int fl = (int)(open - s), ll = (int)(q - open - 1);
			int ml = (int)(n - (size_t)(msg - s));

			gcap_err(errbuf, ENOEXEC, "%.*s:%.*s: %.*s (NVRTC)", fl, s, ll,
				 open + 1, ml, msg);
			return 1;
		}
		s = e ? e + 1 : NULL;
	}
	return 0;
}
#endif

int
gcap_gpu_rtc_build(const char *src, const struct gcap_khost *k, int maj, int min,
		   void **image, size_t *len, char *errbuf)
{
#ifdef GCAP_GPU_HAVE_RTC
	struct gcap_rtc_info info = { 0 };
	char inc[PATH_MAX + 8], dir[PATH_MAX + 8];
	const char *opts[2] = { NULL, NULL };
	unsigned nopts = 0;
	int rc;

	if (k != NULL) {
		const char *path = gcap_khost_path(k), *slash;

		/* gcap_kernel.h is inlined; the include path still serves a
		 * kernel that includes it another way, and the kernel's own
		 * directory its "local.h" files (the host build's -iquote) */
		snprintf(inc, sizeof(inc), "-I%s", gcap_khost_include_dir(k));
		opts[nopts++] = inc;
		slash = strrchr(path, '/');
		if (slash == NULL)
			snprintf(dir, sizeof(dir), "-I.");
		else
			snprintf(dir, sizeof(dir), "-I%.*s",
				 (int)(slash == path ? 1 : slash - path), path);
		opts[nopts++] = dir;
	}
	rc = gcap_rtc_compile(src, "gpucap_pipeline.cu", maj, min, opts, nopts, NULL, 0,
			      image, len, &info, errbuf);
	if (rc == -ENOEXEC && k != NULL)
		rtc_log_error(info.log, errbuf);
	/* a cache another user could plant is not used: say so, once */
	if (info.cache_warning[0] != '\0')
		GPU_LOG(WARNING, "GPU module cache not used: %s\n", info.cache_warning);
	gcap_rtc_info_clear(&info);
	return rc;
#else
	(void)src;
	(void)k;
	(void)maj;
	(void)min;
	(void)image;
	(void)len;
	return gcap_err(errbuf, ENOTSUP,
			"gpu executor: compiled filters and "
			"inline kernels need the run-time compiler (gcap_rtc), "
			"not in this build");
#endif
}

/* gcap_gpu_code_kernel(conf, k) compiled for device dev and loaded into
 * the current context; -ENOTSUP when this build has no run-time compiler */
static int
compile_module(const struct gcap_cu *cu, const struct gcap_exec_conf *conf,
	       const struct gcap_khost *k, CUdevice dev, CUmodule *mod, char *errbuf)
{
#ifdef GCAP_GPU_HAVE_RTC
	int maj = 0, min = 0, rc;
	void *img = NULL;
	size_t len = 0;
	char *src;

	cu->DeviceGetAttribute(&maj, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
	cu->DeviceGetAttribute(&min, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
	src = gcap_gpu_code_kernel(conf, k, errbuf);
	if (src == NULL)
		return -errno;
	rc = gcap_gpu_rtc_build(src, k, maj, min, &img, &len, errbuf);
	free(src);
	if (rc)
		return rc;
	rc = gcap_cu_err(cu, cu->ModuleLoadData(mod, img), errbuf,
			 k ? "cuModuleLoadData(inline kernel)" :
			     "cuModuleLoadData(compiled filters)");
	free(img);
	return rc;
#else
	(void)cu;
	(void)conf;
	(void)dev;
	(void)mod;
	if (k != NULL)
		return gcap_err(errbuf, ENOTSUP,
				"gpu executor: inline kernels "
				"need the run-time compiler (gcap_rtc), not in "
				"this build");
	return gcap_err(errbuf, ENOTSUP,
			"gpu executor: compiled filters need "
			"the run-time compiler (gcap_rtc), not in this build; "
			"filters are interpreted without --compile-filters");
#endif
}

int
gcap_gpu_dev_load(struct gcap_exec *ex, struct gpu_dev *d, char *errbuf)
{
	const struct gcap_cu *cu = ex->cu;
	const struct gcap_exec_conf *c = &ex->conf;
	struct gcap_gpu_prog progs[GCAP_MAX_OUTPUTS];
	struct bpf_insn *all = NULL;
	size_t ninsn = 0;
	unsigned j;
	int rc;

	if (c->compile_filters || ex->kernel != NULL) {
		rc = compile_module(ex->cu, c, ex->kernel, d->dev, &d->mod, errbuf);
		if (rc)
			return rc;
	} else {
		rc = gcap_cu_err(cu, cu->ModuleLoadData(&d->mod, gcap_gpu_fatbin), errbuf,
				 "cuModuleLoadData(" KERNEL_NAME ")");
		if (rc)
			return rc;
	}
	rc = gcap_cu_err(cu, cu->ModuleGetFunction(&d->fn, d->mod, KERNEL_NAME), errbuf,
			 "cuModuleGetFunction(" KERNEL_NAME ")");
	if (rc)
		return rc;
	if (ex->kernel != NULL) {
		/* the state the init hook prepared on the host, into VRAM */
		rc = gcap_cu_err(
			cu, cu->ModuleGetFunction(&d->kcopy, d->mod, "gcap_kstate_copy"),
			errbuf, "cuModuleGetFunction(gcap_kstate_copy)");
		if (!rc)
			rc = gcap_cu_err(cu, cu->MemAlloc(&d->kstate, ex->kstate_size),
					 errbuf, "cuMemAlloc(inline kernel state)");
		if (!rc)
			rc = gcap_cu_err(cu,
					 cu->MemcpyHtoD(d->kstate,
							gcap_khost_state(ex->kernel),
							ex->kstate_size),
					 errbuf, "cuMemcpyHtoD(inline kernel state)");
		if (rc)
			return rc;
	}

	for (j = 0; j < c->nfilters; j++)
		ninsn += c->filters[j].bf_len;
	all = malloc((ninsn + 1) * sizeof(*all));
	if (all == NULL)
		return gcap_err(errbuf, ENOMEM, "gpu executor: out of memory");
	ninsn = 0;
	for (j = 0; j < c->nfilters; j++) {
		progs[j].off = (uint32_t)ninsn;
		progs[j].len = c->filters[j].bf_len;
		if (c->filters[j].bf_len)
			memcpy(all + ninsn, c->filters[j].bf_insns,
			       c->filters[j].bf_len * sizeof(*all));
		ninsn += c->filters[j].bf_len;
	}
	rc = gcap_cu_err(cu, cu->MemAlloc(&d->insns, (ninsn + 1) * sizeof(*all)), errbuf,
			 "cuMemAlloc(filters)");
	if (!rc && ninsn)
		rc = gcap_cu_err(cu, cu->MemcpyHtoD(d->insns, all, ninsn * sizeof(*all)),
				 errbuf, "cuMemcpyHtoD(filters)");
	free(all);
	if (!rc)
		rc = gcap_cu_err(cu, cu->MemAlloc(&d->progs, sizeof(progs)), errbuf,
				 "cuMemAlloc(programs)");
	if (!rc)
		rc = gcap_cu_err(
			cu,
			cu->MemcpyHtoD(d->progs, progs, c->nfilters * sizeof(progs[0])),
			errbuf, "cuMemcpyHtoD(programs)");
	return rc;
}
