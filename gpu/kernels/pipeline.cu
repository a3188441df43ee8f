/* SPDX-License-Identifier: BSD-3-Clause */
/* The interpreter variant of the persistent kernel (built by nvcc into a
 * fatbin that the library embeds). */
#include "pipeline.cuh"
