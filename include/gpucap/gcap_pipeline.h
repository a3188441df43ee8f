/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The capture pipeline: sources (DPDK RX queues or a capture file) fill
 * batches, an executor (cpu or gpu, see gcap_exec.h) gives every packet its
 * verdict and writes export records, a writer thread turns them into files.
 *
 *   RX lcore:  rx_burst -> batch -> submit ... poll -> xbuf to writer, free mbufs
 *   writer:    xbuf -> gcap_writer_write() per output -> xbuf back to its queue
 *
 * Counters are per pipeline queue, written by the one thread that owns the
 * queue and read by anyone with relaxed loads.
 */
#ifndef GCAP_PIPELINE_H
#define GCAP_PIPELINE_H

#include <stdbool.h>
#include <stdint.h>

#include <pcap/pcap.h>

#include "gcap_common.h"
#include "gcap_exec.h"
#include "gcap_writer.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Latency histogram: bucket i counts packets of [i, i+1) * 1 us, last is overflow. */
#define GCAP_LAT_BUCKETS 2048u
/** Buckets of the latency parts' histograms (1 us each, last is overflow). */
#define GCAP_LAT_PART_BUCKETS 512u

/** Which latency a percentile is asked of (all per packet). */
enum gcap_lat_kind {
	GCAP_LAT_TOTAL, /**< poll that received it -> verdict seen by its RX lcore */
	GCAP_LAT_CYCLE, /**< its batch's submission -> verdict seen */
	GCAP_LAT_EXEC,  /**< its batch's time in the executor (GPU: doorbell
			     seen -> before DONE, by the GPU's clock) */
	/** submission -> the executor saw the batch, beyond the quickest
	 *  such time of the last 0.1-0.2 s (GPU: across the host's clock and
	 *  the GPU's global timer, whose offset and drift the floor takes
	 *  out): the tail of the GPU noticing READY. Empty for the cpu
	 *  executor. */
	GCAP_LAT_IN,
	/** the rest of the cycle outside the executor (CYCLE - IN - EXEC):
	 *  the quickest notice, DONE crossing back, the lcore seeing it */
	GCAP_LAT_BACK,
	/** As GCAP_LAT_TOTAL, of the packets whose batch no poll gap (>= 5
	 *  us, gcap_queue_stats.poll_gaps) reached between its first poll
	 *  and its verdict seen: the latency where the RX lcore kept its CPU.
	 *  A diagnostic beside the total, never instead of it: the packets
	 *  left out are the ones a stall made late. */
	GCAP_LAT_NO_GAP,
};

/** Buckets of gcap_queue_stats.poll_gaps and their lower bounds (us). */
#define GCAP_POLL_GAP_BUCKETS 4
#define GCAP_POLL_GAP_US          \
	{                         \
		5u, 10u, 20u, 50u \
	}

/**
 * Phases of one RX poll of a queue, timed with --poll-phases
 * (gcap_pipeline_conf.poll_phases; gcap_queue_stats.phase_ns and
 * phase_long): where an RX lcore's time goes, and in which part of its
 * work its long stalls land. A stall from outside (an interrupt, the
 * hypervisor) lands in a phase at random, as often as the phase's share of
 * the time; a phase with many more long spans than its share is where the
 * lcore's own work stalls (docs/tuning.md).
 */
enum gcap_poll_phase {
	GCAP_PHASE_LOOP,     /**< from the queue's last poll to this one (the
			      *   lcore's loop and its other queues) */
	GCAP_PHASE_DONE,     /**< completed batches consumed: records to the
			      *   writer, mbufs back to their pool */
	GCAP_PHASE_PREP,     /**< gap check, export buffer, batch slot, rate */
	GCAP_PHASE_RX,       /**< rte_eth_rx_burst(): the port's driver */
	GCAP_PHASE_DESCRIBE, /**< descriptors of the packets received */
	GCAP_PHASE_SUBMIT,   /**< the batch handed to the executor (cpu
			      *   executor: its filtering too) */
	GCAP_POLL_PHASES
};

