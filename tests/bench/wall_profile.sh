#!/usr/bin/env bash
# Where the time of a run goes, beside where its instructions go.  perf samples the program on its
# software clock (cpu-clock, every 50 us of CPU time: no hardware counters needed, and this
# project's KVM hosts expose none) and callgrind counts the instructions of the same command.  A
# function whose share of the time is well above its share of the instructions ("time / instr."
# above 1) waits: on a dependency chain, a division's throughput, a vector load of values just
# stored one at a time, the caches, or the function before it (a sample is charged to the oldest
# instruction not yet done, the head of the reorder buffer: the first one that needs a late value
# carries the wait); one below 1 runs more instructions a cycle than the rest.
#
#   tests/bench/wall_profile.sh [BUILD_DIR] --one EXAMPLE N        svi-bench --one EXAMPLE auto N
#   tests/bench/wall_profile.sh [BUILD_DIR] --impact MODEL REPS    svi-bench-plugin --impact MODEL REPS
#
# The time column covers the whole process (for --impact: the native steps and the model's
# compilation too), so pick N or REPS large enough that the part of interest dominates
# (--one disk_stack 200000, --impact on a 100-contact model with REPS 2000).  The instruction
# column is callgrind's count of N / 10 samples or REPS / 10 steps (at least 1) minus the same
# command with 0 (its start-up); only shares are compared.  Needs perf (apt-get install
# linux-perf) and valgrind.  OPENBLAS_NUM_THREADS=1: the benches link Siconos (the tests'
# oracle), whose OpenBLAS starts threads that spin in sched_yield for a while; they would take a
# tenth of a short run's samples.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=build
[ $# -gt 0 ] && [[ $1 != --* ]] && { BUILD=$1; shift; }
usage() { sed -n 's/^#   //p' "$0" >&2; exit 2; }
[ $# -eq 3 ] || usage
case $1 in
  --one) cmd=("$BUILD/svi-bench" --one "$2" auto) ;;
  --impact) cmd=("$BUILD/svi-bench-plugin" --impact "$2") ;;
  *) usage ;;
esac
n=$3
[[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] || { echo "wall_profile.sh: N or REPS must be a positive integer" >&2; exit 2; }
for t in perf valgrind callgrind_annotate; do
  command -v $t > /dev/null || { echo "wall_profile.sh: needs $t (apt-get install linux-perf valgrind)" >&2; exit 1; }
done
[ -x "${cmd[0]}" ] || { echo "wall_profile.sh: no ${cmd[0]} (build first: cmake --build $BUILD)" >&2; exit 1; }
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT

OPENBLAS_NUM_THREADS=1 perf record -q -e cpu-clock -F 20000 -o "$tmp/perf.data" "${cmd[@]}" "$n" > /dev/null 2> "$tmp/perf.err" || {
  echo "wall_profile.sh: perf record -e cpu-clock ${cmd[*]} $n failed (the command's or perf's message" \
       "below; kernel.perf_event_paranoid is $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo '?')):" >&2
  cat "$tmp/perf.err" >&2
  exit 1
}
# valgrind runs no AVX-512: the host's AVX-512 copies are charged under the names of the AVX2 kernels
# callgrind counts in their place (FTRAN from 64 rows is inlined in pfi_entering there), and the C
# library's copies under memcpy / memset
same_name='{ n = x
  sub(/^ratio_scan_(vl|512)$/, "ratio_scan_avx2", n); sub(/^covering_dq$/, "covering_avx2", n)
  sub(/^combine_columns_512$/, "combine_columns.avx2", n)
  sub(/^pfi_ftran_large_512$/, "pfi_entering.fma", n)
  if (n ~ /^__mem(cpy|move)_/) n = "memcpy"; if (n ~ /^__memset_/) n = "memset"
  return n }'
# self time by symbol: "  29.32%  [.] name"
perf report -i "$tmp/perf.data" --stdio --sort sym > "$tmp/report" 2> /dev/null
awk "function same(x,  n) $same_name"'
     /^ *[0-9.]+%/ { p = $1; sub("%", "", p); t[same($NF)] += p } END { for (k in t) print k, t[k] }' \
  "$tmp/report" > "$tmp/time"
ncg=$(( n / 10 > 0 ? n / 10 : 1 ))
# self instructions by function (summed over the files their inlined lines come from:
# "12,345 (24.47%)  path/file.c:name [object]"), of the run minus the same with 0 samples or steps
# (the start-up: the dynamic linker, the model's compilation, the event's set-up)
counts() {
  OPENBLAS_NUM_THREADS=1 valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "${cmd[@]}" "$1" \
    > /dev/null 2> "$tmp/cg.err" || { echo "wall_profile.sh: callgrind failed on ${cmd[*]} $1:" >&2; cat "$tmp/cg.err" >&2; exit 1; }
  callgrind_annotate "$tmp/cg.out" 2> /dev/null |
    awk "function same(x,  n) $same_name"'
         /^ *[0-9,]+ +\( *[0-9.]+%\) +[^ ]+:[^ ]+/ && !/PROGRAM TOTALS/ {
           c = $1; gsub(",", "", c); f = $0; sub(/^ *[0-9,]+ +\( *[0-9.]+%\) +/, "", f);
           sub(/ .*/, "", f); sub(/.*:/, "", f); s[same(f)] += c }
         END { for (k in s) print k, s[k] }'
}
counts "$ncg" > "$tmp/cg_n"
counts 0 > "$tmp/cg_0"
awk 'FILENAME == ARGV[1] { z[$1] = $2; next } { d[$1] = $2 - ($1 in z ? z[$1] : 0); if (d[$1] > 0) t += d[$1] }
     END { for (k in d) if (d[k] > 0) print k, 100 * d[k] / t }' "$tmp/cg_0" "$tmp/cg_n" > "$tmp/instr"

echo "${cmd[*]} $n: perf cpu-clock, $(sed -n 's/^# Samples: \([0-9a-zA-Z]*\).*/\1/p' "$tmp/report" | head -1) samples; callgrind on ${cmd[*]} $ncg minus ${cmd[*]} 0"
echo
echo "| function | time % | instructions % | time / instr. |"
echo "|---|---|---|---|"
awk 'FILENAME == ARGV[1] { ins[$1] = $2; next }
     { i = ($1 in ins) ? ins[$1] : 0
       printf "%s %.2f %.2f %s\n", $1, $2, i, (i > 0 ? sprintf("%.2f", $2 / i) : "-") }' "$tmp/instr" "$tmp/time" |
  sort -k2 -gr | head -20 | awk '{ printf "| %s | %s | %s | %s |\n", $1, $2, $3, $4 }'
