"""godlpack.Tensor parameters of Go extension functions: the test extension
tests/pyext/tensormod, whose checks (tests/pyext/tensormod/check_tensormod.py)
this run collects; here, that it stands alone."""
from gomod import stands_alone


def test_tensormod_imports_without_godlpack():
    stands_alone("tensormod")
