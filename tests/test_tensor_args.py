"""godlpack.Tensor parameters of Go extension functions: builds the test
extension tests/tensormod and runs tests/tensormod/check_tensormod.py in a
process of its own (an extension brings its own Go runtime)."""
from gomod import build_and_check


def test_tensor_arguments_in_a_go_extension(tmp_path):
    build_and_check(tmp_path, "tensormod")
