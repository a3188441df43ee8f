#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Render the main benchmark tables of docs/benchmarks.md as PNG plots,
next to the result files they are drawn from (bench/results/): capture
throughput against RX lcores per backend, latency p50/p99 against offered
load, and filter throughput against the number of filters. Each plot
names its file, machine and commit.

    bench/plot.py                    # the files docs/benchmarks.md cites
    bench/plot.py --throughput F.jsonl --latency F.jsonl --filters F.jsonl

Needs python3-matplotlib (Debian).
"""
import argparse
import json
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
DEFAULTS = {
    "throughput": "gpu-capture-bench-h200-31a6657.jsonl",
    "latency": "gpu-latency-nullnc-h200-31a6657.jsonl",
    "filters": "bpf-bench-h200-564803a.jsonl",
}
# one colour and marker per backend, in every plot
STYLE = {
    "floor": ("#7f7f7f", "s", "floor (receive only)"),
    "cpu": ("#1f77b4", "o", "cpu"),
    "gpu-host": ("#d62728", "^", "gpu --mem host"),
    "gpu-copy": ("#2ca02c", "v", "gpu --mem copy"),
}
MACHINES = {"h200": "H200 machine", "h200x2": "two-H200 machine", "dev": "dev machine"}


def rows(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def origin(path, recs):
    """'<machine>, commit <c>' from the file's name and its records."""
    name = os.path.basename(path)
    m = re.search(r"-(h200x2|h200|dev[^-]*)-([0-9a-f]{7,40})\.jsonl$", name)
    machine = MACHINES.get(m.group(1), m.group(1)) if m else "machine unknown"
    commit = next((str(r["commit"])[:7] for r in recs if r.get("commit")),
                  m.group(2) if m else "?")
    return "%s, commit %s (bench/results/%s)" % (machine, commit, name)


def out_name(path, kind):
    base = os.path.basename(path).rsplit(".", 1)[0]
    return os.path.join(os.path.dirname(path), "%s-%s.png" % (base, kind))


def finish(fig, axes, ylabel, title, path, recs, kind):
    """The panels' common labels, the title naming the file; save the PNG."""
    axes[0][0].set_ylabel(ylabel)
    axes[0][0].legend(loc="upper left", fontsize=8)
    fig.suptitle(title + "\n" + origin(path, recs), fontsize=10)
    fig.tight_layout()
    out = out_name(path, kind)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def plot_throughput(path):
    recs = rows(path)
    sources = [s for s in ("null-nc", "null", "pcap") if any(r.get("source") == s for r in recs)]
    fig, axes = plt.subplots(1, len(sources), figsize=(5 * len(sources), 4.4), squeeze=False)
    for ax, src in zip(axes[0], sources):
        for cfg, (col, mk, label) in STYLE.items():
            pts = sorted((r["lcores"], r["rx_mpps"]) for r in recs
                         if r.get("source") == src and r.get("config") == cfg)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=mk, color=col,
                        label=label)
        ax.set_title("source %s" % src)
        ax.set_xlabel("RX lcores (one queue each)")
        ax.set_xscale("log", base=2)
        ax.set_xticks([1, 2, 4, 8])
        ax.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
    return finish(fig, axes, "lossless Mpps, one filter",
                  "Capture throughput against RX lcores, per backend", path, recs, "lcores")


def plot_latency(path):
    recs = rows(path)
    lcores = sorted({r["lcores"] for r in recs})
    fig, axes = plt.subplots(1, len(lcores), figsize=(5.2 * len(lcores), 4.4), squeeze=False)
    for ax, n in zip(axes[0], lcores):
        for cfg, (col, mk, label) in STYLE.items():
            pts = sorted((r["offered_mpps_per_queue"], r["latency_us"]["p50"],
                          r["latency_us"]["p99"]) for r in recs
                         if r["lcores"] == n and r.get("config") == cfg)
            if not pts:
                continue
            x = [p[0] for p in pts]
            ax.plot(x, [p[1] for p in pts], marker=mk, color=col, label=label + " p50")
            ax.plot(x, [p[2] for p in pts], marker=mk, color=col, linestyle="--",
                    label=label + " p99")
        ax.set_title("%d queue%s, one RX lcore each" % (n, "" if n == 1 else "s"))
        ax.set_xlabel("offered Mpps per queue")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
    return finish(fig, axes, "receive-to-verdict latency per packet, us",
                  "Latency p50 (solid) and p99 (dashed) against load", path, recs, "load")


def plot_filters(path):
    recs = rows(path)
    res = [r for r in recs if r.get("type") == "result" and r.get("state") == "ok"
           and str(r.get("set", "")).startswith("multi-")]
    machine = next((r for r in recs if r.get("type") == "machine"), {})
    engines = []
    for r in res:
        if r["engine"] not in engines:
            engines.append(r["engine"])
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    threads = machine.get("threads", "N")
    for e in engines:
        pts = sorted((r["nprogs"], r["mpps"]) for r in res if r["engine"] == e)
        ls = "-" if e.startswith("gpu") else "--"
        # bpf_filter-1 / -N: one CPU thread / every thread
        label = re.sub(r"-1$", ", 1 thread", re.sub(r"-N$", ", %s threads" % threads, e))
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", linestyle=ls,
                label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(sorted({r["nprogs"] for r in res}))
    ax.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
    ax.set_xlabel("filters applied to every packet at once")
    ax.set_ylabel("Mpps (log)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    detail = ""
    if machine:
        detail = "\n%s, %s threads on the CPU; packets resident in memory (%s)" % (
            machine.get("gpu", "?"), machine.get("threads", "?"), machine.get("layout", "?"))
    ax.set_title("Filter throughput against the number of filters (bench/bpf_bench)\n"
                 + origin(path, recs) + detail, fontsize=9)
    fig.tight_layout()
    out = out_name(path, "filters")
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for k, v in DEFAULTS.items():
        p.add_argument("--" + k, default=os.path.join(RESULTS, v),
                       help="result file (default bench/results/%s)" % v)
    a = p.parse_args()
    for fn, path in ((plot_throughput, a.throughput), (plot_latency, a.latency),
                     (plot_filters, a.filters)):
        if not os.path.exists(path):
            print("plot: no %s" % path, file=sys.stderr)
            return 1
        print(os.path.relpath(fn(path)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
