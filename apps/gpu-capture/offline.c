/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu-capture -r FILE: read a capture file (any link type) through the
 * pipeline's one file queue. Filters compile on the file's own handle, as
 * tcpdump's do.
 */
#include <pcap/pcap.h>

#include "app_err.h"
#include "report.h"
#include "run.h"

static int
capture_file(struct app *a, pcap_t *p)
{
	struct app_opts *o = a->o;
	struct gcap_exec_conf ec;
	struct gcap_writer_if wif = { 0 };
	struct gcap_writer_if_stats st = { 0 };
	int r, rc = 0;

	if (app_compile_filters(a) < 0)
		goto fail;
	if (o->dump_level > 0)
		return app_dump_filters(a);
	if (app_choose_backend(a) != 0)
		goto fail;
	a->nqueues = 1;
	/* a file's packets are all in the staging area */
	app_exec_conf(a, &ec, 1, GCAP_PIPELINE_STAGE_FILE, 0);
	if (o->dump_gpu_code)
		return app_dump_gpu_code(a, &ec);
	wif.name = o->read_file;
	wif.linktype = a->linktype;
	if (app_privs_lookup(o->user, &a->creds) < 0 || app_create_exec(a, &ec) < 0 ||
	    app_open_writers(a, &wif, 1) < 0 || app_create_pipeline(a) < 0 ||
	    app_privs_drop(&a->creds, o->quiet) < 0)
		goto fail;
	a->t_start = app_mono_ns();
	a->cpu_start = app_cpu_seconds();
	app_signals_watch(a->pl);
	app_service_ready(a);
	r = gcap_pipeline_run_file(a->pl, p, a->err);
	app_service_stopping(a);
	if (r < 0)
		rc = app_err("%s: %s", o->read_file, a->err);
	r = gcap_pipeline_stop(a->pl, APP_STOP_TIMEOUT_MS, a->err);
	app_signals_watch(NULL);
	if (r < 0 && rc == 0)
		rc = app_err("%s", a->err);
	a->abandoned = gcap_pipeline_abandoned(a->pl);
	app_report_if_stats(a, &st);
	return app_finish(a, &st, rc);
fail:
	app_close_writers(a, NULL);
	return 1;
}

int
app_run_file(struct app *a)
{
	char perr[PCAP_ERRBUF_SIZE];
	pcap_t *p;
	int rc;

	p = pcap_open_offline_with_tstamp_precision(a->o->read_file,
						    PCAP_TSTAMP_PRECISION_NANO, perr);
	if (p == NULL)
		return app_err("%s", perr);
	a->linktype = pcap_datalink(p);
	a->file = p;
	rc = capture_file(a, p);
	if (a->abandoned)
		return rc; /* a thread still runs in the kernel: leave it all */
	pcap_close(p);
	a->file = NULL;
	gcap_pipeline_destroy(a->pl);
	a->pl = NULL;
	if (a->ops != NULL)
		a->ops->destroy(a->ex);
	a->ex = NULL;
	return rc;
}
