#!/usr/bin/env bash
# The project's test command (README): installs what the tests need, then runs them.
# Works on a fresh Debian/Ubuntu machine as root: system packages from apt, Python packages into
# ./.venv (torch==2.13.0 for the all-reduce tests: the CPU wheel, never a multi-GB CUDA build).
# Usage: bash tests/run.sh [pytest args…]
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v sshd >/dev/null 2>&1 || [ -x /usr/sbin/sshd ] || need_apt+=(openssh-server)
command -v ssh >/dev/null 2>&1 || need_apt+=(openssh-client)
command -v makeself >/dev/null 2>&1 || need_apt+=(makeself)
command -v ip >/dev/null 2>&1 || need_apt+=(iproute2)
command -v gcc >/dev/null 2>&1 || need_apt+=(gcc)
command -v unshare >/dev/null 2>&1 || need_apt+=(util-linux)
command -v xz >/dev/null 2>&1 || need_apt+=(xz-utils)
command -v sudo >/dev/null 2>&1 || need_apt+=(sudo)
command -v curl >/dev/null 2>&1 || command -v wget >/dev/null 2>&1 || need_apt+=(curl)
# Debian's (older) PCI ID database: the packaged GPU table must keep every board it knows (tests/gpus/test_pci_table.py)
[ -f /usr/share/misc/pci.ids ] || need_apt+=(pci.ids)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "tests/run.sh: installing ${need_apt[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
  else
    echo "tests/run.sh: missing ${need_apt[*]}; tests that need them will skip" >&2
  fi
fi

# NVIDIA's real userspace from the distribution (libnvidia-ml, nvidia-smi, the CUDA toolkit): about
# 2 minutes and 1.6 GB the first time, a dpkg check after that. In CI the tests that use it must
# run, so a failed install fails here; elsewhere they skip, saying how to install it.
if ! bash tests/nvidia_userspace.sh; then
  if [ "${CI:-}" = true ]; then
    echo "tests/run.sh: NVIDIA userspace packages could not be installed (CI=true: failing)" >&2
    exit 1
  fi
  echo "tests/run.sh: NVIDIA userspace packages missing; the tests that use them will skip" >&2
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi

# pip's output is kept; only its harmless notes about running as root are dropped. A failed
# install stops here with pip's own reason, instead of pytest failing later as "No module named".
pip_quietly() {
  local log rc=0
  log=$(mktemp)
  .venv/bin/python -m pip "$@" >"$log" 2>&1 || rc=$?
  grep -v -e '^WARNING: Location' -e 'Running pip as the' -e 'pip version' -e '^\[notice\]' "$log" >&2 || true
  rm -f "$log"
  if [ "$rc" != 0 ]; then
    echo "tests/run.sh: FAILED: pip $* (exit $rc); see pip's message above" >&2
    exit "$rc"
  fi
}
.venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip >/dev/null 2>&1 \
  || echo "tests/run.sh: note: pip could not upgrade itself; going on with $(.venv/bin/python -m pip --version)" >&2
# a real (non-editable) install: the tests then exercise the wheel, matrix and node files included
pip_quietly install -q --disable-pip-version-check ".[test,plot]" 'torch==2.13.0'
pip_quietly install -q --disable-pip-version-check --force-reinstall --no-deps .

# The CLI on the lowest and the highest Python it promises (requires-python, README), installed
# as a user installs it (`pip install .`, no torch: cheap), for tests/cli/test_every_python.py.
# The machine image has pyenv builds of both; in CI a missing one fails here, elsewhere the test
# skips saying so.
PYENV_VERSIONS=${PYENV_ROOT:-/root/.pyenv}/versions
for minor in 3.9 3.13; do
  base=$(ls -d "$PYENV_VERSIONS/$minor".*/bin/python"$minor" 2>/dev/null | sort -V | tail -1 || true)
  if [ -z "$base" ]; then
    if [ "${CI:-}" = true ]; then
      echo "tests/run.sh: no Python $minor under $PYENV_VERSIONS (CI=true: failing)" >&2
      exit 1
    fi
    echo "tests/run.sh: no Python $minor under $PYENV_VERSIONS; the test of the CLI on it will skip" >&2
    continue
  fi
  [ -x ".venv/py$minor/bin/python" ] || "$base" -m venv ".venv/py$minor"
  stamp=".venv/py$minor/.installed"
  # reinstalled only when a packaged file changed since (each install is ~10 s of building)
  if [ -f "$stamp" ] && [ -z "$(find envcheck pyproject.toml compat_matrix.yaml playbooks README.md -newer "$stamp" -print -quit)" ]; then
    continue
  fi
  log=$(mktemp)
  if ! ".venv/py$minor/bin/python" -m pip install -q --disable-pip-version-check . >"$log" 2>&1; then
    cat "$log" >&2
    echo "tests/run.sh: FAILED: pip install . under Python $minor; see pip's message above" >&2
    exit 1
  fi
  rm -f "$log"
  touch "$stamp"
done

# The tests must never borrow torch from the machine's own python3: every worker they start names
# an interpreter from .venv. So the python3 first on PATH is a bare venv that has no torch (nor
# anything else), and tests/conftest.py refuses to run when the python3 on PATH has torch.
if [ ! -x .venv/bare/bin/python3 ]; then
  "$(.venv/bin/python -c 'import sys; print(getattr(sys, "_base_executable", sys.executable))')" \
    -m venv --without-pip .venv/bare
fi
export PATH="$PWD/.venv/bare/bin:$PATH"
unset PYTHONPATH

exec .venv/bin/python -m pytest -q -p no:cacheprovider "$@"
