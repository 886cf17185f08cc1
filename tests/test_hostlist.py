import pytest

from envcheck.errors import UsageError
from envcheck.hostlist import Target, expand_hostlist, parse_target, parse_targets, resolve_targets


def test_range_keeps_zero_padding():
    assert expand_hostlist("node[01-03]") == ["node01", "node02", "node03"]
    assert expand_hostlist("node[098-101]") == ["node098", "node099", "node100", "node101"]


def test_range_list_with_suffix():
    assert expand_hostlist("gpu[1-3,7]-ib") == ["gpu1-ib", "gpu2-ib", "gpu3-ib", "gpu7-ib"]


def test_several_bracket_groups_multiply_out():
    assert expand_hostlist("r[1-2]n[1-2]") == ["r1n1", "r1n2", "r2n1", "r2n2"]


def test_commas_outside_brackets_separate_entries():
    assert expand_hostlist("a,b[1-2],c") == ["a", "b1", "b2", "c"]


def test_plain_name_is_itself():
    assert expand_hostlist("login") == ["login"]


@pytest.mark.parametrize("bad,fragment", [
    ("node[01-", "node[01-"), ("node]1", "node]1"), ("node[a-b]", "'a-b'"), ("node[]", "empty"),
    ("node[5-1]", "backwards"), ("n[[1]]", "nested"),
])
def test_bad_syntax_names_the_token(bad, fragment):
    with pytest.raises(UsageError) as e:
        parse_targets([bad])
    assert fragment in e.value.message


def test_user_and_port_apply_to_every_expanded_host():
    assert parse_targets(["root@n[1-2]:2222"]) == [Target("n1", "root", 2222), Target("n2", "root", 2222)]


def test_parse_target_forms():
    assert parse_target("h") == Target("h")
    assert parse_target("u@h:22") == Target("h", "u", 22)
    assert parse_target("[fe80::1]:2200") == Target("fe80::1", None, 2200)
    assert parse_target("fe80::1") == Target("fe80::1")


@pytest.mark.parametrize("bad", ["h:abc", "h:70000", "@h", "bad host", "h:"])
def test_bad_targets_are_usage_errors(bad):
    with pytest.raises(UsageError):
        parse_targets([bad])


def test_duplicates_removed_order_kept():
    got = parse_targets(["n2", "n[1-3]", "n2", "u@n2"])
    assert [t.label for t in got] == ["n2", "n1", "n3", "u@n2"]


def test_hosts_file_comments_and_blank_lines(tmp_path):
    f = tmp_path / "hosts"
    f.write_text("# the rack\nnode[01-02]  # first two\n\n  node05\nnode01\n")
    got = resolve_targets([], hosts_file=str(f), environ={})
    assert [t.host for t in got] == ["node01", "node02", "node05"]


def test_missing_hosts_file_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="hosts file"):
        resolve_targets([], hosts_file=str(tmp_path / "nope"), environ={})


def test_a_binary_hosts_file_is_a_usage_error_not_a_traceback(tmp_path):
    f = tmp_path / "hosts"
    f.write_bytes(b"\xff\xfenode01\n")
    with pytest.raises(UsageError, match="not UTF-8"):
        resolve_targets([], hosts_file=str(f), environ={})


def test_slurm_nodelist_used_only_when_no_hosts_given():
    env = {"SLURM_JOB_NODELIST": "gpu[1-2],login"}
    assert [t.host for t in resolve_targets([], environ=env)] == ["gpu1", "gpu2", "login"]
    assert [t.host for t in resolve_targets(["x"], environ=env)] == ["x"]
    assert resolve_targets([], environ={}) == []


def test_absurd_range_is_refused_not_expanded():
    with pytest.raises(UsageError, match="more than 65536 hosts"):
        expand_hostlist("n[1-99999999]")


def test_ipv6_addresses_are_not_mistaken_for_hostlists():
    assert parse_targets(["root@[fe80::1]:2222", "fe80::2", "[::1]"]) == [
        Target("fe80::1", "root", 2222), Target("fe80::2"), Target("::1")]


from hypothesis import given, strategies as st  # noqa: E402


