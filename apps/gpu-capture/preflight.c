/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a run will cost, checked before anything is allocated: the mbufs a
 * queue needs at least, the memory the batch rings, export buffers,
 * staging areas and packet pools take against what the machine has
 * (MemAvailable and free hugepages, and the process's RLIMIT_DATA), and
 * every output path (-w, --summary-json, --kernel-state) opened as it
 * will be, so that none fails after the capture ran.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_mbuf_core.h>
#include <rte_mempool.h>

#include "gpucap/gcap_capfile.h"
#include "gpucap/gcap_outfile.h"
#include "gpucap/gcap_pipeline.h"
#include "app_err.h"
#include "filerule.h"
#include "preflight.h"

/* DPDK's rule for a pool with a per-lcore cache: cache_size * 1.5 <= n */
#define POOL_CACHE 256u
#define POOL_MIN (POOL_CACHE * 3 / 2)

/* A /proc/meminfo field in bytes (0 when absent). */
static uint64_t
meminfo(const char *key)
{
	char line[256];
	size_t klen = strlen(key);
	uint64_t v = 0;
	FILE *f = fopen("/proc/meminfo", "r");

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
			unsigned long long n = 0;

			if (sscanf(line + klen + 1, "%llu", &n) == 1)
				v = strstr(line, " kB") != NULL ? n * 1024u : n;
			break;
		}
	fclose(f);
	return v;
}

static double
gb(uint64_t bytes)
{
	return (double)bytes / 1e9;
}

int
app_preflight_mbufs(const struct app_opts *o)
{
	uint64_t min = (uint64_t)o->nb_rxd + o->batch;

	if (o->read_file != NULL || o->nports == 0)
		return 0;
	if (min < POOL_MIN)
		min = POOL_MIN;
	if (o->mbufs < min)
		return -app_err("--mbufs %u: a queue needs at least %" PRIu64
				" (one per RX descriptor, --rxd %u, and a batch being "
				"filled, --batch %u; at least %u for a pool's per-core "
				"cache)",
				o->mbufs, min, o->nb_rxd, o->batch, POOL_MIN);
	return 0;
}

/* -r's batches on the gpu backend: as fast as 4096 (docs/benchmarks.md,
 * "How a file's bytes reach the GPU"), and a typical mix still fits the
 * least staging (1 MiB a slot) */
#define FILE_GPU_BATCH 2048u

unsigned
app_file_gpu_batch(const struct app_opts *o)
{
	if (o->batch_given || o->buffer_kib != 0)
		return o->batch;
	/* --find gpu: spans as large as the batch's staging allows (the
	 * preflight counts them for any input: the most it may be); spans
	 * of 3.75 MiB read the same 4 GB 1.8x faster than 0.75 MiB ones on
	 * the H200 (each span copies a 256 KiB tail past its own bytes) */
	return o->find_gpu == 1 ? GCAP_FILE_BATCH_MAX : FILE_GPU_BATCH;
}

unsigned
app_file_gpu_batch_found(const struct app_opts *o)
{
	return o->batch_given || o->buffer_kib != 0 ? o->batch : FILE_GPU_BATCH;
}

void
app_preflight_cost(const struct app_opts *o, struct app_cost *c)
{
	bool live = o->read_file == NULL;
	uint32_t cap = live ? (RTE_MBUF_DEFAULT_DATAROOM < o->snaplen ?
				       RTE_MBUF_DEFAULT_DATAROOM :
				       o->snaplen) :
			      0;
	uint32_t stage;
	unsigned nx = 0;
	uint32_t xsz = 0;
	struct rte_mempool_objsz sz;

	memset(c, 0, sizeof(*c));
	c->nqueues = live ? o->nports * o->queues : 1;
	/* as app_exec_conf sizes it (cannot fail for the accepted ranges) */
	/* -r on the gpu backend takes its own batch size; auto's choice is
	 * made later, but its rule for files needs no GPU: where it may
	 * still pick the gpu backend (a machine without a GPU then falls
	 * back to the cpu one), the larger counts */
	c->batch = live || o->backend == GCAP_BACKEND_CPU || app_files_auto_cpu(o) ?
			   o->batch :
			   app_file_gpu_batch(o);
	stage = !live                  ? gcap_pipeline_file_stage(c->batch) :
		o->mem == GCAP_MEM_GPU ? 0 :
					 GCAP_PIPELINE_STAGE_LIVE;
	(void)gcap_pipeline_xmem_size(o->ring, c->batch, cap, stage, &nx, &xsz);
	c->xmem = (uint64_t)nx * xsz * c->nqueues;
	c->staging = (uint64_t)o->ring * stage * c->nqueues;
	/* -r: the records' time fields on their way to the writer, the
	 * slots' descriptors, each input's buffer (-V's count is known
	 * later: one) */
	if (!live)
		c->reader += gcap_pipeline_file_mem(o->ring, c->batch, nx, xsz,
						    o->read_list ? 1 : o->nread);
	/* packet pools in host memory: the CPU's, or the GPU's pinned host
	 * memory; device memory (--mem gpu) is the GPU's own */
	if (live && o->mem != GCAP_MEM_GPU) {
		uint32_t obj = rte_mempool_calc_obj_size(
			(uint32_t)sizeof(struct rte_mbuf) + RTE_MBUF_DEFAULT_BUF_SIZE, 0,
			&sz);

		c->pools = (uint64_t)obj * o->mbufs * c->nqueues;
	}
	/* what each input's reader takes (its finders' lists, its decoding
	 * threads' slots); -V's inputs are named in a file read later */
	if (!live && !o->read_list) {
		struct gcap_capfile_conf conf;

		app_capfile_conf(o, o->nread, &conf);
		for (unsigned i = 0; i < o->nread; i++) {
			int64_t m = gcap_capfile_mem(o->read_files[i], &conf);

			c->reader += m > 0 ? (uint64_t)m : 0;
		}
	}
	c->total = c->xmem + c->staging + c->pools + c->reader;
}

