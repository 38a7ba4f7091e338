"""The run code hash covers the native core (:func:`dispatchlab.experiment.provenance.
native_code_hash`): a change to a Rust source, a ``Cargo.toml`` or ``Cargo.lock`` gives
new campaign run keys, as a change of a Python module does; the build output does not
count."""

from __future__ import annotations

import shutil

import pytest

from campaign_helpers import synthetic_trace, write_campaign
from dispatchlab.experiment import provenance
from dispatchlab.experiment.campaign import load_campaign


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    """A copy of the repository's Rust sources, used as the installed package's
    workspace (the hash recomputed for each call)."""
    real = provenance.rust_workspace()
    if real is None:
        pytest.skip("no Rust workspace beside the package (an installed wheel)")
    copy = tmp_path / "rust"
    for path in provenance.rust_sources(real):
        target = copy / path.relative_to(real)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    monkeypatch.setattr(provenance, "rust_workspace", lambda: copy)
    provenance.native_code_hash.cache_clear()
    yield copy
    provenance.native_code_hash.cache_clear()


def _keys(folder, trace) -> list[str]:
    provenance.native_code_hash.cache_clear()
    return load_campaign(write_campaign(folder, f"""
[campaign]
name = "n"
[[traces]]
path = "{trace}"
[[platforms]]
cores = 16
[[dispatchers]]
name = "easy"
[[predictors]]
name = "walltime"
""")).keys


def test_a_change_in_the_rust_sources_changes_the_run_keys(tmp_path, workspace):
    trace = synthetic_trace(tmp_path, 20, cores=16)
    before = _keys(tmp_path, trace)
    assert _keys(tmp_path, trace) == before  # stable
    # the build output and other files do not count
    (workspace / "target" / "release").mkdir(parents=True)
    (workspace / "target" / "release" / "generated.rs").write_text("fn main() {}\n")
    (workspace / "NOTES.md").write_text("notes\n")
    assert _keys(tmp_path, trace) == before
    engine = workspace / "core" / "src" / "engine.rs"
    engine.write_text(engine.read_text() + "\n// one more line\n")
    edited = _keys(tmp_path, trace)
    assert not set(edited) & set(before)
    lock = workspace / "Cargo.lock"
    lock.write_text(lock.read_text() + "\n")
    assert not set(_keys(tmp_path, trace)) & set(edited)


def test_without_the_sources_the_built_extension_counts(monkeypatch):
    pytest.importorskip("dispatchlab._core", reason="the native core is not built")
    provenance.native_code_hash.cache_clear()
    with_sources = provenance.native_code_hash()
    monkeypatch.setattr(provenance, "rust_workspace", lambda: None)
    provenance.native_code_hash.cache_clear()
    try:
        assert provenance.native_code_hash() != with_sources
    finally:
        provenance.native_code_hash.cache_clear()
