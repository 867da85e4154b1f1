#!/usr/bin/env bash
# The viewer's frame rate and click latency on every bundled model, measured with its own scripted
# actions in a real window under Xvfb (Mesa software OpenGL), 1280x800.  Prints the table of
# docs/viewer.md.  Not a test: timings depend on the machine and its load.
#   tests/viewer/measure.sh BUILD_DIR SOURCE_DIR [MODEL.xml ...]
set -u
BUILD=$(cd "$1" && pwd); SRC=$(cd "$2" && pwd); shift 2
MODELS=()
for f in "$@"; do MODELS+=("$(realpath "$f")"); done
[ ${#MODELS[@]} -eq 0 ] && MODELS=("$SRC"/models/*.xml)
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
# paused at the first impact, its ghosts drawn while the worker recomputes them (fps);
# the camera turning, so every frame is rendered anew (orbit); five clicks on Resample (Replay
# when the outcome is unique) to the frames that show the new outcome; 3 s of wall time playing
cat > "$T/s" <<S
await-alts 60000
fps 120
fps 120 orbit
key ctrl+a
latency 5
realtime on
key ctrl+b
key space
sleep 3000
print
quit
S
get() { sed -n "s/.*[ (]$2=\([^ ]*\).*/\1/p" <<< "$1" | head -1; }
echo "| model | ghosts drawn | fps, paused at the impact | fps, view turning | click → new outcome on screen | click → its ghost | click → bodies moving | real time while playing |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
for f in "${MODELS[@]}"; do
  out=$(cd "$T" && xvfb-run -a -s "-screen 0 1280x800x24" "$BUILD/svi-viewer" "$f" --script "$T/s" --width 1280 --height 800 2>/dev/null)
  p=$(grep '^fps' <<< "$out" | sed -n 1p); o=$(grep '^fps' <<< "$out" | sed -n 2p)
  l=$(grep '^latency' <<< "$out"); s=$(grep '^state' <<< "$out" | tail -1)
  btn=$(sed -n 's/.*button="\([^"]*\)".*/\1/p' <<< "$l")
  ms() { get "$l" "$1" | awk -F/ '{printf "%.0f ms (max %.0f)", $1, $2}'; }
  echo "| $(basename "$f" .xml) | $(get "$p" ghosts_drawn) | $(get "$p" fps) | $(get "$o" fps) | $(ms frame_ms)$([ "$btn" = Replay ] && echo ' ¹') | $(ms ghost_ms) | $(ms motion_ms) | $(get "$s" actual) % |"
done
echo
echo "¹ unique outcome: Resample is disabled, the click is on Replay (the same path)."
