"""The parsing boundaries a hand-made mutation check (issue 24) found unpinned: the per-field
digit cap of versions, lower-cased local tags, and port 0."""
import pytest

from envcheck.errors import UsageError, VersionError
from envcheck.hostlist import parse_target
from envcheck.versions import parse_torch, vkey


def test_a_version_field_may_have_18_digits_not_19():
    # int() of more than 4300 digits raises ValueError; the cap keeps every field far below
    # (18 digits fit a signed 64-bit integer, 19 may not)
    assert vkey("1." + "9" * 18) == (1, 10 ** 18 - 1)
    with pytest.raises(VersionError):
        vkey("1." + "9" * 19)
    with pytest.raises(VersionError):
        vkey("9" * 19)


def test_a_local_tag_is_lower_cased():
    # PEP 440: local version labels compare case-insensitively and normalise to lower case
    assert parse_torch("2.4.0+CU121") == ("2.4.0", "cu121")
    assert parse_torch("1.13.1+Cpu") == ("1.13.1", "cpu")


@pytest.mark.parametrize("port", [1, 22, 65535])
def test_ports_1_to_65535_are_accepted(port):
    assert parse_target(f"node01:{port}").port == port


@pytest.mark.parametrize("port", ["0", "00", "65536"])
def test_port_0_and_past_65535_are_refused(port):
    # TCP has no port 0 to connect to (RFC 6335: 0 is reserved); ssh refuses it too
    with pytest.raises(UsageError):
        parse_target(f"node01:{port}")


# every public helper, pinned to what its docstring promises (a mutation check found them
# reached only through callers that tolerate a wrong answer)
def test_comparisons_and_prefixes():
    from envcheck.versions import at_least, compare, major, major_minor, same_prefix
    assert (at_least("12.4", "12.4.0"), at_least("12.4.0", "12.4"), at_least("12.4", "12.4.1")) == (True, True, False)
    assert at_least("12.5", "12.4.99") and not at_least("12.4.99", "12.5")
    assert compare("v12.4", "12.4") == 0 and compare("10.0", "9.2") == 1
    assert (major("535.104.05"), major_minor("12"), major_minor("12.4.1")) == (535, "12.0", "12.4")
    assert same_prefix("12.4.1", "12.4", 2) and not same_prefix("12.4.1", "12.4", 3)
    assert same_prefix("12.4", "12.4.0", 3) and not same_prefix("12.4", "12.5", 2)


def test_vkey_reads_the_leading_numbers_and_names_what_it_could_not_read():
    assert vkey(" v7.5.0-3ubuntu1") == (7, 5, 0)
    with pytest.raises(VersionError) as e:
        vkey("x1", "driver")
    assert (e.value.message, e.value.fix) == ("driver: cannot parse version 'x1'", "give driver as digits and dots, e.g. 12.4")
    with pytest.raises(VersionError) as e:
        vkey(None)
    assert (e.value.message, e.value.fix) == ("version: no version given", "give version as digits and dots, e.g. 12.4")


def test_a_long_bad_version_is_quoted_by_its_first_40_characters():
    from envcheck.versions import strict_version
    for parse in (vkey, strict_version):
        with pytest.raises(VersionError) as e:
            parse("x" * 50)
        assert e.value.message == f"version: cannot parse version {'x' * 40!r}"


def test_strict_versions_are_pep_440_on_one_line():
    from envcheck.versions import strict_version
    assert strict_version(" 12.4 ") == "12.4" and strict_version("1.2.3.4.5.6") == "1.2.3.4.5.6"
    for bad in ("10..0", "1e9", "12.4\n", "1.2.3.4.5.6.7", "１２.4", "12.4; x"):
        with pytest.raises(VersionError) as e:
            strict_version(bad, "--cuda")
        assert (e.value.message, e.value.fix) == (f"--cuda: cannot parse version {bad!r}",
                                                  "give --cuda as a version (PEP 440), e.g. 12.4")
    with pytest.raises(VersionError) as e:
        strict_version(None)
    assert e.value.message == "version: no version given"


def test_cu_tags_both_ways():
    from envcheck.versions import cu_tag_to_version, version_to_cu_tag
    assert [cu_tag_to_version(t) for t in ("CU118", " cu92 ", "cu1", "cuda118", "cu")] == ["11.8", "9.2", None, None, None]
    assert [version_to_cu_tag(v) for v in ("12", "12.4.1", "9.0")] == ["cu120", "cu124", "cu90"]
    with pytest.raises(VersionError, match="^CUDA version: cannot parse"):
        version_to_cu_tag("x")


