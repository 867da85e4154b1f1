#!/usr/bin/env bash
# Issue 11's targets in instructions (valgrind --tool=callgrind), the figures that do not move
# with the host's load:
#  - a sample of Algorithm 1 on each of the paper's four examples (`svi-bench --one EX auto N`
#    minus the same run with 0 samples, divided by N: one thread, branch auto, as table 1);
#  - one impact step against a native mj_step from the same state (`svi-bench-plugin --impact`,
#    --toggle-collect=impact_steps and =native_steps) on the many-contact models of tables C and E:
#    a plate on 100 supports, a two-legged robot on 7 x 7-point feet (98 contacts), a chain of 25
#    links (100 contacts), a box dropped on a stack of 25 boxes (100 contacts), a mesh cube landing
#    on 3 x 3 x 1 and on 2 x 2 x 2 resting mesh cubes (88 and 100 contacts), a plate on 100 sphere
#    feet landing flat while it slides (tests/data/plate_slide_100.xml), a quadruped (nv = 22) on
#    5 x 5-point feet landing as it slides (tests/data/quad_slide_100.xml); four stacks of two
#    boxes landing at once (models/scenes/drops.xml, 25 contacts in 4 groups) under split groups and
#    split off; and on any MODEL.xml
#    given after the build directory (its first impact event, as table B);
#  - for each impact step, its ratio tests (about one a pivot) and their scans' instructions: every
#    pivot of a path reads each row's ratio, so no pivot of these paths costs less than its scan.
#
#   tests/bench/targets_callgrind.sh [BUILD_DIR] [MODEL.xml ...]
#
# About 20 minutes on the Intel host of docs/benchmarks.md (the tower's and the mesh piles' impact
# steps are most of it; 10 before the mesh piles' rows).  Wall time follows these counts within the host's noise except where a
# step streams more data than its caches hold (docs/benchmarks-log.md, "The twentieth session").
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
[ $# -gt 0 ] && shift
command -v valgrind > /dev/null || { echo "targets_callgrind.sh: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
for t in svi-bench svi-bench-plugin; do
  [ -x "$BUILD/$t" ] || { echo "targets_callgrind.sh: no $BUILD/$t (build first: cmake --build $BUILD)" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
collected() { sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$1"; }

# the whole process: startup and set-up cancel in the difference of two runs
sample_instr() {  # example samples -> instructions
  valgrind --tool=callgrind --callgrind-out-file="$tmp/out" "$BUILD/svi-bench" --one "$1" auto "$2" \
    > /dev/null 2> "$tmp/err"
  collected "$tmp/err"
}

echo "$("$BUILD/svi-bench-plugin" --count models/rocking_block.xml native 1 | sed -n 's/^\(MuJoCo [0-9.]*\),.*/\1/p'),"\
     "$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo 2>/dev/null | head -1), build $BUILD"
echo
echo "| example (Algorithm 1, one thread, branch auto) | instructions a sample | target (us) |"
echo "|---|---|---|"
N=4000
for ex in rocking_block:0.7 box_wall:0.53 compass_gait:0.63 disk_stack:3.7; do
  name=${ex%%:*}
  a=$(sample_instr "$name" "$N"); b=$(sample_instr "$name" 0)
  awk -v e="$name" -v a="$a" -v b="$b" -v n="$N" -v t="${ex##*:}" \
    'BEGIN { printf "| %s | %.0f | %s |\n", e, (a - b) / n, t }'
done

step_instr() {  # model reps function -> instructions inside that function
  valgrind --tool=callgrind --toggle-collect="$3" --callgrind-out-file="$tmp/out" \
    "$BUILD/svi-bench-plugin" --impact "$1" "$2" > "$tmp/run" 2> "$tmp/err"
  collected "$tmp/err"
}
# Lemke's ratio tests in the impact steps (about one a pivot: the product form's and the low-rank
# Lemke's both end in a ratio_scan kernel; the first pivot of a path has its own pass) and the
# instructions of those scans, from the impact steps' callgrind file: each pivot reads every row's
# ratio at least once, so the scans' share is a floor under any pivot of these paths.  Callgrind
# counts an arc's calls over the whole run, its costs only where collected, and the run solves its
# first event once before the collected steps (first_event), as each step solves it again (the same
# state and seed: the same path): so a step's calls are the count over REPS + 1 (the robot of table
# C: 224 calls of the scan at REPS 1, 1 232 at 10, 112 a solve, as perf probe counts them)
ratio_tests() {  # callgrind file -> "calls instructions"
  local calls
  calls=$(awk '/^c?fn=\(/ { l = $0; c = substr(l, 1, 1) == "c"; sub(/^c?fn=\(/, "", l); id = l; sub(/\).*/, "", id)
                          r = l; sub(/^[0-9]+\)/, "", r); sub(/^ /, "", r); if (r != "") name[id] = r
                          cur = c ? id : ""; next }
               /^calls=/ { if (cur != "") { v = $0; sub(/^calls=/, "", v); sub(/ .*/, "", v); n[cur] += v; cur = "" } next }
               END { for (k in n) if (name[k] ~ /^ratio_scan/) s += n[k]; print s + 0 }' "$1")
  echo "$calls $(callgrind_annotate --threshold=100 "$1" 2> /dev/null |
                awk '/:ratio_scan/ { v = $1; gsub(",", "", v); s += v } END { print s + 0 }')"
}
impact_row() {  # label model reps
  local i n rt
  i=$(step_instr "$2" "$3" impact_steps)
  rt=$(ratio_tests "$tmp/out")
  n=$(step_instr "$2" "$3" native_steps)
  local info
  info=$(sed -n 's/.*impact steps (\([0-9]*\) contacts, \([0-9]*\) LCPs, status \([-0-9]*\), fallback \([0-9]*\)).*/\1 | \2 | \3 | \4/p' "$tmp/run")
  [ -n "$info" ] || { echo "| $1 | no impact event (or the run failed: $(head -c 200 "$tmp/err")) |"; return; }
  awk -v l="$1" -v i="$i" -v n="$n" -v r="$3" -v info="$info" -v rt="$rt" \
    'BEGIN { split(rt, t, " "); printf "| %s | %s | %.0f | %.0f | %.2fx | %.1f | %.0f (%.2fx native) |\n", l, info,
             i / r, n / r, i / n, t[1] / (r + 1), t[2] / r, t[2] / n }'
}
echo
echo "| one impact step | contacts | LCPs | status | fallback | instructions | native mj_step | ratio (target <= 5x at 100 contacts) | ratio tests (pivots) | their scans' instructions |"
echo "|---|---|---|---|---|---|---|---|---|---|"
impact_row "plate on 100 supports (table C)" "$("$BUILD/svi-bench-plugin" --plate 100 models)" 10
impact_row "two-legged robot, 7 x 7-point feet (table C)" "$("$BUILD/svi-bench-plugin" --legs 7)" 10
impact_row "chain of 25 links (table C)" "$("$BUILD/svi-bench-plugin" --snake 25)" 4
impact_row "box dropped on a stack of 25 (table E)" "$("$BUILD/svi-bench-plugin" --tower 25)" 2
impact_row "mesh cube on 3 x 3 x 1 mesh cubes (table E)" "$("$BUILD/svi-bench-plugin" --meshpile 3 1)" 2
impact_row "mesh cube on 2 x 2 x 2 mesh cubes (table E)" "$("$BUILD/svi-bench-plugin" --meshpile 2 2)" 2
impact_row "plate sliding onto 100 sphere feet (a new user's, tests/data/plate_slide_100.xml)" tests/data/plate_slide_100.xml 2
impact_row "quadruped sliding onto 5 x 5-point feet (a new user's, tests/data/quad_slide_100.xml)" tests/data/quad_slide_100.xml 2
# objects landing in the same step: four stacks of two boxes (25 contacts, 4 groups), split on and off
impact_row "four stacks landing at once, split groups (scenes/drops.xml)" models/scenes/drops.xml 4
sed 's|<instance name="impacts"/>|<instance name="impacts"><config key="split" value="off"/></instance>|' \
  models/scenes/drops.xml > "$tmp/drops_off.xml"
grep -q 'key="split"' "$tmp/drops_off.xml" || { echo "targets_callgrind.sh: drops.xml's plugin instance changed" >&2; exit 1; }
impact_row "the same, split off (one problem)" "$tmp/drops_off.xml" 4
for f in "$@"; do impact_row "$(basename "$f")" "$f" 4; done
