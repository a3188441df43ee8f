/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The gpu executor: one persistent kernel per GPU, one block per pipeline
 * queue, fed through a ring of doorbell slots per queue in pinned,
 * device-mapped host memory. See docs/gpu.md for the protocol.
 *
 * Host side of the doorbells (single producer, single consumer per queue):
 *   submit: write the slot (n, descriptor, xbuf and result addresses), then
 *           a release store of READY (x86: a compiler barrier and a store;
 *           the GPU reads pinned memory coherently over PCIe). In copy
 *           mode the copy engines move the batch into VRAM and a stream
 *           memory operation stores READY after the copies (stream order,
 *           with the default memory barrier). In gpu mode,
 *           cuFlushGPUDirectRDMAWrites first, as rte_gpu_wmb() does.
 *   poll:   acquire load of the status; DONE means the results, the records
 *           and xbuf->len/nrec are visible.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_memory.h>

#include "gcap_config.h"
#include "gpucap/gcap_exec.h"
#include "gpucap/gcap_gpu.h"
#include "cuda_internal.h"
#include "gpu_internal.h"
#include "kernels/gcap_gpu_abi.h"

/* the kernel's views of the host structures must match them */
_Static_assert(sizeof(struct gcap_gpu_xbuf) == sizeof(struct gcap_xbuf),
	       "xbuf layout");
_Static_assert(offsetof(struct gcap_gpu_xbuf, len) ==
	       offsetof(struct gcap_xbuf, len), "xbuf layout");
_Static_assert(offsetof(struct gcap_gpu_xbuf, nrec) ==
	       offsetof(struct gcap_xbuf, nrec), "xbuf layout");
_Static_assert(offsetof(struct gcap_gpu_xbuf, size) ==
	       offsetof(struct gcap_xbuf, size), "xbuf layout");
_Static_assert(sizeof(struct gcap_gpu_result) ==
	       sizeof(struct gcap_batch_result), "result layout");
_Static_assert(offsetof(struct gcap_gpu_result, out_pkts) ==
	       offsetof(struct gcap_batch_result, out_pkts), "result layout");
_Static_assert(offsetof(struct gcap_gpu_result, start_ns) ==
	       offsetof(struct gcap_batch_result, start_ns), "result layout");
_Static_assert(sizeof(struct gcap_gpu_slot) == 64, "one line per slot");
_Static_assert(sizeof(struct bpf_insn) == 8, "bpf_insn layout");

#define GPU_MAX_DEVS 16
/* packet head bytes each thread loads at once before the filter: Ethernet,
 * two VLAN tags, IPv4 with options or IPv6, and the ports (pipeline.cuh) */
#define GPU_PREFETCH_DEFAULT 128u
/* longest wait for a kernel state copy */
#define STATE_COPY_TIMEOUT_MS 5000u
/* blocks per queue when the configuration leaves it to the executor: the
 * most of these that the ring and every GPU's SMs allow */
#define GPU_AUTO_BLOCKS 4u
/* copy mode: streams per GPU (GCAP_GPU_COPY_STREAMS, up to _MAX, and no
 * more than CUDA_DEVICE_MAX_CONNECTIONS allows) */
#define GPU_COPY_STREAMS 6u
#define GPU_COPY_STREAMS_MAX 30u
/* copy mode: default blocks per GPU at most (see gpu_create) */
#define GPU_COPY_POLLERS 8u
#define GPU_PAGE (64u * 1024u)
#define KERNEL_NAME "gcap_pipeline_kernel"
/* bytes of VRAM staging per packet slot in copy mode: room for the span
 * of a batch's data rooms, not only its bytes (see submit_copy) */
#define COPY_BYTES_PER_PKT 4096u
/* a gap of up to this many bytes between two packets still joins a run:
 * one copy more costs the copy engines about a microsecond, which moves
 * tens of kilobytes */
#define COPY_RUN_GAP 16384u

extern const unsigned char gcap_gpu_fatbin[];
extern const unsigned long gcap_gpu_fatbin_len;

static int gpu_logtype = -1;

#define GPU_LOG(level, ...)                                                   \
	rte_log(RTE_LOG_##level, gpu_logtype >= 0 ? gpu_logtype : RTE_LOGTYPE_USER1, \
		"gpucap.gpu: " __VA_ARGS__)

RTE_INIT(gpu_log_init)
{
	gpu_logtype = rte_log_register_type_and_pick_level("gpucap.gpu",
							   RTE_LOG_INFO);
}

struct gpu_dev {
	int ordinal;
	CUdevice dev;
	CUcontext ctx;
	bool ctx_held;
	CUmodule mod;
	CUfunction fn;
	CUstream kstream;
	CUstream sstream;  /* state snapshots beside the running kernel */
	CUstream cstreams[GPU_COPY_STREAMS_MAX]; /* copy mode, shared by its queues */
	unsigned ncs;      /* copy streams in use (0: not copy mode) */
	unsigned nqs;      /* queues set up so far (their copy stream) */
	CUdeviceptr insns, progs, qdesc;
	CUdeviceptr kstate;   /* inline kernel state (VRAM), or 0 */
	CUfunction kcopy;     /* gcap_kstate_copy, with an inline kernel */
	unsigned nq;
	unsigned nblocks; /* nq x blocks per queue */
	bool launched;
	bool finished; /* the kernel returned (StreamQuery SUCCESS) */
	bool faulted;
	int sms;
};

struct gpu_queue {
	unsigned q;
	struct gpu_dev *dev;
	enum gcap_mem mem;             /* conf.mem, or what auto chose for the pool */
	void *host;                    /* one pinned, mapped allocation */
	struct gcap_gpu_slot *slots;
	struct gcap_batch *batches;    /* ring_size, ordinary memory */
	struct gcap_xbuf *xbufs;       /* nxbufs, in host */
	uint8_t *xdata;
	uint64_t prod, cons;
	/* copy mode */
	CUstream cstream;
	CUdeviceptr vpkts, vdata;
	struct gcap_pkt *shadow;       /* ring_size * batch_max, in host */
	CUdeviceptr *cp_dst, *cp_src;
	size_t *cp_len;
	uint32_t copy_bytes;           /* VRAM staging bytes per slot */
};

struct gpu_pool_mem {
	struct gpu_pool_mem *next;
	void *addr;       /* what was registered */
	size_t len;
	void *host;       /* cuMemHostAlloc'ed, or NULL */
	CUdeviceptr dptr; /* cuMemAlloc'ed, or 0 */
	struct gpu_dev *dev;
	struct rte_device *rdev; /* DMA-mapped for this device, or NULL */
	bool registered;
};

struct gcap_exec {
	struct gcap_exec_conf conf;
	const struct gcap_cu *cu;
	unsigned ndev;
	struct gpu_dev dev[GPU_MAX_DEVS];
	struct gpu_queue *qs;
	uint32_t *quit;            /* pinned, mapped */
	unsigned threads;
	unsigned bpq; /* blocks per queue */
	unsigned fault_at;
	unsigned prefetch; /* bytes of packet head loaded before the filter */
	bool stopped;
	int stop_rc;
	bool kernel_alive;         /* stop() could not end a kernel: leak */
	/* The kernels start with the first batch_get(): every allocation
	 * (pools included) happens before, since freeing (and on some
	 * drivers allocating) device or pinned memory waits for running
	 * kernels, which never end on their own. */
	pthread_mutex_t launch_lock;
	int launched;              /* 0, 1: launched, -1: failed */
	int launch_rc;
	char launch_err[GCAP_ERRBUF_SIZE];
	struct gpu_pool_mem *pools;
	/* inline kernel: the host build (validation, init, report), its
	 * state in VRAM on the one device, a pinned copy to read it back */
	struct gcap_khost *kernel;
	size_t kstate_size;
	void *kstate_host;
};

/* the context current on this thread, as far as this module set it */
static __thread CUcontext tls_ctx;

static int
ctx_on(struct gcap_exec *ex, struct gpu_dev *d, char *errbuf)
{
	int rc = gcap_cu_err(ex->cu, ex->cu->CtxSetCurrent(d->ctx), errbuf,
			     "cuCtxSetCurrent");

	tls_ctx = rc ? NULL : d->ctx;
	return rc;
}

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- probing ---------------------------------------------------------- */

static int
dev_usable(const struct gcap_cu *cu, CUdevice d)
{
	int map = 0, uva = 0;

	cu->DeviceGetAttribute(&map, CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, d);
	cu->DeviceGetAttribute(&uva, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, d);
	return map && uva;
}

int
gcap_gpu_probe(int *ndev, char *errbuf)
{
	const struct gcap_cu *cu = gcap_cu_load(errbuf);
	int n = 0, i, ok = 0, rc;

	if (ndev)
		*ndev = 0;
	if (cu == NULL)
		return -errno;
	rc = gcap_cu_err(cu, cu->DeviceGetCount(&n), errbuf, "cuDeviceGetCount");
	if (rc)
		return -ENODEV;
	for (i = 0; i < n; i++) {
		CUdevice d;

		if (cu->DeviceGet(&d, i) == CUDA_SUCCESS && dev_usable(cu, d))
			ok++;
	}
	if (ok == 0)
		return gcap_err(errbuf, ENODEV, "no usable GPU (%d CUDA devices, "
				"none with mapped host memory and unified "
				"addressing)", n);
	if (ndev)
		*ndev = ok;
	return 0;
}

