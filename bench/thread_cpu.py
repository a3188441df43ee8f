#!/usr/bin/env python3
"""CPU each thread of a running process takes, summed by thread name.

usage: thread_cpu.py PID [--after NAME] [--wait S] [--secs S]

Waits (at most --wait seconds) until a thread named NAME exists (the
capture has started: gpu-capture's writer is gcap-writer), then S/4 more,
then reads every thread's user+system time twice, --secs apart, from
/proc/PID/task/*/stat, and prints one line: "name xN: CPUs used" for each
name (trailing digits left out), the busiest first (1.00: one CPU all
the time). Prints nothing when the process ends first.
"""
import os
import sys
import time


def threads(pid):
    """{tid: (name, ticks)} of pid's threads now."""
    out = {}
    try:
        tids = os.listdir(f'/proc/{pid}/task')
    except OSError:
        return out
    for tid in tids:
        try:
            s = open(f'/proc/{pid}/task/{tid}/stat').read()
        except OSError:
            continue
        # the name is in parentheses and may hold spaces
        # lcore-worker-3 and lcore-worker-4 are counted as one kind
        name = s[s.index('(') + 1:s.rindex(')')].rstrip('0123456789-')
        f = s[s.rindex(')') + 2:].split()
        out[tid] = (name, int(f[11]) + int(f[12]))
    return out


def main():
    a = sys.argv[1:]
    if not a:
        sys.exit(__doc__)
    pid, after, wait, secs = a[0], None, 30.0, 1.0
    i = 1
    while i < len(a):
        if a[i] == '--after':
            after = a[i + 1]
        elif a[i] == '--wait':
            wait = float(a[i + 1])
        elif a[i] == '--secs':
            secs = float(a[i + 1])
        i += 2
    t_end = time.monotonic() + wait
    while after is not None and time.monotonic() < t_end:
        now = threads(pid)
        if not now:
            return
        if any(n == after for n, _ in now.values()):
            break
        time.sleep(0.02)
    else:
        if after is not None:
            return
    time.sleep(secs / 4)
    t0, a0 = time.monotonic(), threads(pid)
    time.sleep(secs)
    t1, a1 = time.monotonic(), threads(pid)
    if not a1:
        return
    hz = os.sysconf('SC_CLK_TCK')
    by = {}
    for tid, (name, ticks) in a1.items():
        d = ticks - a0.get(tid, (name, ticks))[1]
        n, c = by.get(name, (0, 0.0))
        by[name] = (n + 1, c + d / hz / (t1 - t0))
    print('; '.join(f'{k} x{n}: {c:.2f}' for k, (n, c) in
                    sorted(by.items(), key=lambda x: -x[1][1]) if c >= 0.005))


if __name__ == '__main__':
    main()
