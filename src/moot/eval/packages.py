"""The source of a pinned package for an eval: installed from its registry into moot's cache.

An eval that asks questions about a real package must read the version the questions were
written for. Python packages come from PyPI with ``pip install --no-deps --target``, JavaScript
and TypeScript packages from npm with ``npm install --ignore-scripts`` (nothing the package
ships is run), each into ``<moot home>/eval-packages/<registry>/<name>-<version>/``, once: a
finished install is marked, an interrupted one is left in a temporary folder and retried.
A Python package that is already installed at that version is read where it is.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

from moot import config
from moot.errors import MootError

REGISTRIES = ("pypi", "npm")
_NAME = re.compile(r"(?:@[a-z0-9][\w.-]*/)?[A-Za-z0-9][\w.-]*")
"""A package name as PyPI and npm write it (``@scope/name`` for npm): a format check before a
name reaches a command line."""
_VERSION = re.compile(r"[0-9][\w.+-]*")
_DONE = ".moot-installed"
INSTALL_TIMEOUT_S = 600


def cache_root() -> Path:
    return config.home() / "eval-packages"


def package_source(registry: str, package: str, version: str, *, import_name: str = "", subdir: str = "",
                   install: bool = True) -> Path:
    """The folder of ``package`` at ``version`` to index (``subdir`` inside it when given),
    installing it first when it is not there yet and ``install`` is on."""
    if registry not in REGISTRIES:
        raise MootError(f"unknown registry {registry!r} for {package}", fix=f"use one of: {', '.join(REGISTRIES)}")
    if not _NAME.fullmatch(package) or not _VERSION.fullmatch(version):
        raise MootError(f"{package!r} {version!r} is not a package name and version",
                        fix="write the package's registry name and an exact version in the question set")
    if registry == "pypi":
        folder = _pypi(package, version, import_name or package.replace("-", "_").lower(), install)
    else:
        folder = _npm(package, version, install)
    target = (folder / subdir) if subdir else folder
    if not target.is_dir():
        raise MootError(f"{package} {version} has no folder {subdir!r}", fix="fix `root` in the question set")
    return target


def _pypi(package: str, version: str, module: str, install: bool) -> Path:
    try:
        here = metadata.version(package) == version
    except metadata.PackageNotFoundError:
        here = False
    if here and (spec := importlib.util.find_spec(module)) is not None and spec.origin:
        return Path(spec.origin).parent
    target = cache_root() / "pypi" / f"{package}-{version}"
    if not (target / _DONE).exists():
        _install(target, [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-compile",
                          "--disable-pip-version-check", "--target", "{dir}", f"{package}=={version}"],
                 what=f"{package}=={version} from PyPI", install=install, fix=f"pip install {package}=={version}")
    folder = target / module
    if folder.is_dir():
        return folder
    raise MootError(f"{package} {version} has no package folder {module!r}",
                    fix="set `import` in the question set to the name the package is imported by")


def _npm(package: str, version: str, install: bool) -> Path:
    target = cache_root() / "npm" / f"{package.replace('/', '+')}-{version}"
    if not (target / _DONE).exists():
        if shutil.which("npm") is None:
            raise MootError(f"npm is needed to install {package}@{version}", fix="install Node.js (it brings npm)")
        _install(target, ["npm", "install", "--prefix", "{dir}", "--no-save", "--ignore-scripts", "--no-audit", "--no-fund",
                          "--loglevel=error", f"{package}@{version}"],
                 what=f"{package}@{version} from npm", install=install, fix=f"npm install {package}@{version}")
    return target / "node_modules" / package


def _install(target: Path, command: list[str], *, what: str, install: bool, fix: str) -> None:
    if not install:
        raise MootError(f"{what} is not installed for the eval", fix=f"run the eval without --no-install, or {fix}")
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        done = subprocess.run([part.replace("{dir}", str(work)) for part in command], capture_output=True, text=True,
                              timeout=INSTALL_TIMEOUT_S, check=False)
        if done.returncode != 0:
            last = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
            raise MootError(f"could not install {what}: {last[0][:300]}", fix=f"check the network, or {fix} yourself")
        (work / _DONE).write_text(what + "\n")
        if target.exists():  # a half-written folder from an older moot: replaced whole
            shutil.rmtree(target)
        work.rename(target)  # atomic: the folder is either complete or absent
    except subprocess.TimeoutExpired:
        raise MootError(f"installing {what} took over {INSTALL_TIMEOUT_S} s", fix=f"check the network, or {fix} yourself") from None
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)


__all__ = ["REGISTRIES", "cache_root", "package_source"]