static int
dev_numa_node(const struct gcap_cu *cu, CUdevice d)
{
	char bus[64], path[128], lower[64];
	FILE *f;
	int node = -1;
	size_t i;

	if (cu->DeviceGetPCIBusId(bus, sizeof(bus), d) != CUDA_SUCCESS)
		return -1;
	for (i = 0; bus[i] && i < sizeof(lower) - 1; i++)
		lower[i] = (char)((bus[i] >= 'A' && bus[i] <= 'F') ?
				  bus[i] - 'A' + 'a' : bus[i]);
	lower[i] = '\0';
	/* cuDeviceGetPCIBusId gives "0000:3b:00.0" (domain may be 8 digits) */
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/numa_node",
		 strlen(lower) > 12 ? lower + strlen(lower) - 12 : lower);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	if (fscanf(f, "%d", &node) != 1)
		node = -1;
	fclose(f);
	return node;
}

int
gcap_gpu_pick(int socket)
{
	const struct gcap_cu *cu;
	int n = 0, i, rc;

	rc = gcap_gpu_probe(&n, NULL);
	if (rc)
		return rc;
	cu = gcap_cu_load(NULL);
	if (socket < 0)
		return 0;
	cu->DeviceGetCount(&n);
	for (i = 0; i < n; i++) {
		CUdevice d;

		if (cu->DeviceGet(&d, i) == CUDA_SUCCESS && dev_usable(cu, d) &&
		    dev_numa_node(cu, d) == socket)
			return i;
	}
	return 0;
}

/* ---- the translation unit --------------------------------------------- */

/* Is this line `#include <gpucap/gcap_kernel.h>` (or "...")? */
static bool
is_kernel_h_include(const char *l, size_t n)
{
	static const char name[] = "gpucap/gcap_kernel.h";
	size_t i = 0;

	while (i < n && (l[i] == ' ' || l[i] == '\t'))
		i++;
	if (i >= n || l[i++] != '#')
		return false;
	while (i < n && (l[i] == ' ' || l[i] == '\t'))
		i++;
	if (n - i < 7 || memcmp(l + i, "include", 7) != 0)
		return false;
	i += 7;
	while (i < n && (l[i] == ' ' || l[i] == '\t'))
		i++;
	if (i >= n || (l[i] != '<' && l[i] != '"'))
		return false;
	i++;
	if (n - i < sizeof(name) || memcmp(l + i, name, sizeof(name) - 1) != 0)
		return false;
	i += sizeof(name) - 1;
	return l[i] == '>' || l[i] == '"';
}

/* A growing string; on failure *ok is cleared and later appends do nothing. */
struct gbuf {
	char *p;
	size_t len, cap;
	bool ok;
};