@pytest.mark.parametrize("text,parsed", [
    ("2.4.0", ("2.4.0", None)), (" 2.4.0+cu124 ", ("2.4.0", "cu124")), ("2.1.0a0+git123", ("2.1.0", "git123")),
    ("2.5.0.dev20240901+cpu", ("2.5.0", "cpu")), ("2.4.0rc1", ("2.4.0", None)), ("2.4.0b2", ("2.4.0", None)),
    ("1.0", ("1.0", None)), ("1.2.3.4", ("1.2.3.4", None)), ("2.4.0+rocm6.1", ("2.4.0", "rocm6.1")),
])
def test_torch_versions_as_pip_writes_them(text, parsed):
    assert parse_torch(text) == parsed


@pytest.mark.parametrize("text", [None, "", "  ", "2.4.0+cu 124", "torch-2.4.0", "2.4\n.0", "2.4.0+cu\n124",
                                  "2.4.0.0.0.0.0", "2.4.0+", "1!2.4.0"])
def test_torch_versions_pip_would_not_write_are_refused(text):
    with pytest.raises(VersionError) as e:
        parse_torch(text)
    assert e.value.fix == "give torch as X.Y.Z or X.Y.Z+cuXYZ, e.g. 1.1.0+cu100"
    assert e.value.message.startswith("torch: ")


def test_torch_messages():
    for text, msg in ((None, "torch: no version given"), ("x", "torch: cannot parse version 'x'"),
                      ("  ", "torch: no version given"), ("9" * 50, f"torch: cannot parse version {'9' * 40!r}"),
                      ("2.4.0+a b", "torch: cannot parse version '2.4.0+a b'")):
        with pytest.raises(VersionError) as e:
            parse_torch(text)
        assert e.value.message == msg


@pytest.mark.parametrize("text,cc", [("sm_86", (8, 6)), ("8.6", (8, 6)), ("sm_8.6", (8, 6)), (" SM_90A ", (9, 0)), ("120", (12, 0)),
                                     ("compute_100", (10, 0)), ("12.1", (12, 1)), ("sm_100f", (10, 0))])
def test_compute_capabilities(text, cc):
    from envcheck.versions import cc_str, parse_compute_capability
    assert parse_compute_capability(text) == cc
    assert cc_str(cc) == f"{cc[0]}.{cc[1]}"


@pytest.mark.parametrize("text", ["8", "sm_8", "1234", "8.6.1", "sm86", "gpu_86", "8.x", "sm_86ab"])
def test_what_is_no_compute_capability(text):
    from envcheck.versions import parse_compute_capability
    with pytest.raises(VersionError) as e:
        parse_compute_capability(text)
    assert (e.value.message, e.value.fix) == (f"GPU: cannot parse compute capability {text!r}",
                                              "give --gpu as a model name (A100), sm_XY or X.Y")


