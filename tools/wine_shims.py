"""The Wine-only shims of `make wine-test` (tools/wine_test.py): each fills a
gap of Wine 8's, not of Windows', and lives in the test harness only (the
Wine prefix and the test's site folder), never in godlpack's wheels.

- bcryptprimitives.dll: Go's runtime loads ProcessPrng from it at start
  (runtime/os_windows.go loadOptionalSyscalls); Wine 8 has no such DLL. Ours
  forwards to BCryptGenRandom. Copied into the prefix's system32.
- sitecustomize.py: CPython >= 3.12's platform module asks WMI (_wmi), which
  Wine cannot answer (propsys.dll.VariantToString is a stub): platform falls
  back to its other sources when _wmi cannot be imported.
- The C99 complex functions NumPy imports from the UCRT (cexp, crealf, ...):
  Wine's ucrtbase has only stubs that abort when called. A DLL named
  gdlwine-crt-math-shim-wine.dll (as long as api-ms-win-crt-math-l1-1-0.dll)
  implements them with mingw-w64's own complex sources (shipped with zig) and
  forwards every other name to ucrtbase; NumPy's copies in the harness's
  site folder import it instead of the UCRT's math set (the name in their
  import tables is patched, nothing else).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zigcc  # noqa: E402

TARGET = "x86_64-windows-gnu"
MATH_SET = b"api-ms-win-crt-math-l1-1-0.dll"
SHIM_NAME = b"gdlwine-crt-math-shim-wine.dll"
assert len(MATH_SET) == len(SHIM_NAME)

_PRNG = r"""/* Wine 8 lacks bcryptprimitives.dll, which Go's runtime loads at start. */
#include <windows.h>
#include <bcrypt.h>
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
  while (len > 0) {
    ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
    if (BCryptGenRandom(NULL, data, n, BCRYPT_USE_SYSTEM_PREFERRED_RNG) != 0) return FALSE;
    data += n;
    len -= n;
  }
  return TRUE;
}
"""

# mingw-w64's complex templates (zig's lib/libc/mingw/complex/NAME.def.h).
COMPLEX = ["cabs", "cacos", "cacosh", "carg", "casin", "casinh", "catan", "catanh", "ccos", "ccosh",
           "cexp", "cimag", "clog", "clog10", "conj", "cpow", "cproj", "creal", "csin", "csinh",
           "csqrt", "ctan", "ctanh"]
_TWO_ARGS = {"cpow"}
_REAL_RESULT = {"cabs", "carg", "cimag", "creal"}

SITECUSTOMIZE = """# Test harness only (tools/wine_shims.py): Wine cannot answer WMI, so
# platform must not try it.
import sys
sys.modules["_wmi"] = None
"""


def _cc(args: list[str], cwd: str) -> None:
    r = subprocess.run(zigcc.cc(TARGET) + args, cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"zig cc {' '.join(args[-3:])} failed:\n{r.stderr}")


def build_prng(out: str) -> str:
    """out/bcryptprimitives.dll, exporting ProcessPrng."""
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "bcryptprimitives.c"), "w") as f:
        f.write(_PRNG)
    _cc(["-shared", "-O2", "-o", "bcryptprimitives.dll", "bcryptprimitives.c", "-lbcrypt"], out)
    return os.path.join(out, "bcryptprimitives.dll")


def _long_double_wrappers() -> str:
    # MSVC's long double is double: its _Lcomplex is two doubles, passed as a
    # double _Complex is, so the l names call the double ones.
    lines = ["/* The UCRT's l complex functions: long double is double there. */"]
    for n in COMPLEX:
        ret = "double" if n in _REAL_RESULT else "double _Complex"
        params = "double _Complex a, double _Complex b" if n in _TWO_ARGS else "double _Complex a"
        args = "a, b" if n in _TWO_ARGS else "a"
        lines.append(f"{ret} {n}({params});")
        lines.append(f"{ret} {n}l({params}) {{ return {n}({args}); }}")
    return "\n".join(lines) + "\n"


def build_complex(out: str, forward: list[str]) -> str:
    """out/gdlwine-crt-math-shim-wine.dll: the complex functions (double, f
    and l names) and, forwarded to ucrtbase, the names of forward."""
    os.makedirs(out, exist_ok=True)
    src = os.path.join(os.path.dirname(zigcc.zig()), "lib", "libc", "mingw", "complex")
    files = []
    for kind, suffix in (("_NEW_COMPLEX_DOUBLE", "d"), ("_NEW_COMPLEX_FLOAT", "f")):
        for n in COMPLEX:
            name = f"{n}_{suffix}.c"
            with open(os.path.join(out, name), "w") as f:
                f.write(f'#define {kind} 1\n#include "complex_internal.h"\n#include "{n}.def.h"\n')
            files.append(name)
    with open(os.path.join(out, "complex_l.c"), "w") as f:
        f.write(_long_double_wrappers())
    files.append("complex_l.c")
    own = [n + s for n in COMPLEX for s in ("", "f", "l")]
    with open(os.path.join(out, "shim.def"), "w") as f:
        f.write(f"LIBRARY {SHIM_NAME.decode()}\nEXPORTS\n")
        f.writelines(f"{n}\n" for n in own)
        f.writelines(f"{n} = ucrtbase.{n}\n" for n in sorted(set(forward) - set(own)))
    _cc(["-shared", "-O2", "-fno-builtin", "-Wno-incompatible-library-redeclaration", f"-I{src}",
         "-o", SHIM_NAME.decode(), *files, "shim.def"], out)
    return os.path.join(out, SHIM_NAME.decode())


def math_imports(path: str, objdump: str) -> list[str]:
    """The names path imports from the UCRT's math set."""
    text = subprocess.run([objdump, "-p", path], capture_output=True, text=True, check=True).stdout
    names, inside = [], False
    for line in text.splitlines():
        m = re.match(r"\s*DLL Name: (\S+)", line)
        if m:
            inside = m.group(1).lower() == MATH_SET.decode()
        elif not line.strip():
            inside = False
        elif inside and re.match(r"\s+\d+\s+\S+$", line):
            names.append(line.split()[-1])
    return names


def patch_imports(path: str) -> bool:
    """Points path's imports of the UCRT's math set at the shim; whether it had any."""
    data = open(path, "rb").read()
    if MATH_SET not in data:
        return False
    with open(path, "wb") as f:
        f.write(data.replace(MATH_SET, SHIM_NAME))
    return True
