/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Compiled filters (and inline kernels) for the persistent kernel: the BPF
 * programs translated to CUDA C by gcap_bpfc, put in front of the kernel
 * source (gcap_gpu_code_kernel), compiled at run time by NVRTC through
 * gcap_rtc (with its cache) for the device's compute capability, loaded
 * with cuModuleLoadData.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpucap/gcap_bpfc.h"
#include "gpucap/gcap_gpu.h"
#include "gpu_internal.h"
#ifdef GCAP_GPU_HAVE_RTC
#include "gpucap/gcap_rtc.h"
#endif

char *
gcap_gpu_filter_code(const struct gcap_exec_conf *conf, char *errbuf)
{
	return gcap_bpfc_translate(conf->filters, conf->nfilters, "gcap_flt", 0,
				   errbuf);
}

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
			if (d < q && d > s && d[-1] == '(' &&
			    (size_t)(q - s) + 2 < n && q[1] == ':' && q[2] == ' ') {
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

			gcap_err(errbuf, ENOEXEC, "%.*s:%.*s: %.*s (NVRTC)", fl, s,
				 ll, open + 1, ml, msg);
			return 1;
		}
		s = e ? e + 1 : NULL;
	}
	return 0;
}
#endif

int
gcap_gpu_rtc_build(const char *src, const struct gcap_khost *k, int maj,
		   int min, void **image, size_t *len, char *errbuf)
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
	rc = gcap_rtc_compile(src, "gpucap_pipeline.cu", maj, min, opts, nopts,
			      NULL, 0, image, len, &info, errbuf);
	if (rc == -ENOEXEC && k != NULL)
		rtc_log_error(info.log, errbuf);
	gcap_rtc_info_clear(&info);
	return rc;
#else
	(void)src;
	(void)k;
	(void)maj;
	(void)min;
	(void)image;
	(void)len;
	return gcap_err(errbuf, ENOTSUP, "gpu executor: compiled filters and "
			"inline kernels need the run-time compiler (gcap_rtc), "
			"not in this build");
#endif
}

int
gcap_gpu_compile_module(const struct gcap_cu *cu,
			const struct gcap_exec_conf *conf,
			const struct gcap_khost *k, CUdevice dev,
			CUmodule *mod, char *errbuf)
{
#ifdef GCAP_GPU_HAVE_RTC
	int maj = 0, min = 0, rc;
	void *img = NULL;
	size_t len = 0;
	char *src;

	cu->DeviceGetAttribute(&maj, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
			       dev);
	cu->DeviceGetAttribute(&min, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
			       dev);
	src = gcap_gpu_code_kernel(conf, k, errbuf);
	if (src == NULL)
		return -errno;
	rc = gcap_gpu_rtc_build(src, k, maj, min, &img, &len, errbuf);
	free(src);
	if (rc)
		return rc;
	rc = gcap_cu_err(cu, cu->ModuleLoadData(mod, img), errbuf,
			 k ? "cuModuleLoadData(inline kernel)"
			   : "cuModuleLoadData(compiled filters)");
	free(img);
	return rc;
#else
	(void)cu;
	(void)conf;
	(void)dev;
	(void)mod;
	if (k != NULL)
		return gcap_err(errbuf, ENOTSUP, "gpu executor: inline kernels "
				"need the run-time compiler (gcap_rtc), not in "
				"this build");
	return gcap_err(errbuf, ENOTSUP, "gpu executor: compiled filters need "
			"the run-time compiler (gcap_rtc), not in this build; "
			"filters are interpreted without --compile-filters");
#endif
}
