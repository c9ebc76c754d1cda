# make gpu-test: every GPU test of the project in one command (tools/gpu_test.sh):
# tests/runtime/test_cuda.py, the stand-in driver's tests/runtime/test_fakecuda.py (run
# anywhere), the real-GPU tests/runtime/test_gpu_peers.py, a short bench/gpu_bench.py
# and, where compute-sanitizer is on PATH, a memcheck of godlpack's copies.
# Without a GPU the GPU parts skip and say why. GPU_WHEEL=path/to/wheel tests
# an installed wheel instead of the in-place build (no Go, no network: the
# machine's own torch/cupy/jax are used); make gpu-bundle builds one into .gpu/.
# Options (environment): GPU_OUT (logs), GPU_TESTS, GPU_PYTEST_TIMEOUT, ...
GPU_WHEEL ?=
.PHONY: gpu-test gpu-bundle
gpu-test: $(if $(GPU_WHEEL),,ext probe venv)
	PYTHON=$(PYTHON) GPU_WHEEL=$(GPU_WHEEL) bash tools/gpu_test.sh

# The cp312 wheel and the pure-Python test wheels for a GPU machine without
# Go or network (tools/gpu_bundle.sh; GPU_PYVER=3.X for another Python).
gpu-bundle:
	bash tools/gpu_bundle.sh