# every refusal of a host argument says what and how to fix it (issue 24: one line naming the
# thing and the fix); pinned whole, fix included
HOST_REFUSALS = [
    ("n[1-[2]]", "bad host list 'n[1-[2]]': nested brackets", "write ranges as node[01-04], one bracket level"),
    ("n1]", "bad host list 'n1]': ']' without '['", "write ranges as node[01-04]"),
    ("n[1-2", "bad host list 'n[1-2': '[' without ']'", "write ranges as node[01-04]"),
    ("n[a]", "bad host list 'n[a]': range 'a' is not N, N-M or N-M/STEP",
     "use digits only inside brackets, e.g. node[01-16], gpu[1-3,7] or node[01-08/2]"),
    ("n[1234567890]", "bad host list 'n[1234567890]': range '1234567890' has numbers of more than 9 digits",
     "check the range for a typo"),
    ("n[1-0123456789]", "bad host list 'n[1-0123456789]': range '1-0123456789' has numbers of more than 9 digits",
     "check the range for a typo"),
    ("n[3-1]", "bad host list 'n[3-1]': range '3-1' goes backwards", "write it as [1-3]"),
    ("n[]", "bad host list 'n[]': empty brackets", "e.g. node[01-04]"),
    ("n[1-65537]", "bad host list 'n[1-65537]': more than 65536 hosts in all",
     "check the ranges for a typo, or split the work into several runs"),
    ("a@b@c", "bad host 'a@b@c': user name 'a@b' is not valid", "write user@host[:port]"),
    ("@c", "host group '@c': no groups file",   # clush's grammar: @NAME is a group
     "give --groups-file FILE with a line `c: node[01-16]` (ClusterShell's groups format; default "
     "/etc/clustershell/groups)"),
    ("[fe80::1]:", "bad host '[fe80::1]:'", "write IPv6 addresses as [addr]:port"),
    ("n1:ssh", "bad host 'n1:ssh': port 'ssh' is not a number", "write host:22"),
    ("n1:0", "bad host 'n1:0': port 0 out of range 1-65535", "write host:22"),
    ("n_1!", "bad host list 'n_1!': '!' needs hosts on its right", "write node[01-08]!node03, or give -x node03"),
    ("n1&", "bad host list 'n1&': '&' needs hosts on its right", "write node[01-08]!node03, or give -x node03"),
    ("n1:2x", "bad host 'n1:2x': port '2x' is not a number", "write host:22"),
    ("u@n[1-2]:ssh", "bad host 'u@n[1-2]:ssh': port 'ssh' is not a number", "write host:22"),
    ("a" * 64 + ".b", f"bad host '{'a' * 64}.b': longer than DNS allows (253 characters, 63 per label)",
     "check the host name for a typo"),
    ("  ", "an empty host argument (an unset shell variable?)",
     "name the hosts, or give no host arguments at all to work on this machine"),
    (",", "bad host ',': names no host",
     "write [user@]host[:port], or give no host arguments at all for this machine"),
]


@pytest.mark.parametrize("arg,message,fix", HOST_REFUSALS)
def test_each_refused_host_argument_names_the_thing_and_the_fix(arg, message, fix):
    from envcheck.hostlist import parse_targets
    with pytest.raises(UsageError) as e:
        parse_targets([arg])
    assert (e.value.message, e.value.fix) == (message, fix)


def test_a_hosts_file_that_lists_no_host_is_refused(tmp_path):
    from envcheck.hostlist import resolve_targets
    p = tmp_path / "hosts"
    p.write_text("# none yet\n\n")
    with pytest.raises(UsageError) as e:
        resolve_targets([], str(p))
    assert (e.value.message, e.value.fix) == (
        f"hosts file {p} lists no hosts", "put one host or hostlist per line, or drop --hosts-file for this machine")


def test_range_numbers_of_9_digits_are_taken():
    from envcheck.hostlist import expand_hostlist
    assert expand_hostlist("n[123456788-123456789]") == ["n123456788", "n123456789"]
    assert expand_hostlist("n[000000001-2]") == ["n000000001", "n000000002"]


# main's PEP 440 reader (versions.pep440, cuda_release), at its own bounds
def test_pep440_bounds_at_the_limit_and_one_past():
    from envcheck.versions import pep440
    assert pep440("1." + "0" * 78).release == (1, 0)               # 80 characters
    with pytest.raises(VersionError) as e:
        pep440("1." + "0" * 79, "--cuda")                           # 81
    assert (e.value.message, e.value.fix) == (f"--cuda: cannot parse version {('1.' + '0' * 79)[:40]!r}",
                                              "give --cuda as a version (PEP 440), e.g. 12.4")
    assert pep440("1.2.3.4.5.6").release == (1, 2, 3, 4, 5, 6)
    assert pep440(str(10 ** 18 - 1)).release == (10 ** 18 - 1,)
    for bad in ("1.2.3.4.5.6.7", str(10 ** 18), "1!1.0", "  "):
        with pytest.raises(VersionError):
            pep440(bad)


def test_text_pep440_refuses_is_read_by_its_leading_numbers():
    assert vkey("1.2" + "x" * 100) == (1, 2)          # past the length bound
    assert vkey("12.4-１") == (12, 4)                   # not ASCII
    assert vkey("1!2.0") == (1,)                        # an epoch: not a version we know, its numbers
    from envcheck.versions import is_prerelease
    assert is_prerelease("garbage") is False


@pytest.mark.parametrize("printed,release", [("12.2.9", "12.2.9"), ("12.2.10", "12.2"), ("10.2.89", "10.2.89"),
                                             ("11.0.221", "11.0"), ("Cuda compilation tools, release 12.4, V12.4.131",
                                                                    "12.4")])
