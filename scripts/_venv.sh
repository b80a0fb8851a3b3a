# Shared by scripts/demo and scripts/test: make .venv and install argent into it.
# Works on a fresh Debian machine that has only python3 (installs python3-venv when root).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  if ! "$PY" -m venv .venv 2>/dev/null; then
    rm -rf .venv
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      echo "==> installing python3-venv" >&2
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
      "$PY" -m venv .venv
    else
      echo "error: '$PY -m venv' failed; install your distribution's python3-venv package and retry." >&2
      exit 2
    fi
  fi
fi
log=$(mktemp)
# The distribution was called `argent` before it became `argent-flows`: a .venv made then holds both.
if [ -n "$(.venv/bin/python -m pip list --disable-pip-version-check --format=freeze 2>/dev/null | grep -i '^argent==')" ]; then
  .venv/bin/python -m pip uninstall --disable-pip-version-check -y -q argent >/dev/null 2>&1 || true
fi
rm -rf argent.egg-info  # its metadata, which the checkout on sys.path would still offer beside the new one
if ! { .venv/bin/python -m pip install --disable-pip-version-check --upgrade pip \
       && .venv/bin/python -m pip install --disable-pip-version-check -e ".${EXTRAS:-}"; } >"$log" 2>&1; then
  cat "$log" >&2
  rm -f "$log"
  echo "error: installing argent into .venv failed (pip output above)." >&2
  exit 2
fi
rm -f "$log"