/** Names of enum gcap_poll_phase, in order. */
#define GCAP_POLL_PHASE_NAMES                                      \
	{                                                          \
		"loop", "done", "prep", "rx", "describe", "submit" \
	}
/** A phase span this long or longer (us) counts in phase_long. */
#define GCAP_POLL_PHASE_LONG_US 10u

/** Counters of one pipeline queue. */
struct gcap_queue_stats {
	uint64_t rx_pkts;        /**< packets taken from the source */
	uint64_t rx_bytes;       /**< their wire bytes */
	uint64_t captured;       /**< records handed to the writer */
	uint64_t captured_bytes; /**< wire bytes of those */
	uint64_t filtered;       /**< packets no output wanted */
	uint64_t drop_pipeline;  /**< dropped: no free batch slot (executor behind) */
	uint64_t drop_writer; /**< dropped: no free export buffer / no room (writer behind) */
	/** dropped: a chained (multi-segment) packet that cannot be copied
	 *  whole, because the CPU may not read the mbufs (--mem gpu) or no
	 *  staging area holds it; never recorded cut */
	uint64_t drop_chained;
	uint64_t batches;  /**< batches completed */
	uint64_t exec_ns;  /**< executor time summed over those batches */
	uint64_t cycle_ns; /**< submit-to-consume time summed over live batches */
	uint64_t polls;    /**< RX polls that received packets (live) */
	/** RX-to-verdict latency per packet, from the poll that received it
	 *  (a batch keeps up to GCAP_BATCH_BURSTS arrival times, polls
	 *  closer than GCAP_BURST_GRAIN_NS sharing one, neighbours merged
	 *  when they run out; a shared time is the earliest: an upper
	 *  bound) */
	uint64_t lat[GCAP_LAT_BUCKETS];
	/** the parts of it (live batches): submit-to-verdict and executor
	 *  time, each counted once per packet of the batch. Total minus
	 *  cycle is the wait in the open batch; cycle minus exec is the
	 *  doorbells both ways. */
	uint64_t lat_cycle[GCAP_LAT_PART_BUCKETS];
	uint64_t lat_exec[GCAP_LAT_PART_BUCKETS];
	/** cycle minus exec split in two: see GCAP_LAT_IN, GCAP_LAT_BACK */
	uint64_t lat_in[GCAP_LAT_PART_BUCKETS];
	uint64_t lat_back[GCAP_LAT_PART_BUCKETS];
	/** Busy-poll RX loop gaps (live, busy polling only): polls of the
	 *  queue that came at least GCAP_POLL_GAP_US[i] after the one
	 *  before, whatever the cause (the lcore preempted or interrupted,
	 *  the host stalling the vCPU, the lcore's own long work). Every
	 *  packet in flight on the lcore then waits as long, and a NIC's ring
	 *  fills meanwhile. Bucket i counts gaps of >= 5, 10, 20, 50 us. */
	uint64_t poll_gaps[GCAP_POLL_GAP_BUCKETS];
	uint64_t poll_gap_ns;     /**< time in those gaps (>= 5 us) */
	uint64_t poll_gap_max_ns; /**< the longest gap */
	/** The RX lcore's own counts over the capture (getrusage
	 *  RUSAGE_THREAD), kept in the stats of the first queue it polls (0
	 *  in its others), set when it stops: page faults, minor and major,
	 *  and context switches, voluntary and involuntary (the kernel ran
	 *  another thread on its CPU). Poll gaps with none of these are
	 *  interrupts, the hypervisor or the lcore's own long work. */
	uint64_t lcore_minflt, lcore_majflt, lcore_nvcsw, lcore_nivcsw;
	/** GCAP_LAT_NO_GAP's histogram (as lat) */
	uint64_t lat_no_gap[GCAP_LAT_BUCKETS];
	/** --poll-phases only (else 0): time in each enum gcap_poll_phase,
	 *  and its spans of GCAP_POLL_PHASE_LONG_US or more */
	uint64_t phase_ns[GCAP_POLL_PHASES];
	uint64_t phase_long[GCAP_POLL_PHASES];
	/** The file reader's time (-r, queue 0; else 0), set as it returns:
	 *  from its start to its end, its thread's CPU time (getrusage), and
	 *  the parts of it spent waiting for the executor's slots, for the
	 *  writer's export room, and for the copying threads (a span of the
	 *  mapping copied into a slot's staging). A reader that hardly
	 *  waits is what bounds the run. */
	uint64_t file_ns, file_cpu_ns;
	uint64_t file_wait_exec_ns, file_wait_writer_ns, file_wait_copy_ns;
	/** file mode with file_spans: the spans handed to the executor, the
	 *  bytes of records each held, and the file offset the reader went on
	 *  from itself (where the executor stopped; 0: it did not) */
	uint64_t file_spans, file_span_bytes, file_span_stop;
	/** and the sub-chunks the executor walked again (a wrong guess) */
	uint64_t file_span_walks;
	/** and the executor's time on them, summed over spans
	 *  (gcap_batch_result.span_ns) */
	uint64_t file_span_ns[4];
	/** Live, --backpressure: time the queue's port waited, its packets
	 *  left in it, because its RX lcore had no executor slot free
	 *  (bp_wait_exec_ns: the executor behind) or no export room for a
	 *  batch's records (bp_wait_writer_ns: the writer behind), from the
	 *  first poll that could not go on (for the writer: with the batch
	 *  full) to the one that could or the stop, counted as it goes.
	 *  Without --backpressure those packets are dropped and counted
	 *  instead (drop_pipeline, drop_writer). */
	uint64_t bp_wait_exec_ns, bp_wait_writer_ns;
};

