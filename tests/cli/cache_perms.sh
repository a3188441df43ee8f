#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# What another user can plant does not reach a root run: a kernel cache
# directory another user can write is not used (one warning, the run
# still works); a cached k-HASH.so that is not the user's own is not
# loaded (its constructor would leave a marker); and -w, --summary-json
# and --kernel-state do not write through a symbolic link planted in a
# sticky world-writable directory, nor create a dangling one's target.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root (acts as nobody too)"
need setpriv
NOBODY_GID=$(id -g nobody 2>/dev/null) || skip "no user nobody"
as_nobody() { setpriv --reuid=nobody --regid="$NOBODY_GID" --clear-groups "$@"; }
U=$(mktemp -d /tmp/gcap-cp-u.XXXXXX)
S=$(mktemp -d /tmp/gcap-cp-s.XXXXXX)
N=$(mktemp -d /tmp/gcap-cp-n.XXXXXX)
trap 'rm -rf "$T" "$U" "$S" "$N"' EXIT
K=$SRC/kernels/examples/flowfirst/flowfirst.c
kgc() { GCAP_KERNEL_CACHE=$1 gc -r "$LIVE1" --backend cpu --kernel "$K" "${@:2}"; }
sos() { find "$1" -maxdepth 1 -name 'k-*.so' | wc -l; }

# a cache of root's own: filled, then used
kgc "$T/cache" -w "$T/a.pcap" || die "own cache: exit $?: $(cat "$T/gc.err")"
want=$(count "$T/a.pcap")
so=$(find "$T/cache" -name 'k-*.so')
[ -n "$so" ] || die "own cache: no k-*.so in $T/cache"
grep -q warning "$T/gc.err" && fail "own cache: a warning: $(cat "$T/gc.err")"

# a cache directory others can write, or another user's: not used
chmod 777 "$U"
kgc "$U" -w "$T/b.pcap" || fail "cache 0777: exit $?: $(cat "$T/gc.err")"
grep -q "warning: cache directory $U not used" "$T/gc.err" ||
	fail "cache 0777: no warning: $(cat "$T/gc.err")"
[ "$(sos "$U")" -eq 0 ] || fail "cache 0777: an object was cached in $U"
[ "$(count "$T/b.pcap")" = "$want" ] || fail "cache 0777: other records"
# as nobody: root's directory, 0777 or not, is not its cache; its own is
chown nobody "$N"
ngc() {
	GCAP_KERNEL_CACHE=$1 as_nobody timeout -k 5 60 "$GC" -q -r "$LIVE1" --backend cpu \
		--kernel "$K" -w "$2" 2>"$T/gc.err"
}
ngc "$U" "$N/n.pcap" || fail "nobody, root's cache: exit $?: $(cat "$T/gc.err")"
grep -q "warning: cache directory $U not used" "$T/gc.err" ||
	fail "nobody, root's cache: no warning: $(cat "$T/gc.err")"
[ "$(sos "$U")" -eq 0 ] || fail "nobody, root's cache: an object was cached in $U"
[ "$(count "$N/n.pcap")" = "$want" ] || fail "nobody, root's cache: other records"
ngc "$N/cache" "$N/o.pcap" || fail "nobody, own cache: exit $?: $(cat "$T/gc.err")"
grep -q warning "$T/gc.err" && fail "nobody, own cache: a warning: $(cat "$T/gc.err")"
[ "$(sos "$N/cache")" -eq 1 ] || fail "nobody, own cache: nothing cached"
chmod 700 "$U"
chown nobody "$U"
kgc "$U" -w "$T/b.pcap" || fail "cache of nobody: exit $?: $(cat "$T/gc.err")"
grep -q "warning: cache directory $U not used" "$T/gc.err" ||
	fail "cache of nobody: no warning: $(cat "$T/gc.err")"
[ "$(sos "$U")" -eq 0 ] || fail "cache of nobody: an object was cached in $U"

