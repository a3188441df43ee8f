/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu-capture's run: its state (struct app), shared by the steps every run
 * takes (run.c), the file run (offline.c), the live run (live.c) and the
 * reports (report.c); and the clocks they all read.
 */
#ifndef GCAP_APP_H
#define GCAP_APP_H

#include <stdint.h>
#include <sys/resource.h>
#include <time.h>

#include <pcap/pcap.h>

#include "gpucap/gcap_exec.h"
#include "gpucap/gcap_pipeline.h"
#include "gpucap/gcap_port.h"
#include "gpucap/gcap_writer.h"
#include "options.h"
#include "privs.h"
#include "service.h"

/* how long a run waits for the pipeline to drain when it stops */
#define APP_STOP_TIMEOUT_MS 5000u

/* A port's IDB options that the writers point at (meta.c). */
struct app_port_meta {
	char descr[160];
	char hardware[160];
	uint8_t mac[6];
};

struct app {
	struct app_opts *o;
	int linktype;
	pcap_t *file; /* -r: filters compile on its handle, as tcpdump's do */
	/* -r without -s: the snap length the outputs' headers say, the
	 * inputs' (the largest), as tcpdump -r -w and mergecap write it;
	 * 0: -s's */
	uint32_t out_snaplen;
	struct bpf_program progs[GCAP_MAX_OUTPUTS];
	unsigned nprogs;
	const struct gcap_exec_ops *ops;
	struct gcap_exec *ex;
	struct gcap_writer *writers[GCAP_MAX_OUTPUTS];
	unsigned nwriters;
	/* the closed outputs' waits for their storage (gcap_writer_io_wait)
	 * and the records each one's files hold, for the reports that come
	 * after the close */
	uint64_t io_waits, io_wait_ns;
	uint64_t out_kept[GCAP_MAX_OUTPUTS];
	unsigned nclosed;
	struct gcap_port ports[APP_MAX_PORTS];
	unsigned nports;
	struct gcap_pipeline_queue *queues;
	unsigned nqueues;
	unsigned file_copiers; /* -r: the reader's copying threads (pipeline conf) */
	bool file_spans;       /* -r: records found by the executor (pipeline conf) */
	struct gcap_pipeline *pl;
	const int *gpus; /* the executor's: queue q on gpus[q % ngpus] (0: GPU 0) */
	unsigned ngpus;
	struct app_metrics *metrics; /* --metrics server, or NULL */
	uint64_t t_start;
	double cpu_start;       /* app_cpu_seconds() at t_start */
	struct app_creds creds; /* -Z */
	struct app_service svc; /* systemd, --pidfile */
	/* a capture thread was left running in an inline kernel
	 * (gcap_pipeline_abandoned()): nothing of the capture is taken down */
	bool abandoned;
	/* the only output's reader left before its header was written
	 * (-w - | true): the run ends there, as a clean one */
	bool reader_gone;
	char err[GCAP_ERRBUF_SIZE];
	/* what the files say of the host and the ports (meta.c) */
	char host_os[160], host_hw[128];
	struct app_port_meta port_meta[APP_MAX_PORTS];
};

static inline uint64_t
app_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CPU time of the process so far (all threads), in seconds */
static inline double
app_cpu_seconds(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/* -r FILE: capture the file (offline.c). @return the exit status. */
int app_run_file(struct app *a);

/* -i PORT...: capture the ports (live.c). @return the exit status. */
int app_run_live(struct app *a);

#endif
