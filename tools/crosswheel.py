"""godlpack's Windows and macOS wheels, built on this Linux machine (make
wheels runs it beside the manylinux wheels; make wheels-foreign alone).

    python tools/crosswheel.py [-w WHEELHOUSE] [-t TARGET]... [-p 3.X]...

For each target (default: win_amd64, macosx_12_0_arm64, macosx_12_0_x86_64,
macosx_12_0_universal2) and each CPython the target has headers for
(tools/crossdeps.py; universal2: both macOS targets; or the -p ones): the
package's Python files, headers, Go sources and build tools
(setup.py build_py, the same files a Linux wheel holds) with godlpack's
module (./module, cross-built by tools/cross.py) and the plain C probe
(_probe.c, compiled by zig for the target) in the target's names, and the
dist-info setuptools writes. Each compiled file must pass tools/cross.py's
checks before the wheel is written; universal2's files are the arm64 and
x86_64 builds joined (tools/fatmacho.py), each slice checked. A wheel is a zip with a RECORD; nothing
else of a wheel depends on the platform.
"""
from __future__ import annotations

import argparse
import base64
import glob
import hashlib
import os
import subprocess
import sys
import tempfile
import time
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cross  # noqa: E402
import zigcc  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_TARGETS = ["win_amd64", "macosx_12_0_arm64", "macosx_12_0_x86_64", cross.UNIVERSAL2]


def _pure_parts(tmp: str) -> tuple[str, str]:
    """(the package's build_py tree, its dist-info folder), from setup.py."""
    lib, meta = os.path.join(tmp, "lib"), os.path.join(tmp, "meta")
    os.makedirs(meta)
    for cmd in (["build_py", "-d", lib], ["dist_info", "--output-dir", meta]):
        subprocess.run([sys.executable, "setup.py", "-q", *cmd], cwd=ROOT, check=True, capture_output=True)
    (info,) = glob.glob(os.path.join(meta, "*.dist-info"))
    return lib, info


def build_probe(target: str, python: str, out: str) -> str:
    """_probe.c (the conformance checker's counting probes) for target."""
    os.makedirs(out, exist_ok=True)
    env = zigcc.cross_go_env(target, python, {})
    path = os.path.join(out, "_probe" + zigcc.foreign_ext_suffix(target, python))
    cmd = zigcc.cc(zigcc.foreign(target)) + ["-shared", "-O2", *env["CGO_CFLAGS"].split(),
                                            f"-I{os.path.join(ROOT, 'include')}", "-o", path,
                                            os.path.join(ROOT, "python", "godlpack", "_probe.c")]
    cmd += env["CGO_LDFLAGS"].split() if env["GOOS"] == "windows" else ["-Wl,-undefined,dynamic_lookup"]
    subprocess.run(cmd, check=True, capture_output=True)
    return path


def _record_line(arc: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arc},sha256={digest},{len(data)}"


def write_wheel(wheelhouse: str, lib: str, info: str, tag: str, extensions: list[str]) -> str:
    """Zips lib's package, the extensions (into godlpack/) and info, tagged tag."""
    dist = os.path.basename(info)[: -len(".dist-info")]
    path = os.path.join(wheelhouse, f"{dist}-{tag}.whl")
    files: list[tuple[str, bytes]] = []
    for d, _, names in os.walk(lib):
        for n in sorted(names):
            if n.endswith((".so", ".pyd", ".pyc")):
                continue  # never this machine's builds
            full = os.path.join(d, n)
            files.append((os.path.relpath(full, lib).replace(os.sep, "/"), open(full, "rb").read()))
    files += [(f"godlpack/{os.path.basename(e)}", open(e, "rb").read()) for e in extensions]
    for d, _, names in os.walk(info):
        for n in sorted(names):
            full = os.path.join(d, n)
            files.append((f"{os.path.basename(info)}/{os.path.relpath(full, info)}", open(full, "rb").read()))
    wheel = f"Wheel-Version: 1.0\nGenerator: godlpack tools/crosswheel.py\nRoot-Is-Purelib: false\nTag: {tag}\n"
    files.append((f"{dist}.dist-info/WHEEL", wheel.encode()))
    record = [_record_line(a, b) for a, b in files] + [f"{dist}.dist-info/RECORD,,"]
    files.append((f"{dist}.dist-info/RECORD", ("\n".join(record) + "\n").encode()))
    os.makedirs(wheelhouse, exist_ok=True)
    with zipfile.ZipFile(path + ".part", "w", zipfile.ZIP_DEFLATED) as z:
        for arc, data in files:
            z.writestr(arc, data)
    os.replace(path + ".part", path)
    return path


def _extensions(target: str, python: str, tmp: str, built: dict[tuple[str, str], list[str]]) -> list[str]:
    """godlpack's module and the probe for target, checked; universal2 joins
    the macOS builds in built (made here when missing)."""
    if target == cross.UNIVERSAL2:
        thin = [built.get((t, python)) or _extensions(t, python, tmp, built)
                for t in cross.UNIVERSAL2_SLICES.values()]
        out = os.path.join(tmp, "ext", target, python)
        exts = [cross.universal2(a, x, os.path.join(out, os.path.basename(a))) for a, x in zip(*thin)]
    else:
        target = zigcc.foreign(target)
        ext_dir = os.path.join(tmp, "ext", target, python)
        exts = [cross.build(target, python, "_godlpack", ext_dir, "./module", cwd=ROOT),
                build_probe(target, python, ext_dir)]
    for e in exts:
        name = os.path.basename(e).split(".", 1)[0]
        bad = cross.problems(e, target, python, name)
        if bad:
            raise RuntimeError(f"{os.path.basename(e)}: " + "; ".join(bad))
    built[target, python] = exts
    return exts


def build_wheels(wheelhouse: str, targets: list[str], pythons: list[str] | None) -> list[str]:
    out = []
    built: dict[tuple[str, str], list[str]] = {}  # (target, python) -> its checked extensions
    with tempfile.TemporaryDirectory() as tmp:
        lib, info = _pure_parts(tmp)
        for target in targets:
            own = cross.universal2_pythons() if target == cross.UNIVERSAL2 else zigcc.foreign_pythons(target)
            for python in pythons or own:
                t0 = time.monotonic()
                exts = _extensions(target, python, tmp, built)
                whl = write_wheel(wheelhouse, lib, info, cross.wheel_tag(target, python), exts)
                print(f"{os.path.basename(whl)}  {os.path.getsize(whl)} bytes  (checked: tools/cross.py)  "
                      f"{time.monotonic() - t0:.1f} s", flush=True)
                out.append(whl)
    return out


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="crosswheel.py", description=__doc__.split("\n\n")[0])
    p.add_argument("-w", "--wheelhouse", default="dist/wheels")
    p.add_argument("-t", "--target", action="append", help="default: " + ", ".join(DEFAULT_TARGETS))
    p.add_argument("-p", "--python", action="append", help="3.X; default: every one the target has headers for")
    a = p.parse_args(argv)
    build_wheels(a.wheelhouse, a.target or DEFAULT_TARGETS, a.python)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
