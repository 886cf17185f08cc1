"""The version answers the probe keeps on the node (part kept): `nvcc -V` of a real program
file is asked once, and asked again as soon as the file is replaced, rewritten in place or
touched; a script is asked every time. Real ELF programs built here with gcc, the real probe."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.node.probe_helpers import FIXTURES, PROBE, REAL_DRIVER, load_probe, plant_toolkit, write_script

pytestmark = pytest.mark.skipif(not shutil.which("gcc"), reason="no gcc to build a program with")


def elf_nvcc(path: Path, release: str) -> Path:
    """An ELF `nvcc` printing the real `nvcc -V` text of 12.1 with `release` in its place."""
    return elf_printing(path, (FIXTURES / "nvcc" / "nvcc-12.1.txt").read_text().replace("12.1", release))


def elf_printing(path: Path, text: str, code: int = 0) -> Path:
    """An ELF program at `path` that prints `text` and exits with `code`, whatever its arguments."""
    path.parent.mkdir(parents=True, exist_ok=True)
    src = path.parent / f"{path.name}.c"
    src.write_text('#include <stdio.h>\nint main(void) { fputs(%s, stdout); return %d; }\n' % (json.dumps(text), code))
    out = path.parent / f".{path.name}.new"
    subprocess.run(["gcc", "-O0", "-o", str(out), str(src)], check=True, timeout=120)
    os.replace(out, path)
    return path


def probe(tmp_path: Path, toolkit: Path, **env: str) -> dict:
    full = {"PATH": os.pathsep.join([str(toolkit / "bin"), "/usr/bin", "/bin"]), "HOME": str(tmp_path / "home"),
            "CUDA_HOME": str(toolkit), "LD_LIBRARY_PATH": ""}
    full.update(env)
    proc = subprocess.run([sys.executable, "-", "--only", "cuda"], input=PROBE.read_bytes(), env=full,
                          capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()
    return json.loads(proc.stdout)


def toolkit_version(facts: dict, toolkit: Path) -> str:
    [t] = [t for t in facts["cuda"]["toolkits"] if t["path"] == str(toolkit)]
    assert t["source"] == "nvcc"
    return t["version"]


def kept(tmp_path: Path) -> dict:
    path = tmp_path / "home" / ".cache" / "envcheck" / "answers-1.json"
    return json.loads(path.read_text()) if path.exists() else {}


def answers_for(tmp_path: Path, program: Path) -> list:
    return [k for k in kept(tmp_path) if json.loads(k)[0][0] == str(program)]


def test_an_nvcc_answer_is_kept_and_asked_again_when_its_file_changes(tmp_path):
    cuda = plant_toolkit(tmp_path / "cuda", version_json=None)   # read from its nvcc -V
    nvcc = elf_nvcc(cuda / "bin" / "nvcc", "12.1")
    assert toolkit_version(probe(tmp_path, cuda), cuda) == "12.1"
    [key] = answers_for(tmp_path, nvcc)
    store = kept(tmp_path)
    store[key][1] = store[key][1].replace("release 12.1", "release 11.8")   # what a kept answer says is used
    (tmp_path / "home" / ".cache" / "envcheck" / "answers-1.json").write_text(json.dumps(store))
    assert toolkit_version(probe(tmp_path, cuda), cuda) == "11.8"

    # the toolkit upgraded in place: same path, same mtime, another program
    st = nvcc.stat()
    replaced = elf_nvcc(tmp_path / "nvcc-new", "12.4")
    with open(nvcc, "r+b") as f:
        f.truncate(0)
        f.write(replaced.read_bytes())
    os.utime(nvcc, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert toolkit_version(probe(tmp_path, cuda), cuda) == "12.4"
    # and replaced by a new file
    elf_nvcc(nvcc, "12.6")
    assert toolkit_version(probe(tmp_path, cuda), cuda) == "12.6"
    assert toolkit_version(probe(tmp_path, cuda), cuda) == "12.6"


def test_a_script_is_asked_every_time_and_a_one_line_exec_wrapper_follows_its_program(tmp_path):
    cuda = plant_toolkit(tmp_path / "cuda", version_json=None)   # bin/nvcc: a script printing 12.1
    assert toolkit_version(probe(tmp_path, cuda), cuda) == "12.1"
    assert answers_for(tmp_path, cuda / "bin" / "nvcc") == []
    write_script(cuda / "bin" / "nvcc", 'echo "Cuda compilation tools, release 9.9, V9.9.1"\n')
    assert toolkit_version(probe(tmp_path, cuda), cuda) == "9.9.1"

    real = elf_nvcc(tmp_path / "real" / "nvcc", "12.1")   # Debian's /usr/bin/nvcc, in our tree
    write_script(cuda / "bin" / "nvcc", '\nexec %s "$@"\n' % real)
    assert toolkit_version(probe(tmp_path, cuda), cuda) == "12.1"
    [key] = answers_for(tmp_path, cuda / "bin" / "nvcc")
    assert [f[0] for f in json.loads(key)[1]] == [str(cuda / "bin" / "nvcc"), str(real)]
    elf_nvcc(real, "12.4")   # the program behind the wrapper upgraded
    assert toolkit_version(probe(tmp_path, cuda), cuda) == "12.4"


# Debian's nvidia-cuda-toolkit bin/gcc, the host compiler its nvcc.profile puts first: it execs
# gcc-N for the first g++-N of its list whose --version works. The capture holds its twin bin/g++,
# which execs g++-N; the package's gcc is that text with prog=gcc-N (diffed on Debian 12's 11.8.89)
DEBIAN_GCC_WRAPPER = json.loads((FIXTURES / "nvidia-userspace" / "535.261.03-1" / "capture.json").read_text())[
    "toolkit"]["host_compiler_wrapper"].replace("prog=g++-", "prog=gcc-")


def test_debians_gcc_wrapper_is_kept_with_the_programs_it_picks_in_the_key(tmp_path):
    """nvcc's host compiler through Debian's wrapper: kept for the wrapper, the g++-N it found
    first and the gcc-N it runs; asked again when any of them changes, when it would pick another
    (g++-11 gone, or failing), or when the wrapper is another script."""
    cuda = plant_toolkit(tmp_path / "cuda", version_json=None)
    elf_nvcc(cuda / "bin" / "nvcc", "11.8")
    (cuda / "bin" / "nvcc.profile").write_text(f"PATH\t\t+= {cuda}/bin:\n")
    wrapper = cuda / "bin" / "gcc"
    write_script(wrapper, DEBIAN_GCC_WRAPPER.split("\n", 1)[1])
    compilers = tmp_path / "compilers"   # the only g++-N and gcc-N on PATH
    for n, version in (("11", "11.4.0"), ("10", "10.5.0")):
        elf_printing(compilers / f"g++-{n}", f"g++-{n} (Debian {version}) {version}\n")
        elf_printing(compilers / f"gcc-{n}", version + "\n")
    env = {"PATH": os.pathsep.join([str(cuda / "bin"), str(compilers)])}

    def host_compiler():
        hc = probe(tmp_path, cuda, **env)["cuda"]["nvcc"]["host_compiler"]
        assert (hc["path"], hc["how"]) == (str(wrapper), "nvcc.profile PATH")
        return hc["version"]
    assert host_compiler() == "11.4.0"
    [key] = answers_for(tmp_path, wrapper)
    assert [f[0] for f in json.loads(key)[1]] == [str(wrapper), str(compilers / "g++-11"), str(compilers / "gcc-11")]
    store = kept(tmp_path)
    store[key][1] = "11.9.9\n"   # what a kept answer says is used: the wrapper is not run
    (tmp_path / "home" / ".cache" / "envcheck" / "answers-1.json").write_text(json.dumps(store))
    assert host_compiler() == "11.9.9"
    elf_printing(compilers / "gcc-11", "11.5.0\n")   # gcc-11 upgraded
    assert host_compiler() == "11.5.0"
    elf_printing(compilers / "g++-11", "", code=1)   # a g++-11 that fails: the wrapper goes on to 10
    assert host_compiler() == "10.5.0"
    (compilers / "g++-11").unlink()
    assert host_compiler() == "10.5.0"
    assert len(answers_for(tmp_path, wrapper)) == 4
    write_script(wrapper, DEBIAN_GCC_WRAPPER.split("\n", 1)[1].replace("prog=false", "prog=false\n: next"))
    assert host_compiler() == "10.5.0"   # another script: run every time, never kept
    store = kept(tmp_path)
    assert len(answers_for(tmp_path, wrapper)) == 4
    for k in answers_for(tmp_path, wrapper):
        store[k][1] = "9.9.9\n"
    (tmp_path / "home" / ".cache" / "envcheck" / "answers-1.json").write_text(json.dumps(store))
    assert host_compiler() == "10.5.0"
    (compilers / "g++-10").unlink()   # no g++ of its list at all: the wrapper fails, nothing kept
    res = probe(tmp_path, cuda, **env)["cuda"]["nvcc"]["host_compiler"]
    assert res == {"path": str(wrapper), "version": None, "how": "nvcc.profile PATH"}


def test_with_the_cache_off_nothing_is_kept(tmp_path):
    cuda = plant_toolkit(tmp_path / "cuda", version_json=None)
    elf_nvcc(cuda / "bin" / "nvcc", "12.1")
    assert toolkit_version(probe(tmp_path, cuda, ENVCHECK_PROBE_CACHE="off"), cuda) == "12.1"
    assert not (tmp_path / "home" / ".cache").exists()


SMI = shutil.which("nvidia-smi", path="/usr/bin")


@pytest.mark.skipif(REAL_DRIVER or not SMI or not open(SMI, "rb").read(4) == b"\x7fELF",
                    reason="needs the packaged nvidia-smi without a loaded driver (tests/nvidia_userspace.sh)")
def test_nvidia_smis_failure_is_kept_for_its_file_and_asked_again_when_it_changes(tmp_path):
    smi = tmp_path / "bin" / "nvidia-smi"   # the packaged program, where the test may touch it
    smi.parent.mkdir()
    shutil.copy2(os.path.realpath(SMI), smi)

    def driver(**env):
        full = {"PATH": os.pathsep.join([str(smi.parent), "/usr/bin", "/bin"]), "HOME": str(tmp_path / "home")}
        full.update(env)
        proc = subprocess.run([sys.executable, "-", "--only", "gpus"], input=PROBE.read_bytes(), env=full,
                              capture_output=True, timeout=120)
        assert proc.returncode == 0, proc.stderr.decode()
        return json.loads(proc.stdout)["driver"]
    asked = driver(ENVCHECK_PROBE_CACHE="off")
    assert asked["state"] == "module-not-loaded" and "NVIDIA-SMI has failed" in asked["raw"]
    assert driver() == asked and len(answers_for(tmp_path, smi)) == 1
    store_file = tmp_path / "home" / ".cache" / "envcheck" / "answers-1.json"
    written = store_file.stat().st_ino
    assert driver() == asked   # from what was kept
    assert store_file.stat().st_ino == written   # and nothing new: the store is not written again
    [key] = answers_for(tmp_path, smi)
    store = kept(tmp_path)
    store[key][1] = store[key][1].replace("NVIDIA-SMI has failed", "KEPT: NVIDIA-SMI has failed")
    (tmp_path / "home" / ".cache" / "envcheck" / "answers-1.json").write_text(json.dumps(store))
    assert driver()["raw"].startswith("KEPT: ")
    os.utime(smi)   # touched (an upgrade, a reinstall): asked again
    assert driver() == asked


def nvml_driver(tmp_path: Path, **env: str) -> dict:
    """The driver section as a node's system python3 reads it: through ctypes (no pynvml)."""
    no_pynvml = tmp_path / "no-pynvml"
    no_pynvml.mkdir(exist_ok=True)
    (no_pynvml / "pynvml.py").write_text("raise ImportError('not installed on this node')\n")
    full = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home"), "PYTHONPATH": str(no_pynvml)}
    full.update(env)
    proc = subprocess.run([sys.executable, "-", "--only", "gpus"], input=PROBE.read_bytes(), env=full,
                          capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()
    return json.loads(proc.stdout)["driver"]


@pytest.mark.skipif(REAL_DRIVER or not SMI, reason="needs the packaged NVIDIA userspace without a loaded driver "
                                                   "(tests/nvidia_userspace.sh)")
def test_nvmls_failure_to_start_is_kept_for_its_library_and_asked_again_when_it_changes(tmp_path):
    packaged = (nvml_driver(tmp_path, ENVCHECK_PROBE_CACHE="off").get("userspace") or {}).get("library")
    if not packaged:
        pytest.skip("the packaged libnvidia-ml.so.1 does not load here")
    lib = tmp_path / "lib" / os.path.basename(packaged)   # the real library, where the test may touch it
    lib.parent.mkdir()
    shutil.copy2(packaged, lib)
    (lib.parent / "libnvidia-ml.so.1").symlink_to(lib.name)
    env = {"LD_LIBRARY_PATH": str(lib.parent)}
    asked = nvml_driver(tmp_path, ENVCHECK_PROBE_CACHE="off", **env)
    assert asked["userspace"]["library"] == str(lib)
    assert asked["nvml_error"] == {"code": 9, "text": "Driver Not Loaded"}
    assert nvml_driver(tmp_path, **env) == asked
    [key] = [k for k in kept(tmp_path) if json.loads(k)[0] == "nvmlInit"]
    assert json.loads(key)[1][0][0] == str(lib)
    assert nvml_driver(tmp_path, **env) == asked   # from what was kept
    store = kept(tmp_path)
    store[key][2] = "nvmlInit_v2: KEPT Driver Not Loaded"
    (tmp_path / "home" / ".cache" / "envcheck" / "answers-1.json").write_text(json.dumps(store))
    assert nvml_driver(tmp_path, **env)["nvml_error"]["text"] == "KEPT Driver Not Loaded"   # NVML not asked
    os.utime(lib)   # touched (an upgrade, a reinstall): asked again
    assert nvml_driver(tmp_path, **env) == asked


def test_only_failures_the_library_and_the_module_decide_are_kept():
    probe = load_probe()
    key = lambda module, listed, modprobe: json.dumps(["nvmlInit", [], module, listed, modprobe, None, None])  # noqa: E731
    assert probe.nvml_failure_keepable(key(None, False, False), probe.NVML_DRIVER_NOT_LOADED)
    # a module the kernel lists, or one nvidia-modprobe may load at the next run: asked each time
    assert not probe.nvml_failure_keepable(key(None, True, False), probe.NVML_DRIVER_NOT_LOADED)
    assert not probe.nvml_failure_keepable(key(None, False, True), probe.NVML_DRIVER_NOT_LOADED)
    assert not probe.nvml_failure_keepable(key("535.104.05", True, False), probe.NVML_DRIVER_NOT_LOADED)
    # a mismatch is the library against the loaded module's version, both in the key
    assert probe.nvml_failure_keepable(key("550.127.05", True, False), probe.NVML_LIB_RM_VERSION_MISMATCH)
    assert not probe.nvml_failure_keepable(key(None, False, False), probe.NVML_LIB_RM_VERSION_MISMATCH)
    assert not probe.nvml_failure_keepable(key("550.127.05", True, False), 999)   # NVML_ERROR_UNKNOWN


@pytest.mark.skipif(not os.path.exists("/etc/ld.so.cache"), reason="no loader cache here")
def test_ldconfigs_lines_of_the_wanted_libraries_are_kept_with_the_loader_cache_in_the_key(tmp_path):
    """The libcuda.so.1 the cache lists leads cuda-compat (and must survive the filter of the
    lines the probe parses); `ldconfig -p` is asked once for the same program and cache file."""
    compat = tmp_path / "usr-local" / "cuda-12.4" / "compat"
    compat.mkdir(parents=True)
    (compat / "libcuda.so.550.54.15").write_bytes(b"\x7fELF")
    (compat / "libcuda.so.1").symlink_to("libcuda.so.550.54.15")
    listing = (FIXTURES / "misc" / "ldconfig-p.txt").read_text().replace(
        "/usr/lib/x86_64-linux-gnu/libcuda.so.1", str(compat / "libcuda.so.1"))
    ldconfig = elf_printing(tmp_path / "bin" / "ldconfig", listing)

    def compat_found(**env):
        full = {"PATH": os.pathsep.join([str(ldconfig.parent), "/usr/bin", "/bin"]), "HOME": str(tmp_path / "home"),
                "LD_LIBRARY_PATH": ""}
        full.update(env)
        proc = subprocess.run([sys.executable, "-", "--only", "cuda_compat"], input=PROBE.read_bytes(), env=full,
                              capture_output=True, timeout=120)
        assert proc.returncode == 0, proc.stderr.decode()
        found = json.loads(proc.stdout)["cuda_compat"]
        return found["version"], found["via"]
    assert compat_found(ENVCHECK_PROBE_CACHE="off") == ("550.54.15", "ldconfig")
    assert compat_found() == ("550.54.15", "ldconfig")
    [key] = answers_for(tmp_path, ldconfig)
    assert [i[0] for i in json.loads(key)[1]] == [str(ldconfig), "/etc/ld.so.cache"]
    kept_lines = kept(tmp_path)[key][1].splitlines()   # the lines of the libraries read, no other
    assert any("libcuda.so.1" in line for line in kept_lines) and any("libcudnn.so.7" in line for line in kept_lines)
    assert not [line for line in kept_lines if "libz" in line or "libc.so" in line or "found in cache" in line]
    store = kept(tmp_path)
    store[key][1] = store[key][1].replace(str(compat), "/nowhere/cuda-12.4/compat")
    (tmp_path / "home" / ".cache" / "envcheck" / "answers-1.json").write_text(json.dumps(store))
    assert compat_found() == (None, None)   # what was kept is what the probe read
    os.utime(ldconfig)   # touched: asked again
    assert compat_found() == ("550.54.15", "ldconfig")