/**
 * How a live queue's packets get their time: a packet whose ol_flags has
 * flag carries the port's RX timestamp (DPDK's dynamic field at byte off
 * of the mbuf), taken as ns0 + (raw - raw0) * mult / 2^32 ns since the
 * epoch; any other packet the host's clock when it was received. All
 * zero: the host's clock for every packet.
 *
 * A queue on the host's clock that has nothing says so to the writer's
 * time order (a time before any record it will give: the poll's); one on
 * the port's clock can only where the port says when it stamps: idle,
 * where set, gives a raw time no packet the queue delivers after an
 * empty poll is stamped before (0: none known), called on the queue's RX
 * lcore right after that poll.
 */
struct gcap_rx_clock {
	uint64_t flag; /**< the RX timestamp's ol_flags bit (0: none) */
	int off;       /**< the field's offset in the mbuf */
	uint64_t raw0; /**< a raw reading of the port's clock... */
	uint64_t ns0;  /**< ...and the time (ns since the epoch) it maps to */
	uint64_t mult; /**< ns per raw unit, times 2^32 */
	/** optional: the port's idle mark of an RX queue, raw (see above) */
	uint64_t (*idle)(void *ctx, uint16_t rx_queue);
	void *idle_ctx; /**< idle's first argument */
};

/** One pipeline queue's source. */
struct gcap_pipeline_queue {
	uint16_t port_id;    /**< DPDK port (live) */
	uint16_t rx_queue;   /**< RX queue of that port */
	uint16_t port_index; /**< interface index in the output files */
	unsigned lcore;      /**< RX lcore that polls it */
	/** the packets' time (NULL: the host's clock); read while the
	 *  pipeline runs, so set by the time it starts */
	const struct gcap_rx_clock *clock;
};

/** Least staging bytes per batch slot when reading a file (-r): packet
 *  bytes are copied there (see gcap_pipeline_file_stage). */
#define GCAP_PIPELINE_STAGE_FILE (1u << 20)

/**
 * Staging bytes per batch slot for a file read in batches of batch_max
 * records: GCAP_PIPELINE_STAGE_FILE, or 512 bytes a record where that is
 * more, so that a batch of records of a typical mix (about 500 bytes
 * each) is cut by its count, not by its bytes.
 */
uint32_t gcap_pipeline_file_stage(unsigned batch_max);

/** Staging bytes per batch slot of a live queue whose mbufs the CPU may
 *  read: chained (multi-segment) packets are copied there whole. A
 *  chained packet that does not fit in what a batch has left starts the
 *  next batch (any packet up to this size is copied whole). */
