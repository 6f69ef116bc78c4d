"""tools/build_site.py (`make site`): the static page is the served page with the worker engine; an unchanged checkout
is not rebuilt; PyYAML's pure-Python package becomes a wheel that installs as pip installs one."""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import io
import json
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def load_build_site():
    spec = importlib.util.spec_from_file_location("build_site", ROOT / "tools" / "build_site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_static_page_is_the_served_page_with_the_worker_engine_and_its_own_policy(tmp_path):
    build_site = load_build_site()
    build_site.write_page(tmp_path)
    served = (ROOT / "src" / "trainsteps" / "web" / "page.html").read_text(encoding="utf-8").splitlines()
    static = (tmp_path / "index.html").read_text(encoding="utf-8").splitlines()
    added = [line for line in static if line not in served]
    assert [line for line in served if line not in static] == [build_site.ENGINE_SERVER]
    assert added == [build_site.ENGINE_SERVER.replace("server", "worker"), build_site.STATIC_POLICY]
    assert "connect-src 'self';" in build_site.STATIC_POLICY and "://" not in build_site.STATIC_POLICY  # no other origin
    for name in build_site.PAGE_FILES:
        assert (tmp_path / name).read_bytes() == (ROOT / "src" / "trainsteps" / "web" / name).read_bytes()


def test_the_site_is_rebuilt_only_when_its_sources_change(tmp_path, monkeypatch):
    build_site = load_build_site()
    (tmp_path / "stamp").write_text(build_site.inputs_digest())
    monkeypatch.setattr(build_site, "write_page", lambda folder: pytest.fail("an up-to-date site was rebuilt"))
    said = []
    assert build_site.build(tmp_path, log=said.append) == tmp_path and said == [f"{tmp_path} is up to date"]
    (tmp_path / "stamp").write_text("an older build")
    with pytest.raises(pytest.fail.Exception):
        build_site.build(tmp_path, log=said.append)


def test_pyyamls_sdist_becomes_a_pure_python_wheel_with_a_true_record(tmp_path):
    build_site = load_build_site()
    version = build_site.PYYAML_VERSION
    sdist = tmp_path / f"pyyaml-{version}.tar.gz"
    members = {f"pyyaml-{version}/lib/yaml/__init__.py": b"__version__ = 'x'\n", f"pyyaml-{version}/lib/yaml/cyaml.py": b"from _yaml import *\n",
               f"pyyaml-{version}/yaml/_yaml.pyx": b"# C, left out\n", f"pyyaml-{version}/PKG-INFO": b"Name: PyYAML\n",
               f"pyyaml-{version}/LICENSE": b"MIT\n", f"pyyaml-{version}/setup.py": b"# not shipped\n"}
    with tarfile.open(sdist, "w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    wheel = build_site.pure_yaml_wheel(sdist, tmp_path)
    assert wheel.name == f"PyYAML-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as archive:
        names = sorted(archive.namelist())
        info = f"PyYAML-{version}.dist-info"
        assert names == sorted(["yaml/__init__.py", "yaml/cyaml.py", f"{info}/METADATA", f"{info}/LICENSE", f"{info}/WHEEL",
                                f"{info}/top_level.txt", f"{info}/RECORD"])
        assert b"Tag: py3-none-any" in archive.read(f"{info}/WHEEL")
        for row in archive.read(f"{info}/RECORD").decode().splitlines():
            name, digest, size = row.split(",")
            if name.endswith("RECORD"):
                continue
            data = archive.read(name)
            assert digest == "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert int(size) == len(data)
    assert build_site.pure_yaml_wheel(sdist, tmp_path).read_bytes() == wheel.read_bytes()  # the same sources, the same bytes


def test_a_download_that_does_not_match_its_pin_is_refused(tmp_path, monkeypatch):
    build_site = load_build_site()

    class Answer(io.BytesIO):
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(build_site.urllib.request, "urlopen", lambda url, timeout: Answer(b"not pyodide"))
    with pytest.raises(build_site.BuildError, match="does not match its pinned sha512"):
        build_site.download("https://registry.npmjs.org/x.tgz", tmp_path / "x.tgz", "sha512", "00" * 64, log=lambda *_: None)
    assert not (tmp_path / "x.tgz").exists()


def test_a_pypi_file_is_found_by_its_name_in_the_simple_index_and_checked(tmp_path, monkeypatch):
    build_site = load_build_site()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    data = b"a wheel"
    index = {"files": [{"filename": "click-0.0-py3-none-any.whl", "url": "https://files.example/click-0.0-py3-none-any.whl"}]}
    asked = []

    class Answer(io.BytesIO):
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    def urlopen(request, timeout):
        url = getattr(request, "full_url", request)
        asked.append(url)
        return Answer(json.dumps(index).encode() if url.endswith("/simple/click/") else data)

    monkeypatch.setattr(build_site.urllib.request, "urlopen", urlopen)
    pinned = hashlib.sha256(data).hexdigest()
    found = build_site.pypi_file("click", "click-0.0-py3-none-any.whl", pinned, log=lambda *_: None)
    assert found.read_bytes() == data and asked == ["https://pypi.org/simple/click/", index["files"][0]["url"]]
    assert build_site.pypi_file("click", "click-0.0-py3-none-any.whl", pinned, log=lambda *_: None) == found and len(asked) == 2  # cached
    with pytest.raises(build_site.BuildError, match="lists no click-9.9-py3-none-any.whl"):
        build_site.pypi_file("click", "click-9.9-py3-none-any.whl", pinned, log=lambda *_: None)


def test_without_nodejs_the_site_is_built_without_a_saved_engine_and_says_so(tmp_path, monkeypatch):
    build_site = load_build_site()
    monkeypatch.setattr(build_site.shutil, "which", lambda name: None)
    said = []
    assert build_site.write_snapshot(tmp_path, log=said.append) is None
    assert said and "no Node.js" in said[0]


def test_a_snapshot_that_node_cannot_write_fails_the_build_with_its_reason(tmp_path, monkeypatch):
    build_site = load_build_site()
    monkeypatch.setattr(build_site.shutil, "which", lambda name: "/usr/bin/node")

    class Done:
        returncode, stdout, stderr = 1, "", "Error: Snapshot build id mismatch"

    monkeypatch.setattr(build_site.subprocess, "run", lambda *a, **k: Done())
    with pytest.raises(build_site.BuildError, match="could not save the started engine: Error: Snapshot build id mismatch"):
        build_site.write_snapshot(tmp_path, log=lambda *_: None)
