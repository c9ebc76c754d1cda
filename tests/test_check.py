"""The conformance checker against NumPy, PyTorch, JAX and godlpack itself.

Peer findings are pinned as expected results: a FAIL that is a real bug in a
peer stays a FAIL here (README, "Conformance findings"), and any change in a
peer's behaviour, or any FAIL of godlpack's own, fails this test.
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from godlpack import conformance as check

# (module, start of the check title) -> expected status; unlisted checks PASS.
EXPECTED = {
    ("torch", "producer: read-only arrays"): "N/A",  # torch has no read-only tensors
    ("torch", "producer: copy=True sets IS_COPIED"): "FAIL",  # copies but leaves IS_COPIED clear
    ("torch", "producer: impossible dl_device"): "FAIL",  # NotImplementedError instead of BufferError
    ("torch", "consumer: refuses a future major"): "FAIL",  # RuntimeError instead of BufferError
    ("torch", "consumer: honours READ_ONLY"): "FAIL",  # imports read-only tensors as writable
    ("torch", "consumer: negative strides"): "FAIL",  # "Storage size calculation overflowed"
    ("jax", "producer: capsule names"): "N/A",  # legacy-only producer
    ("jax", "producer: destructor calls"): "N/A",  # destructor bypasses the deleter field
    ("jax", "producer: strides non-NULL"): "N/A",
    ("jax", "producer: read-only arrays"): "N/A",
    ("jax", "producer: copy=True"): "N/A",
    ("jax", "producer: copy=False"): "N/A",
    ("jax", "consumer: refuses a future major"): "N/A",  # asks for legacy capsules only
    ("jax", "consumer: honours READ_ONLY"): "N/A",
    ("jax", "consumer: negative strides"): "FAIL",  # JaxRuntimeError instead of BufferError
}


def expected_status(module: str, title: str) -> str:
    for (m, prefix), status in EXPECTED.items():
        if m == module and title.startswith(prefix):
            return status
    return "PASS"


@pytest.mark.parametrize("module", ["godlpack", "numpy", "torch", "jax"])
def test_checker_findings(module):
    results = check.check(module)
    assert len(results) == len(check.CHECKS)
    if module == "godlpack":  # our own implementation passes every check
        assert {r.status for r in results} == {"PASS"}, [r for r in results if r.status != "PASS"]
    got = {r.check: (r.status, r.reason) for r in results}
    mismatched = {t: got[t] for t in got if got[t][0] != expected_status(module, t)}
    assert not mismatched, mismatched


def test_missing_module_is_not_applicable():
    (r,) = check.check("no_such_module_xyz")
    assert r.status == "N/A" and "not installed" in r.reason


def test_module_without_dlpack_fails():
    (r,) = check.check("json")
    assert r.status == "FAIL"


def test_cli_json_and_exit_code(tmp_path):
    ok = subprocess.run([sys.executable, "-m", "godlpack", "check", "--json", "numpy"], capture_output=True,
                        text=True, timeout=300)
    rows = json.loads(ok.stdout)
    assert {r["module"] for r in rows} == {"numpy"}
    assert ok.returncode == 0 and all(r["status"] == "PASS" for r in rows)
    bad = subprocess.run([sys.executable, "-m", "godlpack", "check", "json"], capture_output=True, text=True,
                         timeout=300)
    assert bad.returncode == 1
    assert "FAIL" in bad.stdout and "FAIL 1," in bad.stdout


def test_counting_probe_counts_exactly_once():
    probe = check.Probe()
    cap = probe.__dlpack__(max_version=(1, 3))
    assert check.capsule_name(cap) == "dltensor_versioned" and probe.calls() == [0]
    del cap
    probe.release()
    assert probe.calls() == [1]
