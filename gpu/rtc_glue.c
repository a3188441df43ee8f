/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Compiled filters for the persistent kernel: the BPF programs translated
 * to CUDA C by gcap_bpfc, put in front of the kernel source (gcap_gpu_code),
 * compiled at run time by NVRTC through gcap_rtc (with its cache) for the
 * device's compute capability, loaded with cuModuleLoadData.
 */
#include <errno.h>
#include <stdlib.h>

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

int
gcap_gpu_compile_module(const struct gcap_cu *cu,
			const struct gcap_exec_conf *conf, CUdevice dev,
			CUmodule *mod, char *errbuf)
{
#ifdef GCAP_GPU_HAVE_RTC
	struct gcap_rtc_info info = { 0 };
	int maj = 0, min = 0, rc;
	void *img = NULL;
	size_t len = 0;
	char *src;

	cu->DeviceGetAttribute(&maj, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
			       dev);
	cu->DeviceGetAttribute(&min, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
			       dev);
	src = gcap_gpu_code(conf, errbuf);
	if (src == NULL)
		return -errno;
	rc = gcap_rtc_compile(src, "gpucap_pipeline.cu", maj, min, NULL, 0, NULL,
			      0, &img, &len, &info, errbuf);
	free(src);
	gcap_rtc_info_clear(&info);
	if (rc)
		return rc;
	rc = gcap_cu_err(cu, cu->ModuleLoadData(mod, img), errbuf,
			 "cuModuleLoadData(compiled filters)");
	free(img);
	return rc;
#else
	(void)cu;
	(void)conf;
	(void)dev;
	(void)mod;
	return gcap_err(errbuf, ENOTSUP, "gpu executor: compiled filters need "
			"the run-time compiler (gcap_rtc), not in this build; "
			"filters are interpreted without --compile-filters");
#endif
}
