"""Array requirements of Go extension functions (pyext.Require, Convert,
ConvertWriteBack, NDArray): the test extension tests/pyext/arrmod, whose
checks (tests/pyext/arrmod/check_arrmod.py: NumPy, PyTorch, JAX and Dask
inputs, refusals, write-back, threads, leaks) this run collects; here, that
it stands alone."""
from gomod import stands_alone


def test_arrmod_imports_without_godlpack():
    stands_alone("arrmod")
