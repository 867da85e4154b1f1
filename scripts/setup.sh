#!/usr/bin/env bash
# Installs what svi builds and tests with:
#   - Debian bookworm packages (skipped when already installed);
#   - a project-local Python virtual environment .venv with the pinned MuJoCo wheel
#     (python/requirements.txt: the C SDK svi builds against and the Python bindings);
#   - the svi Python module (python/svi) made importable in .venv through a .pth file.
set -euo pipefail
cd "$(dirname "$0")/.."
PKGS=(build-essential cmake pkg-config libcairo2-dev libglfw3-dev libgl-dev
      libsiconos-numerics-dev xvfb xauth xdotool libgl1-mesa-dri python3 python3-venv)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
if [ ${#missing[@]} -gt 0 ]; then
  echo "svi: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi

PY=${SVI_PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "svi: creating the virtual environment .venv"
  "$PY" -m venv .venv
fi
if ! .venv/bin/python -m pip install -q --disable-pip-version-check -r python/requirements.txt; then
  echo "svi: could not install python/requirements.txt into .venv (PyPI reachable?)" >&2
  exit 1
fi
site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
# a .venv shared with another checkout (a symlink) keeps the svi.pth it has: `import svi` then goes
# on loading that checkout's module and plugin (this checkout's tests set PYTHONPATH and
# SVI_LIBRARY themselves)
if [ -L .venv ] && [ -s "$site/svi.pth" ] && [ "$(cat "$site/svi.pth")" != "$PWD/python" ]; then
  echo "svi: .venv is shared (a symlink); its svi.pth still points to $(cat "$site/svi.pth")"
else
  echo "$PWD/python" > "$site/svi.pth"
fi
