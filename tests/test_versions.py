import pytest

from envcheck.errors import VersionError
from envcheck.versions import (compare, cu_tag_to_version, cuda_release, is_prerelease, parse_compute_capability,
                               parse_torch, pep440,
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


# Versions users really have (issue 21, item 5): PEP 440 everywhere, with packaging
@pytest.mark.parametrize("text,public,local", [
    ("2.4.0.dev20240501+cu121", "2.4.0", "cu121"), ("2.1.0a0+git32f93b1", "2.1.0", "git32f93b1"),
    ("2.1.0rc1", "2.1.0", None), ("1.0.1.post2", "1.0.1", None), ("2.3.0a0+ebedce2", "2.3.0", "ebedce2")])
def test_pre_releases_dev_builds_and_local_labels_are_versions(text, public, local):
    assert parse_torch(text) == (public, local)


def test_a_pre_release_belongs_to_its_release_but_is_told_apart():
    assert vkey("2.1.0rc1") == (2, 1, 0) and vkey("2.1.0rc1", "numpy")[0] == 2
    assert is_prerelease("2.1.0rc1") and is_prerelease("2.4.0.dev20240501+cu121")
    assert not is_prerelease("2.4.0+cu121") and not is_prerelease("535.104.05")
    assert vkey("7.5.0-3ubuntu1") == (7, 5, 0)  # what PEP 440 refuses, from a node, by its numbers


@pytest.mark.parametrize("printed,release", [
    ("12.2.140", "12.2"), ("V12.2.140", "12.2"), ("release 12.2", "12.2"), ("cuda_12.2.r12.2", "12.2"),
    ("11.8.89", "11.8"), ("12.4.1", "12.4.1"), ("12.4", "12.4"), ("10.0.130", "10.0.130"), ("9.2.148", "9.2.148")])
def test_nvcc_build_numbers_and_printed_forms_name_their_release(printed, release):
    assert cuda_release(printed) == release


@pytest.mark.parametrize("bad", ["１２.４", "10..0", "1e9", "10.0; x", "12.4\n", "1!2.0", "9" * 19 + ".0"])
def test_what_pep440_or_our_bounds_refuse_is_a_named_error(bad):
    with pytest.raises(VersionError) as e:
        pep440(bad, "--cuda")
    assert "--cuda" in str(e.value)
