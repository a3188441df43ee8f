#!/usr/bin/env python3
"""Per-second interrupts, softirqs and steal time of the given CPUs between
two snapshots (/tmp/irq0,1 of /proc/interrupts, /tmp/sirq0,1 of
/proc/softirqs, /tmp/stat0,1 of /proc/stat's cpuN lines), as a markdown
table: what the guest kernel ran on a busy-polling CPU, and what the
hypervisor took (steal). usage: irqdiff.py SECONDS CPU[,CPU...]"""
import sys

secs = float(sys.argv[1])
cpus = [int(c) for c in sys.argv[2].split(',')]
with open('/proc/stat') as f:
    present = {int(l.split()[0][3:]) for l in f if l[:3] == 'cpu' and l[3].isdigit()}
cpus = [c for c in cpus if c in present]


def table(path):
    rows = {}
    with open(path) as f:
        head = f.readline().split()
        col = {int(h[3:]): i for i, h in enumerate(head) if h.startswith('CPU')}
        for line in f:
            parts = line.split()
            if not parts:
                continue
            name = parts[0].rstrip(':')
            vals = {}
            for c, i in col.items():
                if i + 1 < len(parts) and parts[i + 1].isdigit():
                    vals[c] = int(parts[i + 1])
            desc = ' '.join(parts[len(col) + 1:])[:40]
            rows[name] = (vals, desc)
    return rows


def steal(path):
    out = {}
    with open(path) as f:
        for line in f:
            p = line.split()
            # cpuN user nice system idle iowait irq softirq steal, in
            # USER_HZ (100) ticks: ticks per second are percent
            out[int(p[0][3:])] = (int(p[6]) + int(p[7]), int(p[8]))
    return out


print('| source | what | ' + ' | '.join('CPU %d /s' % c for c in cpus) + ' |')
print('|---|---|' + '---:|' * len(cpus))
for kind, a, b in (('irq', '/tmp/irq0', '/tmp/irq1'), ('softirq', '/tmp/sirq0', '/tmp/sirq1')):
    t0, t1 = table(a), table(b)
    for name, (v1, desc) in t1.items():
        v0 = t0.get(name, ({}, ''))[0]
        rate = [(v1.get(c, 0) - v0.get(c, 0)) / secs for c in cpus]
        if max(rate) >= 1:
            print('| %s %s | %s | %s |' % (kind, name, desc,
                                          ' | '.join('%.0f' % r for r in rate)))
s0, s1 = steal('/tmp/stat0'), steal('/tmp/stat1')
print('| stat | irq+softirq time (%%) | %s |' % ' | '.join(
    '%.2f' % ((s1[c][0] - s0[c][0]) / secs) for c in cpus))
print('| stat | steal (%%, hypervisor) | %s |' % ' | '.join(
    '%.2f' % ((s1[c][1] - s0[c][1]) / secs) for c in cpus))