static void
gb_put(struct gbuf *b, const char *s, size_t n)
{
	if (!b->ok)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = (b->len + n + 1) * 2;
		char *p = realloc(b->p, cap);

		if (p == NULL) {
			b->ok = false;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void
gb_str(struct gbuf *b, const char *s)
{
	gb_put(b, s, strlen(s));
}

/* a C string literal of s (for #line): quotes and backslashes escaped */
static void
gb_quoted(struct gbuf *b, const char *s)
{
	gb_put(b, "\"", 1);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			gb_put(b, "\\", 1);
		if (*s == '\n')
			gb_put(b, " ", 1);
		else
			gb_put(b, s, 1);
	}
	gb_put(b, "\"", 1);
}

static unsigned
count_lines(const char *s, size_t n)
{
	unsigned k = 0;

	for (size_t i = 0; i < n; i++)
		k += s[i] == '\n';
	return k;
}

/* the inline kernel part: gcap_kernel.h inlined, then the user's source
 * (its own include of the header commented out, line numbers kept) */
static int
gpu_code_inline(struct gbuf *b, const struct gcap_khost *k, char *errbuf)
{
	char line[64], sz[32];
	const char *src = gcap_khost_source(k, NULL), *l;
	size_t hlen = 0;
	/* the header the host build of this kernel used */
	const char *hdr = gcap_khost_header(k, &hlen);

	if (hdr == NULL)
		return gcap_err(errbuf, EINVAL, "gpu code: the kernel was "
				"loaded without its header");
	/* the order key, when the kernel has one (gcap_kernel.h) */
	if (gcap_khost_ordered(k))
		gb_str(b, "#define GCAP_KERNEL_ORDERED 1\n");
	gb_str(b, "/* ---- begin gpucap/gcap_kernel.h (inlined from ");
	gb_str(b, gcap_khost_include_dir(k));
	gb_str(b, ") ---- */\n");
	gb_put(b, hdr, hlen);
	if (hlen && hdr[hlen - 1] != '\n')
		gb_str(b, "\n");
	gb_str(b, "/* ---- end gpucap/gcap_kernel.h ---- */\n");

	gb_str(b, "#line 1 ");
	gb_quoted(b, gcap_khost_path(k));
	gb_str(b, "\n");
	for (l = src; *l != '\0';) {
		const char *e = strchr(l, '\n');
		size_t n = e ? (size_t)(e - l) : strlen(l);

		if (is_kernel_h_include(l, n))
			gb_str(b, "/* #include <gpucap/gcap_kernel.h>: inlined above */");
		else
			gb_put(b, l, n);
		gb_str(b, "\n");
		l += n + (e != NULL);
	}
	/* the host copy of the state is read with the host build's layout */
	snprintf(sz, sizeof(sz), "%zu", gcap_khost_state_size(k));
	gb_str(b, "static_assert(sizeof(struct gcap_kstate) == ");
	gb_str(b, sz);
	gb_str(b, ", \"struct gcap_kstate: the GPU build's size differs from "
	       "the host build's\");\n");
	/* the rest names the TU itself, with its real line numbers */
	snprintf(line, sizeof(line), "#line %u ",
		 b->ok ? count_lines(b->p, b->len) + 2 : 1);
	gb_str(b, line);
	gb_quoted(b, "gpucap_pipeline.cu");
	gb_str(b, "\n#define GCAP_GPU_INLINE_KERNEL 1\n");
	return 0;
}

char *
gcap_gpu_code_kernel(const struct gcap_exec_conf *conf,
		     const struct gcap_khost *k, char *errbuf)
{
	struct gbuf b = { NULL, 0, 0, true };
	char *flt = NULL, head[512];
	const char *ksrc = (const char *)gcap_gpu_kernel_src;
	int rc;

	if (conf == NULL || conf->nfilters == 0 ||
	    conf->nfilters > GCAP_MAX_OUTPUTS || conf->filters == NULL)
		return gcap_err_null(errbuf, EINVAL, "gpu code: 1 to %u filters "
				     "needed", GCAP_MAX_OUTPUTS);
	/* an inline kernel is compiled with NVRTC: so are the filters */
	if (conf->compile_filters || k != NULL) {
		flt = gcap_gpu_filter_code(conf, errbuf);
		if (flt == NULL)
			return NULL;
	}
	snprintf(head, sizeof(head),
		 "/* gpucap persistent kernel: %u output(s), %s%s */\n",
		 conf->nfilters,
		 flt ? "filters compiled from BPF by gcap_bpfc"
		     : "filters interpreted (gcap_bpf_interp)",
		 k ? ", inline kernel" : "");
	gb_str(&b, head);
	if (flt != NULL) {
		gb_str(&b, flt);
		gb_str(&b, "\n#define GCAP_GPU_COMPILED_FILTERS 1\n");
	}
	free(flt);
	if (k != NULL) {
		rc = gpu_code_inline(&b, k, errbuf);
		if (rc) {
			free(b.p);
			errno = -rc;
			return NULL;
		}
	}
	gb_str(&b, ksrc);
	if (!b.ok) {
		free(b.p);
		return gcap_err_null(errbuf, ENOMEM, "gpu code: out of memory");
	}
	return b.p;
}

char *
gcap_gpu_code(const struct gcap_exec_conf *conf, char *errbuf)
{
	struct gcap_khost *k = NULL;
	char *out;
	int e;

	if (conf != NULL && conf->kernel_path != NULL) {
		/* the host build validates the kernel (FILE:LINE errors) and
		 * finds the gcap_kernel.h it was built with */
		k = gcap_khost_load(conf->kernel_path, conf->kernel_arg, errbuf);
		if (k == NULL)
			return NULL;
	}
	out = gcap_gpu_code_kernel(conf, k, errbuf);
	e = errno;
	gcap_khost_free(k);
	errno = e;
	return out;
}

/* ---- create / destroy ------------------------------------------------- */

static int
conf_check(const struct gcap_exec_conf *c, char *errbuf)
{
	if (c->nqueues == 0)
		return gcap_err(errbuf, EINVAL, "gpu executor: no queues");
	if (c->ring_size < 2 || (c->ring_size & (c->ring_size - 1)))
		return gcap_err(errbuf, EINVAL, "gpu executor: ring size %u is "
				"not a power of two >= 2", c->ring_size);
	if (c->batch_max == 0 || c->batch_max > GCAP_BATCH_MAX)
		return gcap_err(errbuf, EINVAL, "gpu executor: batch size %u "
				"not in 1..%u", c->batch_max, GCAP_BATCH_MAX);
	if (c->nxbufs == 0 || c->nxbufs > 65535)
		return gcap_err(errbuf, EINVAL, "gpu executor: %u export "
				"buffers per queue", c->nxbufs);
	if (c->xbuf_size < 64 || (c->xbuf_size & 7))
		return gcap_err(errbuf, EINVAL, "gpu executor: export buffer "
				"size %u (a multiple of 8, >= 64)", c->xbuf_size);
	if (c->nfilters == 0 || c->nfilters > GCAP_MAX_OUTPUTS ||
	    c->filters == NULL)
		return gcap_err(errbuf, EINVAL, "gpu executor: %u filters "
				"(1..%u)", c->nfilters, GCAP_MAX_OUTPUTS);
	if (c->snaplen == 0)
		return gcap_err(errbuf, EINVAL, "gpu executor: snap length 0");
	if (c->ngpus > 0 && c->gpus == NULL)
		return gcap_err(errbuf, EINVAL, "gpu executor: ngpus without gpus");
	if (c->mem == GCAP_MEM_PLAIN)
		return gcap_err(errbuf, EINVAL, "gpu executor: memory mode "
				"'plain' is for the cpu executor");
	return 0;
}

static int
dev_open(struct gcap_exec *ex, struct gpu_dev *d, int ordinal, char *errbuf)
{
	const struct gcap_cu *cu = ex->cu;
	int count = 0, rc;

	d->ordinal = ordinal;
	rc = gcap_cu_err(cu, cu->DeviceGetCount(&count), errbuf,
			 "cuDeviceGetCount");
	if (rc)
		return rc;
	if (ordinal < 0 || ordinal >= count)
		return gcap_err(errbuf, ENODEV, "gpu executor: no GPU %d "
				"(%d present)", ordinal, count);
	rc = gcap_cu_err(cu, cu->DeviceGet(&d->dev, ordinal), errbuf,
			 "cuDeviceGet");
	if (rc)
		return rc;
	if (!dev_usable(cu, d->dev))
		return gcap_err(errbuf, ENOTSUP, "GPU %d cannot map host memory "
				"with unified addressing", ordinal);
	cu->DeviceGetAttribute(&d->sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
			       d->dev);
	rc = gcap_cu_err(cu, cu->DevicePrimaryCtxRetain(&d->ctx, d->dev),
			 errbuf, "cuDevicePrimaryCtxRetain");
	if (rc)
		return rc;
	d->ctx_held = true;
	return ctx_on(ex, d, errbuf);
}

/* which GPU runs which queues: "GPU 1 (NVIDIA H200, 0000:2a:00.0):
 * queues 1,3" (--gpu 0,1 spreads them round-robin) */
static void
log_dev_queues(const struct gcap_exec *ex, const struct gpu_dev *d)
{
	char name[64] = "?", bus[32] = "?", qs[128] = "";
	size_t n = 0;
	unsigned q;

	ex->cu->DeviceGetName(name, sizeof(name), d->dev);
	ex->cu->DeviceGetPCIBusId(bus, sizeof(bus), d->dev);
	for (q = 0; q < ex->conf.nqueues && n < sizeof(qs) - 12; q++)
		if (ex->qs[q].dev == d)
			n += (size_t)snprintf(qs + n, sizeof(qs) - n, "%s%u",
					      n ? "," : "", q);
	if (q < ex->conf.nqueues)
		snprintf(qs + n, sizeof(qs) - n, ",...");
	GPU_LOG(INFO, "GPU %d (%s, %s): %u block(s), queues %s\n",
		d->ordinal, name, bus, d->nblocks, qs);
}

static int
host_alloc(struct gcap_exec *ex, void **p, size_t len, char *errbuf,
	   const char *what)
{
	CUdeviceptr dp = 0;
	char w[96];
	int rc;

	snprintf(w, sizeof(w), "cuMemHostAlloc(%zu bytes, %s)", len, what);
	rc = gcap_cu_err(ex->cu, ex->cu->MemHostAlloc(p, len,
			 CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE),
			 errbuf, w);
	if (rc)
		return rc;
	memset(*p, 0, len);
	/* with unified addressing the device address is the host address */
	if (ex->cu->MemHostGetDevicePointer(&dp, *p, 0) != CUDA_SUCCESS ||
	    dp != (CUdeviceptr)(uintptr_t)*p) {
		ex->cu->MemFreeHost(*p);
		*p = NULL;
		return gcap_err(errbuf, ENOTSUP, "pinned memory (%s) has a "
				"device address different from its host address",
				what);
	}
	return 0;
}

static size_t
al64(size_t x)
{
	return (x + 63u) & ~(size_t)63u;
}

static int
queue_setup(struct gcap_exec *ex, struct gpu_queue *qs, char *errbuf)
{
	const struct gcap_exec_conf *c = &ex->conf;
	size_t o_slots = 0, o_pkts, o_res, o_xb, o_shadow, o_stage, o_xdata, tot;
	size_t npk = (size_t)c->ring_size * c->batch_max;
	uint8_t *h;
	unsigned i;
	int rc;

	o_pkts = al64(o_slots + c->ring_size * sizeof(struct gcap_gpu_slot));
	o_res = al64(o_pkts + npk * sizeof(struct gcap_pkt));
	o_xb = al64(o_res + c->ring_size * sizeof(struct gcap_batch_result));
	o_shadow = al64(o_xb + c->nxbufs * sizeof(struct gcap_xbuf));
	o_stage = al64(o_shadow + (c->mem == GCAP_MEM_COPY ?
				   npk * sizeof(struct gcap_pkt) : 0));
	o_xdata = al64(o_stage + (size_t)c->ring_size * c->stage_size);
	tot = o_xdata + (size_t)c->nxbufs * c->xbuf_size;

	rc = host_alloc(ex, &qs->host, tot, errbuf, "doorbell ring");
	if (rc)
		return rc;
	h = qs->host;
	qs->slots = (struct gcap_gpu_slot *)(h + o_slots);
	qs->xbufs = (struct gcap_xbuf *)(h + o_xb);
	qs->xdata = h + o_xdata;
	qs->batches = calloc(c->ring_size, sizeof(*qs->batches));
	if (qs->batches == NULL)
		return gcap_err(errbuf, ENOMEM, "gpu executor: out of memory");
	for (i = 0; i < c->nxbufs; i++) {
		qs->xbufs[i].data = qs->xdata + (size_t)i * c->xbuf_size;
		qs->xbufs[i].size = c->xbuf_size;
		qs->xbufs[i].queue = (uint16_t)qs->q;
		qs->xbufs[i].index = (uint16_t)i;
	}
	for (i = 0; i < c->ring_size; i++) {
		struct gcap_batch *b = &qs->batches[i];

		b->pkts = (struct gcap_pkt *)(h + o_pkts) + (size_t)i * c->batch_max;
		b->res = (struct gcap_batch_result *)(h + o_res) + i;
		b->queue = (uint16_t)qs->q;
		b->stage = c->stage_size ? h + o_stage + (size_t)i * c->stage_size
					 : NULL;
		b->stage_size = c->stage_size;
		qs->slots[i].status = GCAP_GPU_FREE;
	}
	if (c->mem != GCAP_MEM_COPY)
		return 0;

	qs->shadow = (struct gcap_pkt *)(h + o_shadow);
	qs->copy_bytes = c->batch_max * COPY_BYTES_PER_PKT;
	/* the device's streams in turn: the first ncs queues create them */
	i = qs->dev->nqs++ % qs->dev->ncs;
	if (qs->dev->cstreams[i] == NULL) {
		rc = gcap_cu_err(ex->cu, ex->cu->StreamCreate(&qs->dev->cstreams[i],
				 CU_STREAM_NON_BLOCKING), errbuf,
				 "cuStreamCreate(copy)");
		if (rc)
			return rc;
	}
	qs->cstream = qs->dev->cstreams[i];
	rc = gcap_cu_err(ex->cu, ex->cu->MemAlloc(&qs->vpkts,
			 npk * sizeof(struct gcap_pkt)), errbuf,
			 "cuMemAlloc(copy descriptors)");
	if (rc)
		return rc;
	rc = gcap_cu_err(ex->cu, ex->cu->MemAlloc(&qs->vdata,
			 (size_t)c->ring_size * qs->copy_bytes), errbuf,
			 "cuMemAlloc(copy staging)");
	if (rc)
		return rc;
	qs->cp_dst = calloc(c->batch_max + 1, sizeof(*qs->cp_dst));
	qs->cp_src = calloc(c->batch_max + 1, sizeof(*qs->cp_src));
	qs->cp_len = calloc(c->batch_max + 1, sizeof(*qs->cp_len));
	if (!qs->cp_dst || !qs->cp_src || !qs->cp_len)
		return gcap_err(errbuf, ENOMEM, "gpu executor: out of memory");
	return 0;
}

static int
dev_load(struct gcap_exec *ex, struct gpu_dev *d, char *errbuf)
{
	const struct gcap_cu *cu = ex->cu;
	const struct gcap_exec_conf *c = &ex->conf;
	struct gcap_gpu_prog progs[GCAP_MAX_OUTPUTS];
	struct bpf_insn *all = NULL;
	size_t ninsn = 0;
	unsigned j;
	int rc;

	if (c->compile_filters || ex->kernel != NULL) {
		rc = gcap_gpu_compile_module(ex->cu, c, ex->kernel, d->dev,
					     &d->mod, errbuf);
		if (rc)
			return rc;
	} else {
		rc = gcap_cu_err(cu, cu->ModuleLoadData(&d->mod, gcap_gpu_fatbin),
				 errbuf, "cuModuleLoadData(" KERNEL_NAME ")");
		if (rc)
			return rc;
	}
	rc = gcap_cu_err(cu, cu->ModuleGetFunction(&d->fn, d->mod, KERNEL_NAME),
			 errbuf, "cuModuleGetFunction(" KERNEL_NAME ")");
	if (rc)
		return rc;
	if (ex->kernel != NULL) {
		/* the state the init hook prepared on the host, into VRAM */
		rc = gcap_cu_err(cu, cu->ModuleGetFunction(&d->kcopy, d->mod,
				 "gcap_kstate_copy"), errbuf,
				 "cuModuleGetFunction(gcap_kstate_copy)");
		if (!rc)
			rc = gcap_cu_err(cu, cu->MemAlloc(&d->kstate,
					 ex->kstate_size), errbuf,
					 "cuMemAlloc(inline kernel state)");
		if (!rc)
			rc = gcap_cu_err(cu, cu->MemcpyHtoD(d->kstate,
					 gcap_khost_state(ex->kernel),
					 ex->kstate_size), errbuf,
					 "cuMemcpyHtoD(inline kernel state)");
		if (rc)
			return rc;
	}

	for (j = 0; j < c->nfilters; j++)
		ninsn += c->filters[j].bf_len;
	all = malloc((ninsn + 1) * sizeof(*all));
	if (all == NULL)
		return gcap_err(errbuf, ENOMEM, "gpu executor: out of memory");
	ninsn = 0;
	for (j = 0; j < c->nfilters; j++) {
		progs[j].off = (uint32_t)ninsn;
		progs[j].len = c->filters[j].bf_len;
		if (c->filters[j].bf_len)
			memcpy(all + ninsn, c->filters[j].bf_insns,
			       c->filters[j].bf_len * sizeof(*all));
		ninsn += c->filters[j].bf_len;
	}
	rc = gcap_cu_err(cu, cu->MemAlloc(&d->insns, (ninsn + 1) * sizeof(*all)),
			 errbuf, "cuMemAlloc(filters)");
	if (!rc && ninsn)
		rc = gcap_cu_err(cu, cu->MemcpyHtoD(d->insns, all,
				 ninsn * sizeof(*all)), errbuf,
				 "cuMemcpyHtoD(filters)");
	free(all);
	if (!rc)
		rc = gcap_cu_err(cu, cu->MemAlloc(&d->progs, sizeof(progs)),
				 errbuf, "cuMemAlloc(programs)");
	if (!rc)
		rc = gcap_cu_err(cu, cu->MemcpyHtoD(d->progs, progs,
				 c->nfilters * sizeof(progs[0])), errbuf,
				 "cuMemcpyHtoD(programs)");
	return rc;
}

/* Queue table and kernel stream of one device (before any launch). */
static int
dev_prepare(struct gcap_exec *ex, struct gpu_dev *d, char *errbuf)
{
	const struct gcap_cu *cu = ex->cu;
	struct gcap_gpu_qdesc *qd;
	unsigned q, n = 0;
	int rc;

	qd = calloc((size_t)ex->conf.nqueues * ex->bpq, sizeof(*qd));
	if (qd == NULL)
		return gcap_err(errbuf, ENOMEM, "gpu executor: out of memory");
	for (q = 0; q < ex->conf.nqueues; q++) {
		if (ex->qs[q].dev != d)
			continue;
		/* block k of the queue takes slots k, k + bpq, ...: bpq divides
		 * the ring, so each slot always has the same block */
		for (unsigned k = 0; k < ex->bpq; k++, n++) {
			qd[n].slots = (uint64_t)(uintptr_t)ex->qs[q].slots;
			qd[n].ring_size = ex->conf.ring_size;
			qd[n].queue = q;
			qd[n].first = k;
			qd[n].step = ex->bpq;
			/* where slot s's descriptors are read: VRAM in copy
			 * mode, the batch's own (pinned) array otherwise */
			qd[n].pkts = ex->conf.mem == GCAP_MEM_COPY ?
				(uint64_t)ex->qs[q].vpkts :
				(uint64_t)(uintptr_t)ex->qs[q].batches[0].pkts;
			qd[n].res = (uint64_t)(uintptr_t)ex->qs[q].batches[0].res;
			qd[n].xbufs = (uint64_t)(uintptr_t)ex->qs[q].xbufs;
			qd[n].batch_max = ex->conf.batch_max;
		}
	}
	d->nblocks = n;
	rc = gcap_cu_err(cu, cu->MemAlloc(&d->qdesc, (n + 1) * sizeof(qd[0])),
			 errbuf, "cuMemAlloc(queue table)");
	if (!rc && n)
		rc = gcap_cu_err(cu, cu->MemcpyHtoD(d->qdesc, qd,
				 n * sizeof(qd[0])), errbuf,
				 "cuMemcpyHtoD(queue table)");
	free(qd);
	if (!rc)
		rc = gcap_cu_err(cu, cu->StreamCreate(&d->kstream,
				 CU_STREAM_NON_BLOCKING), errbuf,
				 "cuStreamCreate(kernel)");
	return rc;
}

/* Start the persistent kernel: one block per queue of the device. */
static int
dev_launch(struct gcap_exec *ex, struct gpu_dev *d, char *errbuf)
{
	struct gcap_gpu_kparams kp;
	void *args[1] = { &kp };
	int rc;

	if (d->nq == 0)
		return 0;
	memset(&kp, 0, sizeof(kp));
	kp.queues = d->qdesc;
	kp.quit = (uint64_t)(uintptr_t)ex->quit;
	kp.insns = d->insns;
	kp.progs = d->progs;
	kp.nfilters = ex->conf.nfilters;
	kp.snaplen = ex->conf.snaplen;
	kp.fault_at = ex->fault_at;
	kp.prefetch = ex->prefetch;
	kp.kstate = d->kstate;
	rc = gcap_cu_err(ex->cu, ex->cu->LaunchKernel(d->fn, d->nblocks, 1, 1,
			 ex->threads, 1, 1, 0, d->kstream, args, NULL), errbuf,
			 "cuLaunchKernel(" KERNEL_NAME ")");
	if (rc)
		return rc;
	d->launched = true;
	return 0;
}

static void gpu_destroy(struct gcap_exec *ex);
static int gpu_stop(struct gcap_exec *ex, unsigned timeout_ms, char *errbuf);

/*
 * Copy mode's streams on one GPU. Streams share the driver's hardware work
 * queues (CUDA_DEVICE_MAX_CONNECTIONS, 8 by default, read when a context
 * is created): a copy stream that shared one with the kernel's stream
 * would wait behind the persistent kernel, which never ends. So a GPU gets
 * at most that many, less the kernel's and the state snapshot's, and by
 * default no more than GPU_COPY_STREAMS: its queues take them in turn (a
 * stream keeps each queue's copies before its doorbell, whichever lcore
 * issued them). More streams did not copy faster (one H200, 64-byte
 * packets, 28 queues at four blocks each: 0.93 / 1.22 / 1.29 / 1.31 Mpps
 * on 1 / 2 / 6 / 28 streams; that collapse was the blocks, see
 * GPU_COPY_POLLERS in exec_gpu.c), and sharing them keeps copy mode within
 * the driver's default work queues (32 made each context start 0.7 s
 * slower).
 */
static int
copy_streams(struct gpu_dev *d, char *errbuf)
{
	const char *mc = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
	const char *cs = getenv("GCAP_GPU_COPY_STREAMS");
	unsigned conns = mc ? (unsigned)strtoul(mc, NULL, 10) : 8;
	unsigned most = cs ? (unsigned)strtoul(cs, NULL, 10) : GPU_COPY_STREAMS;

	if (conns < 3)
		return gcap_err(errbuf, ENOSPC, "gpu executor: copy mode on GPU "
				"%d needs 3 CUDA work queues (a copy stream, the "
				"kernel's, the state's), CUDA_DEVICE_MAX_CONNECTIONS "
				"is %u", d->ordinal, conns);
	if (most == 0 || most > GPU_COPY_STREAMS_MAX)
		most = GPU_COPY_STREAMS;
	d->ncs = d->nq < conns - 2 ? d->nq : conns - 2;
	if (d->ncs > most)
		d->ncs = most;
	return 0;
}

static struct gcap_exec *
gpu_create(const struct gcap_exec_conf *conf, char *errbuf)
{
	struct gcap_exec *ex;
	int ords[GPU_MAX_DEVS], rc;
	unsigned i, q, nord;
	const char *fa;

	if (conf == NULL)
		return gcap_err_null(errbuf, EINVAL, "gpu executor: no "
				     "configuration");
	rc = conf_check(conf, errbuf);
	if (rc) {
		errno = -rc;
		return NULL;
	}
	ex = calloc(1, sizeof(*ex));
	if (ex == NULL)
		return gcap_err_null(errbuf, ENOMEM, "gpu executor: out of "
				     "memory");
	pthread_mutex_init(&ex->launch_lock, NULL);
	ex->conf = *conf;
	ex->conf.gpus = NULL;
	ex->conf.kernel_path = NULL;
	ex->conf.kernel_arg = NULL;
	/* 0: chosen below, once the kernel and the GPUs are known */
	ex->bpq = conf->blocks_per_queue ? conf->blocks_per_queue : 1;
	if ((ex->bpq & (ex->bpq - 1)) != 0 || ex->bpq > conf->ring_size) {
		rc = gcap_err(errbuf, EINVAL, "gpu executor: %u blocks per queue: "
			      "a power of two, at most the ring size (%u)",
			      ex->bpq, conf->ring_size);
		goto fail;
	}
	ex->threads = (conf->batch_max + 31u) & ~31u;
	if (ex->threads < 64)
		ex->threads = 64;
	fa = getenv("GCAP_GPU_FAULT_AT");
	if (fa != NULL)
		ex->fault_at = (unsigned)strtoul(fa, NULL, 10);
	/* GCAP_GPU_PREFETCH=N (bytes, 0 = off): the benchmark's knob */
	fa = getenv("GCAP_GPU_PREFETCH");
	ex->prefetch = fa != NULL ? (unsigned)strtoul(fa, NULL, 10)
				  : GPU_PREFETCH_DEFAULT;
	if (conf->kernel_path != NULL) {
		/* the cpu executor's host build first: it validates the source
		 * (FILE:LINE errors, no GPU needed), runs the init hook on the
		 * host state that is uploaded below, and writes the report */
		ex->kernel = gcap_khost_load(conf->kernel_path, conf->kernel_arg,
					     errbuf);
		if (ex->kernel == NULL) {
			rc = -errno;
			goto fail;
		}
		ex->kstate_size = gcap_khost_state_size(ex->kernel);
		if (gcap_khost_ordered(ex->kernel) && ex->bpq > 1) {
			rc = gcap_err(errbuf, EINVAL, "gpu executor: %s orders "
				      "packets by key (gcap_kernel_order), which "
				      "holds with one block per queue: drop "
				      "--gpu-blocks %u", conf->kernel_path,
				      ex->bpq);
			goto fail;
		}
	}

	ex->cu = gcap_cu_load(errbuf);
	if (ex->cu == NULL) {
		rc = -errno;
		goto fail;
	}

	nord = conf->ngpus ? conf->ngpus : 1;
	if (nord > GPU_MAX_DEVS) {
		rc = gcap_err(errbuf, EINVAL, "gpu executor: at most %d GPUs",
			      GPU_MAX_DEVS);
		goto fail;
	}
	for (i = 0; i < nord; i++)
		ords[i] = conf->ngpus ? conf->gpus[i] : 0;

	ex->qs = calloc(conf->nqueues, sizeof(*ex->qs));
	if (ex->qs == NULL) {
		rc = gcap_err(errbuf, ENOMEM, "gpu executor: out of memory");
		goto fail;
	}
	/* queue q on gpus[q % ngpus]; one context per distinct device */
	for (q = 0; q < conf->nqueues; q++) {
		int ord = ords[q % nord];
		struct gpu_dev *d = NULL;

		for (i = 0; i < ex->ndev; i++)
			if (ex->dev[i].ordinal == ord)
				d = &ex->dev[i];
		if (d == NULL) {
			d = &ex->dev[ex->ndev++];
			rc = dev_open(ex, d, ord, errbuf);
			if (rc)
				goto fail;
		}
		ex->qs[q].q = q;
		ex->qs[q].dev = d;
		ex->qs[q].mem = ex->conf.mem;
		d->nq++;
	}
	if (ex->kernel != NULL && ex->ndev > 1) {
		/* one state: per-device copies could not be merged generically */
		rc = gcap_err(errbuf, ENOTSUP, "gpu executor: an inline kernel "
			      "runs on one GPU (its state lives in that GPU's "
			      "memory); the queues map to %u GPUs", ex->ndev);
		goto fail;
	}
	if (conf->blocks_per_queue == 0 &&
	    (ex->kernel == NULL || !gcap_khost_ordered(ex->kernel))) {
		/* default: four (else two) blocks per queue where the ring and
		 * every GPU's SMs allow: the pipeline spreads a queue's batches
		 * over them, so a batch waits for a free block a quarter of a
		 * round trip instead of half (H200: p99 at 5 Mpps on one queue
		 * 18 us instead of 25); one for ordered kernels, which need it.
		 * In copy mode no more than GPU_COPY_POLLERS blocks a GPU: the
		 * copy engines set the pace there, and more blocks polling the
		 * doorbells starved them (one H200, 64 B, lossless: 24 queues
		 * 8.1 Mpps with four blocks a queue, 16.4 with two, 17.2 with
		 * one; 28 queues 1.3 and 17.0; 8 queues 17.2-17.4 with four
		 * and 17.6 with one, p50/p99 at half rate 263/321 us and
		 * 69/117; but one queue 15.1 with four, 9.6 with one) */
		for (unsigned cand = GPU_AUTO_BLOCKS; cand > 1; cand /= 2) {
			bool fits = conf->ring_size >= cand;

			for (i = 0; i < ex->ndev; i++) {
				unsigned most = (unsigned)ex->dev[i].sms;

				if (conf->mem == GCAP_MEM_COPY)
					most = GPU_COPY_POLLERS;
				if (most > 0 && ex->dev[i].nq * cand > most)
					fits = false;
			}
			if (fits) {
				ex->bpq = cand;
				break;
			}
		}
	}

	for (i = 0; i < ex->ndev; i++) {
		struct gpu_dev *d = &ex->dev[i];

		/* every block must be resident at once */
		if (d->sms > 0 && d->nq * ex->bpq > (unsigned)d->sms) {
			rc = gcap_err(errbuf, ENOSPC, "gpu executor: %u queues x %u "
				      "blocks on GPU %d, which has %d SMs", d->nq,
				      ex->bpq, d->ordinal, d->sms);
			goto fail;
		}
		if (d->nq > 1024) {
			rc = gcap_err(errbuf, ENOSPC, "gpu executor: too many "
				      "queues");
			goto fail;
		}
		if (conf->mem == GCAP_MEM_COPY) {
			rc = copy_streams(d, errbuf);
			if (rc)
				goto fail;
		}
		rc = ctx_on(ex, d, errbuf);
		if (!rc)
			rc = dev_load(ex, d, errbuf);
		if (rc)
			goto fail;
	}
	rc = ctx_on(ex, &ex->dev[0], errbuf);
	if (!rc)
		rc = host_alloc(ex, (void **)&ex->quit, 64, errbuf, "quit flag");
	/* where gcap_kstate_copy puts the state when it is read back */
	if (!rc && ex->kernel != NULL)
		rc = host_alloc(ex, &ex->kstate_host, ex->kstate_size, errbuf,
				"inline kernel state copy");
	if (rc)
		goto fail;
	for (q = 0; q < conf->nqueues; q++) {
		rc = ctx_on(ex, ex->qs[q].dev, errbuf);
		if (!rc)
			rc = queue_setup(ex, &ex->qs[q], errbuf);
		if (rc)
			goto fail;
	}
	for (i = 0; i < ex->ndev; i++) {
		rc = ctx_on(ex, &ex->dev[i], errbuf);
		if (!rc)
			rc = dev_prepare(ex, &ex->dev[i], errbuf);
		if (rc)
			goto fail;
	}
	GPU_LOG(INFO, "%u queue(s) on %u GPU(s), %u threads per block, "
		"memory mode %s\n", conf->nqueues, ex->ndev, ex->threads,
		gcap_mem_name(conf->mem));
	for (i = 0; i < ex->ndev; i++)
		log_dev_queues(ex, &ex->dev[i]);
	return ex;
fail:
	gpu_destroy(ex);
	errno = -rc;
	return NULL;
}

static void
pool_mem_free(struct gcap_exec *ex, struct gpu_pool_mem *pm)
{
	if (pm->rdev)
		rte_dev_dma_unmap(pm->rdev, pm->addr,
				  (uint64_t)(uintptr_t)pm->addr, pm->len);
	if (pm->registered)
		rte_extmem_unregister(pm->addr, pm->len);
	if (pm->dev)
		ex->cu->CtxSetCurrent(pm->dev->ctx);
	if (pm->host)
		ex->cu->MemFreeHost(pm->host);
	if (pm->dptr)
		ex->cu->MemFree(pm->dptr);
	free(pm);
}

static void
pools_free(struct gcap_exec *ex)
{
	struct gpu_pool_mem *pm, *next;

	for (pm = ex->pools; pm != NULL; pm = next) {
		next = pm->next;
		pool_mem_free(ex, pm);
	}
	ex->pools = NULL;
}

static void
gpu_destroy(struct gcap_exec *ex)
{
	const struct gcap_cu *cu;
	unsigned i, q;

	if (ex == NULL)
		return;
	cu = ex->cu;
	if (cu != NULL && !ex->stopped && ex->launched == 1)
		gpu_stop(ex, 2000, NULL);
	if (cu != NULL && !ex->kernel_alive) {
		for (q = 0; ex->qs && q < ex->conf.nqueues; q++) {
			struct gpu_queue *qs = &ex->qs[q];

			if (qs->dev)
				cu->CtxSetCurrent(qs->dev->ctx);
			if (qs->vpkts)
				cu->MemFree(qs->vpkts);
			if (qs->vdata)
				cu->MemFree(qs->vdata);
			if (qs->host)
				cu->MemFreeHost(qs->host);
		}
		pools_free(ex);
		if (ex->quit)
			cu->MemFreeHost(ex->quit);
		if (ex->kstate_host)
			cu->MemFreeHost(ex->kstate_host);
		for (i = 0; i < ex->ndev; i++) {
			struct gpu_dev *d = &ex->dev[i];

			if (!d->ctx_held)
				continue;
			cu->CtxSetCurrent(d->ctx);
			if (d->kstream)
				cu->StreamDestroy(d->kstream);
			if (d->sstream)
				cu->StreamDestroy(d->sstream);
			for (q = 0; q < d->ncs; q++)
				if (d->cstreams[q])
					cu->StreamDestroy(d->cstreams[q]);
			if (d->qdesc)
				cu->MemFree(d->qdesc);
			if (d->insns)
				cu->MemFree(d->insns);
			if (d->progs)
				cu->MemFree(d->progs);
			if (d->kstate)
				cu->MemFree(d->kstate);
			if (d->mod)
				cu->ModuleUnload(d->mod);
			cu->CtxSetCurrent(NULL);
			cu->DevicePrimaryCtxRelease(d->dev);
		}
	}
	/* A kernel that could not be ended still reads the rings: their
	 * memory is leaked on purpose rather than freed under it. */
	for (q = 0; ex->qs && q < ex->conf.nqueues; q++) {
		free(ex->qs[q].batches);
		free(ex->qs[q].cp_dst);
		free(ex->qs[q].cp_src);
		free(ex->qs[q].cp_len);
	}
	free(ex->qs);
	gcap_khost_free(ex->kernel);
	pthread_mutex_destroy(&ex->launch_lock);
	free(ex);
}

/* ---- the ring --------------------------------------------------------- */

static unsigned
gpu_xbufs(struct gcap_exec *ex, unsigned q, struct gcap_xbuf **xbufs)
{
	if (q >= ex->conf.nqueues) {
		*xbufs = NULL;
		return 0;
	}
	*xbufs = ex->qs[q].xbufs;
	return ex->conf.nxbufs;
}

static int
launch_all(struct gcap_exec *ex)
{
	unsigned i;
	int rc = 0;

	pthread_mutex_lock(&ex->launch_lock);
	if (ex->launched == 0) {
		for (i = 0; i < ex->ndev && !rc; i++) {
			rc = ctx_on(ex, &ex->dev[i], ex->launch_err);
			if (!rc)
				rc = dev_launch(ex, &ex->dev[i], ex->launch_err);
		}
		ex->launch_rc = rc;
		__atomic_store_n(&ex->launched, rc ? -1 : 1, __ATOMIC_RELEASE);
	}
	rc = ex->launch_rc;
	pthread_mutex_unlock(&ex->launch_lock);
	return rc;
}

static struct gcap_batch *
gpu_batch_get(struct gcap_exec *ex, unsigned q)
{
	struct gpu_queue *qs = &ex->qs[q];
	unsigned s = (unsigned)(qs->prod & (ex->conf.ring_size - 1));
	struct gcap_batch *b;

	if (__atomic_load_n(&ex->launched, __ATOMIC_ACQUIRE) != 1 &&
	    (ex->stopped || launch_all(ex) != 0))
		return NULL;
	/* a full ring by count first: in copy mode a submitted slot reads
	 * FREE until the copy stream writes its READY, and with the copies
	 * behind (the copy engines are copy mode's bottleneck) the oldest
	 * slot could be handed out again while in flight: its batch was
	 * overwritten and never completed (copy mode at full rate stalled,
	 * with "batches still in flight" at stop) */
	if (qs->prod - qs->cons >= ex->conf.ring_size ||
	    __atomic_load_n(&qs->slots[s].status, __ATOMIC_ACQUIRE) !=
	    GCAP_GPU_FREE || ex->stopped)
		return NULL;
	b = &qs->batches[s];
	b->n = 0;
	b->flags = 0;
	b->stage_used = 0;
	b->seq = qs->prod;
	return b;
}

/* true when [lo, hi) lies inside one pool's data rooms: memory that is
 * mapped and pinned end to end (two pools may have unmapped space between
 * them). The list is fixed before the capture starts. */
static bool
span_in_pool(const struct gcap_exec *ex, uint64_t lo, uint64_t hi)
{
	const struct gpu_pool_mem *pm;

	for (pm = ex->pools; pm != NULL; pm = pm->next) {
		uint64_t a = (uint64_t)(uintptr_t)pm->addr;

		if (lo >= a && hi <= a + pm->len)
			return true;
	}
	return false;
}

/* Copy mode: move the batch's packets and its descriptors into VRAM with
 * the copy engines, then let a stream memory operation ring the doorbell.
 * The engines pay per copy far more than per byte, so the packets move as
 * few copies as possible: the whole span of the batch's data rooms when it
 * fits the slot's staging (mbufs of one pool, taken together, lie close),
 * else runs of packets joined across gaps of up to COPY_RUN_GAP bytes. */
static int
submit_copy(struct gcap_exec *ex, struct gpu_queue *qs, unsigned s,
	    struct gcap_batch *b)
{
	const struct gcap_cu *cu = ex->cu;
	struct gcap_pkt *sh = qs->shadow + (size_t)s * ex->conf.batch_max;
	CUdeviceptr vbase = qs->vdata + (CUdeviceptr)s * qs->copy_bytes;
	uint64_t run_src = 0, run_end = 0, run_off = 0, off = 0;
	size_t nr = 0, k;
	uint64_t lo = UINT64_MAX, hi = 0;
	bool open = false, full = false;
	unsigned i;
	CUresult r;

	for (i = 0; i < b->n; i++) {
		const struct gcap_pkt *d = &b->pkts[i];

		if (d->caplen == 0)
			continue;
		lo = d->addr < lo ? d->addr : lo;
		hi = d->addr + d->caplen > hi ? d->addr + d->caplen : hi;
	}
	if (hi > lo && hi - (lo & ~(uint64_t)7u) <= qs->copy_bytes &&
	    span_in_pool(ex, lo, hi)) {
		lo &= ~(uint64_t)7u; /* the alignment modulo 8 is kept */
		for (i = 0; i < b->n; i++) {
			sh[i] = b->pkts[i];
			if (sh[i].caplen != 0)
				sh[i].addr = vbase + (sh[i].addr - lo);
		}
		qs->cp_src[0] = (CUdeviceptr)lo;
		qs->cp_dst[0] = vbase;
		qs->cp_len[0] = hi - lo;
		nr = 1;
		goto descriptors;
	}
	for (i = 0; i < b->n; i++) {
		const struct gcap_pkt *d = &b->pkts[i];
		uint64_t end = d->addr + d->caplen;

		sh[i] = *d;
		if (d->caplen == 0 || full)
			continue;
		if (open && d->addr >= run_end && d->addr - run_end <= COPY_RUN_GAP &&
		    run_off + (end - run_src) <= qs->copy_bytes) {
			run_end = end;
		} else {
			if (open) {
				qs->cp_len[nr - 1] = run_end - run_src;
				off = run_off + (run_end - run_src);
			}
			/* keep the source's alignment modulo 8 */
			off = ((off + 7u) & ~(uint64_t)7u) + (d->addr & 7u);
			if (off + d->caplen > qs->copy_bytes) {
				/* staging full: the rest is read in place */
				open = false;
				full = true;
				continue;
			}
			run_src = d->addr;
			run_end = end;
			run_off = off;
			qs->cp_src[nr] = (CUdeviceptr)run_src;
			qs->cp_dst[nr] = vbase + run_off;
			nr++;
			open = true;
		}
		sh[i].addr = vbase + run_off + (d->addr - run_src);
	}
	if (open)
		qs->cp_len[nr - 1] = run_end - run_src;
descriptors:
	qs->cp_src[nr] = (CUdeviceptr)(uintptr_t)sh;
	qs->cp_dst[nr] = qs->vpkts + (CUdeviceptr)s * ex->conf.batch_max *
			 sizeof(struct gcap_pkt);
	qs->cp_len[nr] = (size_t)b->n * sizeof(struct gcap_pkt);
	nr++;

	if (cu->MemcpyBatchAsync13 || cu->MemcpyBatchAsync12) {
		CUmemcpyAttributes at;
		size_t idx = 0, fail = 0;

		memset(&at, 0, sizeof(at));
		at.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
		at.srcLocHint.type = CU_MEM_LOCATION_TYPE_HOST;
		at.dstLocHint.type = CU_MEM_LOCATION_TYPE_DEVICE;
		at.dstLocHint.id = qs->dev->dev;
		if (cu->MemcpyBatchAsync13)
			r = cu->MemcpyBatchAsync13(qs->cp_dst, qs->cp_src,
						   qs->cp_len, nr, &at, &idx, 1,
						   qs->cstream);
		else
			r = cu->MemcpyBatchAsync12(qs->cp_dst, qs->cp_src,
						   qs->cp_len, nr, &at, &idx, 1,
						   &fail, qs->cstream);
		if (r != CUDA_SUCCESS)
			return gcap_cu_err(cu, r, NULL, "cuMemcpyBatchAsync");
	} else {
		for (k = 0; k < nr; k++) {
			r = cu->MemcpyHtoDAsync(qs->cp_dst[k],
						(const void *)(uintptr_t)qs->cp_src[k],
						qs->cp_len[k], qs->cstream);
			if (r != CUDA_SUCCESS)
				return gcap_cu_err(cu, r, NULL,
						   "cuMemcpyHtoDAsync");
		}
	}
	/* the doorbell, in stream order after the copies (with the default
	 * flags the write is preceded by a memory barrier) */
	r = cu->StreamWriteValue32(qs->cstream,
				   (CUdeviceptr)(uintptr_t)&qs->slots[s].status,
				   GCAP_GPU_READY, CU_STREAM_WRITE_VALUE_DEFAULT);
	return gcap_cu_err(cu, r, NULL, "cuStreamWriteValue32(doorbell)");
}

static int
gpu_batch_submit(struct gcap_exec *ex, unsigned q, struct gcap_batch *b)
{
	struct gpu_queue *qs = &ex->qs[q];
	unsigned s = (unsigned)(qs->prod & (ex->conf.ring_size - 1));
	struct gcap_gpu_slot *sl = &qs->slots[s];
	uint32_t arg;
	int rc;

	if (b != &qs->batches[s] || b->n == 0 || b->n > ex->conf.batch_max ||
	    b->xbuf == NULL || b->xbuf < qs->xbufs ||
	    b->xbuf >= qs->xbufs + ex->conf.nxbufs)
		return -EINVAL;
	if (ex->stopped)
		return -ESHUTDOWN;
	arg = GCAP_GPU_ARG(b->n, b->xbuf - qs->xbufs);
	sl->seq = b->seq;
	if (qs->mem == GCAP_MEM_COPY || qs->mem == GCAP_MEM_GPU) {
		if (tls_ctx != qs->dev->ctx) {
			if (ex->cu->CtxSetCurrent(qs->dev->ctx) != CUDA_SUCCESS)
				return -EIO;
			tls_ctx = qs->dev->ctx;
		}
	}
	if (ex->conf.mem == GCAP_MEM_COPY) {
		/* the stream writes READY after the copies */
		sl->arg = arg;
		rc = submit_copy(ex, qs, s, b);
		if (rc)
			return rc;
	} else {
		/* qs->mem, not conf.mem: --mem auto may have chosen gpu */
		if (qs->mem == GCAP_MEM_GPU && ex->cu->FlushGPUDirectRDMAWrites)
			ex->cu->FlushGPUDirectRDMAWrites(
				CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX,
				CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER);
		/* READY and arg in one store: the GPU reads them in one load */
		__atomic_store_n((uint64_t *)&sl->status,
				 GCAP_GPU_READY | (uint64_t)arg << 32,
				 __ATOMIC_RELEASE);
	}
	qs->prod++;
	return 0;
}

static struct gcap_batch *
gpu_batch_poll(struct gcap_exec *ex, unsigned q)
{
	struct gpu_queue *qs = &ex->qs[q];
	unsigned s = (unsigned)(qs->cons & (ex->conf.ring_size - 1));

	if (qs->cons == qs->prod ||
	    __atomic_load_n(&qs->slots[s].status, __ATOMIC_ACQUIRE) !=
	    GCAP_GPU_DONE)
		return NULL;
	qs->cons++;
	return &qs->batches[s];
}

static void
gpu_batch_release(struct gcap_exec *ex, unsigned q, struct gcap_batch *b)
{
	struct gpu_queue *qs = &ex->qs[q];
	size_t s = (size_t)(b - qs->batches);

	if (s < ex->conf.ring_size)
		__atomic_store_n(&qs->slots[s].status, GCAP_GPU_FREE,
				 __ATOMIC_RELEASE);
}

/* Blocks of the persistent kernel that share each queue's batches. */
static unsigned
gpu_lanes(struct gcap_exec *ex, unsigned q)
{
	(void)q;
	return ex->bpq;
}

/* ---- health and stop -------------------------------------------------- */

/* 0: running (or ended after quit); -EIO: fault (message in errbuf). */
static int
dev_check(struct gcap_exec *ex, struct gpu_dev *d, char *errbuf)
{
	CUresult r;
	char what[128];
	unsigned q;

	if (!d->launched)
		return 0;
	if (d->faulted)
		return gcap_err(errbuf, EIO, "persistent kernel " KERNEL_NAME
				" on GPU %d failed earlier", d->ordinal);
	if (ex->cu->CtxSetCurrent(d->ctx) != CUDA_SUCCESS)
		return gcap_err(errbuf, EIO, "GPU %d: cuCtxSetCurrent failed",
				d->ordinal);
	tls_ctx = d->ctx;
	r = ex->cu->StreamQuery(d->kstream);
	if (r == CUDA_SUCCESS) {
		d->finished = true;
		if (!ex->stopped && !*(volatile uint32_t *)ex->quit) {
			d->faulted = true;
			return gcap_err(errbuf, EIO, "persistent kernel "
					KERNEL_NAME " on GPU %d ended on its own",
					d->ordinal);
		}
		return 0;
	}
	if (r != CUDA_ERROR_NOT_READY) {
		d->faulted = true;
		snprintf(what, sizeof(what), "persistent kernel " KERNEL_NAME
			 " on GPU %d", d->ordinal);
		gcap_cu_err(ex->cu, r, errbuf, what);
		return -EIO;
	}
	for (q = 0; q < ex->conf.nqueues; q++) {
		struct gpu_queue *qs = &ex->qs[q];

		if (qs->dev != d || !qs->cstream)
			continue;
		r = ex->cu->StreamQuery(qs->cstream);
		if (r != CUDA_SUCCESS && r != CUDA_ERROR_NOT_READY) {
			d->faulted = true;
			snprintf(what, sizeof(what), "copy stream of queue %u "
				 "on GPU %d", q, d->ordinal);
			gcap_cu_err(ex->cu, r, errbuf, what);
			return -EIO;
		}
	}
	return 0;
}

static int
gpu_health(struct gcap_exec *ex, char *errbuf)
{
	unsigned i;
	int rc;

	if (__atomic_load_n(&ex->launched, __ATOMIC_ACQUIRE) < 0)
		return gcap_err(errbuf, EIO, "%s", ex->launch_err);
	for (i = 0; i < ex->ndev; i++) {
		rc = dev_check(ex, &ex->dev[i], errbuf);
		if (rc)
			return rc;
	}
	return 0;
}

static bool
queues_drained(struct gcap_exec *ex)
{
	unsigned q;
	uint64_t k;

	for (q = 0; q < ex->conf.nqueues; q++) {
		struct gpu_queue *qs = &ex->qs[q];

		for (k = qs->cons; k < qs->prod; k++) {
			unsigned s = (unsigned)(k & (ex->conf.ring_size - 1));

			if (__atomic_load_n(&qs->slots[s].status,
					    __ATOMIC_ACQUIRE) != GCAP_GPU_DONE)
				return false;
		}
	}
	return true;
}

static int
gpu_stop(struct gcap_exec *ex, unsigned timeout_ms, char *errbuf)
{
	uint64_t deadline = now_ms() + timeout_ms;
	unsigned i;
	int rc = 0;
	bool all;

	if (ex->stopped) {
		if (ex->stop_rc)
			gcap_err(errbuf, -ex->stop_rc, "gpu executor: stopped "
				 "earlier with an error");
		return ex->stop_rc;
	}
	pthread_mutex_lock(&ex->launch_lock);
	ex->stopped = true;
	if (ex->launched == 0)
		ex->launched = -1; /* never launch after stop */
	pthread_mutex_unlock(&ex->launch_lock);
	/* 1. drain: every submitted batch reaches DONE */
	for (;;) {
		rc = gpu_health(ex, errbuf);
		if (rc)
			break;
		if (queues_drained(ex))
			break;
		if (now_ms() > deadline) {
			rc = gcap_err(errbuf, ETIMEDOUT, "gpu executor: batches "
				      "still in flight after %u ms", timeout_ms);
			break;
		}
		usleep(50);
	}
	/* 2. quit flag, then wait for every kernel to return */
	__atomic_store_n(ex->quit, 1u, __ATOMIC_RELEASE);
	for (;;) {
		all = true;
		for (i = 0; i < ex->ndev; i++) {
			struct gpu_dev *d = &ex->dev[i];
			int r2;

			if (!d->launched || d->finished)
				continue;
			r2 = dev_check(ex, d, rc ? NULL : errbuf);
			if (r2) {
				if (!rc || rc == -ETIMEDOUT)
					rc = r2;
				continue;
			}
			if (!d->finished)
				all = false;
		}
		if (all)
			break;
		if (now_ms() > deadline) {
			if (!rc)
				rc = gcap_err(errbuf, ETIMEDOUT, "persistent "
					      "kernel " KERNEL_NAME " did not "
					      "end within %u ms of the quit "
					      "flag", timeout_ms);
			ex->kernel_alive = true;
			break;
		}
		usleep(50);
	}
	/* a faulted context cannot run anything any more: nothing alive */
	for (i = 0; i < ex->ndev; i++)
		if (ex->dev[i].launched && !ex->dev[i].finished &&
		    !ex->dev[i].faulted)
			ex->kernel_alive = true;
	ex->stop_rc = rc;
	return rc;
}

/* Read the inline kernel's state back (gcap_kstate_copy into pinned
 * memory, on a stream of its own) and write the report with the host build's
 * hook, as the cpu executor does. After stop() (or before the first batch)
 * this is the final state; while the persistent kernel runs the copy runs
 * beside it (a non-blocking stream, blocks on the SMs it leaves) and the
 * report is a snapshot: each 8-byte word as it was at some moment of the
 * copy, words of a key being inserted possibly half-written. */
static int
gpu_kernel_state(struct gcap_exec *ex, const char *path, char *errbuf)
{
	const struct gcap_cu *cu = ex->cu;
	struct gpu_dev *d = &ex->dev[0];
	unsigned long long dst, src, n;
	void *args[3] = { &dst, &src, &n };
	unsigned blocks;
	uint64_t t0;
	int rc;

	if (path == NULL)
		return 0;
	if (ex->kernel == NULL)
		return gcap_err(errbuf, EINVAL, "no inline kernel is loaded");
	if (ex->ndev == 0 || d->kstate == 0 || d->kcopy == NULL)
		return gcap_err(errbuf, EINVAL, "gpu executor: no kernel state "
				"on a GPU");
	if (d->faulted)
		return gcap_err(errbuf, EIO, "gpu executor: kernel state lost: "
				"the persistent kernel on GPU %d failed",
				d->ordinal);
	dst = (unsigned long long)(uintptr_t)ex->kstate_host;
	src = d->kstate;
	n = ex->kstate_size;
	blocks = (unsigned)((n / 8u + 255u) / 256u);
	if (blocks == 0)
		blocks = 1;
	if (blocks > 1024)
		blocks = 1024;
	rc = ctx_on(ex, d, errbuf);
	/* its own stream: the kernel stream holds the persistent kernel */
	if (!rc && d->sstream == 0)
		rc = gcap_cu_err(cu, cu->StreamCreate(&d->sstream,
				 CU_STREAM_NON_BLOCKING), errbuf,
				 "cuStreamCreate(state)");
	if (!rc)
		rc = gcap_cu_err(cu, cu->LaunchKernel(d->kcopy, blocks, 1, 1, 256,
				 1, 1, 0, d->sstream, args, NULL), errbuf,
				 "cuLaunchKernel(gcap_kstate_copy)");
	/* bounded: a GPU whose SMs the persistent blocks fill may not run
	 * the copy beside them; the copy then stays queued and a later call
	 * (after stop, at the latest) waits for it in stream order */
	t0 = now_ms();
	while (!rc) {
		CUresult q = cu->StreamQuery(d->sstream);

		if (q == CUDA_SUCCESS)
			break;
		if (q != CUDA_ERROR_NOT_READY) {
			rc = gcap_cu_err(cu, q, errbuf, "reading the inline "
					 "kernel state back");
			break;
		}
		if (now_ms() - t0 > STATE_COPY_TIMEOUT_MS) {
			rc = gcap_err(errbuf, ETIMEDOUT, "gpu executor: the "
				      "kernel state copy did not run within "
				      "%u ms", STATE_COPY_TIMEOUT_MS);
			break;
		}
		sched_yield();
	}
	if (rc)
		return rc;
	return gcap_khost_report_file(ex->kernel, path, ex->kstate_host,
				      errbuf);
}

/* ---- mempools (memory modes) ----------------------------------------- */

/* Can the port's device DMA into [addr, addr+len)? Tries the mapping. */
static int
pool_dma_map(struct gpu_pool_mem *pm, uint16_t port_id, bool need_dma,
	     char *errbuf)
{
	struct rte_eth_dev_info info;
	int rc;

	rc = rte_eth_dev_info_get(port_id, &info);
	if (rc)
		return gcap_err(errbuf, -rc < 0 ? EINVAL : -rc, "port %u: "
				"rte_eth_dev_info_get: %s", port_id,
				rte_strerror(-rc));
	if (info.device == NULL)
		return gcap_err(errbuf, ENOTSUP, "port %u (%s): no device to "
				"DMA-map", port_id, info.driver_name);
	/* The vdev bus accepts any mapping (it has nothing to map), but a
	 * software port copies packets with the CPU: into VRAM, a crash. */
	if (need_dma && strcmp(rte_bus_name(rte_dev_bus(info.device)), "vdev") == 0)
		return gcap_err(errbuf, ENOTSUP, "port %u (driver %s) is a "
				"software port: its CPU copies packets, it "
				"cannot DMA into GPU memory", port_id,
				info.driver_name);
	rte_errno = 0;
	rc = rte_dev_dma_map(info.device, pm->addr,
			     (uint64_t)(uintptr_t)pm->addr, pm->len);
	if (rc) {
		int e = rte_errno ? rte_errno : ENOTSUP;

		return gcap_err(errbuf, e, "port %u (driver %s) cannot DMA-map "
				"external memory (rte_dev_dma_map: %s)", port_id,
				info.driver_name, rte_strerror(e));
	}
	pm->rdev = info.device;
	return 0;
}

static bool
dev_gdr(struct gcap_exec *ex, struct gpu_dev *d)
{
	int v = 0;

	ex->cu->DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED,
				   d->dev);
	return v != 0;
}

