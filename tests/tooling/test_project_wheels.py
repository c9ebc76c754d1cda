"""A `godlpack new` project's Windows and macOS wheels (`godlpack wheels
--target ...`, tools/zigcc.py's foreign_wheels): built here for one CPython,
named and tagged for the target, RECORD true to the files, and each module
passing tools/cross.py's static checks; and retag_wheel's RECORD and tag on
a wheel made by hand.

One CPython (3.13, make cross's) and three targets (Windows, macOS arm64, and
universal2, which joins that arm64 build with an x86-64 one) keep it within
CI's budget: warm (Go's cache, the cached jars) the test takes about 25 s.
"""
import base64
import csv
import hashlib
import importlib.util
import io
import os
import shutil
import subprocess
import sys
import zipfile

import pytest
from harness import child_env

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import cross  # noqa: E402
import zigcc  # noqa: E402

needs_zig = pytest.mark.skipif(importlib.util.find_spec("ziglang") is None, reason="ziglang is not installed")
needs_llvm = pytest.mark.skipif(not any(shutil.which(t) for t in ("llvm-objdump", "llvm-objdump-14")),
                                reason="the checks need llvm-objdump and llvm-nm: make cross-deps")
PYTHON = "3.13"
# universal2 joins arm64's build (reused) with an x86-64 one (the only extra build).
TARGETS = {"win_amd64": "mykern.cp313-win_amd64.pyd", "macosx_12_0_arm64": "mykern.cpython-313-darwin.so",
           "macosx_12_0_universal2": "mykern.cpython-313-darwin.so"}


def godlpack(*args, cwd):
    r = subprocess.run([sys.executable, "-m", "godlpack", *args], cwd=cwd, env=child_env(GOFLAGS="-buildvcs=false"),
                       capture_output=True, text=True, timeout=600)
    return r


def record_problems(whl: str) -> list[str]:
    """What RECORD gets wrong about the wheel's members ([] when nothing)."""
    with zipfile.ZipFile(whl) as z:
        names = z.namelist()
        (record,) = [n for n in names if n.endswith(".dist-info/RECORD")]
        rows = list(csv.reader(io.StringIO(z.read(record).decode())))
        bad = []
        listed = [r[0] for r in rows]
        if sorted(listed) != sorted(names):
            bad.append(f"RECORD lists {sorted(listed)}, the wheel holds {sorted(names)}")
        for arc, digest, size in rows:
            if arc == record:
                continue
            data = z.read(arc)
            want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            if digest != want or size != str(len(data)):
                bad.append(f"{arc}: RECORD says {digest},{size}, the file is {want},{len(data)}")
    return bad


@needs_zig
@needs_llvm
def test_a_new_project_gets_checked_windows_and_macos_wheels(tmp_path):
    assert godlpack("new", "mykern", cwd=tmp_path).returncode == 0
    project = tmp_path / "mykern"
    for tool in ("cross.py", "fatmacho.py", "crossdeps.py", "zigcc.py"):  # what --target needs, in the project
        assert (project / "_build" / tool).is_file(), tool
    args = [a for t in TARGETS for a in ("--target", t)]
    r = godlpack("wheels", *args, "-p", PYTHON, cwd=project)
    assert r.returncode == 0, r.stdout + r.stderr
    wheels = sorted(os.listdir(project / "wheelhouse"))
    assert wheels == sorted(f"mykern-0.1.0-cp313-cp313-{t}.whl" for t in TARGETS)
    for target, module in TARGETS.items():
        whl = str(project / "wheelhouse" / f"mykern-0.1.0-cp313-cp313-{target}.whl")
        assert record_problems(whl) == []
        with zipfile.ZipFile(whl) as z:
            names = z.namelist()
            assert module in names and "mykern.pyi" in names, names
            assert not [n for n in names if n.endswith(".so") and n != module], names  # no Linux build left
            wheel = z.read("mykern-0.1.0.dist-info/WHEEL").decode()
            assert [ln for ln in wheel.splitlines() if ln.startswith("Tag:")] == [f"Tag: cp313-cp313-{target}"]
            z.extract(module, tmp_path / target)
        assert cross.problems(str(tmp_path / target / module), target, PYTHON, "mykern") == []


def test_a_cpython_without_the_targets_headers_is_one_sentence(tmp_path):  # before any build
    assert godlpack("new", "mykern", cwd=tmp_path).returncode == 0
    r = godlpack("wheels", "--target", "win_amd64", "-p", "3.9", cwd=tmp_path / "mykern")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith("godlpack wheels: no headers of CPython 3.9 for win_amd64: it has "), r.stderr


def test_an_unknown_target_is_one_sentence(tmp_path):
    from godlpack import cli

    with pytest.raises(cli.BuildError, match=r"^godlpack wheels: unsupported target 'win32': use one of "):
        cli.cmd_wheels(cli.parser().parse_args(["wheels", str(tmp_path), "--target", "win32"]))


