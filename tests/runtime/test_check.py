"""The conformance checker: godlpack's own rows are asserted strictly; peers' rows
are findings recorded in tests/runtime/peer_findings.json, keyed by peer version.

A peer at exactly the recorded version must give the recorded statuses (so a
checker change that alters them is caught). At any other version a differing row
is reported as a warning, not a failure: a peer that gets better (or worse) must
not turn the suite red. Re-record with ``python tests/runtime/test_check.py --update``.
"""
from __future__ import annotations

import importlib
import importlib.metadata
import json
import os
import subprocess
import sys
import warnings

import pytest

from harness import child_env
from godlpack import conformance as check

FINDINGS = os.path.join(os.path.dirname(__file__), "peer_findings.json")
# The peers CI installs (pyproject's `dev`); TensorFlow and Paddle: `make test-peers`.
PEERS = ("numpy", "torch", "jax", "tvm_ffi", "pyarrow", "array_api_strict", "mlx", "ml_dtypes", "dask")


def peer_version(name: str) -> str:
    version = getattr(importlib.import_module(name), "__version__", None)  # mlx (a namespace) has none
    version = str(version) if version is not None else importlib.metadata.version(name)
    if name == "ml_dtypes":  # its rows are NumPy's export and import of its dtypes
        import numpy

        version += f"+numpy{numpy.__version__}"
    return version


def load_findings() -> dict:
    with open(FINDINGS) as f:
        return json.load(f)


def test_godlpack_passes_every_check():
    results = check.check("godlpack")
    assert len(results) == len(check.CHECKS)
    assert [r for r in results if r.status != "PASS"] == []


def judge(recorded: dict, version: str, got: dict[str, str]) -> tuple[bool, dict]:
    """(whether the recorded findings are pinned for this version, rows that differ)."""
    want = {title: row[0] for title, row in recorded["rows"].items()}
    changed = {t: (want.get(t), got.get(t)) for t in sorted(set(want) | set(got)) if want.get(t) != got.get(t)}
    return recorded["version"] == version, changed


def test_a_newer_peer_is_reported_not_failed():
    recorded = {"version": "1.0", "rows": {"a": ["FAIL", "bug"], "b": ["PASS", ""]}}
    assert judge(recorded, "1.0", {"a": "FAIL", "b": "PASS"}) == (True, {})
    assert judge(recorded, "1.0", {"a": "PASS", "b": "PASS"}) == (True, {"a": ("FAIL", "PASS")})
    assert judge(recorded, "1.1", {"a": "PASS", "b": "PASS"}) == (False, {"a": ("FAIL", "PASS")})


@pytest.mark.parametrize("peer", PEERS)
def test_peer_findings(peer):
    pytest.importorskip(peer, reason=f"optional peer {peer} not installed")
    recorded = load_findings().get(peer)
    results = check.check(peer)
    assert len(results) == len(check.CHECKS), results  # the peer imported and every check ran
    got = {r.check: r.status for r in results}
    if recorded is None:
        warnings.warn(f"no recorded findings for {peer}: run python tests/runtime/test_check.py --update")
        return
    pinned, changed = judge(recorded, peer_version(peer), got)
    if pinned:
        assert not changed, f"{peer} {recorded['version']}: findings changed (recorded, now): {changed}"
    elif changed:
        msg = (f"{peer} {peer_version(peer)} behaves differently from the recorded {recorded['version']} "
               f"(recorded, now): {changed}")
        print(msg)
        warnings.warn(msg)


def test_missing_module_is_not_applicable():
    (r,) = check.check("no_such_module_xyz")
    assert r.status == "N/A" and "not installed" in r.reason


def test_module_without_dlpack_fails():
    (r,) = check.check("json")
    assert r.status == "FAIL"


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "godlpack", "check", *args], capture_output=True, text=True,
                          timeout=300, env=child_env())


def test_cli_json_and_exit_code():
    ok = run_cli("--json", "godlpack")
    rows = json.loads(ok.stdout)
    assert {r["module"] for r in rows} == {"godlpack"}
    assert ok.returncode == 0 and all(r["status"] == "PASS" for r in rows)
    bad = run_cli("json")
    assert bad.returncode == 1
    assert "FAIL" in bad.stdout and "FAIL 1," in bad.stdout


