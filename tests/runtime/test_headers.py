"""godlpack's public headers coexist with other libraries' dlpack.h: a C or
C++ extension that includes PyTorch's or tvm-ffi's dlpack.h can use the
helper C API, whichever it includes first."""
import os
import shutil
import subprocess
import sysconfig

import pytest

import godlpack

PY_INCLUDE = sysconfig.get_paths()["include"]


def _other_dlpack_h(tmp_path):
    """Another library's copy of upstream dlpack.h (tvm-ffi's, PyTorch's), else a copy of ours."""
    for mod, rel in (("tvm_ffi", "include/dlpack/dlpack.h"), ("torch", "include/ATen/dlpack.h")):
        try:
            m = __import__(mod)
        except ImportError:
            continue
        p = os.path.join(os.path.dirname(m.__file__), rel)
        if os.path.exists(p):
            return p
    p = tmp_path / "other" / "dlpack.h"
    p.parent.mkdir()
    shutil.copy(os.path.join(godlpack.get_include(), "godlpack", "dlpack.h"), p)
    return str(p)


@pytest.mark.parametrize("compiler, ext", [("cc", "c"), ("c++", "cpp")])
@pytest.mark.parametrize("order", ["theirs_first", "ours_first"])
def test_both_include_orders_compile(tmp_path, compiler, ext, order):
    if shutil.which(compiler) is None:
        pytest.skip(f"no {compiler}")
    other = _other_dlpack_h(tmp_path)
    ours = '#include <godlpack/godlpack.h>\n'
    theirs = f'#include "{other}"\n'
    body = (theirs + ours) if order == "theirs_first" else (ours + theirs)
    src = tmp_path / f"tu.{ext}"
    src.write_text(body + """
int use(PyObject* obj) {
  const GodlpackCAPI* api = godlpack_import_capi();
  DLManagedTensorVersioned* m = 0;
  DLDataType f8 = {kDLFloat8_e4m3fn, 8, 1};
  (void)f8;
  if (api == 0) return -1;
  api->free_managed_versioned(m);
  return api->is_cpu_accessible((DLDevice){kDLCPU, 0});
}
""".replace("(DLDevice){kDLCPU, 0}", "DLDevice{kDLCPU, 0}" if ext == "cpp" else "(DLDevice){kDLCPU, 0}"))
    r = subprocess.run([compiler, "-fsyntax-only", "-Wall", "-Werror", f"-I{godlpack.get_include()}",
                        f"-I{PY_INCLUDE}", str(src)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_the_vendored_header_is_upstreams_1_3():
    text = open(os.path.join(godlpack.get_include(), "godlpack", "dlpack.h")).read()
    assert "#ifndef DLPACK_DLPACK_H_" in text
    assert "#define DLPACK_MAJOR_VERSION 1" in text and "#define DLPACK_MINOR_VERSION 3" in text
    assert godlpack.dlpack_info()["api_version"] == (1, 3)
