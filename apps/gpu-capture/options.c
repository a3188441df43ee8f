/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu-capture's options: every option is parsed, range-checked, given its
 * default and checked against the others here, so a run starts from a
 * configuration that is whole (the usage text is in usage.c).
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gcap_config.h"
#include "gpucap/gcap_capfile.h"
#include "gpucap/gcap_filter.h"
#include "app_err.h"
#include "metrics.h"
#include "args.h"
#include "preflight.h"
#include "privs.h"
#include "options.h"

enum {
	OPT_STATS = 256,
	OPT_SUMMARY_JSON,
	OPT_QUEUES,
	OPT_LCORES,
	OPT_BACKEND,
	OPT_MEM,
	OPT_GPU,
	OPT_GPU_INTERP,
	OPT_GPU_BLOCKS,
	OPT_EAL,
	OPT_BATCH,
	OPT_RING,
	OPT_RXD,
	OPT_MBUFS,
	OPT_DURATION,
	OPT_RX_RATE,
	OPT_RX_BURST,
	OPT_BACKPRESSURE,
	OPT_BUSY_POLL,
	OPT_POLL_PHASES,
	OPT_KERNEL,
	OPT_KERNEL_ARG,
	OPT_KERNEL_STATE,
	OPT_KERNEL_BUDGET,
	OPT_DUMP_GPU_CODE,
	OPT_VERSION,
	OPT_DOCTOR,
	OPT_DOCTOR_ROOT,
	OPT_JSON,
	/* monitoring */
	OPT_METRICS,
	/* operations: configuration file, privileges, service */
	OPT_CONFIG = 0x400,
	OPT_PIDFILE,
	OPT_FORMAT,
	OPT_CAPTURE_COMMENT,
	OPT_IMMEDIATE,
	OPT_AUTOSTOP,
	/* capture fidelity */
	OPT_TS_PRECISION,
	OPT_NANO,
	OPT_MICRO,
	OPT_NO_TIME_ORDER,
	OPT_TIME_ORDER_WINDOW,
	/* -r */
	OPT_CPU_WORKERS,
	OPT_FIND_THREADS,
	OPT_FIND,
	/* tcpdump's --print (refused) and --count */
	OPT_PRINT,
	OPT_COUNT_MODE,
};

