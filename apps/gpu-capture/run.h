/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The steps of a gpu-capture run, whatever its input (run.c): filters,
 * backend, executor, writers, pipeline, the finish, and the stop on a
 * signal. The file run and the live run call them in their order.
 */
#ifndef GCAP_APP_RUN_H
#define GCAP_APP_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "app.h"

/* SIGINT and SIGTERM: during set-up they end the process (by the
 * signal, the output files set-up created removed); while capturing they
 * stop it. SIGPIPE
 * and SIGXFSZ become write errors. @return 0, or -1 when a handler could
 * not be installed. */
int app_signals_install(void);

/* The pipeline a signal stops; set-up ends here. NULL: the capture is
 * over, a signal only is noted. */
void app_signals_watch(struct gcap_pipeline *pl);

/* A file (path, copied) that a signal during set-up removes, as the
 * outputs set-up created. */
void app_signals_remove_at_setup_stop(const char *path);

/* Whether SIGINT or SIGTERM came. */
bool app_signalled(void);

/* Whether SIGUSR1 came since the last call (the stats line is due). */
bool app_stats_asked(void);

/* With an inline kernel loaded: SIGSEGV, SIGBUS, SIGILL and SIGFPE print
 * one line naming the kernel and where it faulted, then take their
 * default action (crash.c); a SIGBUS of a -r file cut short while it is
 * read goes to the file reader's guard instead. */
void app_crash_arm(const struct gcap_khost *k);

/* A capture thread was left running inside an inline kernel: end the
 * process now with status rc, without taking anything down (the thread
 * may still use it); stdio is flushed first. */
_Noreturn void app_exit_abandoned(int rc);

/* One program per output on a->linktype (on a->file's handle for -r).
 * @return 0, or -1 after printing the error. */
int app_compile_filters(struct app *a);

/* -d: print the compiled programs. @return the exit status. */
int app_dump_filters(struct app *a);

/* Pick the executor (a->ops) for --backend, --mem, --gpu and the GPUs
 * there are; files_cpu (an -r run the cpu backend does faster) makes
 * auto the cpu backend unless a GPU option was given.
 * @return 0, or the exit status after printing the error. */
int app_choose_backend(struct app *a, bool files_cpu);

/* The executor's configuration for nqueues queues, staging bytes stage
 * per batch slot and packets of at most max_caplen bytes (0: any). */
void app_exec_conf(const struct app *a, struct gcap_exec_conf *c, unsigned nqueues,
		   uint32_t stage, uint32_t max_caplen);

/* --dump-gpu-code: print the translation unit NVRTC would compile.
 * @return the exit status. */
int app_dump_gpu_code(struct app *a, const struct gcap_exec_conf *ec);

/* Create a->ex. @return 0, or -1 after printing the error. */
int app_create_exec(struct app *a, const struct gcap_exec_conf *ec);

/* Open every -w output, with nifs interfaces ifs.
 * @return 0, or -1 after printing the error. */
int app_open_writers(struct app *a, const struct gcap_writer_if *ifs, unsigned nifs);

/* Close the outputs, with the interfaces' statistics st (or NULL).
 * @return 0, or -1 after an error (printed unless it was already). */
int app_close_writers(struct app *a, const struct gcap_writer_if_stats *st);

/* Create a->pl. @return 0, or -1 after printing the error. */
int app_create_pipeline(struct app *a);

/* After the pipeline stopped: the kernel's state, the outputs closed
 * with st, the summary and --summary-json. @return rc, or 1 when one of
 * these failed. */
int app_finish(struct app *a, const struct gcap_writer_if_stats *st, int rc);

#endif
