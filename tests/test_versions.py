import pytest

from envcheck.errors import VersionError
from envcheck.versions import (compare, cu_tag_to_version, parse_compute_capability, parse_torch,
                               version_to_cu_tag, vkey)


def test_driver_versions_compare_numerically_not_as_strings():
    assert compare("535.104.05", "535.86.10") == 1
    assert compare("535.86.10", "535.104.05") == -1
    assert "535.104.05" < "535.86.10"  # the trap the numeric compare avoids


def test_missing_trailing_fields_count_as_zero():
    assert compare("12.4", "12.4.0") == 0
    assert compare("12.4", "12.4.1") == -1


@pytest.mark.parametrize("tag,ver", [("cu100", "10.0"), ("cu90", "9.0"), ("cu92", "9.2"),
                                     ("cu121", "12.1"), ("cu130", "13.0"), ("cpu", None)])
def test_cu_tags_round_trip(tag, ver):
    assert cu_tag_to_version(tag) == ver
    if ver:
        assert version_to_cu_tag(ver) == tag


def test_torch_version_with_local_tag():
    assert parse_torch("1.1.0+cu100") == ("1.1.0", "cu100")
    assert parse_torch("2.3.1") == ("2.3.1", None)
    assert parse_torch("2.6.0.dev20241001+cu124") == ("2.6.0", "cu124")


@pytest.mark.parametrize("text,cc", [("sm_86", (8, 6)), ("8.6", (8, 6)), ("90", (9, 0)),
                                     ("sm_90a", (9, 0)), ("compute_75", (7, 5)), ("sm_100", (10, 0))])
def test_compute_capability_spellings(text, cc):
    assert parse_compute_capability(text) == cc


@pytest.mark.parametrize("bad", ["", "abc", "x1.2"])
def test_garbage_versions_raise_a_named_error(bad):
    with pytest.raises(VersionError) as e:
        vkey(bad, "driver")
    assert "driver" in str(e.value)