/* Data rooms in VRAM for GPUDirect RDMA (DPDK gpudev's recipe). */
static int
pool_mem_gpu(struct gcap_exec *ex, struct gpu_dev *d, struct gpu_pool_mem *pm,
	     size_t len, uint16_t port_id, char *errbuf)
{
	const struct gcap_cu *cu = ex->cu;
	unsigned one = 1;
	CUdeviceptr p;
	int rc;

	if (!dev_gdr(ex, d))
		return gcap_err(errbuf, ENOTSUP, "GPU %d does not support "
				"GPUDirect RDMA", d->ordinal);
	pm->len = (len + GPU_PAGE - 1) & ~(size_t)(GPU_PAGE - 1);
	rc = gcap_cu_err(cu, cu->MemAlloc(&pm->dptr, pm->len + GPU_PAGE), errbuf,
			 "cuMemAlloc(mbuf data rooms)");
	if (rc)
		return rc;
	p = (pm->dptr + GPU_PAGE - 1) & ~(CUdeviceptr)(GPU_PAGE - 1);
	pm->addr = (void *)(uintptr_t)p;
	rc = gcap_cu_err(cu, cu->PointerSetAttribute(&one,
			 CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, p), errbuf,
			 "cuPointerSetAttribute(SYNC_MEMOPS)");
	if (rc)
		return rc;
	if (rte_extmem_register(pm->addr, pm->len, NULL, 0, GPU_PAGE))
		return gcap_err(errbuf, rte_errno, "rte_extmem_register(VRAM, "
				"%zu bytes): %s", pm->len, rte_strerror(rte_errno));
	pm->registered = true;
	return pool_dma_map(pm, port_id, true, errbuf);
}

