/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lcore_jitter: how often a busy-polling core loses the CPU, and for how
 * long. One thread per listed CPU, pinned there, reads CLOCK_MONOTONIC in
 * a tight loop for the given time; every gap between two readings longer
 * than a normal loop is a stall (interrupt, hypervisor, SMI, another
 * thread). The RX lcores of gpu-capture poll the same way, so a packet in
 * flight on an lcore while it stalls waits as long: with stalls of S us
 * at a rate of R a second, about R * (W + S) / 1e6 of packets whose work
 * spans W us on the lcore see one.
 *
 * With TOUCH_MIB, each loop also writes one cache line of a buffer of
 * that size of the thread's own (prefaulted), a page further each time:
 * a busy loop that walks memory as an RX lcore does (mbufs, descriptors,
 * export buffers). Stalls that come only with memory touched are the
 * platform's memory virtualization (a second-level page fault is a VM
 * exit), not the loop's work. A trailing 'h' (e.g. 64h) takes the buffer
 * from 2 MiB huge pages (MAP_HUGETLB), as DPDK's mempools are.
 *
 * usage: lcore_jitter SECONDS CPU[,CPU...] [TOUCH_MIB[h]]
 * (the CPUs as a CPU list, gcap_cpulist_parse(): ranges too, e.g. 2-5,8)
 * Prints, per CPU and in total: loops, stalls of >= 2, 5, 10, 20, 50 us
 * per second, the longest stall, and the share of time lost to stalls of
 * >= 2 us.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "gpucap/gcap_common.h"

#define MAX_CPUS 256
static const unsigned lim_us[] = { 2, 5, 10, 20, 50 };
#define NLIM (sizeof(lim_us) / sizeof(lim_us[0]))

struct probe {
	pthread_t th;
	int cpu;
	double secs;
	unsigned char *buf; /* touched memory (NULL: none) */
	size_t bufsz;
	uint64_t loops, max_ns, lost_ns;
	uint64_t over[NLIM];
	int err;
};

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *
probe_main(void *arg)
{
	struct probe *p = arg;
	cpu_set_t set;
	uint64_t t0, end, prev, t;

	CPU_ZERO(&set);
	CPU_SET(p->cpu, &set);
	p->err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (p->err)
		return NULL;
	t0 = now_ns();
	end = t0 + (uint64_t)(p->secs * 1e9);
	size_t off = 0;

	for (prev = t0; prev < end; prev = t) {
		uint64_t gap;

		if (p->buf != NULL) {
			/* a write a page and a line further each time */
			((volatile unsigned char *)p->buf)[off]++;
			off += 4096u + 64u;
			if (off >= p->bufsz)
				off -= p->bufsz;
		}
		t = now_ns();
		gap = t - prev;
		p->loops++;
		if (gap < 2000)
			continue;
		p->lost_ns += gap;
		if (gap > p->max_ns)
			p->max_ns = gap;
		for (unsigned i = 0; i < NLIM; i++)
			if (gap >= lim_us[i] * 1000u)
				p->over[i]++;
	}
	return NULL;
}

static void
report(const char *name, const struct probe *p, unsigned n, double secs)
{
	uint64_t loops = 0, max = 0, lost = 0, over[NLIM] = { 0 };

	for (unsigned k = 0; k < n; k++) {
		loops += p[k].loops;
		lost += p[k].lost_ns;
		max = p[k].max_ns > max ? p[k].max_ns : max;
		for (unsigned i = 0; i < NLIM; i++)
			over[i] += p[k].over[i];
	}
	printf("| %s | %.1f |", name, (double)loops / n / secs / 1e6);
	for (unsigned i = 0; i < NLIM; i++)
		printf(" %.0f |", (double)over[i] / n / secs);
	printf(" %.1f | %.3f |\n", (double)max / 1e3,
	       100.0 * (double)lost / n / (secs * 1e9));
}

int
main(int argc, char **argv)
{
	static struct probe pr[MAX_CPUS];
	unsigned cpus[MAX_CPUS], n;
	double secs;
	char *end;
	size_t touch = 0;
	bool huge = false;
	int rc;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: %s SECONDS CPU[,CPU...] [TOUCH_MIB[h]]\n",
			argv[0]);
		return 2;
	}
	if (argc == 4) {
		unsigned long mib = strtoul(argv[3], &end, 10);

		huge = *end == 'h';
		if (end == argv[3] || (*end != '\0' && strcmp(end, "h") != 0) ||
		    mib == 0 || mib > 65536) {
			fprintf(stderr,
				"%s: bad TOUCH_MIB '%s' (1-65536, 'h' for huge pages)\n",
				argv[0], argv[3]);
			return 2;
		}
		touch = (size_t)mib << 20;
	}
	secs = strtod(argv[1], &end);
	if (*end != '\0' || secs <= 0 || secs > 3600) {
		fprintf(stderr, "%s: bad duration '%s' (seconds, 0-3600)\n", argv[0],
			argv[1]);
		return 2;
	}
	rc = gcap_cpulist_parse(argv[2], cpus, MAX_CPUS);
	if (rc < 0) {
		fprintf(stderr, "%s: bad CPU '%s'\n", argv[0], argv[2]);
		return 2;
	}
	n = (unsigned)rc;
	for (unsigned k = 0; k < n; k++) {
		pr[k].cpu = (int)cpus[k];
		pr[k].secs = secs;
	}
	for (unsigned k = 0; touch != 0 && k < n; k++) {
		void *m = mmap(NULL, touch, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE |
				       (huge ? MAP_HUGETLB : 0),
			       -1, 0);

		if (m == MAP_FAILED) {
			fprintf(stderr, "%s: cannot map %zu MiB%s: %s\n", argv[0],
				touch >> 20, huge ? " of huge pages" : "",
				strerror(errno));
			return 1;
		}
		memset(m, 1, touch); /* every page present before the clock runs */
		pr[k].buf = m;
		pr[k].bufsz = touch;
	}
	for (unsigned k = 0; k < n; k++)
		if (pthread_create(&pr[k].th, NULL, probe_main, &pr[k]) != 0) {
			fprintf(stderr, "%s: pthread_create failed\n", argv[0]);
			return 1;
		}
	for (unsigned k = 0; k < n; k++)
		pthread_join(pr[k].th, NULL);
	for (unsigned k = 0; k < n; k++)
		if (pr[k].err) {
			fprintf(stderr, "%s: cannot pin to CPU %d: %s\n", argv[0],
				pr[k].cpu, strerror(pr[k].err));
			return 1;
		}
	printf("| CPU | loops (M/s) | stalls >= 2 us /s | >= 5 us /s | >= 10 us /s "
	       "| >= 20 us /s | >= 50 us /s | longest (us) | time lost (%%) |\n");
	printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	for (unsigned k = 0; k < n; k++) {
		char name[16];

		snprintf(name, sizeof(name), "%d", pr[k].cpu);
		report(name, &pr[k], 1, secs);
	}
	if (n > 1)
		report("mean", pr, n, secs);
	return 0;
}
