"""What one abi3 (limited API) wheel would cost: times bench/limited_api.c's
macro (full API) and function (limited API) variants of the tuple reads and
builds godlpack's hot paths do. Run: python bench/limited_api.py"""
import os
import subprocess
import sys
import sysconfig
import tempfile
import timeit

HERE = os.path.dirname(os.path.abspath(__file__))

with tempfile.TemporaryDirectory() as tmp:
    so = os.path.join(tmp, "lim" + sysconfig.get_config_var("EXT_SUFFIX"))
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", f"-I{sysconfig.get_paths()['include']}",
                    os.path.join(HERE, "limited_api.c"), "-o", so], check=True)
    sys.path.insert(0, tmp)
    import lim

    t = tuple(range(1_000_000))
    for name in ("macro_read", "func_read"):
        fn = getattr(lim, name)
        best = min(timeit.repeat(lambda: fn(t), number=20, repeat=7)) / 20 / len(t)
        print(f"{name:12s} {best * 1e9:6.2f} ns per item")
    for name in ("macro_build", "func_build"):
        fn = getattr(lim, name)
        best = min(timeit.repeat(fn, number=200_000, repeat=7)) / 200_000
        print(f"{name:12s} {best * 1e9:6.1f} ns per 4-int tuple")
