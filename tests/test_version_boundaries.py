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