int
app_preflight_memory(const struct app_opts *o)
{
	struct app_cost c;
	struct rlimit rl;
	uint64_t avail = meminfo("MemAvailable"),
		 huge = meminfo("HugePages_Free") * (meminfo("Hugepagesize") / 1024u) *
			1024u,
		 have = avail + huge;
	const char *what = "MemAvailable and free hugepages";
	char mbufs[32] = "", reader[48] = "";

	if (o->nports == 0 && o->read_file == NULL)
		return 0;
	app_preflight_cost(o, &c);
	if (avail == 0) /* no /proc/meminfo: nothing to check against */
		return 0;
	if (getrlimit(RLIMIT_DATA, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur < have) {
		have = rl.rlim_cur;
		what = "RLIMIT_DATA, ulimit -d";
	}
	if (c.total <= have)
		return 0;
	if (c.pools > 0)
		snprintf(mbufs, sizeof(mbufs), " --mbufs %u", o->mbufs);
	if (c.reader > 0)
		snprintf(reader, sizeof(reader), ", file readers %.3f GB", gb(c.reader));
	return -app_err("--ring %u --batch %u%s: the capture needs %.2f GB (%u queue%s: "
			"export %.2f GB, staging %.2f GB, packet pools %.2f GB%s) and "
			"%.2f GB is available (%s; MemAvailable %.2f GB, free "
			"hugepages %.2f GB)",
			o->ring, c.batch, mbufs, gb(c.total), c.nqueues,
			c.nqueues == 1 ? "" : "s", gb(c.xmem), gb(c.staging), gb(c.pools),
			reader, gb(have), what, gb(avail), gb(huge));
}

/* Open path as its writer will (no symlink in a sticky world-writable
 * directory followed), without truncating; remove it again when this
 * made it. @return 0, or -1 after printing the error. */
static int
check_output(const char *opt, const char *path)
{
	char eb[GCAP_ERRBUF_SIZE];
	struct stat st;
	bool existed = lstat(path, &st) == 0;
	int fd;

	/* a FIFO, a device: opened and closed here, its reader would see
	 * the end of the data before the run began */
	if (existed && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode) &&
	    !S_ISLNK(st.st_mode)) {
		if (access(path, W_OK) != 0)
			return -app_err("%s: cannot write '%s': %s", opt, path,
					strerror(errno));
		return 0;
	}
	fd = gcap_open_output(path, O_WRONLY | O_CREAT | O_NONBLOCK | O_CLOEXEC, 0666,
			      eb);
	if (fd < 0)
		return -app_err("%s: %s", opt, eb);
	close(fd);
	if (!existed)
		(void)unlink(path);
	return 0;
}

/* The directory a file name of path's will be made in (-W's numbered
 * names, -G's strftime ones). @return 0, or -1 after printing the error. */
static int
check_dir(const char *path)
{
	char dir[4096];
	const char *sl = strrchr(path, '/');

	if (sl == NULL)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", sl == path ? 1 : (int)(sl - path),
			 path);
	if (access(dir, W_OK | X_OK) != 0)
		return -app_err("-w: cannot write in '%s' (for '%s'): %s", dir, path,
				strerror(errno));
	return 0;
}

/* --kernel-state FILE is written to FILE.tmp (exclusively) and renamed
 * over FILE: the directory must take FILE.tmp, FILE must not be a
 * directory. */
static int
check_state_file(const char *path)
{
	char tmp[4096], eb[GCAP_ERRBUF_SIZE];
	struct stat st;
	int fd;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -app_err("--kernel-state %s: name too long", path);
	if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return -app_err("--kernel-state %s: is a directory", path);
	if (lstat(tmp, &st) == 0)
		return 0; /* a stale one: the run replaces it */
	fd = gcap_open_output(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			      0666, eb);
	if (fd < 0)
		return -app_err("--kernel-state: %s", eb);
	close(fd);
	(void)unlink(tmp);
	return 0;
}

int
app_preflight_outputs(const struct app_opts *o)
{
	for (unsigned i = 0; i < o->nouts; i++) {
		const char *p = o->outs[i].path;

		if (strcmp(p, "-") == 0)
			continue;
		/* numbered (-W, -b) or strftime (-G) names: their directory */
		if (o->max_files != 0 || o->ring_buffer ||
		    (o->rotate_secs != 0 && strchr(p, '%'))) {
			if (check_dir(p) < 0)
				return -1;
		} else if (check_output("-w", p) < 0)
			return -1;
	}
	if (o->summary_json != NULL &&
	    check_output("--summary-json", o->summary_json) < 0)
		return -1;
	if (o->kernel_state != NULL && check_state_file(o->kernel_state) < 0)
		return -1;
	return 0;
}
