/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu-capture -r FILE (repeatable) and -V LIST: read capture files (any
 * link type, plain or compressed) through the pipeline's one file queue,
 * several merged in time order. Filters compile on the first input's own
 * handle, as tcpdump's do; the outputs describe the inputs' own
 * interfaces. On a terminal, a progress line while the inputs are read;
 * --duration stops the reading as a signal would.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include "gpucap/gcap_thread.h"
#include "gpucap/gcap_capfile.h"
#include "app_err.h"
#include "filerule.h"
#include "preflight.h"
#include "report.h"
#include "run.h"

/* the most output interfaces the inputs may bring (pcapng IDBs) */
#define OFF_MAX_IFS 4096u
/* the progress line's period, and the first line's delay (short reads
 * show none) */
#define PROGRESS_NS 1000000000u
/* most threads copying a file's batches for the gpu backend: four copy a
 * page-cache span at about 17 GB/s on an H200 host (bench/file_pin.py);
 * with them one filter on 4 GB took 748-867 ms, with one 984-991 (run.sh
 * offcopy) */
#define FILE_COPIERS_MAX 4u
/* with spans the reader only copies: the copy is what bounds it, and
 * eight threads copy about 1.5x faster than four (bench/file_pin.py) */
#define FILE_SPAN_COPIERS_MAX 8u

struct inputs {
	struct gcap_capfile *cf[APP_MAX_INPUTS];
	uint16_t port_base[APP_MAX_INPUTS];
	unsigned n;
	char *names[APP_MAX_INPUTS]; /* -V's, owned */
	unsigned nnames;
};