static const struct option long_opts[] = {
	{ "interface", required_argument, NULL, 'i' },
	{ "read", required_argument, NULL, 'r' },
	{ "write", required_argument, NULL, 'w' },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "capture-comment", required_argument, NULL, OPT_CAPTURE_COMMENT },
	{ "direction", required_argument, NULL, 'Q' },
	{ "snaplen", required_argument, NULL, 's' },
	{ "snapshot-length", required_argument, NULL, 's' },
	{ "file-size", required_argument, NULL, 'C' },
	{ "rotate-seconds", required_argument, NULL, 'G' },
	{ "file-count", required_argument, NULL, 'W' },
	{ "postrotate-command", required_argument, NULL, 'z' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "packet-buffered", no_argument, NULL, 'U' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "stats", required_argument, NULL, OPT_STATS },
	{ "summary-json", required_argument, NULL, OPT_SUMMARY_JSON },
	{ "queues", required_argument, NULL, OPT_QUEUES },
	{ "lcores", required_argument, NULL, OPT_LCORES },
	{ "backend", required_argument, NULL, OPT_BACKEND },
	{ "mem", required_argument, NULL, OPT_MEM },
	{ "gpu", required_argument, NULL, OPT_GPU },
	{ "gpu-interp", no_argument, NULL, OPT_GPU_INTERP },
	{ "gpu-blocks", required_argument, NULL, OPT_GPU_BLOCKS },
	{ "eal", required_argument, NULL, OPT_EAL },
	{ "batch", required_argument, NULL, OPT_BATCH },
	{ "ring", required_argument, NULL, OPT_RING },
	{ "rxd", required_argument, NULL, OPT_RXD },
	{ "mbufs", required_argument, NULL, OPT_MBUFS },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "rx-rate", required_argument, NULL, OPT_RX_RATE },
	{ "rx-burst", required_argument, NULL, OPT_RX_BURST },
	{ "backpressure", no_argument, NULL, OPT_BACKPRESSURE },
	{ "busy-poll", no_argument, NULL, OPT_BUSY_POLL },
	{ "poll-phases", no_argument, NULL, OPT_POLL_PHASES },
	{ "kernel", required_argument, NULL, OPT_KERNEL },
	{ "kernel-arg", required_argument, NULL, OPT_KERNEL_ARG },
	{ "kernel-state", required_argument, NULL, OPT_KERNEL_STATE },
	{ "kernel-budget", required_argument, NULL, OPT_KERNEL_BUDGET },
	{ "dump-gpu-code", no_argument, NULL, OPT_DUMP_GPU_CODE },
	{ "doctor", no_argument, NULL, OPT_DOCTOR },
	{ "doctor-root", required_argument, NULL, OPT_DOCTOR_ROOT },
	{ "json", no_argument, NULL, OPT_JSON },
	/* monitoring */
	{ "metrics", required_argument, NULL, OPT_METRICS },
	/* operations: configuration file, privileges, service */
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "relinquish-privileges", required_argument, NULL, 'Z' },
	{ "group-read", no_argument, NULL, 'g' },
	{ "pidfile", required_argument, NULL, OPT_PIDFILE },
	{ "list-interfaces", no_argument, NULL, 'D' },
	{ "list-data-link-types", no_argument, NULL, 'L' },
	{ "linktype", required_argument, NULL, 'y' },
	{ "buffer-size", required_argument, NULL, 'B' },
	{ "immediate-mode", no_argument, NULL, OPT_IMMEDIATE },
	{ "autostop", required_argument, NULL, 'a' },
	/* capture fidelity */
	{ "time-stamp-type", required_argument, NULL, 'j' },
	{ "list-time-stamp-types", no_argument, NULL, 'J' },
	{ "time-stamp-precision", required_argument, NULL, OPT_TS_PRECISION },
	{ "nano", no_argument, NULL, OPT_NANO },
	{ "micro", no_argument, NULL, OPT_MICRO },
	{ "no-promiscuous-mode", no_argument, NULL, 'p' },
	{ "ring-buffer", required_argument, NULL, 'b' },
	{ "no-time-order", no_argument, NULL, OPT_NO_TIME_ORDER },
	{ "time-order-window", required_argument, NULL, OPT_TIME_ORDER_WINDOW },
	/* -r */
	{ "cpu-workers", required_argument, NULL, OPT_CPU_WORKERS },
	{ "find-threads", required_argument, NULL, OPT_FIND_THREADS },
	{ "find", required_argument, NULL, OPT_FIND },
	/* tcpdump's long forms of its printing options (taken and ignored:
	 * see short_opts) and of -O; --print is refused; --count prints
	 * the count of what matched */
	{ "no-optimize", no_argument, NULL, 'O' },
	{ "number", no_argument, NULL, '#' },
	{ "dont-verify-checksums", no_argument, NULL, 'K' },
	{ "absolute-tcp-sequence-numbers", no_argument, NULL, 'S' },
	{ "print", no_argument, NULL, OPT_PRINT },
	{ "count", no_argument, NULL, OPT_COUNT_MODE },
	{ "monitor-mode", no_argument, NULL, 'I' },
	{ NULL, 0, NULL, 0 },
};

/* tcpdump's letters, and dumpcap's -f and -P; no leading '+': options
 * after the expression count, as tcpdump's (glibc's getopt permutes).
 * The last sixteen, from A, change only how tcpdump prints packets, which
 * gpu-capture does not: taken and ignored, as tcpdump ignores them with
 * -w (-E, -m and -T with their values) */
static const char short_opts[] =
	"i:r:V:w:F:f:s:c:C:G:W:qUvdhDLy:B:a:Z:gj:JpPnOQ:z:b:IAeHKlNStuxX#E:m:T:";

#define PARSE_U(opt, s, min, max, dst)                       \
	do {                                                 \
		uint64_t v_;                                 \
		if (app_args_u64(opt, s, min, max, &v_) < 0) \
			return -1;                           \
		(dst) = v_;                                  \
	} while (0)

/* -w FILE[:EXPR]; "\:" is a literal ':' of the file name. */
static int
parse_output(const char *arg, struct app_output *out)
{
	size_t n = strlen(arg);
	char *path = malloc(n + 1), *p = path;
	const char *s = arg;

	if (path == NULL)
		return -app_err("out of memory");
	out->expr = NULL;
	for (; *s != '\0'; s++) {
		if (s[0] == '\\' && s[1] == ':') {
			*p++ = ':';
			s++;
			continue;
		}
		if (*s == ':') {
			out->expr = strdup(s + 1);
			break;
		}
		*p++ = *s;
	}
	*p = '\0';
	out->path = path;
	if (path[0] == '\0')
		return -app_err("-w '%s': empty file name", arg);
	return 0;
}

