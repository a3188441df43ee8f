/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu-capture's DPDK telemetry commands, under /gpucap/: what a running
 * capture counted, per port, queue, output and GPU, and its inline
 * kernel's state, for dpdk-telemetry.py and any client of the socket.
 */
#ifndef GCAP_APP_TELEMETRY_H
#define GCAP_APP_TELEMETRY_H

/*
 * Register the /gpucap/ commands (once; before or after the EAL starts:
 * they answer null until a run is published, see observe.h).
 * @return 0, or a negative errno after printing the error.
 */
int app_telemetry_register(void);

#endif
