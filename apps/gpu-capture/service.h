/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu-capture as a service: systemd's notify protocol (READY, STATUS,
 * STOPPING, the watchdog fed by the pipeline's progress), sent without
 * ever waiting, and --pidfile.
 */
#ifndef GCAP_APP_SERVICE_H
#define GCAP_APP_SERVICE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

struct app;
struct app_totals;

struct app_service {
	bool notify;            /* NOTIFY_SOCKET is set (and nfd open) */
	int nfd;                /* the notify datagram socket, non-blocking */
	struct sockaddr_un nsa; /* NOTIFY_SOCKET's address */
	socklen_t nsa_len;
	uint64_t wd_ns;     /* the watchdog's interval (0: none) */
	uint64_t last_pet;  /* when WATCHDOG=1 was sent (monotonic ns) */
	uint64_t last_stat; /* when STATUS= was sent */
	uint64_t *beats;    /* each queue's beat at the last pet; the writer's last */
	struct app_totals *prev; /* the counters at the last STATUS= */
	char *pidfile;           /* written by this run, removed at exit */
	int pidfd;               /* it, open and locked for the process's life */
};

/*
 * --pidfile: refuse a file another live gpu-capture holds (its lock), else
 * put ours there, locked for the process's life: written and locked under
 * a temporary name, linked in where nothing is (a stale file, a link,
 * anything not a regular file removed first; nothing there written). A
 * stale file's pid is not asked about: it may be another process's by
 * now. Nothing to do for path NULL.
 * @return 0, or -1 after printing the error.
 */
int app_pidfile_write(struct app_service *s, const char *path);

/* Remove the pidfile if it still holds our pid (a warning when it cannot). */
void app_pidfile_remove(struct app_service *s);

/* The capture runs: READY=1 and the first STATUS=; the watchdog starts. */
void app_service_ready(struct app *a);

/*
 * From the main loop: STATUS= with the rates every second, and
 * WATCHDOG=1 only when every RX lcore and the writer turned their loops
 * since the last one (a stuck thread lets systemd's watchdog fire).
 */
void app_service_tick(struct app *a, uint64_t now);

/* The capture stops: STOPPING=1. */
void app_service_stopping(struct app *a);

/* When stderr is the journal, DPDK's log lines carry their levels too
 * (before the EAL starts); also keeps EAL from copying them to syslog. */
void app_service_dpdk_log(void);

/* Free what the service state holds (not the pidfile: see remove). */
void app_service_free(struct app_service *s);

#endif