static int
parse_gpus(const char *s, struct app_opts *o)
{
	char *dup = strdup(s), *save = NULL, *tok;

	if (dup == NULL)
		return -app_err("out of memory");
	o->ngpus = 0;
	for (tok = strtok_r(dup, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;

		if (o->ngpus == APP_MAX_GPUS ||
		    app_args_u64("--gpu", tok, 0, 255, &v) < 0) {
			free(dup);
			return -1;
		}
		o->gpus[o->ngpus++] = (int)v;
	}
	free(dup);
	if (o->ngpus == 0)
		return -app_err("--gpu '%s': no GPU ordinal", s);
	return 0;
}

/* ---- capture fidelity: -j, -J, -p, -z, -b, time stamps and order ---- */

/* One option of this block. @return 1 when c is one (handled), 0 when
 * it is not, -1 after printing an error. */
static int
fidelity_opt(int c, const char *arg, struct app_opts *o)
{
	static const enum gcap_tstamp types[] = { GCAP_TSTAMP_HOST, GCAP_TSTAMP_ADAPTER,
						  GCAP_TSTAMP_ADAPTER_UNSYNCED };
	uint64_t v;

	switch (c) {
	case 'j':
		for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
			if (strcmp(arg, gcap_tstamp_name(types[i])) == 0) {
				o->tstamp = types[i];
				return 1;
			}
		return -app_err("-j '%s': expected host, adapter or adapter_unsynced (-J "
				"lists what a port has)",
				arg);
	case 'J': o->list_tstamp = true; return 1;
	case OPT_TS_PRECISION:
		if (strcmp(arg, "micro") != 0 && strcmp(arg, "nano") != 0)
			return -app_err(
				"--time-stamp-precision '%s': expected micro or nano",
				arg);
		o->ts_micro = strcmp(arg, "micro") == 0;
		o->ts_given = true;
		return 1;
	case OPT_NANO:
	case OPT_MICRO:
		o->ts_micro = c == OPT_MICRO;
		o->ts_given = true;
		return 1;
	case 'p': o->no_promisc = true; return 1;
	case 'z':
		if (arg[0] == '\0')
			return -app_err("-z: empty command");
		o->postrotate = arg;
		return 1;
	case 'b': return app_args_ring_buffer(arg, o) < 0 ? -1 : 1;
	case OPT_NO_TIME_ORDER: o->no_time_order = true; return 1;
	case OPT_TIME_ORDER_WINDOW:
		if (app_args_u64("--time-order-window", arg, 1, 60000, &v) < 0)
			return -1;
		o->order_window_ms = (unsigned)v;
		return 1;
	default: return 0;
	}
}

/* This block's checks against the other options. @return 0 or -1. */
static int
fidelity_check(struct app_opts *o)
{
	if (o->read_file != NULL &&
	    (o->tstamp != GCAP_TSTAMP_AUTO || o->list_tstamp || o->no_promisc))
		return -app_err("-j, -J and -p apply to live ports, not to -r");
	if (o->postrotate != NULL && !app_opts_rotates(o))
		return -app_err("-z runs on each file a rotation closes: it needs -C, -G "
				"or -b");
	if (o->order_window_ms == 0)
		o->order_window_ms = APP_ORDER_WINDOW_MS;
	return 0;
}

static void
set_defaults(struct app_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->snaplen = 262144;
	o->queues = 1;
	o->batch = 256;
	o->ring = APP_DEFAULT_RING;
	o->nb_rxd = 1024;
	o->backend = GCAP_BACKEND_AUTO;
	o->mem = GCAP_MEM_AUTO;
	o->cpu_workers = -1;
	o->find_threads = -1;
	o->find_gpu = -1;
}

/* The options of l into o; an error from a --config line names it.
 * @return 0, 1 after --help/--version, -1 after printing the error. */
static int
parse_args(struct app_opts *o, struct app_config *cfg, const struct app_config_args *l)
{
	int argc = l->argc, c;
	char **argv = l->argv;
	uint64_t mb;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, short_opts, long_opts, NULL)) != -1) {
		int f;

		app_err_where = app_config_where(cfg, l, optind - 1);
		f = fidelity_opt(c, optarg, o);
		if (f < 0)
			return -1;
		if (f > 0)
			continue;
		switch (c) {
		case 'i':
			if (o->nports == APP_MAX_PORTS)
				return -app_err("at most %d ports", APP_MAX_PORTS);
			o->ports[o->nports++] = optarg;
			break;
		case 'r':
			if (o->nread == APP_MAX_INPUTS)
				return -app_err("at most %d inputs (-r)", APP_MAX_INPUTS);
			if (o->read_list)
				return -app_err("-V and -r cannot be used together");
			if (o->read_file == NULL)
				o->read_file = optarg;
			o->read_files[o->nread++] = optarg;
			break;
		case 'V':
			if (o->read_file != NULL)
				return -app_err(
					o->read_list ?
						"-V given twice" :
						"-V and -r cannot be used together");
			o->read_file = optarg;
			o->read_list = true;
			break;
		case 'w':
			if (o->nouts == GCAP_MAX_OUTPUTS)
				return -app_err("at most %u outputs (-w)",
						GCAP_MAX_OUTPUTS);
			if (parse_output(optarg, &o->outs[o->nouts]) < 0)
				return -1;
			o->nouts++;
			break;
		case OPT_FORMAT:
			if (strcmp(optarg, "pcap") == 0)
				o->fmt = GCAP_FMT_PCAP;
			else if (strcmp(optarg, "pcapng") == 0)
				o->fmt = GCAP_FMT_PCAPNG;
			else
				return -app_err("--format '%s': expected pcap or pcapng",
						optarg);
			break;
		case OPT_CAPTURE_COMMENT:
			if (app_args_comment(o, optarg) < 0)
				return -1;
			break;
		case 's':
			PARSE_U("-s", optarg, 0, 262144, o->snaplen);
			if (o->snaplen == 0)
				o->snaplen = 262144;
			o->snaplen_given = true;
			break;
		case 'c': PARSE_U("-c", optarg, 1, UINT64_MAX, o->count); break;
		case 'C':
			PARSE_U("-C", optarg, 1, UINT64_MAX / 1000000u, mb);
			o->rotate_bytes = mb * 1000000u;
			o->tcpdump_rotation = true;
			break;
		case 'G':
			PARSE_U("-G", optarg, 1, UINT32_MAX, o->rotate_secs);
			o->tcpdump_rotation = true;
			break;
		case 'W':
			PARSE_U("-W", optarg, 1, 100000, o->max_files);
			o->tcpdump_rotation = true;
			break;
		case 'q': o->quiet = true; break;
		case 'U': o->packet_buffered = true; break;
		case 'v': o->verbose = true; break;
		case 'd': o->dump_level++; break;
		case 'h': app_usage(); return 1;
		case OPT_VERSION:
			printf("gpu-capture %s (%s)\n", GCAP_VERSION, pcap_lib_version());
			return 1;
		case OPT_STATS:
			PARSE_U("--stats", optarg, 1, 86400, o->stats_secs);
			break;
		case OPT_SUMMARY_JSON: o->summary_json = optarg; break;
		case OPT_QUEUES: PARSE_U("--queues", optarg, 1, 64, o->queues); break;
		case OPT_LCORES: {
			int n = gcap_cpulist_parse(optarg, NULL, GCAP_CPU_MAX);

			if (n < 0)
				return -app_err("bad --lcores list '%s': expected CPUs "
						"such as 2-5,8",
						optarg);
			o->lcores = optarg;
			o->nlcores = (unsigned)n;
			break;
		}
		case OPT_BACKEND:
			if (gcap_backend_parse(optarg, &o->backend) < 0)
				return -app_err(
					"--backend '%s': expected cpu, gpu or auto",
					optarg);
			break;
		case OPT_MEM:
			if (gcap_mem_parse(optarg, &o->mem) < 0)
				return -app_err(
					"--mem '%s': expected gpu, host, copy or auto",
					optarg);
			break;
		case OPT_GPU:
			if (parse_gpus(optarg, o) < 0)
				return -1;
			break;
		case OPT_GPU_INTERP: o->interp = true; break;
		case OPT_GPU_BLOCKS:
			PARSE_U("--gpu-blocks", optarg, 1, 64, o->gpu_blocks);
			if ((o->gpu_blocks & (o->gpu_blocks - 1)) != 0)
				return -app_err(
					"--gpu-blocks '%s': must be a power of two",
					optarg);
			break;
		case OPT_EAL: o->eal = optarg; break;
		case OPT_BATCH:
			PARSE_U("--batch", optarg, 1, GCAP_FILE_BATCH_MAX, o->batch);
			o->batch_given = true;
			break;
		case OPT_RING:
			PARSE_U("--ring", optarg, 2, 4096, o->ring);
			if ((o->ring & (o->ring - 1)) != 0)
				return -app_err("--ring '%s': must be a power of two",
						optarg);
			break;
		case OPT_RXD: PARSE_U("--rxd", optarg, 32, 32768, o->nb_rxd); break;
		case OPT_MBUFS: PARSE_U("--mbufs", optarg, 64, 16777216, o->mbufs); break;
		case OPT_DURATION:
			PARSE_U("--duration", optarg, 1, UINT32_MAX, o->duration);
			break;
		case OPT_RX_BURST:
			PARSE_U("--rx-burst", optarg, 1, GCAP_BATCH_MAX, o->rx_burst);
			break;
		case OPT_RX_RATE:
			PARSE_U("--rx-rate", optarg, 1, UINT64_MAX / 1000000000u,
				o->rx_rate);
			break;
		case OPT_BACKPRESSURE: o->backpressure = true; break;
		case OPT_BUSY_POLL: o->busy_poll = true; break;
		case OPT_POLL_PHASES: o->poll_phases = true; break;
		case OPT_KERNEL: o->kernel = optarg; break;
		case OPT_KERNEL_ARG: o->kernel_arg = optarg; break;
		case OPT_KERNEL_STATE: o->kernel_state = optarg; break;
		case OPT_KERNEL_BUDGET:
			PARSE_U("--kernel-budget", optarg, 1, 3600000, o->kernel_budget);
			break;
		case OPT_DUMP_GPU_CODE: o->dump_gpu_code = true; break;
		case OPT_DOCTOR: o->doctor = true; break;
		case OPT_DOCTOR_ROOT: o->doctor_conf.root = optarg; break;
		case OPT_JSON: o->doctor_conf.json = true; break;
		case OPT_METRICS:
			if (app_metrics_check(optarg) < 0)
				return -1;
			o->metrics = optarg;
			break;
		case 'F': o->filter_file = optarg; break;
		case 'f':
			if (o->filter_arg != NULL)
				return -app_err(
					"-f given twice: one expression filters "
					"every port (an output's own: -w FILE:EXPR)");
			o->filter_arg = optarg;
			break;
		/* dumpcap's: pcap whatever the file's name */
		case 'P': o->fmt = GCAP_FMT_PCAP; break;
		/* tcpdump's "no name resolution": gpu-capture resolves none */
		case 'n': break;
		case 'O': o->no_optimize = true; break;
		/* tcpdump's printing options */
		case 'A':
		case 'e':
		case 'H':
		case 'K':
		case 'l':
		case 'N':
		case 'S':
		case 't':
		case 'u':
		case 'x':
		case 'X':
		case '#':
		case 'E': /* an ESP secret, a MIB, a packet type: for printing */
		case 'm':
		case 'T': break;
		case 'I':
			return -app_err("-I: monitor mode is a Wi-Fi interface's; "
					"DPDK ports have none");
		case OPT_COUNT_MODE: o->count_mode = true; break;
		case OPT_PRINT:
			return -app_err("--print: gpu-capture prints no packets; "
					"-w - | tcpdump -r - prints them");
		case 'Q':
			if (app_args_direction(o, optarg) < 0)
				return -1;
			break;
		case 'D': o->list_ports = true; break;
		case 'L': o->list_linktypes = true; break;
		case 'y': o->linktype_name = optarg; break;
		case 'B': PARSE_U("-B", optarg, 1, UINT32_MAX, o->buffer_kib); break;
		case OPT_IMMEDIATE: o->immediate = true; break;
		case 'a':
			if (app_args_autostop(optarg, o) < 0)
				return -1;
			break;
		/* operations: configuration file, privileges, service */
		case OPT_CONFIG: break; /* read by app_config_merge() */
		case 'Z': o->user = optarg; break;
		case 'g': o->group_read = true; break;
		case OPT_PIDFILE: o->pidfile = optarg; break;
		/* -r */
		case OPT_CPU_WORKERS:
			PARSE_U("--cpu-workers", optarg, 0, 64, o->cpu_workers);
			break;
		case OPT_FIND_THREADS:
			PARSE_U("--find-threads", optarg, 0, GCAP_CAPFILE_FINDERS_MAX,
				o->find_threads);
			break;
		case OPT_FIND:
			if (strcmp(optarg, "gpu") == 0)
				o->find_gpu = 1;
			else if (strcmp(optarg, "cpu") == 0)
				o->find_gpu = 0;
			else
				return -app_err("--find '%s': gpu or cpu", optarg);
			break;
		case '?':
		default:
			return app_args_bad_option(
				argv[optind - 1], optopt, short_opts, long_opts,
				optopt == OPT_COUNT_MODE ?
					" (-c N stops after N packets)" :
					"");
		}
	}
	app_err_where = NULL;
	o->nargs = argc - optind;
	return 0;
}

