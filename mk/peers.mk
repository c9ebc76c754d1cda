# make test-peers: the DLPack peers too large for CI's venv (TensorFlow ~600 MB,
# PaddlePaddle ~900 MB with its deps), installed into $(VENV) on first use, then
# tests/runtime/test_large_peers.py (left out of `make test` unless GODLPACK_LARGE_PEERS
# is set) and the checker's table for all of them. Found to install with NumPy 2.4.6 on CPython
# 3.11: tensorflow-cpu 2.21.0, paddlepaddle 3.3.1. The checker exits 1 on any
# FAIL row, and the peers have findings: only its exit 2 (a peer missing) fails.
# TensorFlow's tests run in a pytest of their own: importing paddle after
# tensorflow segfaults (the checker runs each library in a child process anyway).
PEERS_BIG ?= tensorflow-cpu paddlepaddle
PEERS_CHECKED ?= pyarrow array_api_strict mlx ml_dtypes dask tensorflow paddle
.PHONY: test-peers
test-peers: ext probe venv $(VENV)/.peers
	GODLPACK_LARGE_PEERS=1 PYTHONPATH=python $(PYTHON) -m pytest -q tests/runtime/test_large_peers.py -k "not tensorflow"
	GODLPACK_LARGE_PEERS=1 PYTHONPATH=python $(PYTHON) -m pytest -q tests/runtime/test_large_peers.py -k tensorflow
	PYTHONPATH=python $(PYTHON) -m godlpack check $(PEERS_CHECKED); rc=$$?; [ $$rc -le 1 ] || exit $$rc

# numpy pinned to the venv's own: neither peer may replace the NumPy the suite runs on.
$(VENV)/.peers: $(VENV)/.deps
	$(PYTHON) -m pip install -q $(PEERS_BIG) "numpy==$$($(PYTHON) -c 'import numpy; print(numpy.__version__)')"
	touch $@
