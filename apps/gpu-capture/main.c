/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu-capture: capture from DPDK ports or read a file, filter with tcpdump
 * expressions on the GPU or the CPU, write pcap/pcapng.
 *
 * Everything the user can get wrong is checked before a port starts:
 * options (options.c), then input, filters, backend, ports, outputs (in
 * that order, offline.c and live.c, with the steps they share in run.c).
 * This file holds the entry: the signals (first, so that set-up is
 * interruptible), the options, which run, and what outlives the run.
 */
#include <string.h>
#include <sys/stat.h>

#include "gpucap/gcap_filter.h"
#include "app_err.h"
#include "run.h"

int
main(int argc, char **argv)
{
	struct app_opts o;
	struct app a;
	int r;

	/* first: a signal at any point of set-up ends the run at once */
	if (app_signals_install() < 0)
		return app_err("cannot install signal handlers");
	r = app_parse_options(argc, argv, &o);
	if (r != 0) {
		app_free_options(&o);
		return r > 0 ? 0 : 1;
	}
	/* -g: whatever the run creates (its captures, --summary-json, the
	 * kernel state) is group-readable at most, not the captures alone */
	if (o.group_read)
		umask(umask(0) | 027);
	memset(&a, 0, sizeof(a));
	a.o = &o;
	if (o.doctor) {
		r = gcap_doctor_run(&o.doctor_conf, stdout, a.err);
		app_free_options(&o);
		return r < 0 ? app_err("%s", a.err) : r;
	}
	if (app_pidfile_write(&a.svc, o.pidfile) < 0) {
		app_free_options(&o);
		return 1;
	}
	r = o.read_file != NULL ? app_run_file(&a) : app_run_live(&a);
	app_pidfile_remove(&a.svc);
	if (a.abandoned)
		app_exit_abandoned(r);
	app_service_free(&a.svc);
	for (unsigned i = 0; i < a.nprogs; i++)
		gcap_filter_free(&a.progs[i]);
	app_free_options(&o);
	return r;
}
