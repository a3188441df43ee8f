/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu-capture's reports: the counters of a run summed over its queues and
 * ports, as the --stats line, the summary at exit, --summary-json and the
 * output files' per-interface statistics.
 */
#ifndef GCAP_APP_REPORT_H
#define GCAP_APP_REPORT_H

#include "app.h"

/* A run's counters, summed over its queues (and the ports' own drops) */
struct app_totals {
	struct gcap_queue_stats q;
	uint64_t imissed, rx_nombuf;
	uint64_t write_failed; /* records lost at a failed write (whole run) */
};

/*
 * The one snapshot every report reads (the summary, --summary-json, the
 * telemetry and the metrics): the counters of port index port, or of the
 * whole run (port < 0, which alone counts the failed writes), read with
 * relaxed loads while the capture runs.
 */
void app_totals_read(const struct app *a, int port, struct app_totals *t);

/* Every drop of t, whatever its reason. */
uint64_t app_totals_dropped(const struct app_totals *t);

/* The outputs' waits for their storage (gcap_writer_io_wait), summed,
 * those of outputs already closed included. */
void app_io_wait(const struct app *a, uint64_t *waits, uint64_t *ns);

/*
 * --stats: one line on stderr of the rates since the last line (dt
 * seconds ago, when the counters were *prev) and the totals; *prev
 * becomes the totals now.
 */
void app_report_stats_line(const struct app *a, struct app_totals *prev, double dt);

/*
 * systemd's STATUS= text (len bytes at buf): the rates since *prev (dt
 * seconds ago) and the totals, as the --stats line; *prev becomes the
 * totals now.
 */
void app_report_status(const struct app *a, struct app_totals *prev, double dt, char *buf,
		       size_t len);

/*
 * The summary at exit on stderr, tcpdump's three lines first: captured
 * is what the outputs hold; secs is the capture's length (for the rates
 * of the poll gaps and phases).
 */
void app_report_summary(const struct app *a, uint64_t captured, double secs);

/*
 * --summary-json: the counters, latencies and RX lcore diagnostics of a
 * capture that lasted secs, written to a->o->summary_json.
 * @return 0, or -1 when the file could not be written (the error said
 * when it could not be opened).
 */
int app_report_json(const struct app *a, double secs);

/*
 * What the output files record per interface (pcapng ISBs): one entry
 * per port, or one for the whole capture when there are no ports (-r):
 * received, the NIC's drops (isb_ifdrop), the host's (pipeline and
 * writer: isb_osdrop) and the packets the filters took. Nothing before
 * the pipeline exists. Called from the writer thread too (rotation).
 */
void app_report_if_stats(const struct app *a, struct gcap_writer_if_stats *st);

#endif
