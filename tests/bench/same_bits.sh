#!/usr/bin/env bash
# The AVX2 kernels and their scalar twins return the same bits (docs/theory.md 4.4, 5.3): every
# example under every branch rule gives the same hash of its v+ from BUILD_A's svi-bench (the
# AVX2 clones on a CPU that has them) and BUILD_B's (built with -DSVI_NO_MULTIVERSION); and one
# large event (a box landing on a stack of 12 boxes: 48 contacts, LCPs of 288 and 336 rows, the
# product-form paths only n >= 64 takes) gives the same hash of qvel from both svi-bench-plugin;
# and Algorithm 2 on a box landing on an edge (two spatial contacts: the spatial pattern maps and
# their AVX2 scan, svi_modes.c) writes the same CSV from both svi-sample; and the sliding plate of
# tests/data (a 700-row path the product form hands over to the low-rank Lemke) the same qvel.
# Usage: tests/bench/same_bits.sh BUILD_A BUILD_B [SAMPLES]
set -euo pipefail
A=$1 B=$2 K=${3:-3000}
status=0
for ex in rocking_block box_wall compass_gait disk_stack ramone zeno_block; do
  for rule in auto lemke random enumerate; do
    a=$("$A/svi-bench" --one "$ex" "$rule" "$K")
    b=$("$B/svi-bench" --one "$ex" "$rule" "$K")
    if [ "$a" != "$b" ]; then
      echo "DIFFERENT: $ex $rule"; echo "  $A: $a"; echo "  $B: $b"; status=1
    fi
  done
done
model=$("$A/svi-bench-plugin" --tower 12)
a=$("$A/svi-bench-plugin" --impact "$model" 1)
b=$("$B/svi-bench-plugin" --impact "$model" 1)
if [ "${a##*hash of qvel }" != "${b##*hash of qvel }" ]; then
  echo "DIFFERENT: tower of 12"; echo "  $A: $a"; echo "  $B: $b"; status=1
fi
root=$(cd "$(dirname "$0")/../.." && pwd)
# the sliding plate and a quadruped (nv = 22) sliding onto 100 points: the product form's path
# handed over to the low-rank Lemke (its ratio scan, tie pass and lexicographic columns, theory 5.2)
for m in plate_slide_100 quad_slide_100; do
  a=$("$A/svi-bench-plugin" --impact "$root/tests/data/$m.xml" 1)
  b=$("$B/svi-bench-plugin" --impact "$root/tests/data/$m.xml" 1)
  if [ "${a##*hash of qvel }" != "${b##*hash of qvel }" ]; then
    echo "DIFFERENT: $m"; echo "  $A: $a"; echo "  $B: $b"; status=1
  fi
done
csv_a=$(mktemp) csv_b=$(mktemp)
"$A/svi-sample" --model "$root/models/scenes/box_edge.xml" --samples "$K" --threads 2 --csv "$csv_a" --plot - > /dev/null
"$B/svi-sample" --model "$root/models/scenes/box_edge.xml" --samples "$K" --threads 2 --csv "$csv_b" --plot - > /dev/null
if ! cmp -s "$csv_a" "$csv_b"; then echo "DIFFERENT: box_edge Algorithm 2 samples"; status=1; fi
rm -f "$csv_a" "$csv_b"
[ $status -eq 0 ] && echo "same bits: 6 examples x 4 rules, $K samples each, a 48-contact event, a sliding plate's and a quadruped's 100-contact events handed over to the low-rank Lemke, and $K Algorithm 2 samples of a box on an edge ($A vs $B)"
exit $status
