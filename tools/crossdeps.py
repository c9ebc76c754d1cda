"""What a Windows or macOS cross build needs that this machine lacks, fetched
once and cached (tools/zigcc.py's foreign targets use it):

- each target's own CPython headers and pyconfig.h, and the real
  python3XY.dll / libpython3.X.dylib and python3.lib (for export checks): from the Maven
  Central jars org.bytedeco:cpython:<version>-<release> (classifiers
  windows-x86_64, macosx-x86_64, macosx-arm64), plain HTTPS download of the
  repository's standard layout, or `mvn dependency:get` where $GODLPACK_MVN=1;
- the Windows import library of python3XY.dll: made by `zig dlltool` from
  the .def file of the crate python3-dll-a (fetched with cargo);
- text stubs (.tbd) of CoreFoundation and libresolv for macOS links: Go's
  runtime/cgo asks for the framework on darwin/arm64 and package os for
  -lresolv; neither is used for any symbol, and both are on every Mac.

The cache is $GODLPACK_CROSS_CACHE, else ~/.cache/godlpack/cross.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import urllib.request
import zipfile

# Each CPython version is in one release of the jars.
BYTEDECO = {"3.11.3": "1.5.9", "3.12.1": "1.5.10", "3.13.5": "1.5.12", "3.14.3": "1.5.13"}
# The CPython versions the jars hold, per classifier.
VERSIONS = {
    "windows-x86_64": ["3.11.3", "3.12.1", "3.13.5", "3.14.3"],
    "macosx-x86_64": ["3.11.3", "3.12.1", "3.13.5", "3.14.3"],
    "macosx-arm64": ["3.13.5", "3.14.3"],
}
REPOSITORY = "https://repo1.maven.org/maven2"
DLL_A = "python3-dll-a"  # the crate with python3XY.def files


def cache() -> str:
    d = os.environ.get("GODLPACK_CROSS_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "godlpack", "cross")
    os.makedirs(d, exist_ok=True)
    return os.path.abspath(d)


def full_version(classifier: str, minor: str) -> str:
    """3.13 -> 3.13.5 for classifier; ValueError when no jar has it."""
    for v in VERSIONS[classifier]:
        if v.rsplit(".", 1)[0] == minor:
            return v
    raise ValueError(f"no CPython {minor} headers for {classifier}: the jars have "
                     f"{', '.join(VERSIONS[classifier])}")


def _download(url: str, dest: str) -> None:
    tmp = dest + ".part"
    with urllib.request.urlopen(url, timeout=120) as r, open(tmp, "wb") as f:
        shutil.copyfileobj(r, f)
    os.replace(tmp, dest)


def jar(classifier: str, version: str) -> str:
    """The cached jar of CPython version for classifier, fetched if missing."""
    release = BYTEDECO[version]
    name = f"cpython-{version}-{release}-{classifier}.jar"
    dest = os.path.join(cache(), "jars", name)
    if os.path.isfile(dest):
        return dest
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    if os.environ.get("GODLPACK_MVN") == "1" and shutil.which("mvn"):
        subprocess.run(["mvn", "-q", "dependency:get",
                        f"-Dartifact=org.bytedeco:cpython:{version}-{release}:jar:{classifier}"], check=True)
        m2 = os.path.join(os.path.expanduser("~"), ".m2", "repository", "org", "bytedeco", "cpython",
                          f"{version}-{release}", name)
        shutil.copyfile(m2, dest)
    else:
        _download(f"{REPOSITORY}/org/bytedeco/cpython/{version}-{release}/{name}", dest)
    return dest


def python_root(classifier: str, version: str) -> str:
    """The folder holding the jar's include/ and its libpython, extracted once."""
    root = os.path.join(cache(), "py", f"{version}-{classifier}")
    done = os.path.join(root, ".done")
    if not os.path.exists(done):
        prefix = f"org/bytedeco/cpython/{classifier}/"
        minor = version.rsplit(".", 1)[0]
        keep = (f"{prefix}include/", f"{prefix}python{minor.replace('.', '')}.dll", f"{prefix}libpython{minor}.dylib")
        with zipfile.ZipFile(jar(classifier, version)) as z:
            for m in z.namelist():
                if m.startswith(keep) and not m.endswith("/"):
                    z.extract(m, root)
        open(done, "w").close()
    return os.path.join(root, "org", "bytedeco", "cpython", classifier)


