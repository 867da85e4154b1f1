#!/usr/bin/env bash
# The viewer as a person uses it: a real window under Xvfb (Mesa software OpenGL), scripted
# actions through the same input path as a person's, real clicks with xdotool, screenshots
# compared, states compared with the plugin's own API (Python, when given).
#   test_viewer.sh BUILD_DIR SOURCE_DIR [PYTHON]
set -u
BUILD=$1; SRC=$2; PY=${3:-}
VIEWER=$BUILD/svi-viewer; PNG=$BUILD/tests/png_tool; MODELS=$SRC/models
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
pass=0; fail=0
check() { if eval "$2"; then pass=$((pass+1)); [ -n "${VERBOSE_CHECKS:-}" ] && echo "ok: $1"; else fail=$((fail+1)); echo "FAIL: $1"; fi; }
field() { sed -n "s/.*[ (]$2=\([^ ]*\).*/\1/p" <<< "$1" | head -1; }
line() { grep "$1" "$2" | sed -n "${3:-1}p"; }
XVFB=(xvfb-run -a -s "-screen 0 1280x800x24")
run() { local out=$1; shift; (cd "$T" && "${XVFB[@]}" "$VIEWER" "$@" --width 1280 --height 800 > "$out" 2> "$out.err"); }
api() { [ -n "$PY" ] && "$PY" "$SRC/tests/viewer/api_state.py" "$@" 2>> "$T/api.err"; }
# the body region of the 3-D view: right of the panel, below the HUD, left of the inset
BODY="280 180 930 740"

