"""Windows and macOS from this Linux machine: tools/zigcc.py's foreign
targets (names, suffixes, wheel tags, each target's own pyconfig.h),
tools/cross.py's static checks (each refuses what it must, on small
binaries made here with zig), and the Go build-information reader that finds
Go runtimes on Windows and macOS. `make cross` builds and checks the real
extensions (godlpack's module and tests/pyext/opmod) for every target."""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys

import pytest

# zig (PyPI's ziglang) builds every binary these checks read: in make test's
# venv; the NumPy-only suites of make test-pythons lack it, as for test_zigcc.py.
pytestmark = pytest.mark.skipif(importlib.util.find_spec("ziglang") is None, reason="ziglang is not installed")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
if os.path.isdir(os.path.join(ROOT, ".crosscache")):  # make cross's cache; else crossdeps' own (~/.cache)
    os.environ.setdefault("GODLPACK_CROSS_CACHE", os.path.join(ROOT, ".crosscache"))
_spec = importlib.util.spec_from_file_location("cross", os.path.join(ROOT, "tools", "cross.py"))
cross = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cross)
zigcc = cross.zigcc

WIN, MAC_ARM, MAC_X86 = "x86_64-windows-gnu", "aarch64-macos.12.0", "x86_64-macos.12.0"
needs_llvm = pytest.mark.skipif(not any(shutil.which(t) for t in ("llvm-objdump", "llvm-objdump-14")),
                                reason="needs Debian's llvm: make cross-deps")


@pytest.mark.parametrize("given, want", [
    ("win_amd64", WIN), (WIN, WIN), ("macosx_12_0_arm64", MAC_ARM), (MAC_X86, MAC_X86),
])
def test_foreign_targets_by_triple_or_wheel_platform(given, want):
    assert zigcc.foreign(given) == want


@pytest.mark.parametrize("bad", ["x86_64-linux-gnu.2.17", "aarch64-macos", "arm64-windows", ""])
def test_other_foreign_targets_are_refused(bad):
    with pytest.raises(ValueError, match="unsupported target"):
        zigcc.foreign(bad)


def test_suffixes_tags_and_pythons_follow_the_target():
    assert zigcc.foreign_ext_suffix(WIN, "3.13") == ".cp313-win_amd64.pyd"
    assert zigcc.foreign_ext_suffix(MAC_ARM, "3.14") == ".cpython-314-darwin.so"
    assert zigcc.foreign_wheel_tag(MAC_X86, "3.11") == "cp311-cp311-macosx_12_0_x86_64"
    assert zigcc.foreign_wheel_tag("win_amd64", "3.12") == "cp312-cp312-win_amd64"
    assert zigcc.foreign_pythons(WIN) == ["3.11", "3.12", "3.13", "3.14"]
    assert zigcc.foreign_pythons(MAC_ARM) == ["3.13", "3.14"]
    with pytest.raises(ValueError, match="no CPython 3.12 headers for macosx-arm64"):
        zigcc.cross_go_env(MAC_ARM, "3.12", {})


@pytest.mark.parametrize("target, python", [(WIN, "3.11"), (WIN, "3.13"), (MAC_ARM, "3.13"), (MAC_X86, "3.13")])
def test_each_targets_own_pyconfig_holds_there(target, python):
    # 3.11's Windows pyconfig.h reads 32-bit sizes under MinGW unless MS_WIN64 is given
    env = zigcc.cross_go_env(target, python, {"PATH": os.environ["PATH"]})
    goos, goarch = zigcc.FOREIGN[target][:2]
    assert (env["GOOS"], env["GOARCH"], env["CGO_ENABLED"]) == (goos, goarch, "1")
    assert f"-target {target}" in env["CC"] and "-tags=godlpack_zigcc" in env["GOFLAGS"]
    include = env["CGO_CFLAGS"].split()[0][2:]
    assert os.path.isfile(os.path.join(include, "pyconfig.h"))
    if goos == "windows":
        lib_dir = env["CGO_LDFLAGS"].split()[0][2:]
        xy = python.replace(".", "")
        assert os.path.isfile(os.path.join(lib_dir, f"libpython{xy}.a")) and f"-lpython{xy}" in env["CGO_LDFLAGS"]
    else:
        stubs = env["CGO_LDFLAGS"].split()[0][2:]
        assert os.path.isfile(os.path.join(stubs, "CoreFoundation.framework", "CoreFoundation.tbd"))


