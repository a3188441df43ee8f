/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Compiled filters for the persistent kernel: the BPF programs translated
 * to CUDA C by gcap_bpfc, put in front of the kernel source, compiled at
 * run time for the device's compute capability.
 */
#include <errno.h>
#include <stdlib.h>

#include "gpucap/gcap_bpfc.h"
#include "gpucap/gcap_gpu.h"
#include "gpu_internal.h"

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
	(void)cu;
	(void)conf;
	(void)dev;
	(void)mod;
	/* gcap_rtc (NVRTC + cache) is not in this tree yet */
	return gcap_err(errbuf, ENOTSUP, "gpu executor: compiled filters need "
			"the run-time compiler (gcap_rtc), not built in; the "
			"interpreter is used without --compile-filters");
}
