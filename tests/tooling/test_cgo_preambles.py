"""The cgo preambles of the Go files of pyext, the runtime's layers and
module include no Python.h: cgo compiles a file's preamble for each batch of
C names it looks up (pyext: about 170 compiles each time it is built, for
every test extension and every mutant), and Python.h makes each several
times slower (docs/architecture.md). The C files include it."""
from __future__ import annotations

import glob
import os
import re
import shlex
import subprocess
import sysconfig

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAYERS = glob.glob(os.path.join(ROOT, "internal", "cpython", "*", ""))
PACKAGES = ["pyext", "module", *sorted(os.path.relpath(d, ROOT) for d in LAYERS)]


def preamble(path: str) -> str | None:
    """The C preamble of the Go file at path (the comment right above
    `import "C"`, less its #cgo lines), or None where it imports no C."""
    lines = open(path, encoding="utf-8").read().splitlines()
    try:
        at = lines.index('import "C"')
    except ValueError:
        return None
    if at > 0 and lines[at - 1].strip() == "*/":
        start = max(i for i in range(at) if lines[i].startswith("/*"))
        body = lines[start + 1:at - 1]
    else:
        start = at
        while start > 0 and lines[start - 1].startswith("//"):
            start -= 1
        body = [ln[3:] if ln.startswith("// ") else ln[2:] for ln in lines[start:at]]
    return "\n".join(ln for ln in body if not ln.lstrip().startswith("#cgo")) + "\n"


def cflags(pkg: str) -> list[str]:
    """The package's #cgo CFLAGS (its include path), with Python's headers."""
    r = subprocess.run(["go", "list", "-f", "{{join .CgoCFLAGS \"\\n\"}}", f"./{pkg}"], cwd=ROOT, capture_output=True,
                       text=True, timeout=300, check=True)
    return [f for f in r.stdout.splitlines() if f] + [f"-I{sysconfig.get_paths()['include']}"]


def headers(source: str, flags: list[str]) -> set[str]:
    """The files source includes, through any chain, as the C compiler
    cgo runs finds them."""
    cc = subprocess.run(["go", "env", "CC"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    r = subprocess.run([*shlex.split(cc or "cc"), *flags, "-E", "-x", "c", "-"], input=source, cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return set(re.findall(r'^# \d+ "([^"<]+)"', r.stdout, re.M))


def includes_python(source: str, flags: list[str]) -> bool:
    return any(os.path.basename(h) == "Python.h" for h in headers(source, flags))


@pytest.mark.parametrize("pkg", PACKAGES)
def test_no_go_file_includes_python_h(pkg):
    flags = cflags(pkg)
    offenders = []
    for path in sorted(glob.glob(os.path.join(ROOT, pkg, "*.go"))):
        src = preamble(path)
        if src is not None and not path.endswith("_test.go") and includes_python(src, flags):
            offenders.append(os.path.relpath(path, ROOT))
    assert offenders == [], "Python.h reached from the cgo preamble of " + ", ".join(offenders)


def test_the_check_finds_python_h_through_a_header():
    # The C files' first include, exchange.h, starts with Python.h.
    flags = cflags("pyext")
    assert includes_python('#include "exchange.h"\n', flags)
    assert not includes_python('#include "ext.h"\n', flags)
