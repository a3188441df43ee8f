#!/usr/bin/env bash
# Here (no GPU), after bundle.sh: bench/order_bench with another commit's
# time-order merge (dataplane/pipeline_order.c at REV) into
# .devbundle/bin/order_bench-LABEL, for `run.sh orderbench` to run beside
# this build's. The bench's object and the rest of the dataplane library
# are this build's: the other merge is compiled with the flags of this
# one and linked first, so the library's copy is not pulled in. REV's
# merge must fit this tree's pipeline_internal.h (the merge's state is
# private to its file).
# usage: scripts/device/order-bench-at.sh REV [LABEL (default REV)]
set -euo pipefail
cd "$(dirname "$0")/../.."
rev=${1:?usage: order-bench-at.sh REV [LABEL]}
label=${2:-$rev}
B=${GCAP_BUILD:-build}
[ -d .devbundle/bin ] || { echo "order-bench-at.sh: no .devbundle/bin (run bundle.sh first)" >&2; exit 1; }
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
git show "$rev:dataplane/pipeline_order.c" >"$t/pipeline_order.c"
ninja -C "$B" bench/order_bench >/dev/null
# this build's commands for the merge's object and for the bench's link
cc_cmd=$(ninja -C "$B" -t commands bench/order_bench | grep -- '-c \.\./dataplane/pipeline_order\.c')
ld_cmd=$(ninja -C "$B" -t commands bench/order_bench | grep -- '-o bench/order_bench ')
cc_cmd=${cc_cmd/-c ..\/dataplane\/pipeline_order.c/-c $t/pipeline_order.c -I../dataplane}
cc_cmd=$(sed -E 's/ -MD -MQ [^ ]+ -MF [^ ]+//; s# -o [^ ]+# -o '"$t"'/po.o#' <<<"$cc_cmd")
ld_cmd=${ld_cmd/-o bench\/order_bench bench\/order_bench.p\/order_bench.c.o/-o $t/order_bench bench/order_bench.p/order_bench.c.o $t/po.o}
(cd "$B" && eval "$cc_cmd" && eval "$ld_cmd")
cp "$t/order_bench" ".devbundle/bin/order_bench-$label"
echo "order-bench-at.sh: .devbundle/bin/order_bench-$label (pipeline_order.c at $rev)"
