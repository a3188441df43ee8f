#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# meson install --destdir: the program, the man page, every public header,
# libgpucap.so.0 and gpucap.pc, the example kernels and their docs, the
# unit and the example configuration are installed. Out of tree, with
# pkg-config gpucap only: an example kernel compiles against the installed
# headers, and a small tool (sdk_demo.c) builds against libgpucap; then,
# with the source tree hidden (a tmpfs mounted over it in a private mount
# namespace), the tool and the installed gpu-capture each run the
# installed example kernel on a -r file, and they agree: the same packets
# and the same kernel state.
# Arguments: BUILD_ROOT SOURCE_ROOT.
set -u
B=${1:?build root}
SRC=${2:?source root}
T=$(mktemp -d "${TMPDIR:-/tmp}/gcap-install.XXXXXX")
trap 'rm -rf "$T"' EXIT
nfail=0
fail() { echo "FAIL: $*" >&2; nfail=$((nfail + 1)); }
die() { echo "FAIL: $*" >&2; exit 1; }
command -v pkg-config >/dev/null || { echo "SKIP: no pkg-config"; exit 77; }
# an ASan build (the sanitizer pass): its runtime must come first in the
# library list, which an installed binary run with LD_LIBRARY_PATH and
# the out-of-tree programs do not keep
ldd "$B/apps/gpu-capture" 2>/dev/null | grep -q libasan &&
	{ echo "SKIP: an ASan build is not installed and run out of tree"; exit 77; }

D=$T/dest
meson install -C "$B" --destdir "$D" --no-rebuild --quiet >"$T/install.log" 2>&1 ||
	die "meson install: $(tail -5 "$T/install.log")"
pc=$(find "$D" -name gpucap.pc | head -1)
[ -n "$pc" ] || die "no gpucap.pc installed"
# the staged tree's prefix, as a packager's sysroot would give it
prefix=$(sed -n 's/^prefix=//p' "$pc")
mkdir "$T/pc"
sed "s|^prefix=.*|prefix=$D$prefix|" "$pc" >"$T/pc/gpucap.pc"
export PKG_CONFIG_PATH=$T/pc
cflags=$(pkg-config --cflags gpucap) || die "pkg-config --cflags gpucap"
libs=$(pkg-config --libs gpucap) || die "pkg-config --libs gpucap"
libdir=$(pkg-config --variable=libdir gpucap)
incdir=$(pkg-config --variable=includedir gpucap)
kdir=$(pkg-config --variable=kernelsdir gpucap)
gc=$D$prefix/bin/gpu-capture

# what is installed
[ -x "$gc" ] || fail "no $gc"
for h in "$SRC"/include/gpucap/*.h; do
	[ -f "$incdir/gpucap/$(basename "$h")" ] || fail "header $(basename "$h") not installed"
done
soname=$(readelf -d "$libdir/libgpucap.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ "$soname" = libgpucap.so.0 ] || fail "libgpucap soname '$soname'"
[ -e "$libdir/$soname" ] || fail "no $libdir/$soname"
for f in share/man/man8/gpu-capture.8 lib/systemd/system/gpu-capture.service \
	share/doc/gpucap/examples/gpu-capture.conf share/doc/gpucap/kernels.md; do
	[ -f "$D$prefix/$f" ] || fail "$f not installed"
done
for k in "$SRC"/kernels/examples/*/; do
	n=$(basename "$k")
	[ -f "$kdir/examples/$n/$n.c" ] && [ -f "$kdir/examples/$n/README.md" ] ||
		fail "example kernel $n not installed with its README"
done
grep -q "^ExecStart=$prefix/bin/gpu-capture " "$D$prefix/lib/systemd/system/gpu-capture.service" ||
	fail "the unit does not start $prefix/bin/gpu-capture"

