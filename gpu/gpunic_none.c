/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The emulated GPUDirect NIC in a build without CUDA: its arguments are
 * still checked (gpunic_file.c), then it is refused in one line.
 */
#include <errno.h>

#include "gpucap/gcap_common.h"
#include "gpucap/gcap_gpunic.h"
#include "gpunic_internal.h"

int
gcap_gpunic_check(const char *args, char *errbuf)
{
	struct gcap_nic_args a;
	int rc = gcap_nic_args_parse(args, true, &a, errbuf);

	gcap_nic_args_free(&a);
	if (rc)
		return rc;
	return gcap_err(errbuf, ENOTSUP,
			"the emulated GPUDirect NIC needs a GPU: this build has no CUDA "
			"support");
}

struct gcap_gpunic *
gcap_gpunic_create(const char *ethdev_name, const char *args, unsigned nqueues,
		   int socket, uint16_t *port_id, char *errbuf)
{
	(void)ethdev_name, (void)args, (void)nqueues, (void)socket, (void)port_id;
	return gcap_err_null(errbuf, ENOTSUP, "this build has no CUDA support");
}

int
gcap_gpunic_attach(struct gcap_gpunic *nic, struct rte_mempool *const *pools,
		   char *errbuf)
{
	(void)nic, (void)pools;
	return gcap_err(errbuf, ENOTSUP, "this build has no CUDA support");
}

int
gcap_gpunic_start(struct gcap_gpunic *nic, char *errbuf)
{
	(void)nic;
	return gcap_err(errbuf, ENOTSUP, "this build has no CUDA support");
}

void
gcap_gpunic_stop(struct gcap_gpunic *nic)
{
	(void)nic;
}

void
gcap_gpunic_destroy(struct gcap_gpunic *nic)
{
	(void)nic;
}

bool
gcap_gpunic_is(uint16_t port_id)
{
	(void)port_id;
	return false;
}

bool
gcap_gpunic_gpu_writes(uint16_t port_id)
{
	(void)port_id;
	return false;
}

uint32_t
gcap_gpunic_max_frame(const struct gcap_gpunic *nic)
{
	(void)nic;
	return 0;
}

uint64_t
gcap_gpunic_idle(void *nic, uint16_t queue)
{
	(void)nic;
	(void)queue;
	return 0;
}
