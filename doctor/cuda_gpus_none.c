/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The doctor's driver API part in a build without CUDA (cuda_gpus.c's
 * counterpart, as gpu/exec_gpu_none.c is the executor's): no GPU can be
 * used, and the report says why; the checks that need no GPU still run.
 */
#include <errno.h>
#include <stdio.h>

#include "doctor_internal.h"

int
dr_cuda_gpus(struct dr *d, char *why, size_t n)
{
	d->cuda_built = 0;
	snprintf(why, n,
		 "this build has no CUDA support (built without nvcc, "
		 "cuda.h or nvrtc.h)");
	return -ENOTSUP;
}
