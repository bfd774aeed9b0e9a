"""Build the bench's document corpora from pinned Debian packages (``bench/documents.py`` reads them).

Each ``bench/corpora/NAME/manifest.yaml`` names the packages (name, version, SHA-256 of the
``.deb``), the files to take from them (globs inside the unpacked tree) and how to convert them:
``copy`` keeps the file as shipped (HTML, Markdown, text; ``.gz`` is unpacked), ``man-pdf`` renders
a man page to PDF with groff's gropdf (``groff -man -Tpdf``: real running heads, feet and page
numbers), dated ``SOURCE_DATE_EPOCH`` so a rebuild is byte-identical. The documents land in
``~/.cache/deep-research/bench-corpora/NAME/docs`` and are never committed.

Needs: ``apt-get`` with Debian's archive reachable (``apt-get download PKG=VERSION``), ``dpkg-deb``,
and for ``man-pdf`` the ``groff`` package (gropdf; ``groff-base`` alone has no PDF device). The
SHA-256 pins are those of Debian 12 (bookworm); man pages ship in amd64 packages.

Usage: ``python bench/corpora/build.py [NAME ...] [--root DIR]``; prints one line per corpus with
its file count and a digest of its contents (equal on every rebuild).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
ROOT = Path("~/.cache/deep-research/bench-corpora").expanduser()
SOURCE_DATE_EPOCH = "1672531200"  # 2023-01-01: the date every rendered PDF carries
CONVERTERS = ("copy", "man-pdf")


class BuildError(Exception):
    """A corpus cannot be built: one line for the user, no traceback."""


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    sha256: str


@dataclass(frozen=True)
class Manifest:
    name: str
    format: str
    convert: str
    packages: tuple[Package, ...]
    files: tuple[str, ...]


def corpus_names() -> list[str]:
    return sorted(p.parent.name for p in HERE.glob("*/manifest.yaml"))


def load_manifest(name: str) -> Manifest:
    path = HERE / name / "manifest.yaml"
    if not path.is_file():
        raise BuildError(f"no corpus {name!r} (known: {', '.join(corpus_names())})")
    data: dict[str, Any] = yaml.safe_load(path.read_text("utf-8"))
    convert = str(data.get("convert", "copy"))
    if convert not in CONVERTERS:
        raise BuildError(f"{path.name} of {name}: convert must be one of {CONVERTERS}")
    packages = tuple(
        Package(str(p["package"]), str(p["version"]), str(p["sha256"])) for p in data["packages"]
    )
    return Manifest(name, str(data["format"]), convert, packages, tuple(map(str, data["files"])))


def docs_dir(name: str, root: Path = ROOT) -> Path:
    return root / name / "docs"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fetch_deb(pkg: Package, debs: Path) -> Path:
    """The pinned ``.deb``, downloaded once into ``debs`` and checked against its SHA-256."""
    debs.mkdir(parents=True, exist_ok=True)
    pattern = f"{pkg.name}_{pkg.version.replace(':', '%3a')}_*.deb"
    have = sorted(debs.glob(pattern))
    if not have:
        if shutil.which("apt-get") is None:
            raise BuildError("needs apt-get (Debian's archive) to download the pinned packages")
        done = subprocess.run(
            ["apt-get", "download", f"{pkg.name}={pkg.version}"],
            cwd=debs,
            capture_output=True,
            text=True,
            check=False,
        )
        have = sorted(debs.glob(pattern))
        if done.returncode != 0 or not have:
            last = (done.stderr.strip().splitlines() or ["no .deb written"])[-1]
            raise BuildError(f"apt-get download {pkg.name}={pkg.version}: {last}")
    deb = have[0]
    if (digest := _sha256(deb)) != pkg.sha256:
        deb.unlink()
        raise BuildError(f"{deb.name}: SHA-256 {digest} is not the pinned {pkg.sha256}")
    return deb


def unpack(deb: Path, into: Path) -> None:
    if shutil.which("dpkg-deb") is None:
        raise BuildError("needs dpkg-deb to unpack the packages")
    subprocess.run(["dpkg-deb", "-x", str(deb), str(into)], check=True, capture_output=True)


def _read(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if path.suffix == ".gz" else data


def _man_pdf(source: bytes, name: str) -> bytes:
    if shutil.which("groff") is None or shutil.which("gropdf") is None:
        raise BuildError("man-pdf needs groff's gropdf: apt-get install groff")
    env = {**os.environ, "SOURCE_DATE_EPOCH": SOURCE_DATE_EPOCH, "LC_ALL": "C.UTF-8"}
    done = subprocess.run(
        ["groff", "-man", "-Tpdf"], input=source, capture_output=True, env=env, check=False
    )
    if done.returncode != 0 or not done.stdout.startswith(b"%PDF"):
        raise BuildError(f"groff -man -Tpdf {name}: {done.stderr.decode(errors='replace')[:200]}")
    return done.stdout


def output_name(path: Path, convert: str) -> str:
    """``find.1.gz`` -> ``find.pdf`` (man-pdf); ``usr_01.txt`` stays itself (copy)."""
    name = path.name.removesuffix(".gz")
    if convert == "man-pdf":
        return name.split(".", 1)[0] + ".pdf"
    return name


def build(manifest: Manifest, root: Path = ROOT) -> Path:
    """Download, check, unpack and convert; the corpus's docs folder, replaced as a whole."""
    target = docs_dir(manifest.name, root)
    with tempfile.TemporaryDirectory(prefix=f"corpus-{manifest.name}-") as tmp_name:
        tree, out = Path(tmp_name) / "tree", Path(tmp_name) / "docs"
        tree.mkdir()
        out.mkdir()
        for pkg in manifest.packages:
            unpack(fetch_deb(pkg, root / "debs"), tree)
        for pattern in manifest.files:
            found = sorted(p for p in tree.glob(pattern) if p.is_file())
            if not found:
                raise BuildError(f"{manifest.name}: no file matches {pattern}")
            for path in found:
                name = output_name(path, manifest.convert)
                data = _read(path)
                if manifest.convert == "man-pdf":
                    data = _man_pdf(data, path.name)
                if (out / name).exists():
                    raise BuildError(f"{manifest.name}: two files would be named {name}")
                (out / name).write_bytes(data)
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(out, target)
    return target


def digest(folder: Path) -> str:
    """One SHA-256 over every file's name and content: equal when a rebuild is identical."""
    h = hashlib.sha256()
    for path in sorted(folder.iterdir()):
        h.update(path.name.encode() + b"\0" + _sha256(path).encode() + b"\n")
    return h.hexdigest()


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("names", nargs="*", help="corpora to build (default: every manifest)")
    p.add_argument("--root", default=str(ROOT), help="where corpora are built")
    args = p.parse_args(argv)
    try:
        for name in args.names or corpus_names():
            folder = build(load_manifest(name), Path(args.root).expanduser())
            files = sum(1 for _ in folder.iterdir())
            print(f"{name}: {files} files in {folder} sha256={digest(folder)[:16]}")
    except (BuildError, OSError, subprocess.CalledProcessError, KeyError) as exc:
        print(f"build.py: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
