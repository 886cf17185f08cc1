"""Host lists at their edges (envcheck/hostlist.py): every count at the budget and one past it (a
range, a step, several brackets, a group, several arguments), group nesting at its limit, the
operators where their results differ (a union that overlaps, an exclusion of a host not listed),
DNS lengths at 253 and 63, upper-case IPv6 and user names, the Slurm variables, when the groups file
is read, and each refusal compared whole, its quoted input cut at 80 characters. test_hostlist.py
holds the grammar; these pin what its cases left open (each seen to fail on a planted change:
bench/mutation.py)."""
from __future__ import annotations

import pytest

from envcheck import hostlist
from envcheck.errors import UsageError
from envcheck.hostlist import Target, compress_hostlist, expand_hostlist, parse_target, parse_targets, resolve_targets

LONG = "n" * 100          # a name past the 80 characters a message quotes


def refusal(fn, *args, **kw):
    with pytest.raises(UsageError) as e:
        fn(*args, **kw)
    return e.value.message, e.value.fix


# ---------------------------------------------------------------- counts at the budget

@pytest.mark.parametrize("text,count", [
    ("a,b,c", 3),
    ("n[1-3,5-9/2]", 6),      # 3 + 3
    ("n[1-9/3]", 3),          # 1, 4, 7: a step that does not divide the span
    ("r[1-2]n[1-3]", 6),      # brackets multiply
    ("n[1-2],m[1-2]", 4),     # terms add up
    ("n7", 1),
])
def test_a_list_of_exactly_the_budget_is_taken_and_one_more_is_refused(text, count):
    assert len(expand_hostlist(text, budget=count)) == count
    with pytest.raises(UsageError, match="more than"):
        expand_hostlist(text, budget=count - 1)


def test_a_range_of_exactly_65536_hosts_is_taken():
    names = expand_hostlist("n[1-65536]")
    assert len(names) == 65536 and names[-1] == "n65536"


def test_a_group_counts_every_term_of_it():
    groups = {"g": "n[1-3],m[1-2]"}
    assert len(expand_hostlist("@g", budget=5, groups=groups)) == 5
    with pytest.raises(UsageError, match="more than"):
        expand_hostlist("@g", budget=4, groups=groups)


def test_a_group_of_65536_and_one_more_is_refused_before_it_is_built():
    assert refusal(expand_hostlist, "@g", groups={"g": "n[1-65536],m1"}) == (
        "bad host list '@g': more than 65536 hosts in all",
        "check the ranges for a typo, or split the work into several runs")


def test_the_budget_is_shared_by_all_the_arguments(monkeypatch):
    monkeypatch.setattr(hostlist, "MAX_HOSTS", 10)
    assert len(parse_targets(["n[1-6]", "m[1-4]"])) == 10
    with pytest.raises(UsageError, match="more than"):
        parse_targets(["n[1-6]", "m[1-5]"])


def test_a_too_long_list_is_quoted_by_its_first_80_characters():
    text = LONG + "[1-99999999]"
    assert refusal(expand_hostlist, text) == (
        f"bad host list {text[:80]!r}: more than 65536 hosts in all",
        "check the ranges for a typo, or split the work into several runs")


@pytest.mark.parametrize("text,message,fix", [
    ("n[0000000001-2]", "bad host list 'n[0000000001-2]': range '0000000001-2' has numbers of more than 9 digits",
     "check the range for a typo"),
    ("n[1-2/0000000001]", "bad host list 'n[1-2/0000000001]': range '1-2/0000000001' has numbers of more than "
     "9 digits", "check the range for a typo"),
    ("n[1-4/0]", "bad host list 'n[1-4/0]': range '1-4/0' has step 0", "e.g. node[01-08/2]"),
    ("!node03", "bad host list '!node03': '!' needs hosts on its left", "write node[01-08]!node03, or give -x node03"),
    ("n$1", "bad host list 'n$1': 'n$1' is not part of a host name",
     "write host names, ranges (node[01-16]), ! to exclude, @group"),
    (LONG + "$" + "x" * 50, f"bad host list {(LONG + '$')[:80]!r}: {(LONG + '$' + 'x' * 50)[:40]!r} is not part of "
     "a host name", "write host names, ranges (node[01-16]), ! to exclude, @group"),
    ("@", "bad host '@': names no host and no group", "write host names, or @GROUP"),
    ("@" + LONG + "$", f"bad host {('@' + LONG)[:80]!r}: names no host and no group", "write host names, or @GROUP"),
    ("n[1-2]:", "bad host list 'n[1-2]:': ':' is not part of a host name",
     "write host names, ranges (node[01-16]), ! to exclude, @group"),
])
def test_each_refused_list_names_the_thing_and_the_fix(text, message, fix):
    assert refusal(expand_hostlist, text, groups={"g": "n1"}) == (message, fix)