@given(lo=st.integers(0, 500), span=st.integers(0, 50), width=st.integers(1, 4),
       prefix=st.from_regex(r"[a-z][a-z0-9-]{0,6}", fullmatch=True))
def test_a_range_expands_to_every_number_once_in_order(lo, span, width, prefix):
    hi = lo + span
    lo_s = str(lo).zfill(width)
    names = expand_hostlist(f"{prefix}[{lo_s}-{hi}]")
    assert len(names) == span + 1 == len(set(names))
    assert [int(n[len(prefix):]) for n in names] == list(range(lo, hi + 1))
    if lo_s.startswith("0") and len(lo_s) > 1:  # a padded lower bound pads every number
        assert all(len(n) - len(prefix) >= len(lo_s) for n in names)


# compress_hostlist: the inverse of expand_hostlist, for reports

from hypothesis import given, settings, strategies as st  # noqa: E402

from envcheck.hostlist import compress_hostlist  # noqa: E402

_number = st.builds(lambda n, pad: str(n).zfill(pad), st.integers(0, 1200), st.sampled_from([0, 0, 2, 3]))
_text = st.sampled_from(["node", "gpu", "r", "n", "-ib", ".", "x_", "-", "login", "a.b"])
_name = st.lists(st.tuples(_text, _number), min_size=1, max_size=3).map(
    lambda parts: "".join(t + n for t, n in parts))


@settings(max_examples=300, deadline=None)
@given(st.lists(_name, min_size=1, max_size=40))
def test_expanding_the_compressed_list_gives_each_name_back_exactly_once(names):
    back = expand_hostlist(compress_hostlist(names))
    # hostlist order is per bracket group (r[1,3]n1,r2n2), so compare sorted; no duplicates
    assert sorted(back) == sorted(set(names))
    assert len(back) == len(set(names))


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["node", "gpu-", "10.0.0."]), st.sampled_from(["", "-ib"]),
       st.sets(st.integers(0, 999), min_size=1, max_size=60), st.sampled_from([0, 3]))
def test_one_numbered_series_comes_back_in_numeric_order(prefix, suffix, numbers, pad):
    names = [f"{prefix}{str(n).zfill(pad)}{suffix}" for n in numbers]
    assert expand_hostlist(compress_hostlist(names)) == [
        f"{prefix}{str(n).zfill(pad)}{suffix}" for n in sorted(numbers)]


@pytest.mark.parametrize("names,text", [
    ([f"node{i:03d}" for i in range(1, 481)], "node[001-480]"),
    (["node07", "node19"], "node[07,19]"),
    (["n8", "n9", "n10", "n11"], "n[8-11]"),
    (["n099", "n100"], "n[099-100]"),
    (["node1", "node01"], "node[1,01]"),
    (["r1n1", "r1n2", "r2n1", "r2n2"], "r[1-2]n[1-2]"),
    (["gpu1-ib", "gpu2-ib", "gpu7-ib"], "gpu[1-2,7]-ib"),
    (["login", "node2", "node1"], "login,node[1-2]"),
    (["root@n1:2222", "root@n2:2222"], "root@n[1-2]:2222"),
    (["node3"], "node3"),
])
def test_compression_reads_like_slurm(names, text):
    assert compress_hostlist(names) == text
    assert sorted(t.label for t in parse_targets([text])) == sorted(set(names))


def test_compression_of_nothing_is_empty_and_duplicates_count_once():
    assert compress_hostlist([]) == ""
    assert compress_hostlist(["n1", "n1", "n2"]) == "n[1-2]"


# clush's grammar (ClusterShell NodeSet): steps, exclusion, intersection, groups, -x

def test_a_step_takes_every_other_host():
    assert expand_hostlist("node[01-08/2]") == ["node01", "node03", "node05", "node07"]


