"""The probe's parsers against captured outputs of real tools (tests/fixtures/), and against
arbitrary text (hypothesis): odd output must give None, never an exception."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.node.probe_helpers import FIXTURES, load_probe

probe = load_probe()
SMI = FIXTURES / "nvidia-smi"


def fx(path: str) -> str:
    return (FIXTURES / path).read_text()


# --- nvidia-smi --query-gpu CSV ---------------------------------------------------------------

NO_CC_FIELDS = ["driver_version", "name", "memory.total", "uuid", "pci.bus_id"]


def test_csv_of_a_410_driver_without_compute_cap_gives_two_v100s():
    gpus = probe.parse_nvidia_smi_csv(fx("nvidia-smi/410.48/query-nocc.csv"), NO_CC_FIELDS)
    assert [g["name"] for g in gpus] == ["Tesla V100-SXM2-16GB"] * 2
    assert gpus[0] == {"index": 0, "name": "Tesla V100-SXM2-16GB", "compute_capability": None,
                       "memory_mib": 16130, "uuid": "GPU-4e1ca7a5-6bd2-1f3c-7a4e-8e2d0c4c9a21",
                       "pci_bus_id": "00000000:1A:00.0", "driver_version": "410.48"}
    assert gpus[1]["index"] == 1 and gpus[1]["pci_bus_id"] == "00000000:1B:00.0"


@pytest.mark.parametrize("driver, name, cc, mem, count", [
    ("535.104.05", "NVIDIA A100-SXM4-80GB", "8.0", 81920, 2),
    ("550.127.05", "NVIDIA H100 80GB HBM3", "9.0", 81559, 2),
    ("580.95.05", "NVIDIA B200", "10.0", 183359, 2),
])
def test_csv_with_compute_cap_of_recent_drivers(driver, name, cc, mem, count):
    gpus = probe.parse_nvidia_smi_csv(fx("nvidia-smi/%s/query.csv" % driver))
    assert len(gpus) == count
    for g in gpus:
        assert (g["driver_version"], g["name"], g["compute_capability"], g["memory_mib"]) == \
            (driver, name, cc, mem)
        assert g["uuid"].startswith("GPU-")


def test_csv_error_text_of_an_old_driver_gives_no_gpus():
    assert probe.parse_nvidia_smi_csv(fx("nvidia-smi/410.48/query-error.txt")) == []


def test_csv_na_values_become_none_and_a_comma_in_a_name_is_kept():
    text = "535.54.03, NVIDIA GeForce RTX 4090, Founders, 8.9, [N/A], [N/A], 00000000:01:00.0\n"
    (g,) = probe.parse_nvidia_smi_csv(text)
    assert g["name"] == "NVIDIA GeForce RTX 4090, Founders"
    assert g["compute_capability"] == "8.9" and g["memory_mib"] is None and g["uuid"] is None


# --- plain nvidia-smi header ------------------------------------------------------------------

@pytest.mark.parametrize("driver, cuda", [
    ("410.48", None),          # 410.48 printed no "CUDA Version" in its header yet
    ("470.182.03", "11.4"),
    ("535.104.05", "12.2"),
    ("550.127.05", "12.4"),
    ("580.95.05", "13.0"),
])
def test_header_gives_driver_and_the_newest_cuda_it_supports(driver, cuda):
    assert probe.parse_nvidia_smi_header(fx("nvidia-smi/%s/plain.txt" % driver)) == \
        {"driver": driver, "cuda": cuda}


def test_header_reads_the_loaded_driver_not_the_nvidia_smi_binary_version():
    line = "| NVIDIA-SMI 470.256.02   Driver Version: 580.95.05   CUDA Version: 13.0     |"
    assert probe.parse_nvidia_smi_header(line) == {"driver": "580.95.05", "cuda": "13.0"}


def test_header_of_a_version_mismatch_has_no_driver():
    assert probe.parse_nvidia_smi_header(fx("nvidia-smi/mismatch/plain.txt")) == \
        {"driver": None, "cuda": None}


# --- /proc/driver/nvidia/version --------------------------------------------------------------

@pytest.mark.parametrize("name, version", [
    ("proc-driver-version-410.48.txt", "410.48"),
    ("proc-driver-version-575.57.08-open.txt", "575.57.08"),
    ("proc-driver-version-580.65.06-aarch64.txt", "580.65.06"),
])
def test_proc_driver_version_of_proprietary_and_open_modules(name, version):
    assert probe.parse_proc_driver_version(fx("misc/" + name)) == version


# --- toolkit version files and nvcc -----------------------------------------------------------

@pytest.mark.parametrize("name, version", [("version-9.0.txt", "9.0.176"),
                                           ("version-10.0.txt", "10.0.130")])
def test_version_txt(name, version):
    assert probe.parse_version_txt(fx("cuda/" + name)) == version


@pytest.mark.parametrize("name, version", [
    ("version-11.8.json", "11.8"),    # 11.8.20220929: a date stamp, not update 20220929
    ("version-12.1.json", "12.1"),
    ("version-13.0.json", "13.0.3"),  # a real update number is kept
])
def test_version_json(name, version):
    assert probe.parse_version_json(fx("cuda/" + name)) == version


def test_version_json_without_a_cuda_entry_is_unknown():
    assert probe.parse_version_json('{"cuda_nvcc": {"version": "12.1.66"}}') is None
    assert probe.parse_version_json('["cuda"]') is None


@pytest.mark.parametrize("name, release, build, version", [
    ("nvcc-10.0.txt", "10.0", "10.0.130", "10.0.130"),  # up to 10.2 V is the toolkit version
    ("nvcc-11.8.txt", "11.8", "11.8.89", "11.8"),       # from 11.0 V is nvcc's own version
    ("nvcc-12.1.txt", "12.1", "12.1.66", "12.1"),
    ("nvcc-13.0.txt", "13.0", "13.0.88", "13.0"),
])
def test_nvcc_version(name, release, build, version):
    assert probe.parse_nvcc(fx("nvcc/" + name)) == \
        {"release": release, "build": build, "version": version}


def test_cuda_h_version():
    assert probe.parse_cuda_h("#define CUDA_VERSION 12040\n") == "12.4"
    assert probe.parse_cuda_h("#define CUDA_VERSION 10000\n") == "10.0"


# --- cuDNN headers ------------------------------------------------------------------------------

@pytest.mark.parametrize("name, version", [
    ("cudnn-7.6.5.h", "7.6.5"),
    ("cudnn_version-8.9.7.h", "8.9.7"),
    ("cudnn_version-9.10.2.h", "9.10.2"),
    ("cudnn-8.9.7.h", None),  # from 8.0 cudnn.h only includes cudnn_version.h
])
def test_cudnn_header(name, version):
    assert probe.parse_cudnn_header(fx("cudnn/" + name)) == version


# --- ldconfig, libraries, os-release, ip, metadata, torch ------------------------------------

def test_ldconfig_lists_every_library_with_its_path():
    libs = probe.parse_ldconfig(fx("misc/ldconfig-p.txt"))
    assert len(libs) == 17
    by_name = {}
    for lib in libs:
        by_name.setdefault(lib["name"], []).append(lib["path"])
    assert by_name["libcudnn.so.7"] == ["/usr/lib/x86_64-linux-gnu/libcudnn.so.7"]
    assert by_name["libcuda.so.1"] == ["/usr/lib/x86_64-linux-gnu/libcuda.so.1",
                                       "/usr/lib/i386-linux-gnu/libcuda.so.1"]
    assert by_name["libc.so.6"][0] == "/lib/x86_64-linux-gnu/libc.so.6"


@pytest.mark.parametrize("path, stem, version", [
    ("/usr/lib/x86_64-linux-gnu/libcudnn.so.7.6.5", "libcudnn", "7.6.5"),
    ("/usr/local/cuda/lib64/libcudnn.so.8", "libcudnn", "8"),
    ("/usr/lib/x86_64-linux-gnu/libnccl.so.2.19.3", "libnccl", "2.19.3"),
    ("/usr/lib/x86_64-linux-gnu/libcudnn.so", "libcudnn", None),
    ("/usr/lib/x86_64-linux-gnu/libcudnn_ops.so.9.1.0", "libcudnn", None),
])
def test_library_version_from_its_file_name(path, stem, version):
    assert probe.lib_version(path, stem) == version


@pytest.mark.parametrize("names, links, expected", [
    (["libcudart.so.11.0", "libcudart.so.11.8.89"], {"libcudart.so": "libcudart.so.11.0"}, True),  # Debian's
    (["libcudart.so.12"], {}, True),                           # the runtime alone, no development link
    ([], {"libcudart.so": "libcudart.so.12"}, True),            # a dangling link is listed too
    (["libcudart_static.a", "libcudart.so.bak.d"], {}, True),   # any name that begins so
    (["libcudart_static.a", "libcublas.so.12"], {}, False),
    ([], {}, False),
])
def test_a_directory_holds_a_cudart_exactly_when_its_listing_says_so(tmp_path, names, links, expected):
    d = tmp_path / "x86_64-linux-gnu"
    d.mkdir()
    for n in names:
        (d / n).write_bytes(b"")
    for n, target in links.items():
        (d / n).symlink_to(target)
    assert probe.has_cudart(str(d)) is expected is bool(probe.ls(str(d), r"^libcudart\.so"))
    assert probe.has_cudart(str(tmp_path / "missing")) is False


def test_os_release_of_ubuntu_and_centos():
    u = probe.parse_os_release(fx("misc/os-release-ubuntu-18.04.txt"))
    c = probe.parse_os_release(fx("misc/os-release-centos-7.txt"))
    assert (u["NAME"], u["VERSION_ID"], u["PRETTY_NAME"]) == ("Ubuntu", "18.04", "Ubuntu 18.04.6 LTS")
    assert (c["NAME"], c["VERSION_ID"], c["ID_LIKE"]) == ("CentOS Linux", "7", "rhel fedora")


def test_ip_addresses_per_interface_in_order_with_veth_suffix_dropped():
    assert probe.parse_ip_addr(fx("misc/ip-o-4-addr.txt")) == {
        "lo": ["127.0.0.1/8"], "eno1": ["10.1.4.17/16"], "ib0": ["192.168.100.17/24"],
        "docker0": ["172.17.0.1/16"], "veth0": ["10.99.0.2/24", "10.99.1.2/24"]}


def test_metadata_headers_stop_at_the_body():
    text = "Metadata-Version: 2.1\nName: torch\nVersion: 1.1.0\n\nName: not-this\nVersion: 9\n"
    assert probe.parse_metadata(text) == ("torch", "1.1.0")


@pytest.mark.parametrize("text, expected", [
    ("1.1.0", {"version": "1.1.0", "local": None, "cuda": None, "cuda_source": None}),
    ("1.1.0+cu100", {"version": "1.1.0", "local": "cu100", "cuda": "10.0", "cuda_source": "local-tag"}),
    ("1.4.0+cu92", {"version": "1.4.0", "local": "cu92", "cuda": "9.2", "cuda_source": "local-tag"}),
    ("2.4.1+cu121", {"version": "2.4.1", "local": "cu121", "cuda": "12.1", "cuda_source": "local-tag"}),
    ("2.13.0+cpu", {"version": "2.13.0", "local": "cpu", "cuda": None, "cuda_source": None}),
    ("2.5.0a0+git1234abc", {"version": "2.5.0", "local": "git1234abc", "cuda": None, "cuda_source": None}),
    ("not a version", None),
])
def test_torch_version_and_its_cuda_from_the_local_tag(text, expected):
    assert probe.parse_torch_version(text) == expected


@pytest.mark.parametrize("code, version", [(2408, "2.4.8"), (2708, "2.7.8"), (21903, "2.19.3"),
                                           (22105, "2.21.5")])
def test_nccl_version_code_before_and_after_2_9(code, version):
    assert probe.nccl_code_to_version(code) == version


# --- nothing raises on arbitrary text -----------------------------------------------------------

TEXT_PARSERS = ["parse_nvidia_smi_csv", "parse_nvidia_smi_header", "parse_proc_driver_version",
                "parse_version_txt", "parse_version_json", "parse_nvcc", "parse_cuda_h",
                "parse_cudnn_header", "parse_ldconfig", "parse_os_release", "parse_ip_addr",
                "parse_metadata", "parse_torch_version"]

# text that looks a little like the real thing finds more corners than uniform noise
NEAR = st.one_of(
    st.text(),
    st.lists(st.sampled_from([
        "Driver Version:", "CUDA Version", "Module", "NVRM version:", "#define CUDNN_MAJOR",
        "#define CUDNN_MINOR", "#define CUDNN_PATCHLEVEL", "#define CUDA_VERSION", "release",
        ", V", "=>", "(libc6,x86-64)", "inet", "Name:", "Version:", "+cu", "{", "}", '"cuda"',
        ":", ",", ".", "\n", "\t", " ", "9" * 30, "0", "12.1", "N/A", "[N/A]"]), max_size=40
    ).map("".join),
)


@pytest.mark.parametrize("name", TEXT_PARSERS)
@settings(max_examples=300, deadline=None)
@given(text=NEAR)
def test_no_parser_raises_on_arbitrary_text(name, text):
    getattr(probe, name)(text)


@settings(max_examples=200, deadline=None)
@given(text=NEAR, path=st.text())
def test_lib_version_never_raises(text, path):
    probe.lib_version(path, text)
