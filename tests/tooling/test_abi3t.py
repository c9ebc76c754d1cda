"""abi3t builds (PEP 803, the free-threaded stable ABI of CPython 3.15 on):
the scaffold's project built once as an abi3t wheel by CPython 3.15 (the
Debian root of mk/debian-pythons.sh: skipped where it is not made), tagged
cp315-abi3.abi3t, whose NAME.abi3t.so imports only what 3.15's Python.h
declares under Py_TARGET_ABI3T and runs the scaffold's functions there; every
C file of godlpack's runtime and of pyext compiles under Py_TARGET_ABI3T with
limited.h's cast check; the switch ([tool.godlpack] abi3t, the config
setting, `--abi3t`, $GODLPACK_ABI3T), the tag rewrite and the refusals.
docs/install.md#abi3t. Only CPython 3.15 with the GIL is run here: this
machine has no free-threaded 3.15.
"""
import base64
import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
import zipfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import godlpack_build  # noqa: E402
from test_abi3 import exercise  # noqa: E402

DEBIAN = os.path.join(ROOT, "mk", "debian-pythons.sh")


def _debian_315() -> None:
    if subprocess.run(["bash", DEBIAN, "has", "3.15"], capture_output=True).returncode != 0:
        pytest.skip("no CPython 3.15 here (mk/debian-pythons.sh's root is not made)")


