/* SPDX-License-Identifier: BSD-3-Clause */
/* What the output files say about a capture beyond its packets (meta.c). */
#ifndef GCAP_APP_META_H
#define GCAP_APP_META_H

#include "app.h"

/* a->host_os ("Linux 6.1.0-...") and a->host_hw (the CPU's model). */
void app_meta_host(struct app *a);

/* The writers' interfaces of the live ports (nports entries of wifs):
 * name as given, link type, description, MAC address, speed, OS. */
void app_meta_ifs(struct app *a, struct gcap_writer_if *wifs);

/* tcpdump's -z (postrotate.c): reap the commands started (SIGCHLD), so
 * that none is left a zombie. @return 0, or -1 when the handler could
 * not be installed. */
int app_postrotate_install(void);

/* gcap_writer_closed_fn for -z: run the command arg (a string) with the
 * closed file's name as its one argument. */
void app_postrotate_run(void *arg, const char *path);

#endif
