#!/usr/bin/env python3
# No two files of the product call into each other, directly or around a
# loop: reads the symbols of the built objects (nm) under a build folder,
# leaving out tests, benchmarks and fuzz targets, and fails on any cycle
# of calls between files, naming it.
import collections
import glob
import os
import subprocess
import sys

build = sys.argv[1] if len(sys.argv) > 1 else "build"
skip = ("tests/", "bench/", "fuzz/")
objs = [o for o in glob.glob("**/*.o", root_dir=build, recursive=True)
        if not o.startswith(skip)]
if not objs:
    print(f"no objects under {build}")
    sys.exit(1)
defined, used = {}, collections.defaultdict(set)
for o in objs:
    out = subprocess.run(["nm", os.path.join(build, o)], capture_output=True,
                         text=True, check=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "TDBR":
            defined[f[2]] = o
        elif len(f) == 2 and f[0] == "U":
            used[o].add(f[1])
calls = collections.defaultdict(set)
for o, syms in used.items():
    for s in syms:
        if s in defined and defined[s] != o:
            calls[o].add(defined[s])


def name(o):
    return o.split(".p/")[-1].removesuffix(".o")


# Tarjan's strongly connected components: a component of two or more
# files is a cycle
index, low, stack, on, cycles, n = {}, {}, [], set(), [], [0]


def visit(v):
    index[v] = low[v] = n[0]
    n[0] += 1
    stack.append(v)
    on.add(v)
    for w in calls.get(v, ()):
        if w not in index:
            visit(w)
            low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop()
            on.discard(w)
            comp.append(w)
            if w == v:
                break
        if len(comp) > 1:
            cycles.append(sorted(name(x) for x in comp))


sys.setrecursionlimit(100000)
for v in list(calls):
    if v not in index:
        visit(v)
for c in cycles:
    print("cycle: " + " <-> ".join(c))
print(f"{len(objs)} objects, {sum(len(v) for v in calls.values())} calls "
      f"between files, {len(cycles)} cycles")
sys.exit(1 if cycles else 0)