def include_dir(classifier: str, version: str) -> str:
    root = python_root(classifier, version)
    sub = os.path.join(root, "include", f"python{version.rsplit('.', 1)[0]}")
    return sub if os.path.isdir(sub) else os.path.join(root, "include")


def libpython(classifier: str, version: str) -> str:
    """The real python3XY.dll or libpython3.X.dylib of the jar."""
    minor = version.rsplit(".", 1)[0]
    name = f"python{minor.replace('.', '')}.dll" if classifier.startswith("windows") else f"libpython{minor}.dylib"
    return os.path.join(python_root(classifier, version), name)


def stable_abi_lib(version: str) -> str:
    """The Windows jar's libs/python3.lib of CPython version: the import
    library of its python3.dll, whose names are what that DLL exports (the
    stable ABI of that version), extracted once."""
    dest = os.path.join(cache(), "py", f"{version}-windows-x86_64", "python3.lib")
    if not os.path.isfile(dest):
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with zipfile.ZipFile(jar("windows-x86_64", version)) as z:
            data = z.read("org/bytedeco/cpython/windows-x86_64/libs/python3.lib")
        with open(dest + ".part", "wb") as f:
            f.write(data)
        os.replace(dest + ".part", dest)
    return dest


def _find_def(home: str, dll: str) -> str | None:
    found = [os.path.join(d, f) for d, _, fs in os.walk(os.path.join(home, "registry", "src")) for f in fs
             if f == f"{dll}.def" and DLL_A in d]
    return sorted(found)[-1] if found else None  # the newest version of the crate


def _def_file(dll: str) -> str:
    """python3XY.def from the crate python3-dll-a, fetched once with cargo."""
    home = os.path.join(cache(), "cargo")
    if _find_def(home, dll) is None:
        cargo = shutil.which("cargo")
        if not cargo:
            raise RuntimeError(f"the Windows import library of {dll}.dll needs the crate {DLL_A}: install cargo")
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "Cargo.toml"), "w") as f:
                f.write(f'[package]\nname = "defs"\nversion = "0.0.0"\nedition = "2021"\n'
                        f'[lib]\npath = "lib.rs"\n[dependencies]\n{DLL_A} = "0.2"\n')
            open(os.path.join(tmp, "lib.rs"), "w").close()
            subprocess.run([cargo, "fetch", "-q"], cwd=tmp, check=True, env=dict(os.environ, CARGO_HOME=home))
    found = _find_def(home, dll)
    if found is None:
        raise RuntimeError(f"the crate {DLL_A} has no {dll}.def")
    return found


def import_lib_dir(zig: str, minor: str) -> str:
    """A folder holding libpython3XY.a, the import library of python3XY.dll
    (minor "3": libpython3.a, of python3.dll, the stable ABI's DLL)."""
    dll = f"python{minor.replace('.', '')}"
    out = os.path.join(cache(), "implib", minor)
    lib = os.path.join(out, f"lib{dll}.a")
    if not os.path.isfile(lib):
        d = _def_file(dll)
        os.makedirs(out, exist_ok=True)
        subprocess.run([zig, "dlltool", "-m", "i386:x86-64", "-d", d, "-l", lib + ".part"], check=True)
        os.replace(lib + ".part", lib)
    return out


_TBD = """--- !tapi-tbd
tbd-version:     4
targets:         [ x86_64-macos, arm64-macos ]
install-name:    '{}'
current-version: 1.0
...
"""


def macos_stubs() -> str:
    """A folder for -F and -L with CoreFoundation.framework and libresolv stubs."""
    out = os.path.join(cache(), "macos-stubs")
    for rel, install in (("CoreFoundation.framework/CoreFoundation.tbd",
                          "/System/Library/Frameworks/CoreFoundation.framework/Versions/A/CoreFoundation"),
                         ("libresolv.tbd", "/usr/lib/libresolv.9.dylib")):
        path = os.path.join(out, rel)
        if not os.path.isfile(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(_TBD.format(install))
    return out