# --- 1. every bundled model opens paused at its first impact, ghosts and inset shown -----------
for f in "$MODELS"/*.xml; do
  name=$(basename "$f" .xml)
  printf 'await-alts 30000\nprint\nquit\n' > "$T/s_start"
  run "$T/start_$name" "$f" --script "$T/s_start"
  st=$(line '^state' "$T/start_$name")
  check "$name: paused at its first impact with ghosts and the inset ($st)" \
    '[ "$(field "$st" running)" = 0 ] && [ "$(field "$st" selected)" = 0 ] && [ "$(field "$st" ghosts)" -ge 1 ] && [ "$(field "$st" inset)" = 1 ] && grep -q "^inset event=0 points=256" "$T/start_$name"'
done

# --- 2. scripted: resample reproduces, undo/redo exact, pick, the law selector, native keeps ----
cat > "$T/s2" <<S
await-alts
print
seed 7
click-button resample
wait-replay
seed 7
click-button resample
wait-replay
seed 9
click-button resample
wait-replay
key ctrl+z
key ctrl+y
pick 10
wait-replay
key ctrl+2
key ctrl+3
wait-replay
print
key ctrl+4
wait-replay
print
key f1
screenshot $T/help.png
quit
S
run "$T/out2" "$MODELS/rocking_block.xml" --script "$T/s2"
r1=$(line '^resample event' "$T/out2" 1); r2=$(line '^resample event' "$T/out2" 2); r3=$(line '^resample event' "$T/out2" 3)
check "three resamples were made" '[ -n "$r1" ] && [ -n "$r2" ] && [ -n "$r3" ]'
check "resampling with the same seed reproduces the same outcome exactly" '[ "$(field "$r1" vn)" = "$(field "$r2" vn)" ] && [ "$(field "$r1" state)" = "$(field "$r2" state)" ]'
check "another seed gives another state" '[ "$(field "$r3" state)" != "$(field "$r2" state)" ]'
u=$(line '^undo' "$T/out2"); rd=$(line '^redo' "$T/out2")
check "undo returns the state before the resample exactly" '[ "$(field "$u" state)" = "$(field "$r2" state)" ]'
check "redo returns the resampled state exactly" '[ "$(field "$rd" state)" = "$(field "$r3" state)" ]'
check "the inset shows as many points as were sampled (256)" 'grep -q "^inset event=0 points=256" "$T/out2"'
pk=$(line '^pick k=' "$T/out2")
check "a click on an inset point gives a state whose contact-normal velocities are that point's" '[ -n "$pk" ] && awk -v p="$(field "$pk" point)" -v s="$(field "$pk" state_vn)" "BEGIN{gsub(/[()]/,\"\",p);gsub(/[()]/,\"\",s);split(p,a,\",\");split(s,b,\",\");d1=a[1]-b[1];d2=a[2]-b[2];exit !((d1<1e-9&&d1>-1e-9)&&(d2<1e-9&&d2>-1e-9))}"'
check "Ctrl+2 and Ctrl+3 resample under the simultaneous and sequential laws" 'grep -q "^resample event=.* law=simultaneous" "$T/out2" && grep -q "^resample event=.* law=sequential" "$T/out2"'
sn=$(line '^state' "$T/out2" 3)
check "the native law keeps the event in the log, selected, with the inset ($sn)" 'grep -q "^resample event=.* law=native" "$T/out2" && [ "$(field "$sn" events)" = 1 ] && [ "$(field "$sn" selected)" = 0 ] && [ "$(field "$sn" law)" = native ] && [ "$(field "$sn" inset)" = 1 ]'
check "the help overlay was drawn" '[ -s "$T/help.png" ] && [ "$($PNG size "$T/help.png")" = "1280 800" ]'

# --- 3. undo after 100 resamples returns the original outcome; a held key is one resample -----
cat > "$T/s3" <<S
await-alts
print
key-repeat enter 36
wait-replay
print
repeat 99 key enter
repeat 110 key ctrl+z
print
quit
S
run "$T/out3" "$MODELS/box_wall.xml" --script "$T/s3"
o=$(line '^state' "$T/out3" 1); back=$(line '^state' "$T/out3" 3)
check "a held Enter (36 auto-repeats) resamples once" '[ "$(grep -c "^resample event" "$T/out3")" -eq 100 ]'
check "after 100 resamples, undo returns the original outcome exactly" '[ -n "$back" ] && [ "$(field "$back" state)" = "$(field "$o" state)" ]'

# --- 4. unique outcome: Resample disabled with the reason; a click on it changes nothing -------
printf 'await-alts\nprint\nclick-button resample\nkey enter\nprint\nsleep 4500\nprint\nscreenshot %s\nquit\n' "$T/cradle.png" > "$T/s4"
for mdl in newtons_cradle cradle_3; do
  run "$T/out4_$mdl" "$MODELS/$mdl.xml" --script "$T/s4"
  a=$(line '^state' "$T/out4_$mdl" 1); b=$(line '^state' "$T/out4_$mdl" 2); c=$(line '^state' "$T/out4_$mdl" 3)
  check "$mdl: 'unique outcome' shown, Resample disabled" 'grep -q "^ui resample=disabled reason=\"unique outcome" "$T/out4_$mdl" && grep -q "^inset event=0 .* unique=1" "$T/out4_$mdl" && [ "$(field "$a" resample)" = disabled ]'
  check "$mdl: a click on the disabled Resample says why and changes nothing" '! grep -q "^resample event" "$T/out4_$mdl" && grep -q "^message Resample is off: unique outcome" "$T/out4_$mdl" && [ "$(field "$b" state)" = "$(field "$a" state)" ]'
  check "$mdl: the message clears" '[ "$(field "$b" message)" != "\"\"" ] && [ "$(field "$c" message)" = "\"\"" ]'
done

# --- 5. no inset before the first impact; then it appears --------------------------------------
printf 'print\nscreenshot %s\nkey space\nawait-alts\nprint\nwhere inset-box\nscreenshot %s\nquit\n' "$T/bb0.png" "$T/bb1.png" > "$T/s5"
run "$T/out5" "$MODELS/bouncing_ball.xml" --paused --script "$T/s5"
a=$(line '^state' "$T/out5" 1); b=$(line '^state' "$T/out5" 2)
box=$(sed -n 's/^where inset-box box=\([0-9,]*\) ok/\1/p' "$T/out5" | tr , ' ')
check "before the first impact: no event, no inset" '[ "$(field "$a" events)" = 0 ] && [ "$(field "$a" inset)" = 0 ]'
check "after it: the inset" '[ "$(field "$b" events)" = 1 ] && [ "$(field "$b" inset)" = 1 ] && [ -n "$box" ]'
nd=$($PNG diff "$T/bb0.png" "$T/bb1.png" $box 2>/dev/null || echo 0)
check "the inset's place was empty before the impact and holds the plot after it ($nd pixels)" '[ "$nd" -gt 20000 ]'

# --- 6. real input: xdotool clicks Resample, a ghost and an inset point --------------------------
# The same sequence scripted (ref) and clicked by xdotool (real) must give the same states, the
# states the plugin's API gives, and the bodies must move differently from the original outcome.
after_click() {   # NAME: the replay 0.3 s after the impact, without ghosts, then back
  printf 'key ctrl+g\nscreenshot %s\nprint\nkey ctrl+g\nwait-replay\n' "$T/$1.png"
}
{ printf 'await-alts\nkey ctrl+r\nawait-replay 0.3\n'; after_click ref_orig
  printf 'seed 42\nclick-button resample\nawait-replay 0.3\n'; after_click ref_resample
  printf 'ghost drawn 1\nawait-replay 0.3\n'; after_click ref_ghost
  printf 'pick 5\nawait-replay 0.3\n'; after_click ref_inset
  printf 'quit\n'; } > "$T/s_ref"
{ printf 'await-alts\nseed 42\nwhere button resample\nawait-click 30000 0.3\n'; after_click real_resample
  printf 'where ghost drawn 1\nawait-click 30000 0.3\n'; after_click real_ghost
  printf 'where inset 5\nawait-click 30000 0.3\n'; after_click real_inset
  printf 'quit\n'; } > "$T/s_real"
cat > "$T/drive.sh" <<D
cd "$T"
"$VIEWER" "$MODELS/disk_stack.xml" --script "$T/s_real" --width 1280 --height 800 > "$T/out_real" 2>&1 &
pid=\$!
wid=\$(xdotool search --sync --name 'svi-viewer' | head -1)
click_where() {   # the n-th 'where' line's point, once printed
  for i in \$(seq 1 300); do
    xy=\$(grep '^where' "$T/out_real" | sed -n "\$1p" | sed -n 's/.* x=\([0-9]*\) y=\([0-9]*\) ok/\1 \2/p')
    [ -n "\$xy" ] && { xdotool mousemove --window \$wid \$xy click 1; return; }
    sleep 0.1
  done
}
click_where 1; click_where 2; click_where 3
wait \$pid
D
(cd "$T" && "${XVFB[@]}" bash "$T/drive.sh")
run "$T/out_ref" "$MODELS/disk_stack.xml" --script "$T/s_ref"
check "the real clicks reached Resample, a ghost and an inset point" 'grep -q "^click Resample" "$T/out_real" && grep -q "^pick-ghost" "$T/out_real" && grep -q "^pick k=5" "$T/out_real"'
for k in 1 2 3; do
  what=$(echo "resample ghost inset" | cut -d' ' -f$k)
  rr=$(line "^resample event" "$T/out_real" $k)
  rf=$(line "^resample event" "$T/out_ref" $k)
  check "real click on the $what: the same state as the scripted click" '[ -n "$rr" ] && [ "$(field "$rr" state)" = "$(field "$rf" state)" ]'
  if [ -n "$PY" ]; then
    want=$(api "$MODELS/disk_stack.xml" "$(field "$rr" seed)" "$(field "$rr" law)")
    check "real click on the $what: the state svi_event_resample gives for its seed ($want)" '[ -n "$want" ] && [ "$(field "$rr" state)" = "$want" ]'
  fi
  so=$(line '^state' "$T/out_ref" 1); sr=$(line '^state' "$T/out_real" $k)
  check "real click on the $what: the bodies move differently from the original outcome" '[ "$(field "$sr" shown)" != "$(field "$so" shown)" ]'
  nd=$($PNG diff "$T/real_$what.png" "$T/ref_orig.png" $BODY)
  check "real click on the $what: the screen changes where the bodies are ($nd pixels)" '[ "$nd" -gt 2000 ]'
  ns=$($PNG diff "$T/real_$what.png" "$T/ref_$what.png" $BODY)
  check "real click on the $what: the screen equals the scripted click's ($ns pixels differ)" '[ "$ns" -lt 50 ]'
done

# --- 7. simulate's controls ------------------------------------------------------------------------
cat > "$T/s7" <<S
await-alts
key space
frames 3
print
key space
key -
key -
print
key =
key right
key right
key left
where body 1
S
echo "print" >> "$T/s7"
run "$T/out7a" "$MODELS/block_flat_3d.xml" --script "$T/s7"
xy=$(sed -n 's/^where body 1 x=\([0-9]*\) y=\([0-9]*\) ok/\1 \2/p' "$T/out7a")
cat > "$T/s7b" <<S
await-alts
dclick $xy
print
drag $xy $(echo $xy | awk '{print $1+60, $2-40}') right ctrl
print
dclick $xy right ctrl
print
key escape
key tab
print
screenshot $T/notab.png
key ctrl+p
key ctrl+l
print
quit
S
run "$T/out7b" "$MODELS/block_flat_3d.xml" --script "$T/s7b"
s1=$(line '^state' "$T/out7a" 1); s2=$(line '^state' "$T/out7a" 2)
check "Space plays and pauses" '[ "$(field "$s1" running)" = 1 ] && [ "$(field "$s2" running)" = 0 ]'
check "- slows down as in simulate (100 -> 66 %)" '[ "$(field "$s2" speed)" = 66 ]'
f1=$(line '^step ' "$T/out7a" 1); k1=$(line '^step-back' "$T/out7a" 1)
check "Right steps, Left steps back to exactly the recorded state" '[ -n "$k1" ] && [ "$(field "$k1" state)" = "$(field "$f1" state)" ]'
b1=$(line '^state' "$T/out7b" 1); b2=$(line '^state' "$T/out7b" 2); b3=$(line '^state' "$T/out7b" 3); b4=$(line '^state' "$T/out7b" 4)
check "double-click selects the body" '[ -n "$xy" ] && [ "$(field "$b1" body)" = 1 ]'
check "Ctrl+right drag moves the selected body (paused)" '[ "$(field "$b2" state)" != "$(field "$b1" state)" ]'
check "Ctrl+right double-click tracks the body, Esc frees the camera" '[ "$(field "$b3" camera)" = tracking ] && [ "$(field "$b4" camera)" = free ]'
check "Tab hides the panel" '[ "$(field "$b4" panel)" = 0 ]'
check "Ctrl+P saves a screenshot" 'ls "$T"/svi_screenshot_000.png > /dev/null 2>&1'
check "Ctrl+L reloads the model" '[ "$(grep -c "^viewer model=" "$T/out7b")" -eq 2 ]'

# --- 8. never crashes: no impacts, no plugin, malformed config ------------------------------------
printf 'wait 0.5\nscreenshot %s\nquit\n' "$T/x.png" > "$T/s8"
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
  run "$T/out_$mdl" "$T/$mdl.xml" --script "$T/s8"; rc=$?
  check "model '$mdl': the viewer runs and exits cleanly (rc=$rc)" '[ $rc -eq 0 ] && [ -s "$T/x.png" ]'
  rm -f "$T/x.png"
done
check "malformed config: the message is on the terminal" 'grep -q "config .window" "$T/out_bad.err"'
check "malformed config: the message is shown in the window" 'grep -q "^message .*config .window" "$T/out_bad"'
check "no plugin: runs natively" 'grep -q "plugin=no" "$T/out_noplugin"'

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
