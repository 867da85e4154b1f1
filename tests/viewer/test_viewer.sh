#!/usr/bin/env bash
# The viewer as a person uses it: a real window under Xvfb (Mesa software OpenGL), scripted
# actions, real clicks with xdotool, screenshots compared.
#   test_viewer.sh BUILD_DIR SOURCE_DIR
set -u
BUILD=$1; SRC=$2
VIEWER=$BUILD/svi-viewer; PNG=$BUILD/tests/png_tool; MODELS=$SRC/models
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
pass=0; fail=0
check() { if eval "$2"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL: $1"; fi; }
field() { sed -n "s/.*$2=\([^ ]*\).*/\1/p" <<< "$1" | head -1; }
run() { xvfb-run -a -s "-screen 0 1280x800x24" "$VIEWER" "$@" --width 1280 --height 800 2>"$T/stderr"; }

# --- 1. scripted: resample reproduces with a seed, undo/redo exact, inset, pick ---------------
cat > "$T/s1" <<S
wait 0.05
print
screenshot $T/a0.png
seed 7
click-button resample
wait 0.3
print
seed 7
click-button resample
key z
key y
pick 10
key 2
key 3
key 4
key z
key f1
screenshot $T/help.png
quit
S
out=$(run "$MODELS/rocking_block.xml" --script "$T/s1")
echo "$out" > "$T/out1"
r1=$(grep '^resample event' "$T/out1" | sed -n 1p); r2=$(grep '^resample event' "$T/out1" | sed -n 2p)
check "two resamples were made" '[ -n "$r1" ] && [ -n "$r2" ]'
check "resampling with the same seed reproduces the same outcome exactly" '[ "$(field "$r1" vn)" = "$(field "$r2" vn)" ] && [ "$(field "$r1" state)" = "$(field "$r2" state)" ]'
s_before=$(grep '^state' "$T/out1" | sed -n 2p)
u=$(grep '^undo' "$T/out1"); rd=$(grep '^redo' "$T/out1")
check "undo returns the state before the resample exactly" '[ "$(field "$u" state)" = "$(field "$s_before" state)" ]'
check "redo returns the resampled state exactly" '[ "$(field "$rd" state)" = "$(field "$r2" state)" ]'
check "the inset shows as many points as were sampled (256)" 'grep -q "^inset event=0 points=256" "$T/out1"'
pk=$(grep '^pick' "$T/out1")
check "picking an inset point gives a state whose contact-normal velocities match it" '[ -n "$pk" ] && awk -v p="$(field "$pk" point)" -v s="$(field "$pk" state_vn)" "BEGIN{gsub(/[()]/,\"\",p);gsub(/[()]/,\"\",s);split(p,a,\",\");split(s,b,\",\");d1=a[1]-b[1];d2=a[2]-b[2];exit !((d1<1e-9&&d1>-1e-9)&&(d2<1e-9&&d2>-1e-9))}"'
check "the law selector resamples under the simultaneous and sequential laws" 'grep -q "^resample event=.* law=simultaneous" "$T/out1" && grep -q "^resample event=.* law=sequential" "$T/out1"'
check "the native law from the same snapshot keeps the event, left to MuJoCo" 'grep -q "^resample event=.* law=native" "$T/out1"'
check "screenshots were written" '[ -s "$T/a0.png" ] && [ "$($PNG size "$T/a0.png")" = "1280 800" ]'

# --- 2. real input: xdotool clicks the Resample button on the running window ------------------
script_click() {
cat <<S
wait 0.05
key space
print
sleep $1
print
key space
wait 1.5
screenshot $2
print
quit
S
}
script_click 6000 "$T/after.png" > "$T/s2"
script_click 1500 "$T/ref.png" > "$T/s3"
xvfb-run -a -s "-screen 0 1280x800x24" bash -c "
  '$VIEWER' '$MODELS/disk_stack.xml' --script '$T/s2' --width 1280 --height 800 > '$T/out2' 2>&1 &
  pid=\$!
  wid=\$(xdotool search --sync --name 'svi-viewer' | head -1)
  sleep 2.5
  xdotool mousemove --window \$wid 1150 24 click 1
  wait \$pid"
run "$MODELS/disk_stack.xml" --script "$T/s3" > "$T/out3"
check "the real click reached the Resample control" 'grep -q "^click Resample" "$T/out2" && grep -q "^resample event=0" "$T/out2"'
b=$(grep '^state' "$T/out2" | sed -n 1p); a=$(grep '^state' "$T/out2" | sed -n 2p)
check "the post-impact state reported by the viewer changes" '[ -n "$a" ] && [ "$(field "$a" state)" != "$(field "$b" state)" ]'
nd=$($PNG diff "$T/after.png" "$T/ref.png" 250 150 700 550)
check "the screenshot changes where the bodies are drawn ($nd pixels)" '[ "$nd" -gt 300 ]'

# --- 3. never crashes: no impacts, no plugin, malformed config ---------------------------------
printf 'wait 0.5\nscreenshot %s\nquit\n' "$T/x.png" > "$T/s4"
cat > "$T/noimpact.xml" <<X
<mujoco><extension><plugin plugin="svi.impact"><instance name="svi"/></plugin></extension>
<worldbody><body pos="0 0 1"><joint type="hinge" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0.5 0 0" size=".05"/></body></worldbody></mujoco>
X
cat > "$T/noplugin.xml" <<X
<mujoco><worldbody><geom type="plane" size="2 2 .1"/><body pos="0 0 .5"><freejoint/><geom type="box" size=".1 .1 .1"/></body></worldbody></mujoco>
X
cat > "$T/bad.xml" <<X
<mujoco><extension><plugin plugin="svi.impact"><instance name="svi"><config key="window" value="7"/></instance></plugin></extension>
<worldbody><geom type="plane" size="2 2 .1"/><body pos="0 0 .5"><freejoint/><geom type="box" size=".1 .1 .1"/></body></worldbody></mujoco>
X
for mdl in noimpact noplugin bad; do
  run "$T/$mdl.xml" --script "$T/s4" > "$T/out_$mdl"; rc=$?
  check "model '$mdl': the viewer runs and exits cleanly (rc=$rc)" '[ $rc -eq 0 ] && [ -s "$T/x.png" ]'
  rm -f "$T/x.png"
done
check "malformed config: the message is on the terminal" 'grep -q "config .window" "$T/stderr"'
check "malformed config: the message is shown in the window" 'grep -q "^message .*config .window" "$T/out_bad"'
check "no plugin: runs natively" 'grep -q "plugin=no" "$T/out_noplugin"'

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
