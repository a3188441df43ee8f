/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a run will cost and where it will write, checked before anything
 * is allocated (preflight.c).
 */
#ifndef GCAP_APP_PREFLIGHT_H
#define GCAP_APP_PREFLIGHT_H

#include <stdint.h>

#include "options.h"

/* The host memory a run's queues take, in bytes. */
struct app_cost {
	unsigned nqueues;
	unsigned batch;   /* the batch size the cost is for */
	uint64_t xmem;    /* export buffers (the records) */
	uint64_t staging; /* staging areas (packet copies) */
	uint64_t pools;   /* packet pools in host memory (live) */
	uint64_t reader;  /* -r: the readers' own (finders, decoding threads, the
			   * records' time fields and descriptors) */
	uint64_t total;
};

/* The batch size -r takes on the gpu backend: --batch where given (or -B,
 * which sized the ring in --batch's batches), else 2048: with the copy
 * spread, its time on a file goes by the count of batches; 8192 with
 * --find gpu (the largest staging for its spans). */
unsigned app_file_gpu_batch(const struct app_opts *o);
/* The same for an input whose records the reader finds (not in spans). */
unsigned app_file_gpu_batch_found(const struct app_opts *o);

/* The memory o's queues will take. */
void app_preflight_cost(const struct app_opts *o, struct app_cost *c);

/* --mbufs against the least a live queue works with.
 * @return 0, or -1 after printing the error (with that least). */
int app_preflight_mbufs(const struct app_opts *o);

/* The cost against the machine's memory (MemAvailable, free hugepages,
 * RLIMIT_DATA). @return 0, or -1 after printing the error (the numbers). */
int app_preflight_memory(const struct app_opts *o);

/* Every output path opened as it will be (and removed again when this
 * created it). @return 0, or -1 after printing the error. */
int app_preflight_outputs(const struct app_opts *o);

#endif