# a k-HASH.so planted in root's cache, owned by nobody, or writable by
# others: never loaded, the kernel is built aside
printf '#include <fcntl.h>\n#include <unistd.h>\n__attribute__((constructor)) static void planted(void) { close(open("%s", O_CREAT | O_WRONLY, 0600)); }\n' \
	"$T/marker" >"$T/planted.c"
cc -shared -fPIC -o "$T/planted.so" "$T/planted.c" || die "cannot build the planted object"
for how in owner mode; do
	rm -f "$T/marker"
	cp "$T/planted.so" "$so"
	if [ $how = owner ]; then chown nobody "$so"; else chmod 666 "$so"; fi
	kgc "$T/cache" -w "$T/c.pcap" || fail "planted ($how): exit $?: $(cat "$T/gc.err")"
	[ -e "$T/marker" ] && fail "planted ($how): the planted object was loaded"
	grep -q "warning: cache entry $so not used" "$T/gc.err" ||
		fail "planted ($how): no warning: $(cat "$T/gc.err")"
	[ "$(count "$T/c.pcap" 2>/dev/null)" = "$want" ] || fail "planted ($how): other records"
	chown root "$so"
	chmod 644 "$so"
done

# links planted by nobody in a sticky world-writable directory (its own,
# so that even fs.protected_symlinks would let root follow them)
chown nobody "$S"
chmod 1777 "$S"
echo precious >"$T/victim"
plant() { rm -f "$2"; as_nobody ln -s "$1" "$2" || die "nobody cannot plant $2"; }
for opt in -w --summary-json; do
	plant "$T/victim" "$S/x"
	if [ $opt = -w ]; then
		gc -r "$LIVE1" -w "$S/x"
	else
		gc -r "$LIVE1" -w "$T/d.pcap" --summary-json "$S/x"
	fi
	rc=$?
	[ $rc -eq 1 ] || fail "$opt through a link: exit $rc, want 1"
	grep -q "$S/x.*symbolic link" "$T/gc.err" || fail "$opt through a link: $(cat "$T/gc.err")"
	[ "$(cat "$T/victim")" = precious ] || fail "$opt wrote through a planted link"
	plant "$T/new" "$S/x"
	if [ $opt = -w ]; then
		gc -r "$LIVE1" -w "$S/x"
	else
		gc -r "$LIVE1" -w "$T/d.pcap" --summary-json "$S/x"
	fi
	rc=$?
	[ $rc -eq 1 ] || fail "$opt through a dangling link: exit $rc, want 1"
	[ -e "$T/new" ] && fail "$opt created a dangling link's target"
	rm -f "$T/new"
done
# a plain file there is written as before
gc -r "$LIVE1" -w "$S/ok.pcap" --summary-json "$S/ok.json" ||
	fail "files in a sticky directory: exit $?: $(cat "$T/gc.err")"
[ "$(count "$S/ok.pcap")" = "$want" ] || fail "file in a sticky directory: other records"

# --kernel-state: a link at its .tmp, or at the file itself, is replaced
plant "$T/victim" "$S/st.json.tmp"
plant "$T/victim" "$S/st.json"
kgc "$T/cache" -w "$T/e.pcap" --kernel-state "$S/st.json" ||
	fail "kernel state: exit $?: $(cat "$T/gc.err")"
[ "$(cat "$T/victim")" = precious ] || fail "--kernel-state wrote through a planted link"
[ -f "$S/st.json" ] && [ ! -L "$S/st.json" ] || fail "kernel state: not a file of its own"
plant "$T/new" "$S/st.json.tmp"
kgc "$T/cache" -w "$T/e.pcap" --kernel-state "$S/st.json" ||
	fail "kernel state, dangling .tmp: exit $?: $(cat "$T/gc.err")"
[ -e "$T/new" ] && fail "--kernel-state created a dangling link's target"
finish