#define GCAP_PIPELINE_STAGE_LIVE (256u << 10)
/** Export-buffer descriptors per batch slot (see gcap_pipeline_xmem_size). */
#define GCAP_PIPELINE_XBUFS_PER_SLOT 256u

/**
 * Bytes a file run (gcap_pipeline_run_inputs) takes beside the export
 * memory (nxbufs buffers of xbuf_size, from gcap_pipeline_xmem_size) and
 * the staging areas: the ring of each record's own time fields (a slot
 * for every record the reader may be ahead of the writer), the batch
 * slots' descriptors (ring_size x batch_max), and each of the ninputs
 * inputs' own buffer and record lists.
 */
uint64_t gcap_pipeline_file_mem(unsigned ring_size, unsigned batch_max, unsigned nxbufs,
				uint32_t xbuf_size, unsigned ninputs);

/**
 * Size a queue's export memory as the pipeline carves it: room for the
 * records of 2 x ring_size of the largest batches (batch_max packets of
 * up to max_caplen bytes each, plus what a batch copied into its staging
 * area), cut into many descriptors (GCAP_PIPELINE_XBUFS_PER_SLOT per
 * slot, at most 65,535, each at least 64 bytes), so that small batches,
 * several in flight at a time, do not run out of descriptors before the
 * bytes run out. The results go to the executor's nxbufs and xbuf_size.
 * @return 0; -EINVAL for a zero ring_size or batch_max; -E2BIG when a
 *         descriptor's share would not fit in 32 bits.
 */
int gcap_pipeline_xmem_size(unsigned ring_size, unsigned batch_max, uint32_t max_caplen,
			    uint32_t stage, unsigned *nxbufs, uint32_t *xbuf_size);

/** What a pipeline is created with. */
struct gcap_pipeline_conf {
	const struct gcap_exec_ops *ops;          /**< executor */
	struct gcap_exec *ex;                     /**< created with ops->create */
	unsigned nqueues;                         /**< as the executor's nqueues */
	const struct gcap_pipeline_queue *queues; /**< live sources, or NULL for a file */
	unsigned batch_max;                       /**< packets per batch */
	/** packets asked of the port per receive call (rte_eth_rx_burst);
	 *  a poll calls it until the open batch is full or the port has no
	 *  more. 0: one call for all the batch has room for */
	unsigned rx_burst;
	unsigned nwriters; /**< outputs; writer i takes outmask bit i */
	struct gcap_writer *const *writers;
	uint64_t max_packets; /**< -c: stop after this many records (0: no limit) */
	bool busy_poll;       /**< never sleep when a queue is idle */
	bool backpressure;    /**< full pipeline: stop polling instead of dropping */
	uint64_t rx_rate_pps; /**< per queue RX rate limit (benchmarks; 0: none) */
	uint32_t snaplen;     /**< longest record caplen (0: no cut), as the executor's */
	unsigned flush_ms;    /**< flush outputs at least this often */
	/** live queues (2 or more): each output file in time order, the
	 *  queues' records merged by time; a record waits at most
	 *  order_window_ms for the queues that have nothing (see
	 *  dataplane/pipeline_order.c) */
	bool time_order;
	unsigned order_window_ms;
	/** time the phases of every RX poll (enum gcap_poll_phase): a few
	 *  TSC reads a poll, for diagnosis; off in normal runs */
	bool poll_phases;
	/** file mode, an executor that reads each batch from its staging
	 *  area (not submit_works): threads that copy a mapped input's
	 *  records into the staging beside the reader, which meanwhile
	 *  finds the next batch's (0: the reader copies them itself) */
	unsigned file_copiers;
	/** file mode, one plain pcap input, an executor created with
	 *  file_spans: the reader hands the executor spans of the file's
	 *  mapping and the executor finds their records (then the reader
	 *  reads on from where it stopped, if it did) */
	bool file_spans;
	/** with file_spans: bytes of records a span holds (0: what the
	 *  staging area holds past GCAP_SPAN_TAIL); tests make them small */
	uint32_t file_span_bytes;
};

