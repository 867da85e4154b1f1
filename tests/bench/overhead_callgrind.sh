#!/usr/bin/env bash
# Instruction counts (valgrind --tool=callgrind) of mj_step on steps without impacts, every bundled
# model, with svi.impact against the same model without it (plugin removed through mjSpec).  The
# counts cover bench_free_steps() only (--toggle-collect), not loading or settling.
#
#   tests/bench/overhead_callgrind.sh [BUILD_DIR] [STEPS]
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
STEPS=${2:-300}
command -v valgrind > /dev/null || { echo "overhead_callgrind.sh: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
count() {  # model variant -> instructions (and the run's line in $tmp/run)
  valgrind --tool=callgrind --toggle-collect=bench_free_steps --callgrind-out-file="$tmp/out" \
    "$BUILD/svi-bench-plugin" --count "$1" "$2" "$STEPS" > "$tmp/run" 2> "$tmp/err"
  sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$tmp/err"
}
"$BUILD/svi-bench-plugin" --count models/rocking_block.xml native 1 | sed -n 's/^\(MuJoCo [0-9.]*\),.*/\1/p'
echo "$STEPS steps per run, after the models' first impacts (resting; the cradle swinging)"
echo
echo "| model | native instructions/step | with svi.impact | overhead | impact events in the run |"
echo "|---|---|---|---|---|"
for f in models/*.xml; do
  n=$(count "$f" native); p=$(count "$f" plugin)
  ev=$(sed -n 's/.*impact events \([0-9]*\).*/\1/p' "$tmp/run")
  awk -v f="$(basename "$f")" -v n="$n" -v p="$p" -v s="$STEPS" -v e="$ev" \
    'BEGIN { printf "| %s | %.0f | %.0f | %+.2f%% | %s |\n", f, n / s, p / s, 100 * (p - n) / n, e }'
done
