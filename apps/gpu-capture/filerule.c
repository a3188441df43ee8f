/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --backend auto's rule for -r, from the options and the CPUs alone (no
 * GPU is asked): which backend reads a file run faster, and the CPU
 * counts the file path sizes its threads by. The choice itself
 * (run.c), the file run (offline.c) and the memory preflight
 * (preflight.c) all take it from here.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>

#include "gpucap/gcap_exec.h"

#include "filerule.h"

unsigned
app_usable_cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return 0;
	return (unsigned)CPU_COUNT(&set);
}

unsigned
app_auto_workers(void)
{
	unsigned n = app_usable_cpus();

	return n >= 4 ? (n - 2 > 16 ? 16 : n - 2) : 0;
}

unsigned
app_auto_finders(unsigned inputs)
{
	unsigned n = app_usable_cpus();

	if (inputs != 1 || n < 8)
		return 0;
	return n / 4 > 4 ? 4 : n / 4;
}

/* Threads that filter a file's batches on the cpu backend without an
 * inline kernel: its workers, or the reading thread alone. */
static unsigned
cpu_threads(const struct app_opts *o)
{
	unsigned w = o->cpu_workers >= 0 ? (unsigned)o->cpu_workers : app_auto_workers();

	return w > 0 ? w : 1;
}

/* Is the cpu backend the faster for this file run? The gpu backend pays
 * the CUDA driver's start and stop (about 300 ms on an H200) and then
 * filters any number of outputs at about the file's pace; the cpu
 * backend's cost grows with the outputs each of its threads filters.
 * Measured side by side on the H200, 1 GB in tmpfs (run.sh offchoice):
 * cpu faster with 1 filter on 2, 4 and 16 CPUs and with 64 filters on 16
 * (14 workers); gpu faster with 64 filters on 4 CPUs and on 2. An inline
 * kernel runs on one thread of the cpu backend and on every GPU thread,
 * and --dump-gpu-code prints the GPU's code: both keep the GPU. */
bool
app_files_cpu_faster(const struct app_opts *o)
{
	if (o->kernel != NULL || o->dump_gpu_code)
		return false;
	return o->nouts <= 8 * cpu_threads(o);
}

bool
app_files_want_cpu(const struct app_opts *o, bool files_cpu)
{
	return files_cpu && o->backend == GCAP_BACKEND_AUTO && o->mem == GCAP_MEM_AUTO &&
	       o->ngpus == 0 && o->gpu_blocks == 0 && !o->interp;
}

bool
app_files_auto_cpu(const struct app_opts *o)
{
	return o->backend == GCAP_BACKEND_AUTO &&
	       ((gcap_exec_gpu_ops() == NULL && o->mem == GCAP_MEM_AUTO) ||
		app_files_want_cpu(o, app_files_cpu_faster(o)));
}
