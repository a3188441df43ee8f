/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --metrics ADDR:PORT: the capture's counters in Prometheus' text
 * exposition format over HTTP (libmicrohttpd), served by a thread of its
 * own that reads the published run (observe.h).
 */
#ifndef GCAP_APP_METRICS_H
#define GCAP_APP_METRICS_H

#include <stdio.h>

#include "app.h"

struct app_metrics;

/*
 * Check an --metrics argument: HOST:PORT, [IPV6]:PORT (a numeric
 * address, or a name that resolves), PORT from 1 to 65535.
 * @return 0, or -1 after printing one error line.
 */
int app_metrics_check(const char *spec);

/*
 * Listen on spec (checked) and serve /metrics from a thread of its own;
 * it answers gpucap_up 0 until a run is published.
 * @return the server, or NULL after printing the error.
 */
struct app_metrics *app_metrics_start(const char *spec);

/* Stop serving and free m (NULL: no-op). */
void app_metrics_stop(struct app_metrics *m);

/*
 * Write the exposition of the published run (or gpucap_up 0 when none
 * is) to f. @return 0, or -EIO when f had a write error.
 */
int app_metrics_write(FILE *f);

#endif
