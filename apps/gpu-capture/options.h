/* SPDX-License-Identifier: BSD-3-Clause */
/* gpu-capture's command line: one config struct, filled by getopt_long. */
#ifndef GCAP_APP_OPTIONS_H
#define GCAP_APP_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "gpucap/gcap_common.h"
#include "gpucap/gcap_doctor.h"
#include "gpucap/gcap_pkt.h"
#include "gpucap/gcap_port.h"
#include "gpucap/gcap_writer.h"
#include "config.h"

#define APP_MAX_PORTS 32
#define APP_MAX_GPUS 16
#define APP_DEFAULT_RING 16      /* --ring */
#define APP_ORDER_WINDOW_MS 1000 /* --time-order-window's default */
#define APP_MAX_INPUTS 256       /* -r given several times, or -V's list */

struct app_output {
	char *path;         /* file name, "-" for stdout */
	char *expr;         /* its own expression (-w FILE:EXPR), or NULL */
	const char *filter; /* what it passes: expr, else the trailing one */
};

struct app_opts {
	const char *ports[APP_MAX_PORTS];
	unsigned nports;
	const char *read_file;                  /* -r (the first), or -V's list file */
	const char *read_files[APP_MAX_INPUTS]; /* every -r, in order */
	unsigned nread;
	bool read_list;   /* -V: read_file names a file of input names */
	int cpu_workers;  /* --cpu-workers (-1: as the CPUs allow) */
	int find_threads; /* --find-threads (-1: as the CPUs allow) */
	int find_gpu;     /* --find: 1 gpu, 0 cpu, -1: the default (cpu) */
	struct app_output outs[GCAP_MAX_OUTPUTS];
	unsigned nouts;
	enum gcap_fmt fmt;                              /* --format, -P */
	const char *comments[GCAP_WRITER_MAX_COMMENTS]; /* --capture-comment */
	unsigned ncomments;
	size_t comments_bytes;     /* what they take in the SHB */
	uint32_t snaplen;          /* -s */
	bool snaplen_given;        /* -s was given */
	uint64_t count;            /* -c */
	uint64_t rotate_bytes;     /* -C, in bytes */
	uint32_t rotate_secs;      /* -G */
	uint32_t max_files;        /* -W */
	bool quiet;                /* -q */
	bool packet_buffered;      /* -U */
	int dump_level;            /* -d, -dd, -ddd */
	bool no_optimize;          /* -O: libpcap's optimizer off */
	bool count_mode;           /* --count: the count on stdout */
	bool dump_gpu_code;        /* --dump-gpu-code */
	bool verbose;              /* -v */
	unsigned stats_secs;       /* --stats */
	const char *summary_json;  /* --summary-json */
	unsigned queues;           /* --queues */
	const char *lcores;        /* --lcores */
	unsigned nlcores;          /* CPUs --lcores names (0: none given) */
	enum gcap_backend backend; /* --backend */
	enum gcap_mem mem;         /* --mem */
	int gpus[APP_MAX_GPUS];    /* --gpu */
	unsigned ngpus;
	bool interp;                         /* --gpu-interp */
	unsigned gpu_blocks;                 /* --gpu-blocks */
	const char *eal;                     /* --eal */
	unsigned batch;                      /* --batch */
	bool batch_given;                    /* --batch given (see app_file_gpu_batch) */
	unsigned ring;                       /* --ring */
	unsigned nb_rxd;                     /* --rxd */
	unsigned mbufs;                      /* --mbufs (default: enough for
					   --rxd, --batch and --ring) */
	unsigned duration;                   /* --duration */
	uint64_t rx_rate;                    /* --rx-rate (pps per queue) */
	unsigned rx_burst;                   /* --rx-burst (0: the batch's room) */
	bool backpressure;                   /* --backpressure */
	bool busy_poll;                      /* --busy-poll */
	bool poll_phases;                    /* --poll-phases */
	const char *kernel;                  /* --kernel */
	const char *kernel_arg;              /* --kernel-arg */
	const char *kernel_state;            /* --kernel-state */
	unsigned kernel_budget;              /* --kernel-budget (ms; 0: default) */
	char *expr;                          /* trailing words, joined */
	bool doctor;                         /* --doctor */
	struct gcap_doctor_conf doctor_conf; /* --doctor-root, --json, -i, --gpu */
	const char *metrics;                 /* --metrics ADDR:PORT */
	const char *filter_file;             /* -F: the expression's file */
	const char *filter_arg;              /* -f: the expression (dumpcap's) */
	bool list_ports;                     /* -D */
	bool list_linktypes;                 /* -L */
	const char *linktype_name;           /* -y */
	unsigned buffer_kib;                 /* -B (sets --ring) */
	bool immediate;                      /* --immediate-mode */
	char *port_names[APP_MAX_PORTS];     /* -i N resolved (else NULL) */
	uint64_t autostop_packets;           /* -a packets: */
	unsigned autostop_secs;              /* -a duration: */
	uint64_t autostop_bytes;             /* -a filesize: (bytes) */
	uint32_t autostop_files;             /* -a files: */
	/* operations: configuration file, privileges, service */
	struct app_config cfg; /* --config: the arguments the file gave */
	const char *user;      /* -Z: drop to this user after set-up */
	bool group_read;       /* -g: output files 0640 */
	const char *pidfile;   /* --pidfile */
	int nargs;             /* the expression's words (after the options) */

	/* capture fidelity: time stamps, order, promiscuous mode, rotation */
	enum gcap_tstamp tstamp;  /* -j */
	bool list_tstamp;         /* -J */
	bool ts_micro;            /* --time-stamp-precision micro */
	bool ts_given;            /* --time-stamp-precision or --nano given */
	bool no_promisc;          /* -p */
	bool direction_out;       /* -Q out (refused on ports) */
	bool no_time_order;       /* --no-time-order */
	unsigned order_window_ms; /* --time-order-window */
	const char *postrotate;   /* -z */
	uint64_t rotate_packets;  /* -b packets:N */
	bool ring_buffer;         /* -b given: files named as dumpcap names them */
	uint32_t rotate_interval; /* -b interval: */
	bool names_timenum;       /* -b nametimenum:2 */
	bool tcpdump_rotation;    /* -C, -G or -W given */
};

/* Whether the outputs' files end by a condition (-C, -G, -b's packets:,
 * filesize:, duration:, interval:): they rotate. */
static inline bool
app_opts_rotates(const struct app_opts *o)
{
	return o->rotate_bytes != 0 || o->rotate_secs != 0 || o->rotate_interval != 0 ||
	       o->rotate_packets != 0;
}

/*
 * Parse argv. @return 0 to run, 1 when --help/--version printed (exit 0),
 * -1 after printing one error line (exit 1).
 */
int app_parse_options(int argc, char **argv, struct app_opts *o);

/* Free what app_parse_options() allocated. */
void app_free_options(struct app_opts *o);

/* Print the usage text to stdout. */
void app_usage(void);

#endif