# out of tree: a kernel and a tool, with pkg-config's flags only
mkdir "$T/oot"
cp "$kdir/examples/dns/dns.c" "$SRC/tests/install/sdk_demo.c" "$SRC/tests/data/eth-mix.pcap" "$T/oot/"
in=$T/oot/eth-mix.pcap
[ -f "$SRC/../shared/data/bench/mix-en10mb.pcap" ] && cp "$SRC/../shared/data/bench/mix-en10mb.pcap" "$T/oot/mix.pcap" && in=$T/oot/mix.pcap
cd "$T/oot" || die "cd"
# shellcheck disable=SC2086
cc -c -fPIC -O2 -Wall -Werror $cflags dns.c -o dns.o 2>"$T/cc.err" ||
	fail "the example kernel does not compile against the installed headers: $(head -5 "$T/cc.err")"
# shellcheck disable=SC2086
cc -O2 -Wall -Werror $cflags sdk_demo.c $libs -Wl,-rpath,"$libdir" -o sdk_demo 2>"$T/cc.err" ||
	die "sdk_demo does not build against libgpucap: $(head -5 "$T/cc.err")"
readelf -d sdk_demo | grep -q "NEEDED.*libgpucap.so.0" || fail "sdk_demo does not link libgpucap.so.0"

# (gpu-capture -r keeps a microsecond input's resolution unless told:
# sdk_demo reads it at nanosecond precision)
# run both with the source tree hidden; nothing of the build's tree is
# reachable (GCAP_INCLUDE_DIR and the kernel cache cleared)
run='env -u GCAP_INCLUDE_DIR -u GCAP_SOURCE_ROOT -u GCAP_BUILD_ROOT GCAP_KERNEL_CACHE='$T/cache
arg='example.com,example.org,top=5'
cat >"$T/run.sh" <<RUN
set -e
[ ! -e "$SRC/meson.build" ] || { echo "the source tree is still visible"; exit 3; }
$run ./sdk_demo "$in" "$kdir/examples/dns/dns.c" "$arg" demo.pcap demo.json
$run "$gc" -q --backend cpu -r "$in" --time-stamp-precision nano --kernel "$kdir/examples/dns/dns.c" --kernel-arg "$arg" \
	--kernel-state gc.json -w gc.pcap
RUN
mkdir -p "$T/cache"
chmod 700 "$T/cache"
if [ "$(id -u)" -eq 0 ] && unshare -m true 2>/dev/null; then
	unshare -m bash -c "mount -t tmpfs -o mode=0700 gcap-hidden '$SRC' && bash '$T/run.sh'" \
		>"$T/run.log" 2>&1 || fail "with the source tree hidden: $(cat "$T/run.log")"
	echo "ran with $SRC hidden under a tmpfs"
elif command -v strace >/dev/null; then
	sed -i '2d' "$T/run.sh"
	strace -f -qq -e trace=%file -o "$T/strace.log" bash "$T/run.sh" >"$T/run.log" 2>&1 ||
		fail "run: $(cat "$T/run.log")"
	grep -F "\"$SRC/" "$T/strace.log" | grep -v ENOENT | head -3 >"$T/src.log"
	[ ! -s "$T/src.log" ] || fail "the installed programs read the source tree: $(cat "$T/src.log")"
	echo "ran under strace: no file of $SRC opened"
else
	echo "SKIP: neither a mount namespace nor strace here: the source tree was not hidden"
	exit 77
fi
cmp -s demo.pcap gc.pcap || fail "sdk_demo and gpu-capture --kernel wrote different files"
cmp -s demo.json gc.json || fail "kernel states differ: $(diff demo.json gc.json | head -5)"
n=$(tcpdump -r gc.pcap 2>/dev/null | wc -l)
# the dns example finds its names in ../shared's mix, not in tests/data
[ "$n" -gt 0 ] || [ "$in" != "$T/oot/mix.pcap" ] || fail "the kernel captured nothing"
echo "sdk_demo and the installed gpu-capture: $n packets, the same state"
if [ "$nfail" -ne 0 ]; then
	echo "$nfail failure(s)" >&2
	exit 1
fi
echo PASS
