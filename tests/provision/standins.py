"""Builders for the things NVIDIA ships that cannot be downloaded here, made of real parts:

- cuda_runfile(): a real makeself archive (Debian's `makeself`) around a stand-in installer that
  accepts exactly its generation's flags (perl <= 10.0 / new >= 10.1) and fails on the others,
  writes a toolkit tree (bin/nvcc printing real `nvcc -V` text, include/cuda.h, lib64 with
  symlinks, version.txt or version.json), its logs, and the /usr/local/cuda symlink as the real
  one does. Modes: "ok", "fail" (partial tree, exit 1), "broken0" (partial tree, exit 0 with the
  "Incomplete installation" banner: the trap of judging by exit status).
- cudnn_archive(): a real tarball in the old (cuda/include, cuda/lib64, .tgz) or new
  (<name>/include, <name>/lib, .tar.xz) layout with the libcudnn.so -> .so.N -> .so.N.M.P chain.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tarfile
from pathlib import Path
from typing import Optional

NVCC_BUILT = {
    "9": ("2005-2017", "Fri_Sep__1_21:08:03_CDT_2017"),
    "10": ("2005-2018", "Sat_Aug_25_21:08:01_CDT_2018"),
    "11": ("2005-2022", "Wed_Sep_21_10:33:58_PDT_2022"),
    "12": ("2005-2024", "Thu_Mar_28_02:18:24_PDT_2024"),
    "13": ("2005-2025", "Wed_Aug_20_01:58:59_PM_PDT_2025"),
}

INSTALLER = r'''#!/bin/sh
# Stand-in for NVIDIA's CUDA @GEN@ installer (toolkit @VERSION@); accepts only that generation's flags.
VERSION=@VERSION@; SHORT=@SHORT@; GEN=@GEN@; MODE=@MODE@
silent=0; toolkit=0; tkpath=/usr/local/cuda-$SHORT; tmpdir=/tmp; defroot=
for a in "$@"; do
  case "$a" in
    --silent) silent=1 ;;
    --toolkit) toolkit=1 ;;
    --toolkitpath=*) tkpath=${a#*=} ;;
    --tmpdir=*) tmpdir=${a#*=} ;;
    --override|--samples) ;;
    --driver) echo "installing NVIDIA driver" >> /var/log/nvidia-installer.log ;;
    --verbose)
      if [ $GEN = new ]; then echo "Unknown option: --verbose" >&2; exit 1; fi ;;
    --defaultroot=*|--no-drm|--no-man-page|--installpath=*)
      if [ $GEN = perl ]; then echo "Unknown option: $a" >&2; echo "Usage: cuda-installer.pl -silent -toolkit -toolkitpath=PATH" >&2; exit 1; fi
      case "$a" in --defaultroot=*) defroot=${a#*=} ;; esac ;;
    *) echo "Unknown option: $a" >&2; exit 1 ;;
  esac
done
if [ $silent = 0 ]; then
  printf 'Do you accept the previously read EULA?\naccept/decline/quit: '
  read answer || { echo; echo "no answer" >&2; exit 1; }
fi
if [ $GEN = new ]; then
  # the real binary opens this hard-coded file and crashes when someone else owns it
  if [ -e /tmp/cuda-installer.log ] && [ ! -O /tmp/cuda-installer.log ]; then
    echo "Segmentation fault (core dumped)" >&2; exit 139
  fi
  echo "[INFO]: Driver not installed." > /tmp/cuda-installer.log
  LOG=/var/log/cuda-installer.log
  { echo "[INFO]: Starting installation of toolkit $VERSION to $tkpath"; } >> $LOG || { echo "cannot write $LOG" >&2; exit 1; }
else
  LOG=/tmp/cuda_install_$$.log
  echo "Installing the CUDA Toolkit in $tkpath ..." > $LOG
fi
[ $toolkit = 1 ] || { echo "nothing to install (no --toolkit)" >> $LOG; exit 0; }
mkdir -p "$tkpath/bin" "$tkpath/lib64" "$tkpath/include" "$tmpdir/cuda-stand-in.$$" || exit 1
rm -rf "$tmpdir/cuda-stand-in.$$"
ln -sfn "$tkpath" /usr/local/cuda
if [ $MODE = fail ]; then
  echo "[ERROR]: Install of cuda-nvcc failed: write error" >> $LOG
  echo "Installation failed. See log at $LOG for details."
  exit 1
fi
if [ $MODE != broken0 ]; then
  cat > "$tkpath/bin/nvcc" <<NVCC
#!/bin/sh
case "\$1" in -V|--version) ;; *) echo "nvcc stand-in: only -V" >&2; exit 1 ;; esac
echo "nvcc: NVIDIA (R) Cuda compiler driver"
echo "Copyright (c) @COPY@ NVIDIA Corporation"
echo "Built on @BUILT@"
echo "Cuda compilation tools, release $SHORT, V@NVCCV@"
@BUILDLINE@
NVCC
  chmod 755 "$tkpath/bin/nvcc"
  if [ @VFILE@ = version.txt ]; then echo "CUDA Version $VERSION" > "$tkpath/version.txt"
  else printf '{\n   "cuda" : {\n      "name" : "CUDA SDK",\n      "version" : "%s"\n   }\n}\n' "$VERSION" > "$tkpath/version.json"; fi
fi
echo "#define CUDA_VERSION @CUDAVER@" > "$tkpath/include/cuda.h"
cp "$(dirname "$0")/libcudart.so" "$tkpath/lib64/libcudart.so.$VERSION"
ln -sf "libcudart.so.$VERSION" "$tkpath/lib64/libcudart.so.@SOMAJOR@"
ln -sf "libcudart.so.@SOMAJOR@" "$tkpath/lib64/libcudart.so"
echo "[INFO]: Finished installation" >> $LOG
echo "==========="
echo "= Summary ="
echo "==========="
echo
echo "Driver:   Not Selected"
echo "Toolkit:  Installed in $tkpath/"
echo
if [ $GEN = new ]; then
  echo "To uninstall the CUDA Toolkit, run cuda-uninstaller in $tkpath/bin"
  echo "***WARNING: Incomplete installation! This installation did not install the CUDA Driver. A driver of version at least 410.00 is required for CUDA $SHORT functionality to work."
  echo "Logfile is /var/log/cuda-installer.log"
else
  echo "Logfile is $LOG"
fi
exit 0
'''

# makeself's own header refuses flags it does not know; NVIDIA's hands them to the installer.
_REFUSE = ('\techo Unrecognized flag : "$1" >&2\n', '\tMS_Help\n', '\texit 1\n')
_PASS = ('\t: NVIDIA runfiles hand unknown flags to the installer\n', '\t:\n', '\tbreak\n')


def _patch_header(path: Path) -> None:
    """Turn the header's 'Unrecognized flag' branch into a pass-through, keeping its line count
    (the header finds its payload by counting lines: `head -n $skip`)."""
    data = path.read_bytes()
    old = "".join(_REFUSE).encode()
    new = "".join(_PASS).encode()
    if data.count(old) != 1:
        raise RuntimeError(f"makeself header of {path} has no single 'Unrecognized flag' branch")
    path.write_bytes(data.replace(old, new, 1))


def cuda_runfile(dest: Path, version: str, mode: str = "ok", generation: Optional[str] = None,
                 name: Optional[str] = None, pad_bytes: int = 0) -> Path:
    """Build a makeself runfile standing in for NVIDIA's CUDA `version` (full X.Y.Z).
    pad_bytes: incompressible filler in the payload, for transfer benchmarks."""
    parts = [int(p) for p in version.split(".")]
    short = f"{parts[0]}.{parts[1]}"
    gen = generation or ("perl" if (parts[0], parts[1]) < (10, 1) else "new")
    vfile = "version.txt" if (parts[0], parts[1]) < (11, 1) else "version.json"
    copy, built = NVCC_BUILT.get(str(parts[0]), NVCC_BUILT["12"])
    nvccv = version if parts[0] <= 10 else f"{short}.{100 + parts[-1]}"
    buildline = ("" if parts[0] <= 10 else
                 f'echo "Build cuda_{short}.r{short}/compiler.34097967_0"')
    script = INSTALLER
    for k, v in {"@VERSION@": version, "@SHORT@": short, "@GEN@": gen, "@MODE@": mode, "@VFILE@": vfile,
                 "@COPY@": copy, "@BUILT@": built, "@NVCCV@": nvccv, "@BUILDLINE@": buildline,
                 "@CUDAVER@": str(parts[0] * 1000 + parts[1] * 10),
                 "@SOMAJOR@": f"{parts[0]}.{parts[1]}" if parts[0] <= 10 else str(parts[0])}.items():
        script = script.replace(k, v)
    dest.mkdir(parents=True, exist_ok=True)
    src = dest / f".src-{version}-{mode}"
    shutil.rmtree(src, ignore_errors=True)
    src.mkdir()
    inst = src / ("cuda-installer.pl" if gen == "perl" else "cuda-installer")
    inst.write_text(script)
    inst.chmod(0o755)
    _shared_lib(src / "libcudart.so", "libcudart.so." + (f"{parts[0]}.{parts[1]}" if parts[0] <= 10 else str(parts[0])),
                "int cudaRuntimeGetVersion(int *v) { *v = %d; return 0; }\n" % (parts[0] * 1000 + parts[1] * 10))
    (src / "EULA.txt").write_text("End User License Agreement (stand-in)\n" * 50)
    if pad_bytes:
        (src / "payload.bin").write_bytes(os.urandom(pad_bytes))
    out = dest / (name or f"cuda_{version}_stand-in_linux.run")
    subprocess.run(["makeself", "--nox11", str(src), str(out), f"CUDA Toolkit {version} stand-in",
                    f"./{inst.name}"], check=True, capture_output=True)
    shutil.rmtree(src)
    _patch_header(out)
    return out


def _shared_lib(out: Path, soname: str, source: str) -> None:
    """A real (tiny) ELF shared object with the given soname, so ldconfig and the loader treat
    it like the real library."""
    c = out.with_suffix(".c")
    c.write_text(source)
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(out), f"-Wl,-soname,{soname}", str(c)],
                   check=True, capture_output=True)
    c.unlink()


def flip_byte(path: Path, offset_from_end: int = 200) -> None:
    """Corrupt one byte of the payload (what a truncated or tampered download looks like)."""
    data = bytearray(path.read_bytes())
    data[len(data) - offset_from_end] ^= 0x01
    path.write_bytes(bytes(data))


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def cudnn_archive(dest: Path, version: str = "7.6.5.32", cuda: str = "10.0", layout: Optional[str] = None) -> Path:
    """A cuDNN tarball of the given layout ('old' tgz: cuda/include + cuda/lib64; 'new' tar.xz:
    <name>/include + <name>/lib), with the real symlink chain and version header."""
    v = [int(p) for p in version.split(".")]
    layout = layout or ("old" if (v[0], v[1]) < (8, 3) else "new")
    cmaj = cuda.split(".")[0]
    if layout == "old":
        name = f"cudnn-{cuda}-linux-x64-v{version}.tgz"
        top, inc, lib = "cuda", "cuda/include", "cuda/lib64"
    else:
        stem = f"cudnn-linux-x86_64-{version}_cuda{cmaj}-archive"
        name, top, inc, lib = stem + ".tar.xz", stem, f"{stem}/include", f"{stem}/lib"
    dest.mkdir(parents=True, exist_ok=True)
    work = dest / f".cudnn-src-{version}-{layout}"
    shutil.rmtree(work, ignore_errors=True)
    (work / inc).mkdir(parents=True)
    (work / lib).mkdir(parents=True)
    header = "cudnn.h" if v[0] < 8 else "cudnn_version.h"
    (work / inc / header).write_text(
        f"#define CUDNN_MAJOR {v[0]}\n#define CUDNN_MINOR {v[1]}\n#define CUDNN_PATCHLEVEL {v[2]}\n")
    if v[0] >= 8:
        (work / inc / "cudnn.h").write_text('#include "cudnn_version.h"\n')
    full = f"libcudnn.so.{v[0]}.{v[1]}.{v[2]}"
    _shared_lib(work / lib / full, f"libcudnn.so.{v[0]}",
                "unsigned long cudnnGetVersion(void) { return %d; }\n" % (v[0] * (10000 if v[0] >= 9 else 1000) + v[1] * 100 + v[2]))
    os.symlink(full, work / lib / f"libcudnn.so.{v[0]}")
    os.symlink(f"libcudnn.so.{v[0]}", work / lib / "libcudnn.so")
    (work / lib / "libcudnn_static.a").write_bytes(b"!<arch>\n")
    (work / lib / "libcudnn_static.a").chmod(0o600)  # owner-only in the tarball: must end world-readable
    out = dest / name
    with tarfile.open(out, "w:gz" if layout == "old" else "w:xz") as tar:
        tar.add(work / top, arcname=top)
    shutil.rmtree(work)
    return out
