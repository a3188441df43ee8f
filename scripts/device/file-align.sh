#!/usr/bin/env bash
# Does the size and the alignment of the writer's writes set one tmpfs
# file's ceiling? On a mount with 2 MiB pages the kernel clears the part
# of a new page the first write into it leaves, so writes smaller than a
# page, or a page's worth that starts off a page's edge (a pcap file's
# records start 24 bytes in), may pay to clear what the next writes fill.
# And a copy whose destination is not aligned as its source may copy
# slower. bench/file_bench's write and handoff modes, each case of
# FA_CASES (file_bench options, cases split at |; default: 256 KiB writes
# from byte 0 of the file, from byte 24, from byte 24 with the bytes 24
# into their buffer as well, and 2 MiB writes from byte 0) in turns
# within each round, into /dev/shm and a tmpfs mounted huge=within_size
# for the script.
# Args: the bundle directory, the output directory. env: FA_ROUNDS (3),
# FA_MIB (4096), FA_CASES.
set -uo pipefail
b=$1 out=$2
hd=/mnt/gcap-align dirs=/dev/shm msg=
# the file, and room to spare, on the mount
if mkdir -p "$hd" && mount -t tmpfs -o "size=$((${FA_MIB:-4096} + 1024))m,huge=within_size,mode=0700" none "$hd"; then
	dirs="$dirs $hd"
	# down again however the script ends (run.sh's timeout included)
	trap 'pkill -f "$b/bin/file_bench"; sleep 1; rm -f /dev/shm/file_bench.* "$hd"/file_bench.*; umount "$hd" 2>/dev/null || umount -l "$hd"' EXIT
else
	msg="file-align: cannot mount a tmpfs at $hd (root?): /dev/shm only"
	echo "$msg" >&2
fi
{
	echo "commit $(cat "$b/COMMIT"); $(nproc) CPUs, $(uname -r)"
	[ -n "$msg" ] && echo "$msg"
	IFS='|' read -r -a cases <<<"${FA_CASES:---chunk 256|--chunk 256 --offset 24|--chunk 256 --offset 24 --src-offset 24|--chunk 2048}"
	for r in $(seq "${FA_ROUNDS:-3}"); do
		for d in $dirs; do
			for a in "${cases[@]}"; do
				echo; echo "## round $r of ${FA_ROUNDS:-3} (each table's round is 1), $d, $a"; echo
				# shellcheck disable=SC2086 # $a is words
				timeout 120 "$b/bin/file_bench" --dir "$d" --mib "${FA_MIB:-4096}" --rounds 1 \
					--modes write,handoff $a | tail -n +3
				echo "file_bench rc=${PIPESTATUS[0]}"
				rm -f "$d"/file_bench.*
			done
		done
	done
} 2>&1 | tee "$out/file-align.md"