@pytest.mark.parametrize("text,hosts", [
    ("node[01-04]!node03", ["node01", "node02", "node04"]),
    ("node[01-06]!node[02-03]!node05", ["node01", "node04", "node06"]),
    ("node[01-06]&node[04-09]", ["node04", "node05", "node06"]),
    ("node[01-03]^node[03-04]", ["node01", "node02", "node04"]),
    ("b1,a1!b1,c1", ["a1", "c1"]),          # left to right, as clush reads it
])
def test_operators_apply_left_to_right_in_the_order_written(text, hosts):
    assert expand_hostlist(text) == hosts


def test_an_operator_with_nothing_on_its_left_says_to_use_exclude():
    with pytest.raises(UsageError, match="needs hosts on its left") as e:
        expand_hostlist("!node03")
    assert "-x node03" in e.value.fix


def test_groups_come_from_a_groups_file_and_nest(tmp_path):
    f = tmp_path / "groups"
    f.write_text("# ClusterShell's format\ngpu: node[01-04]\nall: @gpu,login1  # nested\n")
    got = resolve_targets(["@all!node02"], groups_file=str(f), environ={})
    assert [t.host for t in got] == ["node01", "node03", "node04", "login1"]


def test_an_unknown_group_names_the_known_ones(tmp_path):
    f = tmp_path / "groups"
    f.write_text("gpu: node[01-04]\n")
    with pytest.raises(UsageError, match="'@cpu' is not in the groups file") as e:
        resolve_targets(["@cpu"], groups_file=str(f), environ={})
    assert "@gpu" in e.value.fix


def test_a_group_without_a_groups_file_says_how_to_give_one(monkeypatch):
    monkeypatch.setattr("envcheck.hostfiles.GROUPS_FILE", "/nonexistent/groups")
    with pytest.raises(UsageError, match="no groups file") as e:
        resolve_targets(["@gpu"], environ={})
    assert "--groups-file" in e.value.fix


def test_a_group_that_contains_itself_is_refused_not_recursed_forever(tmp_path):
    f = tmp_path / "groups"
    f.write_text("a: @b\nb: @a\n")
    with pytest.raises(UsageError, match="nested more than"):
        resolve_targets(["@a"], groups_file=str(f), environ={})


def test_a_huge_group_or_excluded_range_is_counted_before_anything_is_built(tmp_path):
    f = tmp_path / "groups"
    f.write_text("big: n[1-99999999]\n")
    with pytest.raises(UsageError, match="more than 65536 hosts"):
        resolve_targets(["@big"], groups_file=str(f), environ={})
    with pytest.raises(UsageError, match="more than 65536 hosts"):
        expand_hostlist("n[1-10]!n[1-99999999]")


def test_exclude_drops_hosts_by_name_whatever_their_user_or_port():
    got = resolve_targets(["root@node[01-08/2]:22"], exclude=["node03", "node0[6-7]"], environ={})
    assert [t.label for t in got] == ["root@node01:22", "root@node05:22"]


@pytest.mark.parametrize("exclude,words", [(["node[01-02]"], "excludes every host")])
def test_excluding_every_host_is_a_usage_error(exclude, words):
    with pytest.raises(UsageError, match=words):
        resolve_targets(["node[01-02]"], exclude=exclude, environ={})


def test_exclude_without_hosts_is_a_usage_error_not_this_machine():
    with pytest.raises(UsageError, match="without hosts"):
        resolve_targets([], exclude=["node03"], environ={})


@pytest.mark.parametrize("text", [
    "[gpus]\nnode01 ansible_user=root\n",
    "node01 ansible_host=10.0.0.1\n",
    "all:\n  hosts:\n    node01:\n",
])
def test_an_ansible_inventory_given_as_hosts_file_says_what_it_is(tmp_path, text):
    f = tmp_path / "inventory"
    f.write_text(text)
    with pytest.raises(UsageError, match="looks like an Ansible inventory") as e:
        resolve_targets([], hosts_file=str(f), environ={})
    assert "ansible all -i" in e.value.fix and "--list-hosts" in e.value.fix


def test_digits_before_a_bracket_stay_text_as_in_slurm():
    # NodeSet itself would read a1[5-12] as a[15-112]: 98 hosts where Slurm means 8
    assert expand_hostlist("a1[5-12]") == ["a15", "a16", "a17", "a18", "a19", "a110", "a111", "a112"]
