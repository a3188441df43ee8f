/* SPDX-License-Identifier: BSD-3-Clause */
/* The gpu module in a build without CUDA: no executor, no GPU. */
#include <errno.h>
#include <stddef.h>

#include "gpucap/gcap_gpu.h"

const struct gcap_exec_ops *
gcap_exec_gpu_ops(void)
{
	return NULL;
}

int
gcap_gpu_probe(int *ndev, char *errbuf)
{
	if (ndev)
		*ndev = 0;
	return gcap_err(errbuf, ENOTSUP,
			"this build of gpucap has no CUDA "
			"support");
}

int
gcap_gpu_pick(int socket)
{
	(void)socket;
	return -ENOTSUP;
}

char *
gcap_gpu_code(const struct gcap_exec_conf *conf, char *errbuf)
{
	(void)conf;
	return gcap_err_null(errbuf, ENOTSUP,
			     "this build of gpucap has no CUDA "
			     "support");
}
