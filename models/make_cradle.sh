#!/bin/sh
# make_cradle.sh N -- Newton's cradle of N equal steel balls on pendulum strings, with the
# propagative law at restitution 1 (elastic): cradle_3.xml and cradle_5.xml are made with it.
#   sh models/make_cradle.sh 5 > models/cradle_5.xml
N=${1:-5}
awk -v N="$N" 'BEGIN {
  R = 0.02; L = 0.3; m = 0.1; I = 0.4 * m * R * R; gap = 1e-4
  w = sqrt(2 * 9.81 * L * (1 - cos(30 * 3.14159265358979 / 180))) / L   # released from -30 deg
  x0 = -R * (N - 1)
  print "<!--"
  printf "  cradle_%d.xml: Newton'"'"'s cradle, %d equal balls on pendulum strings, hanging in a row and\n", N, N
  print "  touching; the first ball swings in and hits the row.  Made by models/make_cradle.sh."
  print ""
  print "  What it shows: restitution through a row of resting contacts (Seghete and Murphey, Example 1).  With"
  print "  the propagative law at e = 1 the impulse passes through the resting balls and the last ball leaves"
  print "  with the striker'"'"'s speed while the others stay at rest -- whatever order the contacts are resolved"
  print "  in (neighbouring normals are coupled with c = -1/2: Theorem 3).  Energy is conserved by the impact."
  print "  The set-valued (inelastic) law on the same model: newtons_cradle.xml."
  print ""
  printf "  Model: ball radius R = %g m, mass %g kg, inertia 2/5 m R^2; massless string L = %g m from pivots\n", R, m, L
  print "  2R apart at z = 0.5, so the hanging balls touch; one hinge about (0,-1,0) per ball (phi > 0 swings"
  print "  toward +x).  Balls are frictionless (condim 1): the law is frictionless anyway (docs/theory.md)."
  print "  gap = 2.5 mm per geom (5 mm per pair): contacts are reported early."
  print ""
  print "  Initial states:"
  print "    qpos0 (reset)  : all balls hanging, touching, at rest."
  printf "    key \"impact\"   : ball 1 %g m from ball 2, swinging in at the speed of a release from -30 deg,\n", gap
  printf "                     phidot = %.6f rad/s (%.4f m/s).\n", w, w * L
  print "    key \"touch\"    : the same, ball 1 touching ball 2 (1e-9 m deep): the impact in the first step,"
  print "                     at exactly the hanging geometry."
  print "    key \"pulled\"   : ball 1 pulled back to -30 deg, at rest."
  print "-->"
  printf "<mujoco model=\"cradle_%d\">\n", N
  print "  <compiler angle=\"radian\"/>"
  print "  <option timestep=\"0.001\" cone=\"elliptic\"/>"
  print ""
  print "  <extension>"
  print "    <plugin plugin=\"svi.impact\">"
  print "      <instance name=\"impacts\">"
  print "        <config key=\"law\" value=\"propagative\"/>"
  print "        <config key=\"restitution\" value=\"1\"/>"
  print "      </instance>"
  print "    </plugin>"
  print "  </extension>"
  print ""
  print "  <asset>"
  print "    <texture name=\"grid\" type=\"2d\" builtin=\"checker\" rgb1=\".2 .3 .4\" rgb2=\".3 .4 .5\" width=\"256\" height=\"256\"/>"
  print "    <material name=\"grid\" texture=\"grid\" texrepeat=\"8 8\" reflectance=\"0.1\"/>"
  print "    <material name=\"steel\" rgba=\".7 .7 .75 1\" specular=\"1\" shininess=\"1\" reflectance=\"0.3\"/>"
  print "  </asset>"
  print ""
  print "  <default>"
  print "    <geom condim=\"1\" margin=\"0\" gap=\"0.0025\"/>"
  print "    <default class=\"ball\">"
  printf "      <geom type=\"sphere\" size=\"%g\" pos=\"0 0 -%g\" contype=\"1\" conaffinity=\"1\" material=\"steel\"/>\n", R, L
  print "    </default>"
  print "    <default class=\"string\">"
  printf "      <geom type=\"capsule\" size=\"0.001\" fromto=\"0 0 0 0 0 -%g\" contype=\"0\" conaffinity=\"0\" group=\"1\" gap=\"0\" rgba=\".1 .1 .1 1\"/>\n", L - R
  print "    </default>"
  print "    <joint type=\"hinge\" axis=\"0 -1 0\" pos=\"0 0 0\"/>"
  print "  </default>"
  print ""
  print "  <worldbody>"
  print "    <light pos=\"0 -1 1.5\" dir=\"0 .5 -1\"/>"
  print "    <geom name=\"floor\" type=\"plane\" size=\"0.5 0.5 0.1\" material=\"grid\" contype=\"0\" conaffinity=\"0\"/>"
  printf "    <geom name=\"bar\" type=\"capsule\" size=\"0.005\" fromto=\"%g 0 0.5 %g 0 0.5\" contype=\"0\" conaffinity=\"0\" rgba=\".3 .3 .3 1\"/>\n", x0 - 0.05, -x0 + 0.05
  for (i = 1; i <= N; i++) {
    printf "    <body name=\"ball%d\" pos=\"%g 0 0.5\">\n", i, x0 + 2 * R * (i - 1)
    printf "      <joint name=\"phi%d\"/>\n", i
    printf "      <inertial pos=\"0 0 -%g\" mass=\"%g\" diaginertia=\"%g %g %g\"/>\n", L, m, I, I, I
    print "      <geom class=\"string\"/>"
    printf "      <geom name=\"ball%d\" class=\"ball\"/>\n", i
    print "    </body>"
  }
  print "  </worldbody>"
  print ""
  print "  <keyframe>"
  q = sprintf("%.16g", -gap / L); qd = sprintf("%.16g", w); z = ""
  for (i = 2; i <= N; i++) z = z " 0"
  printf "    <key name=\"impact\" qpos=\"%s%s\" qvel=\"%s%s\"/>\n", q, z, qd, z
  printf "    <key name=\"touch\"  qpos=\"%.16g%s\" qvel=\"%s%s\"/>\n", 1e-9 / L, z, qd, z
  printf "    <key name=\"pulled\" qpos=\"%.16g%s\" qvel=\"0%s\"/>\n", -30 * 3.14159265358979 / 180, z, z
  print "  </keyframe>"
  print "</mujoco>"
}'