def test_retag_wheel_swaps_the_module_and_rewrites_tag_and_record(tmp_path):
    native = tmp_path / "demo-1.0-cp313-cp313-linux_x86_64.whl"
    with zipfile.ZipFile(native, "w") as z:
        z.writestr("demo.cpython-313-x86_64-linux-gnu.so", b"linux")
        z.writestr("demo.pyi", b"def f() -> int: ...\n")
        z.writestr("demo-1.0.dist-info/WHEEL",
                   "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp313-cp313-linux_x86_64\n\n")
        z.writestr("demo-1.0.dist-info/RECORD", "stale,,\n")
    pyd = tmp_path / "demo.cp313-win_amd64.pyd"
    pyd.write_bytes(b"windows module")
    whl = zigcc.retag_wheel(str(native), str(tmp_path / "out"), "cp313-cp313-win_amd64",
                            {"demo.cpython-313-x86_64-linux-gnu.so": str(pyd)})
    assert os.path.basename(whl) == "demo-1.0-cp313-cp313-win_amd64.whl"
    assert record_problems(whl) == []
    with zipfile.ZipFile(whl) as z:
        assert sorted(z.namelist()) == ["demo-1.0.dist-info/RECORD", "demo-1.0.dist-info/WHEEL",
                                        "demo.cp313-win_amd64.pyd", "demo.pyi"]
        assert z.read("demo.cp313-win_amd64.pyd") == b"windows module"
        assert z.read("demo-1.0.dist-info/WHEEL").decode() == \
            "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp313-cp313-win_amd64\n"
    with pytest.raises(RuntimeError, match="holds no demo.so"):
        zigcc.retag_wheel(str(native), str(tmp_path / "out"), "cp313-cp313-win_amd64", {"demo.so": str(pyd)})


def test_godlpacks_wheel_ships_what_a_project_needs_for_foreign_wheels(tmp_path):
    """An installed godlpack's _build/ (setup.py build_py) holds every tool
    `godlpack new` copies for --target (scaffold reads them from there)."""
    subprocess.run([sys.executable, "setup.py", "-q", "build_py", "-d", str(tmp_path)], cwd=ROOT, check=True,
                   capture_output=True)
    shipped = sorted(os.listdir(tmp_path / "godlpack" / "_build"))
    assert {"zigcc.py", "crossdeps.py", "cross.py", "fatmacho.py", "godlpack_build.py"} <= set(shipped), shipped


def test_wheels_target_delegates_to_foreign_wheels_and_needs_no_auditwheel(tmp_path, monkeypatch):
    """--target alone: only foreign_wheels (auditwheel is for manylinux);
    all-foreign: every target; with --arch: both kinds."""
    from godlpack import cli

    zigcc_ = cli.backend("zigcc")
    calls = []
    monkeypatch.setattr(zigcc_, "foreign_wheels", lambda *a: calls.append(("foreign", *a)) or [])
    monkeypatch.setattr(zigcc_, "build_wheels", lambda *a: calls.append(("linux", *a)) or [])
    monkeypatch.setattr(cli.shutil, "which", lambda name: None)
    monkeypatch.setattr(cli.importlib.util, "find_spec", lambda name: None)
    wh = str(tmp_path / "wh")
    assert cli.main(["wheels", str(tmp_path), "-w", wh, "--target", "win_amd64", "-p", "3.13"]) == 0
    assert cli.main(["wheels", str(tmp_path), "-w", wh, "--target", "all-foreign"]) == 0
    assert calls == [("foreign", str(tmp_path), wh, ["win_amd64"], ["3.13"]),
                     ("foreign", str(tmp_path), wh, zigcc_.FOREIGN_TARGETS, None)]
    assert zigcc_.FOREIGN_TARGETS == ["win_amd64", "macosx_12_0_arm64", "macosx_12_0_x86_64", "macosx_12_0_universal2"]
    monkeypatch.setattr(cli.shutil, "which", lambda name: "/bin/" + name)
    assert cli.main(["wheels", str(tmp_path), "-w", wh, "--target", "win_amd64", "--arch", "x86_64"]) == 0
    assert [c[0] for c in calls[2:]] == ["foreign", "linux"] and calls[3][3] == ["x86_64"]


@pytest.mark.parametrize("switch", ["abi3", "abi3t"])
def test_the_native_wheel_a_foreign_wheel_is_made_from_is_version_specific(tmp_path, monkeypatch, switch):
    """foreign_wheels takes a native wheel's metadata, stub and files and swaps
    its module (NAME + this Python's suffix) for the cross-built one: a project
    whose pyproject.toml asks for abi3 or abi3t must still give it that module,
    not NAME.abi3.so, or no module is found to swap. pip is faked here by what
    the build backend decides from the project and the config settings it is given."""
    import godlpack_build

    project = tmp_path / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text(f"[tool.godlpack]\n{switch} = true\n")
    monkeypatch.delenv("GODLPACK_ABI3", raising=False)
    monkeypatch.delenv("GODLPACK_ABI3T", raising=False)

    def fake_pip(cmd, **kw):
        settings = dict(a.split("=", 1)[1].split("=", 1) for a in cmd if a.startswith("--config-settings="))
        if godlpack_build.abi3(str(project), settings):
            suffix = godlpack_build.abi3_suffix()
        elif godlpack_build.abi3t(str(project), settings):
            suffix = godlpack_build.abi3t_suffix()
        else:
            suffix = zigcc.sysconfig.get_config_var("EXT_SUFFIX")
        out = cmd[cmd.index("-w") + 1]
        with zipfile.ZipFile(os.path.join(out, "proj-0.1.0-cp3-cp3-linux_x86_64.whl"), "w") as z:
            z.writestr("mykern" + suffix, b"")
        return subprocess.CompletedProcess(cmd, 0)

    class Reached(Exception):
        pass

    def fake_build(*a, **kw):
        raise Reached  # the native module was found: the cross build would start here

    monkeypatch.setattr(zigcc.subprocess, "run", fake_pip)
    monkeypatch.setattr(zigcc, "foreign_build_go", fake_build)
    with pytest.raises(Reached):
        zigcc.foreign_wheels(str(project), str(tmp_path / "out"), ["win_amd64"], abi3=True)