def test_the_linux_pyconfig_does_not_describe_macos(tmp_path):
    # the reason each target needs its own headers (platform-facts.md)
    linux = str(tmp_path)
    import sysconfig
    real = zigcc._multiarch_pyconfig(sysconfig.get_paths()["include"]) or os.path.join(
        sysconfig.get_paths()["include"], "pyconfig.h")
    shutil.copyfile(real, os.path.join(linux, "pyconfig.h"))
    with pytest.raises(RuntimeError, match="SIZEOF_LONG_DOUBLE|SIZEOF_FPOS_T|SIZEOF_PTHREAD_KEY_T"):
        zigcc.check_pyconfig(MAC_ARM, linux)


def _zig_cc(target: str, tmp, src: str, out: str, *flags: str) -> str:
    c = tmp / "m.c"
    c.write_text(src)
    path = str(tmp / out)
    subprocess.run(zigcc.cc(target) + ["-shared", "-O1", "-o", path, str(c), *flags], check=True,
                   capture_output=True)
    return path


WIN_SRC = """
__declspec(dllimport) int Py_IsInitialized(void);
__declspec(dllimport) int MessageBoxA(void*, const char*, const char*, unsigned);
__declspec(dllexport) void* PyInit_m(void) { return (void*)(long long)(Py_IsInitialized() + %s); }
"""


@needs_llvm
def test_windows_check_passes_a_pyd_that_imports_only_python(tmp_path):
    lib = zigcc._crossdeps().import_lib_dir(zigcc.zig(), "3.13")
    pyd = _zig_cc(WIN, tmp_path, WIN_SRC % "0", "m.pyd", f"-L{lib}", "-lpython313")
    assert cross.problems(pyd, "win_amd64", "3.13", "m") == []
    assert cross.problems(pyd, "win_amd64", "3.13", "other") == ["does not export PyInit_other"]


@needs_llvm
def test_windows_check_refuses_other_dlls_and_names_python_lacks(tmp_path):
    fake = tmp_path / "python313.def"
    fake.write_text("LIBRARY python313.dll\nEXPORTS\nPy_IsInitialized\n")
    subprocess.run([zigcc.zig(), "dlltool", "-m", "i386:x86-64", "-d", str(fake), "-l",
                    str(tmp_path / "libpython313.a")], check=True)
    src = WIN_SRC.replace("Py_IsInitialized", "PyNot_AThing") % "MessageBoxA(0, 0, 0, 0)"
    fake.write_text("LIBRARY python313.dll\nEXPORTS\nPyNot_AThing\n")
    subprocess.run([zigcc.zig(), "dlltool", "-m", "i386:x86-64", "-d", str(fake), "-l",
                    str(tmp_path / "libpython313.a")], check=True)
    pyd = _zig_cc(WIN, tmp_path, src, "m.pyd", f"-L{tmp_path}", "-lpython313", "-luser32")
    bad = cross.problems(pyd, "win_amd64", "3.13", "m")
    assert "imports PyNot_AThing from python313.dll, which does not export it" in bad
    assert "imports from USER32.dll, not part of Windows' KERNEL32 or UCRT" in bad


MAC_SRC = """
int Py_IsInitialized(void);
int %s(void);
__attribute__((visibility("default"))) void* PyInit_m(void) { return (void*)(long)(Py_IsInitialized() + %s()); }
"""


@needs_llvm
@pytest.mark.parametrize("target", [MAC_ARM, MAC_X86])
def test_macos_check_binds_only_what_libpython_exports(tmp_path, target):
    ok = _zig_cc(target, tmp_path, MAC_SRC % ("getpid", "getpid"), "ok.so", "-Wl,-undefined,dynamic_lookup")
    assert cross.problems(ok, target, "3.13", "m") == []
    bad = _zig_cc(target, tmp_path, MAC_SRC % ("PyNot_AThing", "PyNot_AThing"), "bad.so",
                  "-Wl,-undefined,dynamic_lookup")
    assert cross.problems(bad, target, "3.13", "m") == [
        "binds _PyNot_AThing, which libpython3.13.dylib does not export"]


