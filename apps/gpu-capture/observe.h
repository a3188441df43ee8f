/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a running capture shows to the outside (DPDK telemetry, the
 * Prometheus endpoint): the run they may read, published while it is
 * whole and taken back before its ports close, and the views of it both
 * read (per queue, per GPU, the kernel's state). The packet path never
 * takes the lock here: the readers see the queues' relaxed counters.
 */
#ifndef GCAP_APP_OBSERVE_H
#define GCAP_APP_OBSERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "app.h"

/* Readers may see a from now on (its pipeline, ports and outputs exist). */
void app_observe_publish(struct app *a);

/* No reader sees the run any more once this returns (a reader in
 * progress is waited for); the kernel state's private directory is gone.
 * Called before the pipeline stops (and the outputs close). */
void app_observe_unpublish(void);

/*
 * Call fn with the published run, under the lock that keeps it alive.
 * @return fn's result; -ENODATA when no run is published.
 */
int app_observe(int (*fn)(const struct app *a, void *arg), void *arg);

/* The seconds the capture has run. */
double app_observe_seconds(const struct app *a);

/* The GPU ordinal queue q runs on, or -1 with the cpu backend. */
int app_queue_gpu(const struct app *a, unsigned q);

/* The GPUs the queues run on, each once, in queue order: up to max
 * ordinals in ids. @return how many. */
unsigned app_gpus_used(const struct app *a, int *ids, unsigned max);

/* A GPU's sums over the queues on it. */
struct app_gpu_totals {
	unsigned queues;
	uint64_t rx_pkts, captured, filtered, dropped, batches, exec_ns;
};

/* Sum the queues that run on GPU ordinal gpu into *t. */
void app_gpu_totals(const struct app *a, int gpu, struct app_gpu_totals *t);

/*
 * The inline kernel's state report (JSON text, NUL-terminated, in buf of
 * size bytes), through the executor's kernel_state into a private file.
 * Serialised with app_kernel_state_write().
 * @return its length; -ENOENT without a kernel; -E2BIG when it does not
 *         fit; another negative errno with the message in errbuf.
 */
long app_kernel_state_read(const struct app *a, char *buf, size_t size, char *errbuf);

/*
 * --kernel-state: write the kernel's state to path (the executor's
 * kernel_state), one writer at a time with the telemetry's reads.
 * @return 0 or a negative errno (message in a->err).
 */
int app_kernel_state_write(struct app *a, const char *path);

#endif
