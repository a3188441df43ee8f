/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The host doctor (`gpu-capture --doctor`): can this host capture into GPU
 * memory, and if not, what to fix. It reads sysfs, procfs and /dev through
 * a root prefix (so that tests and containers can point it at another
 * tree) and the GPUs through the CUDA driver API and NVML, loaded at run
 * time; it starts nothing (no EAL, no context).
 */
#ifndef GCAP_DOCTOR_H
#define GCAP_DOCTOR_H

#include <stdbool.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What to check and how to report it. */
struct gcap_doctor_conf {
	const char *root;         /**< where /sys, /proc, /dev and the
				       libraries are read (NULL: "/") */
	const char *const *ports; /**< -i PORT ...; none: every NIC found */
	unsigned nports;
	const int *gpus; /**< --gpu ordinals: port i on
				       gpus[i % ngpus]; NULL: the GPU
				       gpu-capture picks (its NUMA node's) */
	unsigned ngpus;
	bool json; /**< a JSON document instead of lines */
};

/**
 * Run every check and write the report to out: one line per check (status,
 * name, what was found and where, and the fix for a failure), or the same
 * as JSON.
 * @return 0 when capture into GPU memory can work for every port given (or
 *         for some NIC when none is given), 1 when it cannot; -ENOTDIR when
 *         conf->root is not a directory, -ENOMEM; message in errbuf.
 */
int gcap_doctor_run(const struct gcap_doctor_conf *conf, FILE *out, char *errbuf);

#ifdef __cplusplus
}
#endif

#endif /* GCAP_DOCTOR_H */