/* -V LIST: the names, one per line (empty lines skipped). */
static int
read_list(struct inputs *in, const char *list)
{
	FILE *f = strcmp(list, "-") == 0 ? stdin : fopen(list, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int rc = 0;

	if (f == NULL)
		return app_err("%s: %s", list, strerror(errno));
	while ((len = getline(&line, &cap, f)) >= 0) {
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (len == 0)
			continue;
		if (in->nnames == APP_MAX_INPUTS) {
			rc = app_err("%s: more than %d inputs", list, APP_MAX_INPUTS);
			break;
		}
		if ((in->names[in->nnames] = strdup(line)) == NULL) {
			rc = app_err("out of memory");
			break;
		}
		in->nnames++;
	}
	free(line);
	if (f != stdin)
		fclose(f);
	if (rc == 0 && in->nnames == 0)
		rc = app_err("%s: no input named", list);
	return rc;
}

static void
inputs_close(struct inputs *in)
{
	for (unsigned i = 0; i < in->n; i++)
		gcap_capfile_close(in->cf[i]);
	for (unsigned i = 0; i < in->nnames; i++)
		free(in->names[i]);
	in->n = in->nnames = 0;
}

/* -v: how each input was read: its records found ahead, its decoding. */
static void
inputs_log(struct inputs *in)
{
	for (unsigned i = 0; i < in->n; i++) {
		uint64_t units, pieces, joined, listed, stepped;
		unsigned n = gcap_capfile_finders(in->cf[i], &joined, &listed, &stepped);

		if (n > 0)
			fprintf(stderr,
				"gpu-capture: input %u: records found ahead on %u "
				"threads, "
				"%" PRIu64 " of %" PRIu64
				" megabytes listed taken whole, %" PRIu64
				" records found by the reader\n",
				i + 1, n, joined, listed, stepped);
		n = gcap_capfile_decoders(in->cf[i], &units, &pieces);

		if (n == 0)
			continue;
		if (units + pieces == 0)
			fprintf(stderr,
				"gpu-capture: input %u (%s): decompressed on one "
				"thread\n",
				i + 1, gcap_capfile_codec(in->cf[i]));
		else
			fprintf(stderr,
				"gpu-capture: input %u (%s): decompressed on %u threads, "
				"%" PRIu64 " units side by side, %" PRIu64
				" pieces in turn\n",
				i + 1, gcap_capfile_codec(in->cf[i]), n, units, pieces);
	}
}

/* -v: the reader's time and its waits. A reader that hardly waited
 * bounded the run (finding the records, or decompressing); one that
 * waited for the executor, the writer or the copying threads names what
 * did. */
static void
reader_log(const struct app *a)
{
	struct gcap_queue_stats *s = malloc(sizeof(*s));

	if (s == NULL || a->pl == NULL) {
		free(s);
		return;
	}
	gcap_pipeline_queue_stats(a->pl, 0, s);
	if (s->file_ns > 0)
		fprintf(stderr,
			"gpu-capture: file reader: %.0f ms, %.0f ms of CPU; waited "
			"%.0f ms for the executor, %.0f ms for the writer, %.0f ms for "
			"the copying threads\n",
			(double)s->file_ns / 1e6, (double)s->file_cpu_ns / 1e6,
			(double)s->file_wait_exec_ns / 1e6,
			(double)s->file_wait_writer_ns / 1e6,
			(double)s->file_wait_copy_ns / 1e6);
	if (s->file_spans > 0)
		fprintf(stderr,
			"gpu-capture: file reader: records found on the GPU, in %" PRIu64
			" spans of %" PRIu64 " bytes; %" PRIu64 " guesses walked again\n",
			s->file_spans, s->file_span_bytes, s->file_span_walks);
	if (s->file_spans > 0)
		fprintf(stderr,
			"gpu-capture: file reader: the GPU's time on the spans, summed: "
			"%.0f ms guessing and walking, %.0f waiting for the span before, "
			"%.0f joining, %.0f describing; %.0f ms on them in all\n",
			(double)s->file_span_ns[GCAP_SPAN_T_GUESS] / 1e6,
			(double)s->file_span_ns[GCAP_SPAN_T_WAIT] / 1e6,
			(double)s->file_span_ns[GCAP_SPAN_T_JOIN] / 1e6,
			(double)s->file_span_ns[GCAP_SPAN_T_DESCRIBE] / 1e6,
			(double)s->exec_ns / 1e6);
	if (s->file_span_stop > 0)
		fprintf(stderr,
			"gpu-capture: file reader: the GPU stopped at the record at byte "
			"%" PRIu64
			" (one it does not take); the reader read on from there\n",
			s->file_span_stop);
	free(s);
}

/* Open every input; they must share the link type (one set of filters). */
static int
inputs_open(struct app *a, struct inputs *in)
{
	const struct app_opts *o = a->o;
	const char *const *names;
	struct gcap_capfile_conf conf = { 0 };
	unsigned n, ifs = 0;

	if (o->read_list && read_list(in, o->read_file) != 0)
		return 1;
	names = o->read_list ? (const char *const *)in->names : o->read_files;
	n = o->read_list ? in->nnames : o->nread;
	app_capfile_conf(o, n, &conf);
	for (unsigned i = 0; i < n; i++) {
		in->cf[i] = gcap_capfile_open_conf(names[i], &conf, a->err);
		if (in->cf[i] == NULL)
			return app_err("%s", a->err);
		in->n++;
		if (gcap_capfile_linktype(in->cf[i]) != gcap_capfile_linktype(in->cf[0]))
			return app_err(
				"%s: link type %s, but %s has %s: inputs read together "
				"must share it",
				names[i],
				pcap_datalink_val_to_name(gcap_capfile_linktype(in->cf[i])) ?:
					"?",
				names[0],
				pcap_datalink_val_to_name(gcap_capfile_linktype(in->cf[0])) ?:
					"?");
		in->port_base[i] = (uint16_t)ifs;
		ifs += gcap_capfile_nifs(in->cf[i]);
		if (ifs > OFF_MAX_IFS)
			return app_err("the inputs have more than %u interfaces",
				       OFF_MAX_IFS);
	}
	return 0;
}

/* The outputs' interfaces: each input's own, in input order. */
static struct gcap_writer_if *
inputs_ifs(struct inputs *in, unsigned *nifs)
{
	unsigned n = 0, k = 0;
	struct gcap_writer_if *w;

	for (unsigned i = 0; i < in->n; i++)
		n += gcap_capfile_nifs(in->cf[i]);
	w = calloc(n, sizeof(*w));
	if (w == NULL)
		return NULL;
	for (unsigned i = 0; i < in->n; i++)
		for (unsigned j = 0; j < gcap_capfile_nifs(in->cf[i]); j++)
			gcap_capfile_if(in->cf[i], j, &w[k++]);
	*nifs = n;
	return w;
}

/* ---- the progress line, and --duration ---- */

/* A thread beside the reading: the progress line on a terminal each
 * second, the stop a signal would make once --duration (-a duration:)
 * has passed (an input from a pipe may never end), and, under systemd,
 * STATUS= and the watchdog (app_service_tick: the main thread is the
 * pipeline's watcher until the reading ends). */
struct progress {
	struct app *a;
	struct inputs *in;
	pthread_t thr;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t stop_at; /* monotonic ns; 0: none */
	bool line, stop, shown;
};

static void
progress_line(struct progress *pg, double secs)
{
	struct gcap_queue_stats st;
	uint64_t done = 0, total = 0;
	char left[32] = "";

	for (unsigned i = 0; i < pg->in->n; i++) {
		uint64_t sz = gcap_capfile_size(pg->in->cf[i]);

		done += gcap_capfile_offset(pg->in->cf[i]);
		total = total == UINT64_MAX || sz == 0 ? UINT64_MAX : total + sz;
	}
	gcap_pipeline_queue_stats(pg->a->pl, 0, &st);
	double rate = secs > 0 ? (double)done / secs : 0;

	if (total != UINT64_MAX && total > 0 && rate > 0 && done <= total)
		snprintf(left, sizeof(left), ", %.0f s left",
			 (double)(total - done) / rate);
	if (total != UINT64_MAX && total > 0)
		fprintf(stderr,
			"\r\033[Kgpu-capture: %.1f of %.1f MB (%.0f%%), %llu records, "
			"%.1f MB/s%s",
			(double)done / 1e6, (double)total / 1e6,
			100.0 * (double)done / (double)total,
			(unsigned long long)st.rx_pkts, rate / 1e6, left);
	else
		fprintf(stderr, "\r\033[Kgpu-capture: %.1f MB, %llu records, %.1f MB/s",
			(double)done / 1e6, (unsigned long long)st.rx_pkts, rate / 1e6);
	pg->shown = true;
}

static void *
progress_main(void *arg)
{
	struct progress *pg = arg;
	const struct app_service *svc = &pg->a->svc;
	/* the service's turn: a quarter of the watchdog's interval, at most
	 * a second (STATUS='s) */
	const uint64_t turn = svc->wd_ns > 0 && svc->wd_ns / 4 < 1000000000u ?
				      svc->wd_ns / 4 :
				      1000000000u;
	uint64_t t0 = app_mono_ns(), next = t0 + 1000000000u, tick = t0 + turn;

	pthread_mutex_lock(&pg->lock);
	while (!pg->stop) {
		uint64_t now = app_mono_ns(), until = next;
		struct timespec ts;

		if (pg->stop_at != 0 && pg->stop_at < until)
			until = pg->stop_at;
		if (svc->notify && tick < until)
			until = tick;
		if (until > now) {
			/* the condition's clock is the monotonic one: a step
			 * of the wall clock moves neither the line nor the stop */
			ts.tv_sec = (time_t)(until / 1000000000u);
			ts.tv_nsec = (long)(until % 1000000000u);
			pthread_cond_timedwait(&pg->cond, &pg->lock, &ts);
			continue; /* the times again: woken early, or stopped */
		}
		if (pg->stop_at != 0 && now >= pg->stop_at) {
			gcap_pipeline_request_stop(pg->a->pl);
			pg->stop_at = 0;
		}
		if (now >= next) {
			if (pg->line)
				progress_line(pg, (double)(now - t0) / 1e9);
			next = now + 1000000000u;
		}
		if (svc->notify && now >= tick) {
			app_service_tick(pg->a, now);
			tick = now + turn;
		}
	}
	pthread_mutex_unlock(&pg->lock);
	return NULL;
}

/* The progress line on a terminal (stderr), not with -q, the --duration
 * stop and the service's messages. @return whether the thread runs. */
static bool
progress_start(struct progress *pg, struct app *a, struct inputs *in)
{
	memset(pg, 0, sizeof(*pg));
	pg->line = !a->o->quiet && isatty(STDERR_FILENO);
	if (a->o->duration != 0)
		pg->stop_at = a->t_start + (uint64_t)a->o->duration * 1000000000u;
	if (!pg->line && pg->stop_at == 0 && !a->svc.notify)
		return false;
	pg->a = a;
	pg->in = in;
	pthread_mutex_init(&pg->lock, NULL);
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&pg->cond, &ca);
	pthread_condattr_destroy(&ca);
	return gcap_thread_start(&pg->thr, NULL, progress_main, pg) == 0;
}