@needs_llvm
def test_macos_check_states_the_minimum_os_and_the_module(tmp_path):
    newer = _zig_cc("x86_64-macos.13.0", tmp_path, MAC_SRC % ("getpid", "getpid"), "m.so",
                    "-Wl,-undefined,dynamic_lookup")
    assert cross.problems(newer, MAC_X86, "3.13", "n") == [
        "states minimum macOS ['13.0'], want ['12.0']", "does not export _PyInit_n"]


def test_go_runtimes_are_found_by_their_build_information(tmp_path):
    """internal/cpython/base/buildinfo.c (Windows and macOS) on this
    machine: it finds the Go version in a Go binary and nothing in a C one."""
    base = os.path.join(ROOT, "internal", "cpython", "base")
    driver = tmp_path / "drv.c"
    driver.write_text("""
#include <stdio.h>
#include <stdlib.h>
#include "goimage.h"
int main(int argc, char** argv) {
  FILE* f = fopen(argv[1], "rb");
  static unsigned char buf[64 << 20];
  size_t n = fread(buf, 1, sizeof buf, f);
  char v[64];
  if (!gdl_go_buildinfo(buf, n, v, sizeof v)) return 3;
  printf("%s", v);
  return 0;
}
""")
    exe = str(tmp_path / "drv")
    subprocess.run(zigcc.cc("x86_64-linux-gnu.2.17") + ["-O1", f"-I{base}", "-o", exe, str(driver),
                                                        os.path.join(base, "buildinfo.c")], check=True)
    go = subprocess.run(["go", "env", "GOVERSION"], capture_output=True, text=True, check=True).stdout.strip()
    (tmp_path / "hello.go").write_text("package main\nfunc main() {}\n")
    for goos, goarch in (("linux", "amd64"), ("windows", "amd64"), ("darwin", "arm64")):
        gobin = tmp_path / f"hello-{goos}"  # the header sits 16-aligned in the file as in memory
        subprocess.run(["go", "build", "-o", str(gobin), str(tmp_path / "hello.go")], check=True, cwd=tmp_path,
                       env=dict(os.environ, GOFLAGS="-buildvcs=false", GO111MODULE="off", CGO_ENABLED="0",
                                GOOS=goos, GOARCH=goarch))
        assert subprocess.run([exe, str(gobin)], capture_output=True, text=True).stdout == go, goos
    assert subprocess.run([exe, exe]).returncode == 3  # a C program holds no Go runtime


def test_a_foreign_wheel_records_every_file_and_pip_takes_its_tag(tmp_path):
    crosswheel = importlib.import_module("crosswheel")
    lib, info = tmp_path / "lib" / "godlpack", tmp_path / "godlpack-9.dist-info"
    lib.mkdir(parents=True)
    info.mkdir()
    (lib / "__init__.py").write_text("X = 1\n")
    (lib / "_old.cpython-311-x86_64-linux-gnu.so").write_bytes(b"this machine's build")
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: godlpack\nVersion: 9\n")
    ext = tmp_path / "_godlpack.cp313-win_amd64.pyd"
    ext.write_bytes(b"MZ")
    whl = crosswheel.write_wheel(str(tmp_path / "out"), str(tmp_path / "lib"), str(info), "cp313-cp313-win_amd64",
                                 [str(ext)])
    assert os.path.basename(whl) == "godlpack-9-cp313-cp313-win_amd64.whl"
    import zipfile
    with zipfile.ZipFile(whl) as z:
        names = set(z.namelist())
        record = z.read("godlpack-9.dist-info/RECORD").decode().split()
        for line in record:
            arc, digest, size = line.split(",")
            if arc.endswith("RECORD"):
                continue
            data = z.read(arc)
            assert len(data) == int(size) and digest == crosswheel._record_line(arc, data).split(",")[1]
    assert "godlpack/_godlpack.cp313-win_amd64.pyd" in names
    assert not any(n.endswith(".so") for n in names)  # never this machine's extension
    assert "Tag: cp313-cp313-win_amd64" in zipfile.ZipFile(whl).read("godlpack-9.dist-info/WHEEL").decode()
    r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps",
                        "--only-binary=:all:", "--platform", "win_amd64", "--python-version", "3.13",
                        "--implementation", "cp", "--target", str(tmp_path / "t"), whl], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "t" / "godlpack" / "_godlpack.cp313-win_amd64.pyd").read_bytes() == b"MZ"


