#!/usr/bin/env bash
# The project's test command (README): installs what the tests need, then runs them.
# Works on a fresh Debian/Ubuntu machine as root: system packages from apt, Python packages into
# ./.venv (torch==2.13.0 for the all-reduce tests: the CPU wheel, never a multi-GB CUDA build).
# Usage: bash tests/run.sh [pytest args…]
set -euo pipefail
cd "$(dirname "$0")/.."

# apt's package lists are fetched at most once per run (each `apt-get update` is seconds on CI)
apt_updated=
apt_update() { [ -n "$apt_updated" ] || { apt-get update -qq && apt_updated=1; }; }

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
    apt_update
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

# Real Slurm for the simulated cluster (tests/cluster/slurm.py): Debian's slurmctld, slurmd,
# slurm-client and munge (8 packages with their libraries). The tests start their own munged,
# slurmctld and slurmds with private configs, keys, sockets and ports; the packages' own services
# are never used. In CI a failed install fails here; elsewhere the Slurm tests skip.
need_slurm=()
[ -x /usr/sbin/slurmctld ] || need_slurm+=(slurmctld)
[ -x /usr/sbin/slurmd ] || need_slurm+=(slurmd)
command -v srun >/dev/null 2>&1 || need_slurm+=(slurm-client)
[ -x /usr/sbin/munged ] || need_slurm+=(munge)
if [ ${#need_slurm[@]} -gt 0 ]; then
  slurm_ok=0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "tests/run.sh: installing ${need_slurm[*]}"
    apt_update \
      && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_slurm[@]}" >/dev/null \
      && slurm_ok=1
  fi
  if [ "$slurm_ok" != 1 ]; then
    if [ "${CI:-}" = true ]; then
      echo "tests/run.sh: Slurm packages (${need_slurm[*]}) could not be installed (CI=true: failing)" >&2
      exit 1
    fi
    echo "tests/run.sh: missing ${need_slurm[*]}; the real-Slurm tests will skip" >&2
  fi
fi

PY=${PYTHON:-python3}
fresh_venv=
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
  fresh_venv=1
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
# (pip keeps an installed envcheck of the same version, so an older venv needs this second, forced
# install of this tree; a venv made just now got it from the line above: a wheel build saved on CI)
[ -n "$fresh_venv" ] || pip_quietly install -q --disable-pip-version-check --force-reinstall --no-deps .

# The CLI on the lowest and the highest Python it promises (requires-python, README), installed
# as a user installs it (`pip install .`, no torch: cheap), for tests/cli/test_every_python.py.
# The interpreter: pyenv's build (this project's machine image has 3.6-3.13 there), else one on
# PATH, else the distribution's package (apt: Debian 13 has 3.13, Debian 11 and Ubuntu 20.04 3.9).
# With none of these (python.org's downloads are out of reach), the run goes on: the test skips,
# naming the Python it lacks (.venv/pyX.Y.missing says why), and this script says so on stderr.
PYENV_VERSIONS=${PYENV_ROOT:-/root/.pyenv}/versions
find_python() {   # the newest X.Y interpreter here, or nothing
  local minor=$1 p
  p=$(ls -d "$PYENV_VERSIONS/$minor".*/bin/python"$minor" 2>/dev/null | sort -V | tail -1 || true)
  [ -n "$p" ] || p=$(command -v "python$minor" 2>/dev/null || true)
  # a python3.X that cannot make a venv (Debian without python3.X-venv) does not count
  [ -n "$p" ] && "$p" -c 'import ensurepip, venv' >/dev/null 2>&1 && echo "$p"
  return 0
}
for minor in 3.9 3.13; do
  rm -f ".venv/py$minor.missing"
  base=$(find_python "$minor")
  if [ -z "$base" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt_update >/dev/null 2>&1 || true
    if apt-cache show "python$minor-venv" >/dev/null 2>&1; then
      echo "tests/run.sh: installing python$minor python$minor-venv"
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        "python$minor" "python$minor-venv" >/dev/null 2>&1 || true
      base=$(find_python "$minor")
    fi
  fi
  if [ -z "$base" ]; then
    why="no Python $minor here: not under $PYENV_VERSIONS, not on PATH, no python$minor-venv package in apt"
    echo "tests/run.sh: WARNING: $why; tests/cli/test_every_python.py skips it" >&2
    echo "$why" > ".venv/py$minor.missing"
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

# Most tests wait (SSH handshakes, rendezvous, timeouts) rather than compute, so several pytest
# workers overlap those waits even on 2 cores. --dist loadscope keeps a module's tests on one worker,
# so a module-scoped simulated cluster is built once; --no-loadscope-reorder (pytest-xdist >= 3.8)
# hands the modules out in collection order, where tests/conftest.py puts the slowest (SLOW_FIRST)
# first. ENVCHECK_TEST_WORKERS=0 runs in one process.
workers=${ENVCHECK_TEST_WORKERS:-4}
xdist=()
[ "$workers" != 0 ] && xdist=(-n "$workers" --dist loadscope --no-loadscope-reorder)
exec .venv/bin/python -m pytest -q -p no:cacheprovider "${xdist[@]}" "$@"