static void
progress_stop(struct progress *pg, bool running)
{
	if (!running)
		return;
	pthread_mutex_lock(&pg->lock);
	pg->stop = true;
	pthread_cond_signal(&pg->cond);
	pthread_mutex_unlock(&pg->lock);
	pthread_join(pg->thr, NULL);
	if (pg->shown)
		fputs("\r\033[K", stderr); /* the summary takes its place */
	pthread_cond_destroy(&pg->cond);
	pthread_mutex_destroy(&pg->lock);
}

/* Threads that copy each batch of a plain file into the gpu backend's
 * staging beside the reader: the CPUs left by the reader and the writer,
 * at most most. */
static unsigned
auto_copiers(unsigned most)
{
	unsigned n = app_usable_cpus();

	return n > 2 ? (n - 2 > most ? most : n - 2) : 0;
}

static int
capture_files(struct app *a, struct inputs *in)
{
	struct app_opts *o = a->o;
	struct gcap_exec_conf ec;
	struct gcap_writer_if *wif;
	struct gcap_writer_if_stats st = { 0 };
	struct progress pg;
	unsigned nifs = 0;
	bool prog;
	int r, rc = 0;

	if (app_compile_filters(a) < 0)
		goto fail;
	if (o->dump_level > 0)
		return app_dump_filters(a);
	if (app_choose_backend(a, app_files_cpu_faster(o)) != 0)
		goto fail;
	a->nqueues = 1;
	if (a->ops != &gcap_exec_cpu_ops) {
		/* --find gpu: the GPU finds the records of one plain pcap file,
		 * in spans as large as the largest batch's staging (other
		 * inputs keep the reader's batches) */
		a->file_spans = o->find_gpu == 1 && in->n == 1 &&
				gcap_capfile_spans_ok(in->cf[0]);
		o->batch = a->file_spans ? app_file_gpu_batch(o) :
					   app_file_gpu_batch_found(o);
		a->file_copiers = auto_copiers(a->file_spans ? FILE_SPAN_COPIERS_MAX :
							       FILE_COPIERS_MAX);
	}
	/* a file's packets are all in the staging area */
	app_exec_conf(a, &ec, 1, gcap_pipeline_file_stage(o->batch), 0);
	ec.file_spans = a->file_spans;
	if (a->ops == &gcap_exec_cpu_ops && o->kernel == NULL)
		ec.cpu_workers = o->cpu_workers >= 0 ? (unsigned)o->cpu_workers :
						       app_auto_workers();
	if (o->dump_gpu_code)
		return app_dump_gpu_code(a, &ec);
	wif = inputs_ifs(in, &nifs);
	if (wif == NULL) {
		app_err("out of memory");
		goto fail;
	}
	/* the headers say the inputs' snapshot length (libpcap's; of
	 * several merged, the largest, as mergecap writes it), as tcpdump
	 * -r -w writes it; records are cut at -s's as ever */
	for (unsigned i = 0; !o->snaplen_given && i < in->n; i++) {
		int s = pcap_snapshot(gcap_capfile_pcap(in->cf[i]));

		if (s > 0 && (uint32_t)s > a->out_snaplen)
			a->out_snaplen = (uint32_t)s;
	}
	r = app_privs_lookup(o->user, &a->creds) < 0 || app_create_exec(a, &ec) < 0 ||
	    app_open_writers(a, wif, nifs) < 0 || app_create_pipeline(a) < 0 ||
	    app_privs_drop(&a->creds, o->quiet) < 0;
	free(wif); /* the writers keep what they need */
	if (r)
		goto fail;
	a->t_start = app_mono_ns();
	a->cpu_start = app_cpu_seconds();
	app_signals_watch(a->pl);
	app_service_ready(a);
	prog = progress_start(&pg, a, in);
	r = gcap_pipeline_run_inputs(a->pl, in->cf, in->port_base, in->n, a->err);
	progress_stop(&pg, prog);
	app_service_stopping(a);
	if (r < 0)
		rc = in->n == 1 ? app_err("%s: %s", o->read_file, a->err) :
				  app_err("%s", a->err);
	r = gcap_pipeline_stop(a->pl, APP_STOP_TIMEOUT_MS, a->err);
	app_signals_watch(NULL);
	if (r < 0 && rc == 0)
		rc = app_err("%s", a->err);
	a->abandoned = gcap_pipeline_abandoned(a->pl);
	app_report_if_stats(a, &st);
	/* the counts are the file's: with several interfaces no ISB (which
	 * interface each packet came from is not counted) */
	return app_finish(a, nifs == 1 ? &st : NULL, rc);
fail:
	app_close_writers(a, NULL);
	return a->reader_gone ? 0 : 1;
}

int
app_run_file(struct app *a)
{
	struct inputs in;
	int rc;

	memset(&in, 0, sizeof(in));
	rc = inputs_open(a, &in);
	if (rc == 0) {
		a->linktype = gcap_capfile_linktype(in.cf[0]);
		a->file = gcap_capfile_pcap(in.cf[0]);
		rc = capture_files(a, &in);
	}
	if (a->abandoned)
		return rc; /* a thread still runs in the kernel: leave it all */
	if (a->o->verbose) {
		inputs_log(&in);
		reader_log(a);
	}
	a->file = NULL;
	gcap_pipeline_destroy(a->pl);
	a->pl = NULL;
	if (a->ops != NULL)
		a->ops->destroy(a->ex);
	a->ex = NULL;
	inputs_close(&in);
	return rc;
}
