"""Regenerate the banner line numbers of src/trainsteps/frameworks/hf/log_lines.py from released wheels.

    python tools/hf_log_lines.py 4.49.0 4.50.0 5.23.0        # prints table rows
    python tools/hf_log_lines.py --check                      # checks every release in the table (downloads ~10 MB each)

For each release: `pip download --no-deps transformers==X`, open transformers/trainer.py inside the wheel
(never imported), and find the `logger.info` lines of "***** Running training *****" and
"Number of trainable parameters". Needs network access to the package index; not run by the tests.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

HEADER = re.compile(r'logger\.info\(\s*"\*{5} Running training \*{5}"\s*\)')
PARAMS = re.compile(r'logger\.info\(\s*f?"  Number of trainable parameters = ')


def banner_lines(version: str, workdir: Path) -> tuple[int, int]:
    target = workdir / version
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", f"transformers=={version}", "-d", str(target)],
                   check=True)
    wheel = next(target.glob("transformers-*.whl"))
    with zipfile.ZipFile(wheel) as z:
        source = z.read("transformers/trainer.py").decode("utf-8").splitlines()
    header = next(i for i, line in enumerate(source, 1) if HEADER.search(line))
    params = next(i for i, line in enumerate(source, 1) if i > header and PARAMS.search(line))
    return header, params


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("versions", nargs="*")
    parser.add_argument("--check", action="store_true", help="compare every release of the table with its wheel")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from trainsteps.frameworks.hf.log_lines import BANNER_LINES, all_releases

    versions = all_releases() if args.check else args.versions
    table = {r: (h, p) for h, p, rels in BANNER_LINES for r in rels}
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for version in versions:
            found = banner_lines(version, Path(tmp))
            mark = "" if table.get(version) == found else f"   <- table says {table.get(version)}"
            bad += bool(mark)
            print(f"    ({found[0]}, {found[1]}, ({version!r},)),{mark}")
    sys.exit(1 if bad and args.check else 0)


if __name__ == "__main__":
    main()
