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
.venv/bin/python -m pip install -q --upgrade pip >/dev/null 2>&1 || true
# a real (non-editable) install: the tests then exercise the wheel, matrix and node files included
.venv/bin/python -m pip install -q --disable-pip-version-check ".[test,plot]" 'torch==2.13.0' 2>&1 \
  | grep -v -e '^WARNING: Location' -e 'Running pip as the' || true
.venv/bin/python -m pip install -q --disable-pip-version-check --force-reinstall --no-deps . 2>&1 \
  | grep -v -e '^WARNING: Location' -e 'Running pip as the' || true

exec .venv/bin/python -m pytest -q -p no:cacheprovider "$@"
