"""Slurm host lists (:mod:`dispatchlab.platform.hostlist`) against the forms Slurm
prints in sacct's NodeList and accepts in slurm.conf; expected names written by hand."""

from __future__ import annotations

import pytest

from dispatchlab.core.errors import InputError
from dispatchlab.platform.hostlist import MAX_HOSTS, compress, expand, hosts

FORMS = [
    # (list, names)
    ("cn01", ["cn01"]),
    ("cn[001-002]", ["cn001", "cn002"]),  # leading zeros kept
    ("cn[8-10]", ["cn8", "cn9", "cn10"]),  # no zeros: numbers grow
    ("cn[08-10]", ["cn08", "cn09", "cn10"]),  # width of the low end
    ("cn[1,3-5],gpu01", ["cn1", "cn3", "cn4", "cn5", "gpu01"]),  # commas in and out
    ("gpu01,cn[1,3]", ["gpu01", "cn1", "cn3"]),  # order as written
    ("r[1-2]n[01-04]", ["r1n01", "r1n02", "r1n03", "r1n04",
                        "r2n01", "r2n02", "r2n03", "r2n04"]),  # cartesian product
    ("r[1,3]n[1-2]x", ["r1n1x", "r1n2x", "r3n1x", "r3n2x"]),
    ("cn[1-2]-ib", ["cn1-ib", "cn2-ib"]),  # text after the brackets
    ("rack[0-1]_blade[7]", ["rack0_blade7", "rack1_blade7"]),
    ("[1-2]", ["1", "2"]),
    ("n[5]", ["n5"]),
    ("a,b c\tb", ["a", "b", "c", "b"]),  # blanks separate; duplicates kept
    ("a,,b,", ["a", "b"]),  # empty entries skipped
    (" cn[1-2] ", ["cn1", "cn2"]),
    ("None assigned", []),  # sacct: a job that never ran
    ("(null)", []),
    ("", []),
    ("login-1.cluster.org", ["login-1.cluster.org"]),
]


@pytest.mark.parametrize(("text", "names"), FORMS)
def test_slurm_forms(text, names):
    assert expand(text) == names


BAD = [
    ("cn[1-2", "a '[' without its ']'"),
    ("cn1-2]", "a ']' without its '['"),
    ("cn[1-[2]]", "a '[' inside brackets"),
    ("cn[5-3]", "ends below its start"),
    ("cn[a-b]", "not a number or a range"),
    ("cn[]", "not a number or a range"),
    ("cn[1,,2]", "not a number or a range"),
    ("cn[1-2-3]", "not a number or a range"),
    ("cn[-3]", "not a number or a range"),
    ("n[1 - 2]", "not a number or a range"),
    ("cn[0-99999999]", "more than 1,000,000 names"),
    ("a[0-999]b[0-9999]", "more than 1,000,000 names"),
]


@pytest.mark.parametrize(("text", "why"), BAD)
def test_malformed_lists_are_user_errors(text, why):
    with pytest.raises(InputError) as err:
        expand(text)
    assert why in err.value.message and "not a Slurm host list" in err.value.message
    assert "\n" not in str(err.value)


def test_the_limit_counts_every_entry():
    assert len(expand(f"a[1-{MAX_HOSTS}]")) == MAX_HOSTS
    with pytest.raises(InputError, match="more than"):
        expand(f"a[1-{MAX_HOSTS}],b")


def test_hosts_are_distinct_in_first_appearance_order():
    assert hosts("b,a[1-2],b,a1") == ["b", "a1", "a2"]


@pytest.mark.parametrize(
    ("names", "text"),
    [
        (["cn003", "cn001", "gpu1", "cn002", "login"], "cn[001-003],gpu1,login"),
        (["n1", "n2", "n4", "n2"], "n[1-2,4]"),
        (["n9", "n10", "n11"], "n9,n[10-11]"),  # one group per width
        (["x07"], "x07"),
        (["r1n01", "r1n02", "r2n01"], "r1n[01-02],r2n01"),
        ([], ""),
    ],
)
def test_compress(names, text):
    assert compress(names) == text
    assert sorted(expand(text)) == sorted(set(names))


@pytest.mark.parametrize("name", ["", "a,b", "a b", "a[1]"])
def test_compress_refuses_names_that_cannot_be_listed(name):
    with pytest.raises(InputError):
        compress([name])