def test_cli_help_exits_0():
    r = run_cli("--help")
    assert r.returncode == 0 and "MODULE" in r.stdout and "tvm_ffi" in r.stdout


def test_cli_unknown_module_exits_nonzero_with_a_clear_message():
    # Was: exit 0 with one N/A row, so a typo passed CI.
    r = run_cli("no_such_module")
    assert r.returncode != 0
    assert "no module named 'no_such_module'" in r.stderr and r.stdout == ""
    assert run_cli().returncode != 0  # no module at all
    # A typo in a submodule's name too (was: exit 0, one N/A row).
    r = run_cli("numpy.no_such_module")
    assert r.returncode == 2 and "no module named 'numpy.no_such_module'" in r.stderr


def test_check_refuses_what_is_no_module_name():
    for bad, exc in [(123, TypeError), (None, TypeError), ("", ValueError), (".numpy", ValueError)]:
        with pytest.raises(exc, match="module name"):
            check.check(bad)


def test_counting_probe_counts_exactly_once():
    probe = check.Probe()
    cap = probe.__dlpack__(max_version=(1, 3))
    assert check.capsule_name(cap) == "dltensor_versioned" and probe.calls() == [0]
    del cap
    probe.release()
    assert probe.calls() == [1]


# --- a checker that survives its subject --------------------------------------

NEG = "consumer: negative strides"
FAKE_HEAD = """import os, time
import numpy as np
from numpy import bool, int8, int16, int32, int64, uint8, float32, float64

def asarray(values, dtype=None):
    return np.asarray(values, dtype=dtype)

def negative(x):
    return any(s < 0 for s in (getattr(x, "spec", None) or {}).get("strides") or ())
"""


def fake_peer(tmp_path, monkeypatch, name: str, from_dlpack: str) -> str:
    """A module `name` in tmp_path with asarray and the given from_dlpack, on
    sys.path here (and so in the checker's child processes)."""
    (tmp_path / f"{name}.py").write_text(FAKE_HEAD + from_dlpack)
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


ABORTS = """
def from_dlpack(x, **kw):
    if negative(x):
        os.abort()  # as PyTorch 2.11 does (c10::Error thrown through a noexcept frame)
    return np.from_dlpack(x, **kw)
"""


def test_a_peer_that_aborts_is_a_fail_row_and_the_checker_survives(tmp_path, monkeypatch):
    # Was: os.abort() in the peer killed the checker (and this test run) with it.
    name = fake_peer(tmp_path, monkeypatch, "fake_abort_peer", ABORTS)
    results = check.check(name)
    assert [r.check for r in results] == [t for t, _ in check.CHECKS]  # every other row is still there
    rows = {r.check: r for r in results}
    assert rows[NEG].status == "FAIL" and "SIGABRT" in rows[NEG].reason, rows[NEG]
    assert [r for r in results if r.status == "FAIL" and r.check != NEG] == []


def test_cli_survives_an_aborting_peer_and_exits_1(tmp_path, monkeypatch):
    name = fake_peer(tmp_path, monkeypatch, "fake_abort_peer", ABORTS)
    r = subprocess.run([sys.executable, "-m", "godlpack", "check", name, "godlpack"], capture_output=True,
                       text=True, timeout=300, env=child_env(str(tmp_path)))
    assert r.returncode == 1, (r.returncode, r.stderr[-500:])
    line = next(ln for ln in r.stdout.splitlines() if NEG in ln and name in ln)
    assert "FAIL" in line and "SIGABRT" in line
    assert "FAIL 1," in r.stdout  # the aborting row only; godlpack's rows ran after it, all PASS
    assert sum(ln.startswith("godlpack ") and " PASS " in ln for ln in r.stdout.splitlines()) == len(check.CHECKS)


@pytest.mark.one_python  # the checker's own timeout: nothing of the Python version
def test_a_peer_that_hangs_is_a_timeout_fail_row(tmp_path, monkeypatch):
    hangs = "\ndef from_dlpack(x, **kw):\n    if negative(x):\n        time.sleep(3600)\n    return np.from_dlpack(x, **kw)\n"
    name = fake_peer(tmp_path, monkeypatch, "fake_hang_peer", hangs)
    results = check.check(name, timeout=5)
    rows = {r.check: r for r in results}
    assert len(results) == len(check.CHECKS)
    assert rows[NEG].status == "FAIL" and "timed out after 5 s" in rows[NEG].reason, rows[NEG]
    assert [r for r in results if r.status == "FAIL" and r.check != NEG] == []


