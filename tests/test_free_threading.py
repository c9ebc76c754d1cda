"""Free-threaded CPython: godlpack and every pyext extension declare that they
need the GIL (docs/free-threading.md lists the state that relies on it). On a
free-threaded interpreter the import must leave the GIL enabled; on a regular
one the declaration must still be in both module definitions, so that a
free-threaded build of the same source gets it."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig

from conftest import child_env

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FREE_THREADED = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))


def test_both_module_definitions_declare_the_gil():
    import godlpack
    # The extensions' definition ships with every godlpack (the Go source
    # extensions build against); godlpack's own where the source tree is here.
    files = [os.path.join(godlpack.get_go_source(), "pyext", "ext_module.c")]
    own = os.path.join(ROOT, "pyext", "module", "module.c")
    if os.path.exists(own):
        files.append(own)
    for rel in files:
        src = open(rel, encoding="utf-8").read()
        assert re.search(r"Py_mod_gil[,;\s].*Py_MOD_GIL_USED", src, re.S), f"{rel} does not declare Py_MOD_GIL_USED"
        assert "Py_MOD_GIL_NOT_USED" not in src, f"{rel}: the audit in docs/free-threading.md says the GIL is needed"


def test_importing_godlpack_keeps_or_enables_the_gil():
    code = ("import sys, warnings\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    import godlpack, numpy as np\n"
            "assert godlpack.from_dlpack(np.arange(3.0)).tolist() == [0.0, 1.0, 2.0]\n"
            "gil = sys._is_gil_enabled() if hasattr(sys, '_is_gil_enabled') else True\n"
            "print('gil', gil, 'warned', any('GIL' in str(x.message) for x in w))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=child_env())
    assert r.returncode == 0, r.stderr
    assert "gil True" in r.stdout, r.stdout
    if FREE_THREADED:  # CPython re-enabled it for us, and said so
        assert "warned True" in r.stdout, r.stdout
