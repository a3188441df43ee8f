/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The bench programs' clocks: wall time on the monotonic clock and the
 * process's CPU time (all threads, user and system), both in seconds.
 * clock_gettime needs POSIX: the tree builds with _GNU_SOURCE.
 */
#ifndef GCAP_BENCH_CLOCK_H
#define GCAP_BENCH_CLOCK_H

#include <sys/resource.h>
#include <time.h>

static inline double
gcap_bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline double
gcap_bench_cpu_secs(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

#endif /* GCAP_BENCH_CLOCK_H */