def test_a_peer_that_crashes_the_interpreter_at_exit_adds_a_fail_row(tmp_path, monkeypatch):
    at_exit = "\nimport atexit\natexit.register(os.abort)\nfrom_dlpack = np.from_dlpack\n"
    name = fake_peer(tmp_path, monkeypatch, "fake_exit_peer", at_exit)
    results = check.check(name)
    assert [r.check for r in results[:-1]] == [t for t, _ in check.CHECKS]
    last = results[-1]
    assert (last.check, last.status) == ("child process", "FAIL") and "SIGABRT after the checks" in last.reason


CONSUMER_ROWS = [t for t, _ in check.CHECKS if t.startswith("consumer:")]


def test_a_consumer_that_refuses_cpu_memory_by_design_is_not_applicable(tmp_path, monkeypatch):
    # Like cupy.from_dlpack: TypeError("CPU arrays cannot be directly imported ...") before taking a capsule.
    gpu_only = """
def from_dlpack(x, **kw):
    if int(x.__dlpack_device__()[0]) == 1:
        raise TypeError("CPU arrays cannot be directly imported to fake_gpu_peer")
    return np.from_dlpack(x, **kw)
"""
    name = fake_peer(tmp_path, monkeypatch, "fake_gpu_peer", gpu_only)
    rows = {r.check: r for r in check.check(name)}
    for t in CONSUMER_ROWS:
        assert rows[t].status == "N/A" and "CPU arrays cannot be directly imported" in rows[t].reason, rows[t]
    # Not a blanket pass: its round trip hands it CPU arrays and really fails.
    assert rows["round trip: every dtype through godlpack, zero-copy"].status == "FAIL"


def test_a_peer_that_declares_device_memory_only_gets_consumer_rows_not_applicable(tmp_path, monkeypatch):
    declared = """
from godlpack.conformance import Peer

def from_dlpack(x, **kw):
    return np.from_dlpack(x, **kw)

class DeviceOnlyPeer(Peer):
    name = "fake_cuda_peer"
    consumer_devices = (2,)  # kDLCUDA
"""
    name = fake_peer(tmp_path, monkeypatch, "fake_cuda_peer", declared)
    mod = importlib.import_module(name)
    monkeypatch.setitem(check.PEERS, name, mod.DeviceOnlyPeer)
    rows = {r.check: r for r in check.check(name)}
    for t in CONSUMER_ROWS:
        assert rows[t].status == "N/A" and "CUDA" in rows[t].reason, rows[t]
    assert [r for r in rows.values() if r.status == "FAIL"] == []


def test_a_producer_whose_reversed_view_has_wrong_strides_fails():
    # CuPy 14.2 exports a[::-1] (float64) with strides [2305843009213693951]: -8 bytes divided as unsigned.
    fn = dict(check.CHECKS)["producer: negative strides of a reversed view (a[::-1])"]

    class Arr:
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, **kw):
            return self.a.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

        def __getitem__(self, key):
            return check.Probe(strides=(2305843009213693951,), values=(3.0, 2.0, 1.0, 0.0))

    class Fake:
        float64 = "float64"

        @staticmethod
        def asarray(values, dtype=None):
            import numpy as np

            return Arr(np.asarray(values, dtype=dtype))

    with pytest.raises(check.Fail, match=r"strides \(2305843009213693951,\).*\(-1,\)"):
        fn(check.Peer(Fake))


def update() -> None:
    """Record the installed peers' findings (run after checking them by hand)."""
    out = load_findings() if os.path.exists(FINDINGS) else {}
    for peer in PEERS:
        try:
            version = peer_version(peer)
        except ImportError:
            continue
        out[peer] = {"version": version, "rows": {r.check: [r.status, r.reason] for r in check.check(peer)}}
    with open(FINDINGS, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__" and sys.argv[1:] == ["--update"]:
    update()