def test_nvcc_builds_from_patch_10_on_cuda_11_and_later(printed, release):
    from envcheck.versions import cuda_release
    assert cuda_release(printed) == release


def test_an_unreadable_printed_cuda_names_what():
    from envcheck.versions import cuda_release
    with pytest.raises(VersionError) as e:
        cuda_release("release twelve")
    assert e.value.message == "CUDA version: cannot parse version 'release twelve'"


# The parsers' caches (lru_cache) are only speed: each test below reads the functions as if no
# earlier call had been cached (mutmut runs each mutant in a fork of the process that ran the
# tests clean, whose caches would otherwise answer for the mutated helpers they call).
@pytest.fixture(autouse=True)
def fresh_caches():
    import envcheck.versions as v
    for f in (v._key, v.compare, v._major_minor, v._cu_tag, v.parse_torch):
        f.cache_clear()


def test_missing_trailing_fields_are_zero_in_every_prefix():
    from envcheck.versions import compare, major_minor, same_prefix
    # "missing fields are 0": as many fields as asked for, or more than either has
    assert same_prefix("12.4", "12.4", 3) and same_prefix("12", "12.0.0", 4) and same_prefix("12.4.0", "12.4", 5)
    assert (compare("12.4", "12.4.0"), compare("12.4.0", "12.4"), compare("12", "12.0.0.0")) == (0, 0, 0)
    assert (major_minor("12"), major_minor("12.4.1"), major_minor("v9.2")) == ("12.0", "12.4", "9.2")


def test_a_version_that_is_not_text_is_read_as_its_text_or_named():
    from envcheck.versions import major_minor
    # a facts file or YAML value may be a number: 12 and 12.4 are the versions they print as
    assert (major_minor(12), major_minor(12.4)) == ("12.0", "12.4")
    with pytest.raises(VersionError) as e:
        major_minor(["12"])                       # garbage: a VersionError (vkey's), never a TypeError
    assert (e.value.message, e.value.fix) == ("version: cannot parse version \"['12']\"",
                                              "give version as digits and dots, e.g. 12.4")


def test_pep440_refusals_whole_with_the_default_name():
    from envcheck.versions import pep440
    for text, message in (("", "version: no version given"), (None, "version: no version given"),
                          ("x", "version: cannot parse version 'x'")):
        with pytest.raises(VersionError) as e:
            pep440(text)
        assert (e.value.message, e.value.fix) == (message, "give version as a version (PEP 440), e.g. 12.4")
    with pytest.raises(VersionError) as e:
        pep440(" ", "--cuda", "13.0")
    assert (e.value.message, e.value.fix) == ("--cuda: no version given", "give --cuda as a version (PEP 440), e.g. 13.0")
    many = ".".join(str(i) for i in range(1, 21))       # 50 characters, 20 fields: past the 6 a release may have
    with pytest.raises(VersionError) as e:
        pep440(many, "--cuda")
    assert e.value.message == f"--cuda: cannot parse version {many[:40]!r}"


def cuda_refusal(text):
    from envcheck.versions import cuda_release
    with pytest.raises(VersionError) as e:
        cuda_release(text)
    return e.value.message, e.value.fix


FIX = "give CUDA version as a version (PEP 440), e.g. 12.4"


def test_cuda_release_refuses_nothing_a_newline_and_what_is_not_ascii_or_too_long():
    assert cuda_refusal(None) == ("CUDA version: no version given", FIX)
    # a control character anywhere, a trailing newline too, is refused with pep440's message
    assert cuda_refusal("12.2\n") == ("CUDA version: cannot parse version '12.2\\n'", FIX)
    assert cuda_refusal("12.2\x00") == ("CUDA version: cannot parse version '12.2\\x00'", FIX)
    # ASCII only: a no-break space is not the space nvcc prints
    assert cuda_refusal("release\u00a012.2") == ("CUDA version: cannot parse version 'release\\xa012.2'", FIX)
    long = "release" + " " * 74 + "12.2"                                # 85 characters
    assert cuda_refusal(long) == (f"CUDA version: cannot parse version {long[:40]!r}", FIX)


def test_cuda_release_reads_printed_forms_of_up_to_80_characters_tabs_included():
    from envcheck.versions import cuda_release
    assert cuda_release("release" + " " * 69 + "12.2") == "12.2"       # 80 characters
    assert cuda_release("release\t12.2") == "12.2" and cuda_release("\tV12.2.140 ") == "12.2"