def _in_root(*cmd: str, cwd: str = ROOT, timeout: int = 600) -> subprocess.CompletedProcess:
    """cmd run in the Debian root in folder cwd (the root sees this tree and /tmp)."""
    env = dict(os.environ, GOFLAGS="-buildvcs=false")
    env.pop("PYTHONPATH", None)
    return subprocess.run(["bash", DEBIAN, "run", "sh", "-c", 'cd "$0" && exec "$@"', cwd, *cmd], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def _setuptools_copy(tmp_path) -> str:
    """This venv's setuptools (pure Python), copied where the root sees it."""
    import setuptools

    site = os.path.dirname(os.path.dirname(setuptools.__file__))
    folder = tmp_path / "setuptools-only"
    folder.mkdir()
    names = ["setuptools", "pkg_resources", "_distutils_hack"]
    names += [os.path.basename(p) for p in glob.glob(os.path.join(site, "setuptools-*.dist-info"))]
    for name in names:
        if os.path.isdir(os.path.join(site, name)):
            shutil.copytree(os.path.join(site, name), folder / name)
    return str(folder)


def _abi3t_names() -> set[str]:
    """Every Py* name 3.15's Python.h declares under Py_TARGET_ABI3T."""
    r = subprocess.run(["bash", DEBIAN, "run", "cc", "-E", f"-DPy_TARGET_ABI3T={godlpack_build.ABI3T_TARGET}",
                        "-I/usr/include/python3.15", "-"], cwd=ROOT, input="#include <Python.h>\n",
                       capture_output=True, text=True, timeout=120, check=True)
    return set(re.findall(r"\b_?Py\w+", r.stdout))


EXERCISE = exercise(".abi3t.so", ", sys._is_gil_enabled()")


def test_one_abi3t_wheel_imports_and_runs_on_3_15(tmp_path):
    from godlpack import scaffold

    _debian_315()
    project = tmp_path / "abikern"
    scaffold.new("abikern", str(project))
    with open(project / "pyproject.toml", "a") as f:
        f.write("abi3t = true\n")  # [tool.godlpack] is the file's last table
    dist = tmp_path / "dist"
    build = ("import sys; sys.path[:0] = [sys.argv[1], '_build']; import godlpack_build as b; "
             "print(b.build_wheel(sys.argv[2]))")
    r = _in_root("python3.15", "-c", build, _setuptools_copy(tmp_path), str(dist), cwd=str(project))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    wheel = dist / r.stdout.strip().splitlines()[-1]
    assert re.fullmatch(r"abikern-0\.1\.0-cp315-abi3\.abi3t-linux_\w+\.whl", wheel.name), wheel.name
    platform = wheel.name.rsplit("-", 1)[1][: -len(".whl")]
    from packaging.utils import parse_wheel_filename

    assert {str(t) for t in parse_wheel_filename(wheel.name)[3]} == {f"cp315-abi3-{platform}",
                                                                     f"cp315-abi3t-{platform}"}
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        assert "abikern.abi3t.so" in names and "abikern.pyi" in names, names
        meta = z.read("abikern-0.1.0.dist-info/WHEEL")
        tags = re.findall(r"^Tag: (\S+)$", meta.decode(), re.M)
        assert tags == [f"cp315-abi3-{platform}", f"cp315-abi3t-{platform}"], tags
        digest = base64.urlsafe_b64encode(hashlib.sha256(meta).digest()).rstrip(b"=").decode()
        record = z.read("abikern-0.1.0.dist-info/RECORD").decode()
        assert f"abikern-0.1.0.dist-info/WHEEL,sha256={digest},{len(meta)}" in record, record
        z.extract("abikern.abi3t.so", tmp_path / "lib")
    so = str(tmp_path / "lib" / "abikern.abi3t.so")

    # Only what abi3t declares; the module found by PEP 793's export.
    nm = subprocess.run(["nm", "-D", so], capture_output=True, text=True, check=True).stdout
    imported = {line.split()[-1] for line in nm.splitlines() if re.search(r"\sU _?Py", line)}
    assert imported and not imported - _abi3t_names(), sorted(imported - _abi3t_names())
    assert re.search(r"\sT PyModExport_abikern$", nm, re.M), "no PyModExport_abikern"

    code = f"import sys; sys.path.insert(0, {str(tmp_path / 'lib')!r})\n" + EXERCISE
    r = _in_root("python3.15", "-I", "-c", code, cwd=str(tmp_path), timeout=120)
    assert r.returncode == 0 and r.stdout.startswith("ok (3, 15) True"), r.stdout + r.stderr


RUNTIME_C = ["capsule", "core", "internal/cpython/base", "internal/cpython/cuda", "internal/cpython/exchange",
             "internal/cpython/tensor", "pyext"]


@pytest.mark.parametrize("abi", ["abi3t", "abi3"])
def test_the_runtime_and_pyext_compile_against_3_15s_stable_abi_headers(abi):
    """Each C file, against 3.15's headers, warnings as errors. abi3t: under
    Py_TARGET_ABI3T with limited.h's GDL_CHECK_CASTS, where one of our structs
    passed as a PyObject* without GDL_OBJ is an error (the build itself would
    take it silently). abi3 (the 3.12 limited API): what an abi3 build made
    with a newer CPython reads (3.13's lookups and Py_mod_gil are not in it)."""
    _debian_315()
    files = [os.path.relpath(f, ROOT) for d in RUNTIME_C for f in sorted(glob.glob(os.path.join(ROOT, d, "*.c")))
             if not re.search(r"_(darwin|windows)\.c$", f)]
    incs = [f"-I{d}" for d in ["include", *RUNTIME_C]]
    flags = (f"-DGDL_CHECK_CASTS '-DGDL_MODULES(X)=X(m)X(n)' -DPy_TARGET_ABI3T={godlpack_build.ABI3T_TARGET}" if abi == "abi3t"
             else f"-DPy_LIMITED_API={godlpack_build.ABI3_LIMITED_API}")
    script = (f'for f; do cc -fsyntax-only -Wall -Werror {flags} -I/usr/include/python3.15 {" ".join(incs)} "$f" '
              '|| echo "FAILED $f"; done')
    r = subprocess.run(["bash", DEBIAN, "run", "sh", "-c", script, "sh", *files], cwd=ROOT, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0 and "FAILED" not in r.stdout, r.stdout + r.stderr[-4000:]
    assert len(files) > 30, files


def test_a_struct_passed_as_an_object_is_an_error_under_the_check(tmp_path):
    """The check itself: Py_DECREF of a struct pointer, which abi3t would
    compile into a call on the wrong address, fails to compile."""
    _debian_315()
    src = tmp_path / "bad.c"
    src.write_text('#include "capsule.h"\ntypedef struct { GDL_HEAD int x; } S;\n'
                   "void f(S* s) { Py_DECREF(s); }\nvoid g(S* s) { Py_DECREF(GDL_OBJ(s)); }\n")
    cmd = ["cc", "-fsyntax-only", "-DGDL_CHECK_CASTS", f"-DPy_TARGET_ABI3T={godlpack_build.ABI3T_TARGET}",
           "-I/usr/include/python3.15", "-Iinclude", "-Icapsule", str(src)]
    r = subprocess.run(["bash", DEBIAN, "run", *cmd], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and re.search(r"bad\.c:3:.*Py_DECREF|incompatible pointer", r.stderr), r.stderr
    assert "bad.c:4" not in r.stderr, r.stderr


def test_the_switch_is_the_config_setting_then_the_environment_then_pyproject(tmp_path, monkeypatch):
    monkeypatch.delenv("GODLPACK_ABI3T", raising=False)
    assert not godlpack_build.abi3t(str(tmp_path))
    (tmp_path / "pyproject.toml").write_text("[tool.godlpack]\nmodule = 'k'\nabi3t = true\n")
    assert godlpack_build.abi3t(str(tmp_path))
    assert not godlpack_build.abi3t(str(tmp_path), {"abi3t": "false"})
    monkeypatch.setenv("GODLPACK_ABI3T", "0")
    assert not godlpack_build.abi3t(str(tmp_path))
    assert godlpack_build.abi3t(str(tmp_path), {"abi3t": "true"})
    (tmp_path / "pyproject.toml").write_text("[tool.godlpack]\nmodule = 'k'\n")
    monkeypatch.setenv("GODLPACK_ABI3T", "1")
    assert godlpack_build.abi3t(str(tmp_path))
    assert godlpack_build.abi3t_suffix() == ".abi3t.so"


def test_abi3t_is_refused_before_3_15_and_with_abi3(tmp_path, monkeypatch):
    monkeypatch.delenv("GODLPACK_ABI3", raising=False)
    monkeypatch.setattr(godlpack_build, "_python_version", lambda: (3, 14))
    with pytest.raises(RuntimeError, match=r"^an abi3t \(free-threaded stable ABI\) build needs CPython >= 3\.15 to "
                                           r"build with, and this is 3\.14: run the build with python3\.15"):
        godlpack_build.check_abi3t(str(tmp_path))
    monkeypatch.setattr(godlpack_build, "_python_version", lambda: (3, 15))
    godlpack_build.check_abi3t(str(tmp_path))
    with pytest.raises(RuntimeError, match=r"^abi3 and abi3t are both asked for"):
        godlpack_build.check_abi3t(str(tmp_path), {"abi3": "true"})
    monkeypatch.chdir(tmp_path)
    with pytest.raises(RuntimeError, match=r"^an abi3t build for a zig target is not supported yet"):
        godlpack_build.build_wheel(str(tmp_path), {"abi3t": "true", "target": "x86_64-linux-gnu"})
    # On an older Python too: the target is the reason, which a newer Python would not remove.
    monkeypatch.setattr(godlpack_build, "_python_version", lambda: (3, 14))
    with pytest.raises(RuntimeError, match=r"^an abi3t build for a zig target is not supported yet"):
        godlpack_build.build_wheel(str(tmp_path), {"abi3t": "true", "target": "x86_64-linux-gnu"})


def test_the_tag_rewrite_names_both_abis_and_keeps_record_true(tmp_path):
    """setuptools tags the wheel for the interpreter; _retag_abi3t makes it
    cp315-abi3.abi3t with the WHEEL file's hash in RECORD."""
    info = "k-0.1.0.dist-info"
    made = tmp_path / "k-0.1.0-cp315-cp315-linux_x86_64.whl"
    wheel_text = "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp315-cp315-linux_x86_64\n\n"
    with zipfile.ZipFile(made, "w") as z:
        z.writestr("k.abi3t.so", b"\x7fELF")
        z.writestr(f"{info}/WHEEL", wheel_text)
        z.writestr(f"{info}/RECORD", f"k.abi3t.so,sha256=x,4\n{info}/WHEEL,sha256=old,{len(wheel_text)}\n"
                                     f"{info}/RECORD,,\n")
    name = godlpack_build._retag_abi3t(str(tmp_path), made.name)
    assert name == "k-0.1.0-cp315-abi3.abi3t-linux_x86_64.whl" and not made.exists()
    with zipfile.ZipFile(tmp_path / name) as z:
        meta = z.read(f"{info}/WHEEL")
        assert re.findall(r"^Tag: (\S+)$", meta.decode(), re.M) == ["cp315-abi3-linux_x86_64",
                                                                   "cp315-abi3t-linux_x86_64"]
        digest = base64.urlsafe_b64encode(hashlib.sha256(meta).digest()).rstrip(b"=").decode()
        record = z.read(f"{info}/RECORD").decode()
        assert f"{info}/WHEEL,sha256={digest},{len(meta)}\n" in record and "k.abi3t.so,sha256=x,4" in record, record
        assert z.read("k.abi3t.so") == b"\x7fELF"


def test_godlpack_build_and_develop_abi3t_on_an_older_python_is_one_sentence(tmp_path, monkeypatch, capsys):
    from godlpack import cli, scaffold

    monkeypatch.delenv("GODLPACK_ABI3", raising=False)
    monkeypatch.delenv("GODLPACK_ABI3T", raising=False)
    project = tmp_path / "k"
    scaffold.new("k", str(project))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(godlpack_build, "_python_version", lambda: (3, 14))
    assert cli.main(["build", "--abi3t", str(project), "-o", str(tmp_path / "dist")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("godlpack: an abi3t (free-threaded stable ABI) build needs CPython >= 3.15") \
        and "Traceback" not in err, err
    assert not glob.glob(str(tmp_path / "dist" / "*.whl"))
    assert cli.main(["develop", "--abi3t", str(project)]) == 1
    assert capsys.readouterr().err.startswith("godlpack: an abi3t (free-threaded stable ABI) build needs CPython")
    assert not glob.glob(str(project / "k*.so"))


def test_develop_abi3t_builds_name_abi3t_so_and_removes_the_other_kinds(tmp_path, monkeypatch, capsys):
    """develop --abi3t builds NAME.abi3t.so (the build is abi3t by that
    name: build_go) and removes an earlier NAME.abi3.so and version-specific
    file, which Python would import first."""
    import sysconfig

    from godlpack import cli, scaffold

    monkeypatch.delenv("GODLPACK_ABI3", raising=False)
    monkeypatch.delenv("GODLPACK_ABI3T", raising=False)
    monkeypatch.setattr(godlpack_build, "_python_version", lambda: (3, 15))
    project = tmp_path / "k"
    scaffold.new("k", str(project))
    calls = []

    def fake_build(out, proj, stable_abi=False):
        calls.append((os.path.basename(out), stable_abi))
        open(out, "w").close()
        return None

    monkeypatch.setattr(cli, "_build", fake_build)
    others = [project / ("k" + sysconfig.get_config_var("EXT_SUFFIX")), project / "k.abi3.so"]
    for o in others:
        o.write_text("")
    assert cli.main(["develop", "--abi3t", str(project)]) == 0
    assert calls == [("k.abi3t.so", False)] and (project / "k.abi3t.so").exists()
    assert not any(o.exists() for o in others)
    assert "built " in capsys.readouterr().out


@pytest.mark.parametrize("switch", ["abi3", "abi3t"])
def test_a_config_setting_turning_the_switch_off_wins_over_the_project_in_the_build(tmp_path, monkeypatch, switch):
    """`--config-settings=abi3t=false` on a project with `abi3t = true`: the
    build's own readers (BuildGoExt.get_ext_filename, build_go), which see
    no settings, name and build the module version-specific too."""
    monkeypatch.delenv("GODLPACK_ABI3", raising=False)
    monkeypatch.delenv("GODLPACK_ABI3T", raising=False)
    (tmp_path / "pyproject.toml").write_text(f"[tool.godlpack]\n{switch} = true\n")
    monkeypatch.chdir(tmp_path)
    seen = []
    monkeypatch.setattr(godlpack_build._orig, "build_wheel",
                        lambda *a: seen.append((godlpack_build.abi3(os.getcwd()), godlpack_build.abi3t(os.getcwd()))))
    godlpack_build.build_wheel(str(tmp_path), {switch: "false"})
    assert seen == [(False, False)]
    assert os.environ.get(f"GODLPACK_{switch.upper()}") is None  # put back after the build