struct gcap_pipeline;

/**
 * Create a pipeline (no thread started).
 * @return the pipeline, or NULL with errno (EINVAL, ENOMEM) and errbuf set.
 */
struct gcap_pipeline *
gcap_pipeline_create(const struct gcap_pipeline_conf *conf, char *errbuf);

/**
 * Read a capture file through the pipeline (a reader thread reads and
 * submits, the writer runs in its own thread, the calling thread watches
 * them and runs the executor's watchdog). Returns at the end of the file,
 * after max_packets, on gcap_pipeline_request_stop() or on an error (the
 * watchdog giving a batch up stops the reading too). A reader that does
 * not come back from the executor within 5 s of the stop is left running:
 * gcap_pipeline_abandoned() is then true.
 * @return 0; -EIO with libpcap's message when the file is damaged (what
 *         came before is written); -ETIME: the watchdog gave up a batch
 *         (an inline kernel stuck); a writer or executor error.
 */
int gcap_pipeline_run_file(struct gcap_pipeline *pl, pcap_t *p, char *errbuf);

struct gcap_capfile;

/**
 * Read capture files through the pipeline, as gcap_pipeline_run_file()
 * reads one (a reader thread, the writer thread, the calling thread
 * watching them with the executor's watchdog; a reader left running
 * makes gcap_pipeline_abandoned() true, and it still uses the inputs:
 * they must not be closed then): one input in place, in large reads;
 * several merged in time order (the earliest record first; on a tie, the
 * later input, as mergecap orders them). Records of input k name
 * interface port_base[k] + their own (port_base may be NULL: all 0); the
 * outputs' interfaces are those gcap_capfile_if() gives (the records
 * carry the inputs' own time fields, as its ts_form says). Returns at the
 * end of the inputs, after max_packets, on gcap_pipeline_request_stop()
 * or on an error.
 * @return 0; -EIO with libpcap's message when an input is damaged (what
 *         came before is written; with several, the others are read to
 *         their end); -EINVAL for no input; -ENOMEM; -ETIME: the watchdog
 *         gave up a batch; a writer or executor error.
 */
int gcap_pipeline_run_inputs(struct gcap_pipeline *pl, struct gcap_capfile *const *in,
			     const uint16_t *port_base, unsigned nin, char *errbuf);

/**
 * Start the writer thread and the RX lcores (EAL initialised, ports started).
 * @return 0, or a negative errno (EBUSY: an lcore is not free).
 */
int gcap_pipeline_start(struct gcap_pipeline *pl, char *errbuf);

/** Ask the pipeline to stop; async-signal-safe. */
void gcap_pipeline_request_stop(struct gcap_pipeline *pl);

/** Ask the writer thread to flush every output (SIGUSR2); async-signal
 *  safe. */
void gcap_pipeline_request_flush(struct gcap_pipeline *pl);

/** Ask the writer thread to close every output's file and open the next
 *  (gcap_writer_rotate(); SIGHUP); async-signal safe. */
void gcap_pipeline_request_rotate(struct gcap_pipeline *pl);

/**
 * @return true once the pipeline wants to stop by itself: -c reached, an
 * output finished (-W with -G, -a files:, or the only output a pipe or
 * FIFO whose reader went away: EPIPE, not an error of the run), a write
 * error or an executor fault.
 */
bool gcap_pipeline_finished(const struct gcap_pipeline *pl);

/**
 * Stop the RX lcores, drain the batches in flight (a batch waiting for the
 * writer's room waits up to three quarters of timeout_ms, then is counted
 * as writer behind; completed batches are taken to the writer as they
 * come for as long), stop the executor within what is left of timeout_ms
 * (a quarter at least), let the writer write everything, join it. The
 * writer's wait ends timeout_ms after the call, or a quarter of it after
 * the executor's stop where that ends later: an output still blocked then
 * is interrupted and the records left are counted in
 * gcap_pipeline_write_failed() (-ETIMEDOUT). The wait for each RX lcore
 * ends timeout_ms after the call: one still inside the executor then (an
 * inline kernel that never returns) is left running, and
 * gcap_pipeline_abandoned() is true.
 * @return 0, or the first error of the run (writer, executor; -EBUSY: a
 *         thread left running), message in errbuf.
 */