/* Data rooms in pinned, device-mapped host memory. */
static int
pool_mem_host(struct gcap_exec *ex, struct gpu_pool_mem *pm, size_t len,
	      uint16_t port_id, char *errbuf)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	int rc;

	pm->len = (len + pg - 1) & ~(pg - 1);
	rc = host_alloc(ex, &pm->host, pm->len, errbuf, "mbuf data rooms");
	if (rc)
		return rc;
	pm->addr = pm->host;
	if (rte_extmem_register(pm->addr, pm->len, NULL, 0, pg))
		return gcap_err(errbuf, rte_errno, "rte_extmem_register(%zu "
				"bytes): %s", pm->len, rte_strerror(rte_errno));
	pm->registered = true;
	/* a NIC under VFIO needs the mapping; software ports have none */
	if (pool_dma_map(pm, port_id, false, NULL) == 0)
		GPU_LOG(DEBUG, "port %u: pinned data rooms DMA-mapped\n", port_id);
	return 0;
}

static struct rte_mempool *
gpu_pool_create(struct gcap_exec *ex, unsigned q, uint16_t port_id,
		const char *name, unsigned n_mbufs, uint16_t data_room,
		int socket, char *errbuf)
{
	struct gpu_queue *qs;
	struct gpu_dev *d;
	struct gpu_pool_mem *pm, *saved = ex->pools;
	struct rte_pktmbuf_extmem em;
	struct rte_mempool *mp;
	enum gcap_mem mode = ex->conf.mem;
	char why[GCAP_ERRBUF_SIZE];
	size_t len;
	int rc;

	if (q >= ex->conf.nqueues || n_mbufs == 0 ||
	    data_room <= RTE_PKTMBUF_HEADROOM)
		return gcap_err_null(errbuf, EINVAL, "gpu pool: bad arguments");
	if (__atomic_load_n(&ex->launched, __ATOMIC_ACQUIRE) != 0)
		return gcap_err_null(errbuf, EBUSY, "gpu pool: create the pools "
				     "before the first batch (the kernels are "
				     "running)");
	qs = &ex->qs[q];
	d = qs->dev;
	rc = ctx_on(ex, d, errbuf);
	if (rc) {
		errno = -rc;
		return NULL;
	}
	tls_ctx = d->ctx;
	len = (size_t)n_mbufs * data_room;
	pm = calloc(1, sizeof(*pm));
	if (pm == NULL)
		return gcap_err_null(errbuf, ENOMEM, "gpu pool: out of memory");
	pm->dev = d;
	if (mode == GCAP_MEM_AUTO || mode == GCAP_MEM_GPU) {
		rc = pool_mem_gpu(ex, d, pm, len, port_id, why);
		if (rc && mode == GCAP_MEM_GPU) {
			pool_mem_free(ex, pm);
			return gcap_err_null(errbuf, -rc, "--mem gpu refused for "
					     "port %u: %s; it needs a NIC that "
					     "DMAs into GPU memory (GPUDirect "
					     "RDMA: ConnectX with mlx5 and "
					     "nvidia-peermem); use --mem host or "
					     "copy", port_id, why);
		}
		if (rc) {
			pool_mem_free(ex, pm);
			GPU_LOG(INFO, "--mem auto: port %u queue %u uses host "
				"memory, not GPU memory: %s\n", port_id, q, why);
			pm = calloc(1, sizeof(*pm));
			if (pm == NULL)
				return gcap_err_null(errbuf, ENOMEM, "gpu pool: "
						     "out of memory");
			pm->dev = d;
			mode = GCAP_MEM_HOST;
		} else if (mode == GCAP_MEM_AUTO) {
			GPU_LOG(INFO, "--mem auto: port %u queue %u receives "
				"into GPU memory (GPUDirect RDMA)\n", port_id, q);
			mode = GCAP_MEM_GPU;
		}
	}
	if (mode == GCAP_MEM_HOST || mode == GCAP_MEM_COPY) {
		rc = pool_mem_host(ex, pm, len, port_id, errbuf);
		if (rc) {
			pool_mem_free(ex, pm);
			errno = -rc;
			return NULL;
		}
	}
	em.buf_ptr = pm->addr;
	em.buf_iova = rte_eal_iova_mode() == RTE_IOVA_VA ?
		      (rte_iova_t)(uintptr_t)pm->addr : RTE_BAD_IOVA;
	em.buf_len = pm->len;
	em.elt_size = data_room;
	mp = rte_pktmbuf_pool_create_extbuf(name, n_mbufs, 0, 0, data_room,
					    socket, &em, 1);
	if (mp == NULL) {
		int e = rte_errno ? rte_errno : ENOMEM;

		pool_mem_free(ex, pm);
		return gcap_err_null(errbuf, e, "rte_pktmbuf_pool_create_extbuf"
				     "(%s): %s", name, rte_strerror(e));
	}
	pm->next = saved;
	ex->pools = pm;
	qs->mem = mode;
	return mp;
}

static bool
gpu_cpu_reads(struct gcap_exec *ex, unsigned q)
{
	return q < ex->conf.nqueues && ex->qs[q].mem != GCAP_MEM_GPU &&
	       ex->qs[q].mem != GCAP_MEM_AUTO;
}

static const struct gcap_exec_ops gpu_ops = {
	.name = "gpu",
	.create = gpu_create,
	.destroy = gpu_destroy,
	.xbufs = gpu_xbufs,
	.batch_get = gpu_batch_get,
	.batch_submit = gpu_batch_submit,
	.batch_poll = gpu_batch_poll,
	.batch_release = gpu_batch_release,
	.lanes = gpu_lanes,
	.pool_create = gpu_pool_create,
	.cpu_reads = gpu_cpu_reads,
	.health = gpu_health,
	.stop = gpu_stop,
	.kernel_state = gpu_kernel_state,
};

const struct gcap_exec_ops *
gcap_exec_gpu_ops(void)
{
	return &gpu_ops;
}
