/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpucap/gcap_common.h"

static const char *const backend_names[] = {
	[GCAP_BACKEND_AUTO] = "auto",
	[GCAP_BACKEND_CPU] = "cpu",
	[GCAP_BACKEND_GPU] = "gpu",
};

static const char *const mem_names[] = {
	[GCAP_MEM_AUTO] = "auto", [GCAP_MEM_GPU] = "gpu",     [GCAP_MEM_HOST] = "host",
	[GCAP_MEM_COPY] = "copy", [GCAP_MEM_PLAIN] = "plain",
};

const char *
gcap_backend_name(enum gcap_backend b)
{
	if ((unsigned)b >= sizeof(backend_names) / sizeof(backend_names[0]))
		return "?";
	return backend_names[b];
}

const char *
gcap_mem_name(enum gcap_mem m)
{
	if ((unsigned)m >= sizeof(mem_names) / sizeof(mem_names[0]))
		return "?";
	return mem_names[m];
}

int
gcap_backend_parse(const char *s, enum gcap_backend *out)
{
	for (unsigned i = 0; i < sizeof(backend_names) / sizeof(backend_names[0]); i++)
		if (strcmp(s, backend_names[i]) == 0) {
			*out = (enum gcap_backend)i;
			return 0;
		}
	return -EINVAL;
}

int
gcap_mem_parse(const char *s, enum gcap_mem *out)
{
	/* "plain" is internal: the cpu backend's own pools */
	for (unsigned i = 0; i < GCAP_MEM_PLAIN; i++)
		if (strcmp(s, mem_names[i]) == 0) {
			*out = (enum gcap_mem)i;
			return 0;
		}
	return -EINVAL;
}

int
gcap_err(char *errbuf, int err, const char *fmt, ...)
{
	if (errbuf != NULL) {
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(errbuf, GCAP_ERRBUF_SIZE, fmt, ap);
		va_end(ap);
	}
	return -err;
}

void *
gcap_err_null(char *errbuf, int err, const char *fmt, ...)
{
	if (errbuf != NULL) {
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(errbuf, GCAP_ERRBUF_SIZE, fmt, ap);
		va_end(ap);
	}
	errno = err;
	return NULL;
}

int
gcap_cpulist_parse(const char *s, unsigned *cpus, unsigned max)
{
	unsigned n = 0;

	if (s == NULL || *s == '\0')
		return -EINVAL;
	while (*s != '\0') {
		char *end;
		unsigned long a, b;

		if (*s < '0' || *s > '9')
			return -EINVAL;
		a = b = strtoul(s, &end, 10);
		if (*end == '-') {
			s = end + 1;
			if (*s < '0' || *s > '9')
				return -EINVAL;
			b = strtoul(s, &end, 10);
			if (b < a)
				return -EINVAL;
		}
		if (b >= GCAP_CPU_MAX)
			return -EINVAL;
		for (unsigned long c = a; c <= b; c++) {
			if (n == max)
				return -E2BIG;
			if (cpus != NULL)
				cpus[n] = (unsigned)c;
			n++;
		}
		if (*end == ',' && end[1] != '\0')
			end++;
		else if (*end != '\0')
			return -EINVAL;
		s = end;
	}
	return (int)n;
}

/* read before main(), so before the EAL narrows the main thread */
static cpu_set_t start_cpus;
static bool start_cpus_ok;

__attribute__((constructor)) static void
save_start_cpus(void)
{
	start_cpus_ok = sched_getaffinity(0, sizeof(start_cpus), &start_cpus) == 0 &&
			CPU_COUNT(&start_cpus) > 0;
}

int
gcap_cpus_at_start(unsigned *cpus, unsigned max)
{
	unsigned n = 0;

	if (!start_cpus_ok)
		return -ENOSYS;
	for (unsigned c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &start_cpus))
			continue;
		if (cpus != NULL) {
			if (n == max)
				return -E2BIG;
			cpus[n] = c;
		}
		n++;
	}
	return (int)n;
}
