#!/usr/bin/env python3
"""`make site`: the calculator as a folder of static files that any static host serves (GitHub Pages, a static
Hugging Face Space, `python -m http.server`). The page is the one `trainsteps web` serves; here its requests go to a
Web Worker that runs the same Python (trainsteps.web.inprocess) in Pyodide, so nothing is computed on a server.

What goes in, all pinned and checked against a hash (network is needed only to fill the download cache):
  pyodide/   Pyodide's runtime from its npm package (the Python interpreter, its standard library, the lock file)
  wheels/    click (PyPI wheel), PyYAML's pure-Python `yaml` package (from its PyPI sdist: libyaml is C, which Pyodide's
             runtime cannot load from a PyPI wheel) and trainsteps built from this checkout with pip
The build is skipped when its inputs have not changed since the last one (build/site/stamp), and downloads are kept in
$XDG_CACHE_HOME/trainsteps/site/, so tests, the benchmark and `make site` share one build.

    python tools/build_site.py [--out build/site] [--force]
"""

from __future__ import annotations

import argparse
import base64
import gzip
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WEB = ROOT / "src" / "trainsteps" / "web"
DEFAULT_OUT = ROOT / "build" / "site"

PYODIDE_VERSION = "314.0.7"  # Python 3.14.2
PYODIDE_TARBALL = f"https://registry.npmjs.org/pyodide/-/pyodide-{PYODIDE_VERSION}.tgz"
PYODIDE_INTEGRITY = "sha512-0YvXxEhfEdpLfb/XkM2BFAeMROq0iMUX2bzzH9pOttyMcWkwq+HbE5uyuGD82LN7y2q+SNvi/6V5JEsOlD2R1A=="
PYODIDE_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json")
CLICK = ("click", "click-8.5.1-py3-none-any.whl", "8bb5376d2006950386f8c6427613334a2acadc5f559cb80e638d00b4df957e37")
PYYAML = ("pyyaml", "pyyaml-6.0.4.tar.gz", "e24bf71af8a432d7808fabff134d38dfe16d3cbb41f2873bb4b1e42422de0a1a")  # the sdist
PYYAML_VERSION = "6.0.4"
PYPI_INDEX = os.environ.get("TRAINSTEPS_PYPI_INDEX", "https://pypi.org/simple")
"""The simple index pip reads (PEP 691 JSON): it names each release file's address; the pinned sha256 is checked."""
PAGE_FILES = ("app.js", "app.css", "worker.js", "vendor/uPlot.iife.min.js", "vendor/uPlot.min.css", "vendor/uPlot.LICENSE")
ENGINE_SERVER = '<meta name="trainsteps-engine" content="server">'
# No host sends a policy for a folder of files: the page carries its own. WebAssembly needs 'wasm-unsafe-eval'.
STATIC_POLICY = ('<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; script-src \'self\' \'wasm-unsafe-eval\'; '
                 "worker-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'\">")
SNAPSHOT_SCRIPT = ROOT / "tools" / "site_snapshot.mjs"
SNAPSHOT_FILE = "engine.snapshot.gz"
"""The engine's memory after start-up (pyodide/), gzipped: a Node.js >= 18 at build time writes it; without one the
page starts Pyodide from the beginning (several seconds more on a first visit)."""
ZIP_TIME = (2020, 1, 1, 0, 0, 0)  # fixed, so the same sources give the same wheel bytes


class BuildError(RuntimeError):
    """A download that failed or did not match its pinned hash, or a wheel that did not build."""


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "trainsteps" / "site"