int
app_parse_options(int argc, char **argv, struct app_opts *o)
{
	int r;

	set_defaults(o);
	opterr = 0;
	if (app_args_check_split(argc, argv, short_opts, long_opts) < 0)
		return -1;
	/* --config: the file's options go first, the command line's after */
	if (app_config_merge(argc, argv, short_opts, long_opts, OPT_CONFIG, &o->cfg) < 0)
		return -1;
	/* every value of the file is checked, those the command line replaces
	 * too */
	if (o->cfg.all.argc > 1) {
		struct app_opts chk;

		set_defaults(&chk);
		r = parse_args(&chk, &o->cfg, &o->cfg.all);
		app_err_where = NULL;
		app_free_options(&chk);
		if (r != 0)
			return r;
	}
	r = parse_args(o, &o->cfg, &o->cfg.args);
	app_err_where = NULL;
	if (r != 0)
		return r;
	argc = o->cfg.args.argc;
	argv = o->cfg.args.argv;
	optind = argc - o->nargs;
	if (o->filter_file != NULL && o->filter_arg != NULL)
		return -app_err("-F %s and -f '%s' both give the expression: one of them",
				o->filter_file, o->filter_arg);
	if (o->filter_file != NULL && optind < argc)
		return -app_err("-F %s gives the expression: the words '%s...' after "
				"the options would be ignored",
				o->filter_file, argv[optind]);
	if (o->filter_arg != NULL && optind < argc)
		return -app_err("-f gives the expression: the words '%s...' after "
				"the options would be ignored",
				argv[optind]);
	if (o->filter_file != NULL) {
		if (app_args_read_filter_file(o->filter_file, &o->expr) < 0)
			return -1;
	} else if (o->filter_arg != NULL)
		o->expr = strdup(o->filter_arg);
	else
		o->expr = argc > optind || o->cfg.expr == NULL ?
				  gcap_filter_join(argc - optind, argv + optind) :
				  strdup(o->cfg.expr);
	if (o->expr == NULL)
		return -app_err("out of memory");
	if (app_args_check_expr(o, o->filter_file) < 0)
		return -1;
	/* -D, -L, -y, -i N, -B, --immediate-mode (args.c) */
	r = app_args_finish(o);
	if (r != 0)
		return r;
	if (!o->doctor && (o->doctor_conf.json || (o->doctor_conf.root != NULL &&
						   !o->list_ports && o->nports == 0)))
		return -app_err("--json and --doctor-root need --doctor (--doctor-root: "
				"or -D, -i N)");
	if (o->doctor) {
		if (o->read_file != NULL || o->nouts > 0 || o->expr[0] != '\0')
			return -app_err("--doctor checks the host: it takes -i, --gpu, "
					"--json and --doctor-root, not -r, -w or a "
					"filter");
		o->doctor_conf.ports = o->ports;
		o->doctor_conf.nports = o->nports;
		o->doctor_conf.gpus = o->gpus;
		o->doctor_conf.ngpus = o->ngpus;
		return 0;
	}
	if (o->read_file != NULL && o->nports > 0)
		return -app_err("-r and -i cannot be used together");
	if (o->read_file == NULL && o->nports == 0)
		return -app_err("no input: give -i PORT or -r FILE (see --help)");
	if (o->count_mode && o->read_file == NULL)
		return -app_err("--count counts what -r reads, as tcpdump's (for ports "
				"the summary says what was captured)");
	/* --count alone: what matches goes nowhere but into the count */
	if (o->count_mode && o->nouts == 0 &&
	    (app_opts_rotates(o) || o->max_files || o->postrotate || o->autostop_files ||
	     o->autostop_bytes))
		return -app_err("--count without -w writes no file: -C, -G, -W, -b, -z "
				"and -a files:/filesize: need -w");
	if (o->count_mode && o->nouts == 0 && o->dump_level == 0 && !o->dump_gpu_code &&
	    !o->list_tstamp) {
		o->outs[0].path = strdup("/dev/null");
		if (o->outs[0].path == NULL)
			return -app_err("out of memory");
		o->nouts = 1;
	}
	if (o->dump_level == 0 && !o->dump_gpu_code && o->nouts == 0 && !o->list_tstamp)
		return -app_err("no output: give -w FILE (gpu-capture prints no packets: "
				"-w - | tcpdump -r - prints them)");
	for (unsigned i = 0; i < o->nouts && o->count_mode; i++)
		if (strcmp(o->outs[i].path, "-") == 0)
			return -app_err("--count prints the count on stdout, where -w - "
					"writes the packets");
	if (fidelity_check(o) < 0)
		return -1;
	if (o->kernel_state != NULL && o->kernel == NULL)
		return -app_err("--kernel-state needs --kernel");
	if (o->kernel_budget != 0 && o->kernel == NULL)
		return -app_err("--kernel-budget needs --kernel");
	if (o->gpu_blocks > o->ring)
		return -app_err("--gpu-blocks is larger than --ring");
	if (o->read_file != NULL && o->metrics != NULL)
		return -app_err("--metrics applies to live ports (-i), not to -r");
	if (o->read_file != NULL && o->queues != 1)
		return -app_err("--queues applies to live ports, not to -r");
	if (o->cpu_workers >= 0 && o->read_file == NULL)
		return -app_err("--cpu-workers applies to -r, not to live ports");
	if (o->find_threads >= 0 && o->read_file == NULL)
		return -app_err("--find-threads applies to -r, not to live ports");
	if (o->find_gpu >= 0 && o->read_file == NULL)
		return -app_err("--find applies to -r, not to live ports");
	if (o->find_gpu == 1 && o->backend == GCAP_BACKEND_CPU)
		return -app_err(
			"--find gpu needs the gpu backend (--backend gpu or auto)");
	if (o->batch > GCAP_BATCH_MAX && o->read_file == NULL)
		return -app_err("--batch %u: at most %u on live ports (%u with -r)",
				o->batch, GCAP_BATCH_MAX, GCAP_FILE_BATCH_MAX);
	for (unsigned i = 0; i < o->nouts; i++)
		for (unsigned j = 0; j < i; j++)
			if (strcmp(o->outs[i].path, o->outs[j].path) == 0)
				return -app_err("output '%s' given twice",
						o->outs[i].path);
	/* -Q out on ports, --capture-comment with a pcap output (args.c) */
	if (app_args_check_habits(o) < 0)
		return -1;
	/* -d prints the programs and exits before a backend is chosen */
	if (o->dump_level == 0 && o->backend == GCAP_BACKEND_CPU &&
	    o->mem != GCAP_MEM_AUTO)
		return -app_err("--mem %s needs the gpu backend", gcap_mem_name(o->mem));
	for (unsigned i = 0; i < o->nouts; i++)
		o->outs[i].filter = o->outs[i].expr ? o->outs[i].expr : o->expr;
	if (o->mbufs == 0)
		o->mbufs = o->nb_rxd + o->batch * (o->ring + 2) + 512;
	/* -Z: the outputs opened as the user from the first one on */
	if (o->user != NULL && o->dump_level == 0 && !o->dump_gpu_code &&
	    app_privs_open_as(o->user) < 0)
		return -1;
	/* what the values cost, and where the run writes, before anything
	 * is allocated (-d and --dump-gpu-code write nothing) */
	if (o->dump_level == 0 && !o->dump_gpu_code &&
	    (app_preflight_mbufs(o) < 0 || app_preflight_memory(o) < 0 ||
	     app_preflight_outputs(o) < 0))
		return -1;
	return 0;
}

void
app_free_options(struct app_opts *o)
{
	for (unsigned i = 0; i < o->nouts; i++) {
		free(o->outs[i].path);
		free(o->outs[i].expr);
	}
	free(o->expr);
	o->expr = NULL;
	for (unsigned i = 0; i < APP_MAX_PORTS; i++) {
		free(o->port_names[i]);
		o->port_names[i] = NULL;
	}
	o->nouts = 0;
	app_config_free(&o->cfg);
}
