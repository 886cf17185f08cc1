"""Where install-cuda gets the runfile and how it is checked before anything runs on a node.

choose_source() fills InstallArgs from --runfile / --url / --mirror / --sha256 / --no-checksum
and the matrix: the expected sha256 (matrix, or --sha256 overriding it), else NVIDIA's published
md5; a local runfile is hashed here once and refused at once when it does not match, before any
node is contacted. Returns the warnings the CLI prints.
"""
from __future__ import annotations

import hashlib
import os
from typing import List, Optional
from urllib.parse import urlsplit

from envcheck.errors import UsageError
from envcheck.install.cuda_spec import ToolkitSpec


def file_digest(path: str, algo: str = "sha256") -> str:
    h = hashlib.new(algo)
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def check_hex(value: Optional[str]) -> Optional[str]:
    if value is None:
        return None
    v = value.strip().lower()
    if len(v) != 64 or any(c not in "0123456789abcdef" for c in v):
        raise UsageError(f"--sha256 {value!r} is not 64 hex digits", "give the runfile's full sha256 (sha256sum FILE)")
    return v


def check_url(url: str, flag: str) -> None:
    """A URL the node's curl/wget can fetch and whose last part names the runfile; a typo here
    would otherwise surface on every node as a download failure."""
    try:
        u = urlsplit(url)
        u.port   # raises ValueError for a port out of range or not a number
    except ValueError:
        u = None
    name = u.path.rstrip("/").rsplit("/", 1)[-1] if u else ""
    if (u is None or u.scheme not in ("http", "https", "ftp", "file") or (u.scheme != "file" and not u.netloc)
            or any(c.isspace() for c in url) or not name):
        raise UsageError(f"{flag} {url!r} is not an http(s)/ftp/file URL ending in the runfile's name",
                         "e.g. --url https://developer.download.nvidia.com/compute/cuda/12.4.1/local_installers/"
                         "cuda_12.4.1_550.54.15_linux.run or --mirror http://mirror.local/cuda")


def choose_source(args, spec: ToolkitSpec, *, runfile: Optional[str] = None, url: Optional[str] = None,
                  mirror: Optional[str] = None, sha256: Optional[str] = None,
                  no_checksum: bool = False) -> List[str]:
    if sum(x is not None for x in (runfile, url, mirror)) > 1:
        raise UsageError("give only one of --runfile, --url, --mirror", "pick the source of the runfile")
    if sha256 and no_checksum:
        raise UsageError("--sha256 and --no-checksum contradict each other", "drop one of them")
    expect = check_hex(sha256) or (None if no_checksum else spec.sha256)
    args.expect_sha256 = expect
    args.expect_md5 = None if (expect or no_checksum) else spec.md5
    if runfile is not None:
        if not os.path.isfile(runfile):
            raise UsageError(f"--runfile {runfile}: no such file", "give the path of the downloaded .run file")
        args.runfile = os.path.abspath(runfile)
        args.runfile_sha256 = file_digest(args.runfile)
        if expect and args.runfile_sha256 != expect:
            src = "--sha256" if sha256 else f"the matrix's sha256 for CUDA {spec.version}"
            raise UsageError(f"{runfile} has sha256 {args.runfile_sha256}, which does not match {src} ({expect}); not using it",
                             "download it again; if you trust this file (a repackaged mirror copy, a test stand-in) "
                             "pass --sha256 with its sha256")
        if args.expect_md5:
            md5 = file_digest(args.runfile, "md5")
            if md5 != args.expect_md5:
                raise UsageError(f"{runfile} has md5 {md5}, which does not match NVIDIA's published md5 for "
                                 f"CUDA {spec.version} ({args.expect_md5}); not using it",
                                 "download it again; if you trust this file pass --sha256 with its sha256")
    elif url or mirror:
        args.url = url or (mirror.rstrip("/") + "/" + spec.runfile)
        check_url(args.url, "--url" if url else "--mirror")
    if no_checksum:
        return ["warning: --no-checksum: the runfile's sha256 is not checked (makeself's own check still runs)"]
    if expect is None and args.expect_md5:
        return [f"note: no sha256 known for CUDA {spec.version}; checking NVIDIA's published md5"]
    if expect is None:
        return [f"warning: no sha256 known for CUDA {spec.version}; only makeself's own check protects the "
                "download (pass --sha256 HEX)"]
    return []
