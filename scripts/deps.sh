#!/usr/bin/env bash
# Installs the Debian bookworm packages svi builds and tests with (skips what is already there).
set -euo pipefail
PKGS=(build-essential cmake pkg-config libmujoco-dev libqhull-dev liblapacke-dev libcairo2-dev libglfw3-dev libgl-dev
      libsiconos-numerics-dev xvfb xauth xdotool libgl1-mesa-dri)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "svi: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
