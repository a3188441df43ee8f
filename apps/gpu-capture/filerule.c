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
#include <string.h>
#include <sys/stat.h>

#include "gpucap/gcap_capfile.h"
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

/* most threads decompressing one input whose stream splits into units
 * (each codec has its own limit, below it: base/capfile_*.c) */
#define DECODERS_MAX 8u

/* Threads decompressing each input whose stream splits into units
 * (capfile_par.c): the CPUs shared among the inputs, at most DECODERS_MAX;
 * two on a 2-CPU machine, where decoding bounds the run and the reader
 * waits for it. */
static unsigned
auto_decoders(unsigned inputs)
{
	unsigned n = app_usable_cpus() / (inputs ? inputs : 1);

	return n > DECODERS_MAX ? DECODERS_MAX : n;
}

void
app_capfile_conf(const struct app_opts *o, unsigned inputs,
		 struct gcap_capfile_conf *conf)
{
	memset(conf, 0, sizeof(*conf));
	conf->decoders = auto_decoders(inputs);
	conf->finders = inputs == 1 && o->find_threads >= 0 ? (unsigned)o->find_threads :
							      app_auto_finders(inputs);
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

uint64_t
app_input_bytes(const struct app_opts *o)
{
	uint64_t sum = 0;
	struct stat st;

	if (o->read_list)
		return 0;
	for (unsigned i = 0; i < o->nread; i++) {
		if (strcmp(o->read_files[i], "-") == 0 ||
		    stat(o->read_files[i], &st) != 0 || !S_ISREG(st.st_mode))
			return 0;
		sum += (uint64_t)st.st_size;
	}
	return sum;
}

/* Is the cpu backend the faster for this file run? The gpu backend pays
 * the CUDA driver's start and stop (about 300 ms on an H200) and then
 * filters any number of outputs at about the file's pace; the cpu
 * backend's cost grows with the outputs each of its threads filters, and
 * both with the file. Measured side by side on the H200 (run.sh offcross:
 * 1, 2.5 and 4 GB, 1-64 outputs, 16, 8, 4 and 2 CPUs): on a gigabyte the
 * cpu backend is the faster up to 8 outputs a thread or more; past it the
 * boundary falls about as the square root of the size. So: 8 a thread up
 * to a gigabyte (or when the size is not known), 8 / sqrt(GB) past it.
 * An inline kernel runs on one thread of the cpu backend and on every GPU
 * thread, and --dump-gpu-code prints the GPU's code: both keep the GPU. */
bool
app_files_cpu_faster(const struct app_opts *o)
{
	double gb = (double)app_input_bytes(o) / 1e9,
	       k = (double)o->nouts / cpu_threads(o);

	if (o->kernel != NULL || o->dump_gpu_code)
		return false;
	/* k <= 8, or k <= 8 / sqrt(gb) */
	return gb <= 1.0 ? k <= 8.0 : k * k * gb <= 64.0;
}

bool
app_files_want_cpu(const struct app_opts *o, bool files_cpu)
{
	return files_cpu && o->backend == GCAP_BACKEND_AUTO && o->mem == GCAP_MEM_AUTO &&
	       o->ngpus == 0 && o->gpu_blocks == 0 && !o->interp && o->find_gpu != 1;
}

bool
app_files_auto_cpu(const struct app_opts *o)
{
	return o->backend == GCAP_BACKEND_AUTO &&
	       ((gcap_exec_gpu_ops() == NULL && o->mem == GCAP_MEM_AUTO) ||
		app_files_want_cpu(o, app_files_cpu_faster(o)));
}
