"""The distribution's real NVIDIA userspace in tests: whether it is installed (and which version),
and a way to run a command on THIS machine as if it were not (a private mount namespace hiding
it, the same mounts the simulated hosts use). tests/nvidia_userspace.sh installs it; tests/run.sh
runs that, and in CI (CI=true) a missing package fails the tests that need it instead of
skipping them."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Dict, List, Optional

import pytest

from tests.cluster.sim import hide_nvidia_script

PACKAGES = ("libnvidia-ml1", "nvidia-smi", "nvidia-cuda-toolkit")
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "nvidia-userspace"


def deb_version(package: str) -> Optional[str]:
    """The installed version of a Debian package, None when it is not installed (or no dpkg)."""
    if not shutil.which("dpkg-query"):
        return None
    p = subprocess.run(["dpkg-query", "-W", "-f=${Status}|${Version}", package],
                       capture_output=True, text=True)
    status, _, version = p.stdout.partition("|")
    return version if p.returncode == 0 and status == "install ok installed" else None


def upstream(version: str) -> str:
    """Debian version -> the upstream one: '535.261.03-1' -> '535.261.03',
    '11.8.89~11.8.0-5~deb12u1' -> '11.8.89'."""
    return version.rsplit("-", 1)[0].split("~")[0]


def require_userspace() -> Dict[str, str]:
    """{package: version} of the real userspace, or skip; in CI a missing package is a failure:
    the tests that prove envcheck against the real library must not quietly stop running."""
    versions = {p: deb_version(p) for p in PACKAGES}
    missing = [p for p, v in versions.items() if not v]
    if missing:
        why = (f"{' '.join(missing)} not installed (bash tests/nvidia_userspace.sh installs "
               f"them on Debian/Ubuntu)")
        if os.environ.get("CI") == "true":
            pytest.fail(why)
        pytest.skip(why)
    return versions  # type: ignore[return-value]


def fixture_dir(versions: Dict[str, str]) -> Path:
    return FIXTURES / versions["libnvidia-ml1"]


def hidden(argv: List[str], state_dir: Path, proc_driver_version: Optional[str] = None) -> List[str]:
    """argv run in a private mount namespace without the NVIDIA userspace (as a machine that never
    had it), or, with proc_driver_version, with /proc/driver/nvidia/version saying a kernel module
    of that text is loaded (and the userspace left visible)."""
    if proc_driver_version is None:
        setup = hide_nvidia_script(str(state_dir))
    else:
        state_dir.mkdir(parents=True, exist_ok=True)
        (state_dir / "version").write_text(proc_driver_version)
        setup = (f"mount -t tmpfs -o mode=755 sim /proc/driver && mkdir /proc/driver/nvidia && "
                 f"cp {state_dir / 'version'} /proc/driver/nvidia/version; ")
    return ["unshare", "-m", "--propagation", "private", "sh", "-ec", setup + 'exec "$@"', "hidden", *argv]


def can_hide() -> Optional[str]:
    """Why a private mount namespace cannot be had here, or None."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        return "needs root and unshare"
    p = subprocess.run(["unshare", "-m", "--propagation", "private", "true"], capture_output=True)
    return None if p.returncode == 0 else "unshare -m fails here: " + p.stderr.decode().strip()
