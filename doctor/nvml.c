/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NVML through dlopen, for the two figures the CUDA driver API does not
 * give: a GPU's BAR1 (total and free: what GPUDirect RDMA can expose to a
 * NIC) and the kernel driver's version. GCAP_NVML_LIB names another
 * library (the doctor's tests load a fake one). The toolkit ships no
 * nvml.h, so the few declarations used are here; they are NVML's stable
 * ABI (the _v2 entry points).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "doctor_internal.h"

typedef int nvml_ret;
typedef struct nvml_dev *nvml_dev;
struct nvml_bar1 {
	unsigned long long total, avail, used; /* nvmlBAR1Memory_t */
};

struct dr_nvml {
	void *lib;
	nvml_ret (*shutdown)(void);
	const char *(*error)(nvml_ret);
	nvml_ret (*by_bus)(const char *, nvml_dev *);
	nvml_ret (*bar1)(nvml_dev, struct nvml_bar1 *);
	nvml_ret (*driver)(char *, unsigned);
};

struct dr_nvml *
dr_nvml_open(char *why, size_t n)
{
	const char *path = getenv("GCAP_NVML_LIB");
	nvml_ret (*init)(void);
	struct dr_nvml *m;
	nvml_ret r;

	if (path == NULL || path[0] == '\0')
		path = "libnvidia-ml.so.1";
	m = calloc(1, sizeof(*m));
	if (m == NULL) {
		snprintf(why, n, "out of memory");
		return NULL;
	}
	m->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (m->lib == NULL) {
		snprintf(why, n, "dlopen(%s): %s", path, dlerror());
		free(m);
		return NULL;
	}
	*(void **)&init = dlsym(m->lib, "nvmlInit_v2");
	*(void **)&m->shutdown = dlsym(m->lib, "nvmlShutdown");
	*(void **)&m->error = dlsym(m->lib, "nvmlErrorString");
	*(void **)&m->by_bus = dlsym(m->lib, "nvmlDeviceGetHandleByPciBusId_v2");
	*(void **)&m->bar1 = dlsym(m->lib, "nvmlDeviceGetBAR1MemoryInfo");
	*(void **)&m->driver = dlsym(m->lib, "nvmlSystemGetDriverVersion");
	if (init == NULL || m->shutdown == NULL || m->error == NULL ||
	    m->by_bus == NULL || m->bar1 == NULL || m->driver == NULL) {
		snprintf(why, n, "%s lacks the NVML entry points used", path);
		dlclose(m->lib);
		free(m);
		return NULL;
	}
	r = init();
	if (r != 0) {
		snprintf(why, n, "nvmlInit_v2: %s", m->error(r));
		dlclose(m->lib);
		free(m);
		return NULL;
	}
	return m;
}

int
dr_nvml_bar1(struct dr_nvml *m, const char *bdf, uint64_t *total, uint64_t *avail)
{
	struct nvml_bar1 b;
	nvml_dev dev;

	if (m->by_bus(bdf, &dev) != 0 || m->bar1(dev, &b) != 0)
		return -ENODEV;
	*total = b.total;
	*avail = b.avail;
	return 0;
}

int
dr_nvml_driver(struct dr_nvml *m, char *buf, size_t n)
{
	return m->driver(buf, (unsigned)n) == 0 ? 0 : -EIO;
}

void
dr_nvml_close(struct dr_nvml *m)
{
	if (m == NULL)
		return;
	m->shutdown();
	dlclose(m->lib);
	free(m);
}
