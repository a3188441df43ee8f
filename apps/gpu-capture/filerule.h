/* SPDX-License-Identifier: BSD-3-Clause */
/* --backend auto's rule for -r, and the CPU counts it goes by (filerule.c). */
#ifndef GCAP_APP_FILERULE_H
#define GCAP_APP_FILERULE_H

#include <stdbool.h>
#include <stdint.h>

#include "options.h"

/* The CPUs this process may use (0 when unknown). */
unsigned app_usable_cpus(void);

/* --cpu-workers' default: the CPUs less the reader and the writer, where
 * there are 4 or more. */
unsigned app_auto_workers(void);

/* --find-threads' default for a run of inputs: for one, a quarter of the
 * CPUs, at most 4, where there are 8 or more (fewer finders would not
 * keep ahead of the reader); none for several (merged through buffers,
 * not read in place). */
unsigned app_auto_finders(unsigned inputs);

/* How the reader opens each of a run's inputs: its decompressing threads
 * and finders, by the CPUs (and --find-threads). */
struct gcap_capfile_conf;
void app_capfile_conf(const struct app_opts *o, unsigned inputs,
		      struct gcap_capfile_conf *conf);

/* The -r inputs' bytes: regular files' sizes; 0 when one is a pipe or
 * -V's list, whose size is not known before they are read. */
uint64_t app_input_bytes(const struct app_opts *o);

/* Is the cpu backend the faster for this -r run? */
bool app_files_cpu_faster(const struct app_opts *o);

/* auto on a file run that the cpu backend does faster (files_cpu) and no
 * GPU option: the cpu backend, without asking the driver anything. */
bool app_files_want_cpu(const struct app_opts *o, bool files_cpu);

/* Will --backend auto read this -r run on the cpu backend whatever the
 * GPUs (its rule and no GPU option, or a build without CUDA)? What the
 * memory preflight counts before the choice is made. */
bool app_files_auto_cpu(const struct app_opts *o);

#endif