def test_a_range_clustershell_refuses_is_quoted_with_its_reason():
    msg, fix = refusal(expand_hostlist, "n[01-100]")
    assert msg.startswith("bad host list 'n[01-100/1]': ") and "padding" in msg
    assert fix == "e.g. node[01-16], node[01-08/2]"
    msg, _ = refusal(expand_hostlist, LONG + "[01-100]")
    assert msg.startswith(f"bad host list {(LONG + '[01-100/1]')[:80]!r}: ")


def test_an_empty_expression_names_no_host():
    assert expand_hostlist("") == []


# ---------------------------------------------------------------- groups

def chain(n):
    """g1: @g2, g2: @g3, ..., gn: n1 — groups nested n deep."""
    return {**{f"g{i}": f"@g{i + 1}" for i in range(1, n)}, f"g{n}": "n1"}


def test_groups_nested_eight_deep_are_taken_and_nine_deep_refused():
    assert expand_hostlist("@g1", groups=chain(8)) == ["n1"]
    assert refusal(expand_hostlist, "@g1", groups=chain(9)) == (
        "host group '@g9': groups nested more than 8 deep (a loop?)", "check the groups file")


def test_an_unknown_group_lists_the_first_eight_known_ones():
    groups = {f"g{i}": "n1" for i in range(10)}
    assert refusal(expand_hostlist, "@x", groups=groups) == (
        "host group '@x' is not in the groups file", "use one of @g0, @g1, @g2, @g3, @g4, @g5, @g6, @g7")


def test_a_groups_file_is_read_only_for_a_group_or_when_named(tmp_path, monkeypatch):
    bad = tmp_path / "groups"
    bad.write_text("not a group line\n")
    monkeypatch.setattr("envcheck.hostfiles.GROUPS_FILE", str(bad))
    assert resolve_targets(["n1"], environ={}) == [Target("n1")]        # never read
    good = tmp_path / "default"
    good.write_text("odd: n[1-3/2]\n")
    monkeypatch.setattr("envcheck.hostfiles.GROUPS_FILE", str(good))
    assert [t.host for t in resolve_targets(["@odd"], environ={})] == ["n1", "n3"]   # the default file
    got = resolve_targets(["n[1-4]"], exclude=["@odd"], environ={})                # -x reads groups too
    assert [t.host for t in got] == ["n2", "n4"]


# ---------------------------------------------------------------- operators where results differ

def test_a_union_that_overlaps_keeps_each_host_once_and_an_exclusion_of_an_absent_host_changes_nothing():
    assert expand_hostlist("n[1-3],n[2-4]") == ["n1", "n2", "n3", "n4"]
    assert expand_hostlist("n[1-2]!n3") == ["n1", "n2"]


# ---------------------------------------------------------------- one target

def test_dns_lengths_at_their_limits():
    label = "a" * 63
    host = ".".join([label] * 3 + ["b" * 61])          # 253 characters
    assert len(host) == 253 and parse_target(host) == Target(host)
    assert parse_target(label + ".c") == Target(label + ".c")
    too_long = host + "b"
    assert refusal(parse_target, too_long) == (
        f"bad host {too_long[:80]!r}: longer than DNS allows (253 characters, 63 per label)",
        "check the host name for a typo")
    assert refusal(parse_target, "a" * 64) == (
        f"bad host {'a' * 64!r}: longer than DNS allows (253 characters, 63 per label)", "check the host name for a typo")