@needs_llvm
@pytest.mark.parametrize("target", [WIN, MAC_ARM])
def test_the_c_probe_builds_for_the_target_and_passes_the_checks(tmp_path, target):
    crosswheel = importlib.import_module("crosswheel")
    path = crosswheel.build_probe(target, "3.13", str(tmp_path))
    assert path.endswith(zigcc.foreign_ext_suffix(target, "3.13"))
    assert cross.problems(path, target, "3.13", "_probe") == []


# --- universal2 (tools/fatmacho.py, cross.UNIVERSAL2) ---------------------

def _thin_pair(tmp_path, arm_sym="getpid", x86_sym="getpid", arm_target=MAC_ARM):
    """A small arm64 and x86_64 extension built by zig (arm64 signed by it)."""
    flags = ("-Wl,-undefined,dynamic_lookup",)
    (tmp_path / "a").mkdir(exist_ok=True)
    (tmp_path / "x").mkdir(exist_ok=True)
    return (_zig_cc(arm_target, tmp_path / "a", MAC_SRC % (arm_sym, arm_sym), "m.so", *flags),
            _zig_cc(MAC_X86, tmp_path / "x", MAC_SRC % (x86_sym, x86_sym), "m.so", *flags))


def _unsign(path: str) -> None:
    """Renames the arm64 file's LC_CODE_SIGNATURE (0x1d) to LC_SEGMENT_SPLIT_INFO
    (0x1e, the same linkedit_data_command layout): a file that reads unsigned."""
    import struct
    data = bytearray(open(path, "rb").read())
    (ncmds,) = struct.unpack_from("<I", data, 16)
    at = 32
    for _ in range(ncmds):
        cmd, size = struct.unpack_from("<II", data, at)
        if cmd == 0x1D:
            struct.pack_into("<I", data, at, 0x1E)
            open(path, "wb").write(bytes(data))
            return
        at += size
    raise AssertionError("zig did not sign the arm64 file")


def test_universal2_pythons_suffix_and_tag():
    assert cross.universal2_pythons() == [p for p in zigcc.foreign_pythons(MAC_ARM)
                                          if p in zigcc.foreign_pythons(MAC_X86)]
    assert "3.13" in cross.universal2_pythons() and "3.11" not in cross.universal2_pythons()
    assert cross.wheel_tag(cross.UNIVERSAL2, "3.13") == "cp313-cp313-macosx_12_0_universal2"
    assert cross.ext_suffix(cross.UNIVERSAL2, "3.14") == ".cpython-314-darwin.so"
    assert cross.wheel_tag("win_amd64", "3.11") == "cp311-cp311-win_amd64"  # the thin tags as they were
    with pytest.raises(ValueError, match="no universal2 build for CPython 3.11"):
        cross.wheel_tag(cross.UNIVERSAL2, "3.11")
    with pytest.raises(ValueError, match="no universal2 build for CPython 3.12: both macOS targets have headers "
                                         "only for 3.13"):
        cross.build(cross.UNIVERSAL2, "3.12", "m", "/nonexistent", "./module")  # refused before any build


