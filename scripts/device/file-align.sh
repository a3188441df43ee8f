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
hd=/mnt/gcap-align
mkdir -p "$hd" && mount -t tmpfs -o size=16g,huge=within_size,mode=0700 none "$hd" ||
	{ echo "file-align: cannot mount a tmpfs at $hd (root?)"; exit 1; }
{
	echo "commit $(cat "$b/COMMIT"); $(nproc) CPUs, $(uname -r)"
	for r in $(seq "${FA_ROUNDS:-3}"); do
		for d in /dev/shm "$hd"; do
			IFS='|' read -r -a cases <<<"${FA_CASES:---chunk 256|--chunk 256 --offset 24|--chunk 256 --offset 24 --src-offset 24|--chunk 2048}"
			for a in "${cases[@]}"; do
				echo; echo "## round $r, $d, $a"; echo
				# shellcheck disable=SC2086 # $a is words
				timeout 120 "$b/bin/file_bench" --dir "$d" --mib "${FA_MIB:-4096}" --rounds 1 \
					--modes write,handoff $a | tail -n +3
				rm -f "$d"/file_bench.*
			done
		done
	done
} 2>&1 | tee "$out/file-align.md"
umount "$hd"