def inputs_digest() -> str:
    """One hash over everything the folder is made of: the package's sources, pyproject.toml, this script."""
    digest = hashlib.sha256()
    files = [p for p in sorted((ROOT / "src").rglob("*")) if p.is_file() and p.suffix != ".pyc"
             and not any(part == "__pycache__" or part.endswith(".egg-info") for part in p.parts)]  # an editable install's files
    for path in [*files, ROOT / "pyproject.toml", Path(__file__).resolve(), SNAPSHOT_SCRIPT]:
        digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def build(out: Path = DEFAULT_OUT, force: bool = False, log=print) -> Path:
    stamp = inputs_digest()
    if not force and (out / "stamp").is_file() and (out / "stamp").read_text() == stamp:
        log(f"{out} is up to date")
        return out
    staging = out.with_name(out.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    write_page(staging)
    write_pyodide(staging / "pyodide", log)
    wheels = write_wheels(staging / "wheels", log)
    (staging / "wheels" / "manifest.json").write_text(json.dumps({"wheels": wheels}, indent=1) + "\n")
    snapshot = write_snapshot(staging, log)
    if snapshot:
        (staging / "wheels" / "manifest.json").write_text(json.dumps({"wheels": wheels, "snapshot": snapshot}, indent=1) + "\n")
    (staging / ".nojekyll").write_text("")  # GitHub Pages: serve every file as it is
    (staging / "stamp").write_text(stamp)
    shutil.rmtree(out, ignore_errors=True)
    staging.rename(out)
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    log(f"built {out} ({size / 1e6:.1f} MB): serve it with  python -m http.server -d {out} 8000")
    return out


def write_page(folder: Path) -> None:
    page = (WEB / "page.html").read_text(encoding="utf-8")
    if page.count(ENGINE_SERVER) != 1:
        raise BuildError(f"page.html has no {ENGINE_SERVER}: the static page cannot be told to use the worker")
    page = page.replace(ENGINE_SERVER, ENGINE_SERVER.replace('"server"', '"worker"') + "\n" + STATIC_POLICY)
    (folder / "index.html").write_text(page, encoding="utf-8")
    for name in PAGE_FILES:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(WEB / name, folder / name)


def write_pyodide(folder: Path, log) -> None:
    algorithm, _, digest = PYODIDE_INTEGRITY.partition("-")  # npm's integrity: sha512-<base64>
    tarball = download(PYODIDE_TARBALL, cache_dir() / f"pyodide-{PYODIDE_VERSION}.tgz", algorithm, base64.b64decode(digest).hex(), log)
    folder.mkdir(parents=True)
    with tarfile.open(tarball) as archive:
        for name in PYODIDE_FILES:
            member = archive.extractfile(f"package/{name}")
            if member is None:
                raise BuildError(f"the pyodide {PYODIDE_VERSION} package has no {name}")
            (folder / name).write_bytes(member.read())
    (folder / "README").write_text(f"Pyodide {PYODIDE_VERSION} (MPL-2.0, https://github.com/pyodide/pyodide), from the npm registry:\n"
                                   f"{PYODIDE_TARBALL} -> package/{{{','.join(PYODIDE_FILES)}}}\n")


def write_wheels(folder: Path, log) -> list[dict]:
    folder.mkdir(parents=True)
    click_wheel = pypi_file(*CLICK, log=log)
    shutil.copyfile(click_wheel, folder / click_wheel.name)
    yaml_wheel = pure_yaml_wheel(pypi_file(*PYYAML, log=log), folder)
    own = trainsteps_wheel(folder, log)
    return [{"file": p.name, "sha256": sha256(p)} for p in (folder / click_wheel.name, yaml_wheel, own)]


def write_snapshot(folder: Path, log) -> dict | None:
    """The engine started once here, in Node.js, and saved (tools/site_snapshot.mjs); None when there is no Node.js."""
    node = shutil.which(os.environ.get("TRAINSTEPS_NODE", "node"))
    if node is None:
        log("no Node.js: the page will start Pyodide from the beginning (set TRAINSTEPS_NODE or install nodejs for a faster start)")
        return None
    log("starting the engine once to save its memory")
    with tempfile.TemporaryDirectory(prefix="trainsteps-snapshot-") as scratch:
        raw = Path(scratch) / "snapshot"
        done = subprocess.run([node, str(SNAPSHOT_SCRIPT), str(folder), str(raw)], capture_output=True, text=True, cwd=scratch,
                              env={"PATH": os.environ.get("PATH", ""), "HOME": scratch})  # nothing of this machine in it
        if done.returncode != 0 or not raw.is_file():
            raise BuildError(f"{node} could not save the started engine: {(done.stderr or done.stdout).strip()[-400:]}")
        target = folder / "pyodide" / SNAPSHOT_FILE
        with raw.open("rb") as source, gzip.GzipFile(target, "wb", compresslevel=6, mtime=0) as packed:
            shutil.copyfileobj(source, packed, 1 << 20)
    return {"file": f"pyodide/{SNAPSHOT_FILE}", "sha256": sha256(target)}


# ---- downloads -------------------------------------------------------------------------------------------------------

def download(url: str, target: Path, algorithm: str, expected: str, log) -> Path:
    """`url` into the cache once; its hash (hex) is checked on every use, so a changed or truncated file is fetched again."""
    if target.is_file() and hashlib.new(algorithm, target.read_bytes()).hexdigest() == expected:
        return target
    log(f"downloading {url}")
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        with urllib.request.urlopen(url, timeout=60) as answer:
            data = answer.read()
    except OSError as exc:
        raise BuildError(f"cannot download {url}: {exc}") from None
    if hashlib.new(algorithm, data).hexdigest() != expected:
        raise BuildError(f"{url} does not match its pinned {algorithm}")
    target.write_bytes(data)
    return target


def pypi_file(name: str, filename: str, pinned: str, log) -> Path:
    """A release file from PyPI, found by name in the simple index as pip finds it (pip itself would build an sdist, and
    Cython from source, just to read its metadata), and checked against its pinned sha256."""
    target = cache_dir() / "pypi" / filename
    if target.is_file() and sha256(target) == pinned:
        return target
    request = urllib.request.Request(f"{PYPI_INDEX}/{name}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            files = json.load(answer).get("files", [])
    except (OSError, ValueError) as exc:
        raise BuildError(f"cannot read {PYPI_INDEX}/{name}/: {exc}") from None
    url = next((f["url"] for f in files if f.get("filename") == filename), None)
    if url is None:
        raise BuildError(f"{PYPI_INDEX}/{name}/ lists no {filename}")
    return download(url, target, "sha256", pinned, log)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ---- wheels ----------------------------------------------------------------------------------------------------------

def pure_yaml_wheel(sdist: Path, folder: Path) -> Path:
    """PyYAML's `yaml` package (pure Python; trainsteps falls back to its SafeLoader when libyaml is absent) as a
    py3-none-any wheel."""
    version = PYYAML_VERSION
    info = f"PyYAML-{version}.dist-info"
    files: dict[str, bytes] = {}
    with tarfile.open(sdist) as archive:
        for member in archive.getmembers():
            parts = member.name.split("/")
            if member.isfile() and parts[1:3] == ["lib", "yaml"] and member.name.endswith(".py"):
                files["yaml/" + parts[-1]] = archive.extractfile(member).read()
            elif member.isfile() and parts[1:] in (["PKG-INFO"], ["LICENSE"]):
                files[f"{info}/{'METADATA' if parts[1] == 'PKG-INFO' else 'LICENSE'}"] = archive.extractfile(member).read()
    files[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: trainsteps tools/build_site.py\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    files[f"{info}/top_level.txt"] = b"yaml\n"
    target = folder / f"PyYAML-{version}-py3-none-any.whl"
    write_zip(target, files, record=f"{info}/RECORD")
    return target


def write_zip(target: Path, files: dict[str, bytes], record: str) -> None:
    rows = [f"{name},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},{len(data)}"
            for name, data in sorted(files.items())]
    files = {**files, record: ("\n".join([*rows, f"{record},,"]) + "\n").encode()}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(files):
            archive.writestr(zipfile.ZipInfo(name, ZIP_TIME), files[name], zipfile.ZIP_DEFLATED)
    target.write_bytes(buffer.getvalue())


def trainsteps_wheel(folder: Path, log) -> Path:
    """trainsteps from this checkout, built by pip (the installed setuptools when there is one, else an isolated build)."""
    log("building the trainsteps wheel")
    isolation = ["--no-build-isolation"] if can_build_here() else []
    with tempfile.TemporaryDirectory(prefix="trainsteps-wheel-") as scratch:
        source = Path(scratch) / "checkout"  # a copy of what the wheel is made of, so the build leaves nothing in the checkout
        shutil.copytree(ROOT / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        for name in ("pyproject.toml", "README.md"):
            shutil.copyfile(ROOT / name, source / name)
        done = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", *isolation, "-w", str(folder), str(source)],
                              capture_output=True, text=True, env={**os.environ, "SOURCE_DATE_EPOCH": "1577836800"})  # same bytes
    wheels = list(folder.glob("trainsteps-*.whl"))
    if done.returncode != 0 or len(wheels) != 1:
        raise BuildError(f"pip could not build the trainsteps wheel: {done.stderr.strip()[-400:]}")
    return wheels[0]


def can_build_here() -> bool:
    """setuptools >= 68 with bdist_wheel (its own from 70.1, else the `wheel` package): no isolated build (no download)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = tuple(int(part) for part in version("setuptools").split(".")[:2])
    except (PackageNotFoundError, ValueError):
        return False
    try:
        version("wheel")
        has_wheel = True
    except PackageNotFoundError:
        has_wheel = False
    return found >= (70, 1) or (found >= (68, 0) and has_wheel)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the folder to write (default build/site)")
    parser.add_argument("--force", action="store_true", help="build even when the inputs have not changed")
    args = parser.parse_args(argv)
    try:
        build(args.out.resolve(), force=args.force)
    except BuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