def test_a_name_with_a_character_no_host_has_is_refused_whole():
    assert refusal(parse_target, "bad$host") == ("bad host 'bad$host': 'bad$host' is not a host name",
                                                 "write [user@]host[:port]")
    long = "u@" + LONG + "$"
    assert refusal(parse_target, long) == (f"bad host {long[:80]!r}: {(LONG + '$')[:80]!r} is not a host name",
                                           "write [user@]host[:port]")


def test_upper_case_ipv6_and_user_names_are_taken():
    assert parse_targets(["[FE80::1]:22"]) == [Target("FE80::1", None, 22)]
    assert parse_targets(["Admin@n[1-2]"]) == [Target("n1", "Admin"), Target("n2", "Admin")]


def test_a_port_after_a_plain_list_applies_to_each_host():
    assert parse_targets(["n1,n2:22"]) == [Target("n1", None, 22), Target("n2", None, 22)]


def test_a_bracketed_list_with_two_colons_is_a_list_with_an_empty_port_not_an_ipv6_address():
    # the last ':' is an empty port; what is left is a list, which ':' is no part of
    assert refusal(parse_targets, ["n[1-2]::"]) == (
        "bad host list 'n[1-2]:': ':' is not part of a host name",
        "write host names, ranges (node[01-16]), ! to exclude, @group")


def test_an_argument_that_names_no_host_is_quoted_by_its_first_80_characters():
    spec = f"{LONG}!{LONG}"
    assert refusal(parse_targets, [spec]) == (
        f"bad host {spec[:80]!r}: names no host",
        "write [user@]host[:port], or give no host arguments at all for this machine")


# ---------------------------------------------------------------- the hosts a command runs on

def test_slurm_s_older_variable_is_read_and_the_process_environment_by_default(monkeypatch):
    assert [t.host for t in resolve_targets([], environ={"SLURM_NODELIST": "n[1-2]"})] == ["n1", "n2"]
    monkeypatch.delenv("SLURM_NODELIST", raising=False)
    monkeypatch.setenv("SLURM_JOB_NODELIST", "m[1-2]")
    assert [t.host for t in resolve_targets([])] == ["m1", "m2"]


def test_exclude_refusals_whole():
    assert refusal(resolve_targets, [], exclude=["node03"], environ={}) == (
        "-x/--exclude without hosts: this machine cannot be excluded from itself",
        "name the hosts, e.g. node[01-08] -x node03")
    many = [f"node{i:02d}" for i in range(1, 21)]
    assert refusal(resolve_targets, many, exclude=many, environ={}) == (
        f"-x {','.join(many)[:80]} excludes every host", "exclude fewer hosts")


# ---------------------------------------------------------------- compress_hostlist

def test_names_clustershell_cannot_fold_are_listed_as_they_are(monkeypatch):
    assert compress_hostlist(["n1", "bad name"]) == "n1,bad name"
    assert compress_hostlist(["@x", "n1"]) == "@x,n1"
    from ClusterShell.NodeSet import NodeSet, NodeSetException

    def refuse(*a, **kw):
        raise NodeSetException("a name NodeSet cannot parse")
    monkeypatch.setattr(NodeSet, "fromlist", refuse)
    assert compress_hostlist(["n2", "n1", "n2"]) == "n1,n2"     # each once, sorted, nothing folded


@pytest.mark.parametrize("text", ["a;b::", "-oProxyCommand=x::", "node01::22x", "fe80::1%$(id)"])
def test_text_with_two_colons_that_is_no_ipv6_address_is_refused(text):
    # two colons used to mean "a bare IPv6 address" and skipped the host-name check entirely
    assert refusal(parse_target, text)[0] == f"bad host {text!r}: {text!r} is not an IPv6 address"


def test_ipv6_literals_with_a_zone_or_an_ipv4_tail_are_still_taken():
    assert parse_target("fe80::1%eth0") == Target("fe80::1%eth0")
    assert parse_target("::ffff:192.0.2.1") == Target("::ffff:192.0.2.1")