def test_fat_file_holds_each_slice_page_aligned_and_reads_back(tmp_path):
    fatmacho = importlib.import_module("fatmacho")
    arm, x86 = (b"\xcf\xfa\xed\xfe" + bytes.fromhex(c) + b"\0" * n for c, n in
                (("0c000001" "00000000", 5000), ("07000001" "03000000", 70)))
    fat = fatmacho.join([x86, arm])
    import struct
    assert struct.unpack_from(">II", fat) == (0xCAFEBABE, 2)
    entries = [struct.unpack_from(">IIIII", fat, 8 + 20 * i) for i in range(2)]
    assert [(e[0], e[1], e[3], e[4]) for e in entries] == [(0x01000007, 3, len(x86), 14), (0x0100000C, 0, len(arm), 14)]
    assert all(e[2] % (1 << 14) == 0 and fat[e[2]:e[2] + e[3]] in (x86, arm) for e in entries)
    assert fatmacho.slices(fat) == {"x86_64": x86, "arm64": arm}
    with pytest.raises(ValueError, match="two slices of one architecture"):
        fatmacho.join([arm, arm])
    with pytest.raises(ValueError, match="not a thin 64-bit Mach-O"):
        fatmacho.join([b"MZ" + b"\0" * 40])
    with pytest.raises(ValueError, match="no FAT_MAGIC"):
        fatmacho.slices(arm)
    with pytest.raises(ValueError, match="do not fit the file"):
        fatmacho.slices(fat[: entries[1][2] + 10])  # the last slice cut short
    moved = bytearray(fat)
    struct.pack_into(">I", moved, 8 + 8, entries[0][2] + 8)  # x86_64's offset off its page
    with pytest.raises(ValueError, match="slice x86_64: offset"):
        fatmacho.slices(bytes(moved))
    relabeled = bytearray(fat)
    struct.pack_into(">I", relabeled, 8, 0x0100000C)  # x86_64's entry names arm64
    with pytest.raises(ValueError, match="its own header names another architecture"):
        fatmacho.slices(bytes(relabeled))


@needs_llvm
def test_llvm_reads_our_fat_file_as_lipo_would(tmp_path):
    arm, x86 = _thin_pair(tmp_path)
    fat = cross.universal2(arm, x86, str(tmp_path / "m.cpython-313-darwin.so"))
    lipo = cross.llvm("llvm-lipo")
    info = subprocess.run([lipo, "-info", fat], capture_output=True, text=True, check=True).stdout
    assert info.split(":")[-1].split() == ["x86_64", "arm64"]
    for arch, thin in (("arm64", arm), ("x86_64", x86)):
        out = tmp_path / f"thin-{arch}"
        subprocess.run([lipo, fat, "-thin", arch, "-output", str(out)], check=True)
        assert out.read_bytes() == open(thin, "rb").read()


@needs_llvm
def test_universal2_check_passes_both_good_slices(tmp_path):
    arm, x86 = _thin_pair(tmp_path)
    fat = cross.universal2(arm, x86, str(tmp_path / "m.so"))
    assert cross.problems(fat, cross.UNIVERSAL2, "3.13", "m") == []
    assert cross.problems(fat, cross.UNIVERSAL2, "3.13", "n") == [
        "arm64 slice: does not export _PyInit_n", "x86_64 slice: does not export _PyInit_n"]


@needs_llvm
def test_universal2_check_refuses_a_missing_or_bad_slice(tmp_path):
    fatmacho = importlib.import_module("fatmacho")
    arm, x86 = _thin_pair(tmp_path, x86_sym="PyNot_AThing")
    one = tmp_path / "one.so"
    one.write_bytes(fatmacho.join([open(arm, "rb").read()]))
    assert cross.problems(str(one), cross.UNIVERSAL2, "3.13", "m") == ["lacks the x86_64 slice"]
    assert cross.problems(arm, cross.UNIVERSAL2, "3.13", "m") == ["not a fat Mach-O file (no FAT_MAGIC)"]
    fat = cross.universal2(arm, x86, str(tmp_path / "bad.so"))
    assert cross.problems(fat, cross.UNIVERSAL2, "3.13", "m") == [
        "x86_64 slice: binds _PyNot_AThing, which libpython3.13.dylib does not export"]


@needs_llvm
def test_universal2_check_wants_the_minimum_os_and_a_signed_arm64_slice(tmp_path):
    arm, x86 = _thin_pair(tmp_path, arm_target="aarch64-macos.13.0")
    _unsign(arm)
    fat = cross.universal2(arm, x86, str(tmp_path / "m.so"))
    assert cross.problems(fat, cross.UNIVERSAL2, "3.13", "m") == [
        "arm64 slice: states minimum macOS ['13.0'], want ['12.0']",
        "arm64 slice: is not signed (arm64 macOS loads only signed code)"]


def test_a_mac_of_either_architecture_takes_the_universal2_tag():
    from packaging import tags
    for arch in ("arm64", "x86_64"):
        assert "macosx_12_0_universal2" in list(tags.mac_platforms((12, 0), arch))
    assert cross.wheel_tag(cross.UNIVERSAL2, "3.13").endswith("-macosx_12_0_universal2")