int gcap_pipeline_stop(struct gcap_pipeline *pl, unsigned timeout_ms, char *errbuf);

/**
 * Whether a thread of the pipeline (an RX lcore, the file reader) or a
 * worker of the executor (a GPU kernel) never returned from an inline
 * kernel and was left running: it may still use the pipeline, the
 * executor, the ports and their pools. The outputs are closed as usual
 * (the writer is not affected); then nothing of the capture may be
 * destroyed, and the process should end with _exit(). A thread cannot be
 * cancelled safely in the middle of arbitrary code; ending the process is
 * the only sure way to end it.
 * @return true once gcap_pipeline_run_file() or gcap_pipeline_stop() left
 *         one running.
 */
bool gcap_pipeline_abandoned(const struct gcap_pipeline *pl);

/**
 * Check the executor's health. @return 0 or -EIO (message in errbuf); an
 * error also makes gcap_pipeline_finished() true.
 */
int gcap_pipeline_health(struct gcap_pipeline *pl, char *errbuf);

/** Counters of queue q (a relaxed snapshot). */
void gcap_pipeline_queue_stats(const struct gcap_pipeline *pl, unsigned q,
			       struct gcap_queue_stats *out);

/** Liveness: the turns of the loop of the RX lcore that polls queue q
 *  (idle turns too), or with q == UINT_MAX, of the writer thread's loop.
 *  A count that stops moving while the capture runs is a thread stuck
 *  (a driver call, a blocked write).
 *  @return the count (a relaxed snapshot); 0 for a q out of range. */
uint64_t gcap_pipeline_beat(const struct gcap_pipeline *pl, unsigned q);

/** Records written by the writer (each record once, whatever its outputs,
 *  once an output took it). Once stopped, with one output: what reached
 *  its files (records a failed write cut back are not counted); with
 *  several, what any output took (gcap_pipeline_output_lost says what
 *  each lost). */
uint64_t gcap_pipeline_written(const struct gcap_pipeline *pl);

/** Records that did not reach a file they were for: each output's own
 *  (those a failed write cut back: gcap_pipeline_output_lost), summed, and
 *  those that reached no output, after a write error or when a stop gave
 *  up on an output whose reader stalled past its timeout. Valid once
 *  stopped. */
uint64_t gcap_pipeline_write_failed(const struct gcap_pipeline *pl);

/** Of those, output i's (the conf's writers[i]); 0 for i out of range.
 *  Valid once stopped. */
uint64_t gcap_pipeline_output_lost(const struct gcap_pipeline *pl, unsigned i);

/** Records the time-order merge wrote while a queue that had nothing
 *  could still bring an earlier one, because --time-order-window had
 *  passed or a queue's held buffers took their share of its export
 *  memory: the file may step back in time after them. 0 where every
 *  record waited for every queue (or without the merge). */
uint64_t gcap_pipeline_order_forced(const struct gcap_pipeline *pl);

/**
 * Latency percentile (0..100) over queues' histograms, in nanoseconds
 * (bucket upper bound). @return 0 when no batch completed.
 */
uint64_t gcap_pipeline_latency_ns(const struct gcap_pipeline *pl, double pct);

/** Packets counted in a latency's histograms (all queues). */
uint64_t
gcap_pipeline_latency_count(const struct gcap_pipeline *pl, enum gcap_lat_kind kind);

/** As gcap_pipeline_latency_ns(), of the latency or one of its parts. */
uint64_t gcap_pipeline_latency_of_ns(const struct gcap_pipeline *pl,
				     enum gcap_lat_kind kind, double pct);

/** Free a stopped (or never started) pipeline. NULL is a no-op. */
void gcap_pipeline_destroy(struct gcap_pipeline *pl);

#ifdef __cplusplus
}
#endif

#endif /* GCAP_PIPELINE_H */
