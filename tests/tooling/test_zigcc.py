"""tools/zigcc.py, the release-wheel targets of the build backend (make wheels
builds and runs the wheels themselves)."""
from __future__ import annotations

import importlib.util
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_spec = importlib.util.spec_from_file_location("zigcc", os.path.join(ROOT, "tools", "zigcc.py"))
zigcc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(zigcc)


@pytest.mark.parametrize("given, want", [
    ("aarch64", "aarch64-linux-gnu.2.17"),
    ("x86_64-linux-gnu", "x86_64-linux-gnu.2.17"),
    ("aarch64-linux-gnu.2.17", "aarch64-linux-gnu.2.17"),
    ("x86_64-linux-gnu.2.28", "x86_64-linux-gnu.2.28"),
])
def test_targets_are_zig_triples_with_a_glibc(given, want):
    assert zigcc.normalize(given) == want


@pytest.mark.parametrize("bad", ["arm64", "x86_64-windows-gnu", "aarch64-linux-musl", ""])
def test_other_targets_are_refused(bad):
    with pytest.raises(ValueError, match="unsupported target"):
        zigcc.normalize(bad)


def test_config_setting_wins_over_the_environment(monkeypatch):
    monkeypatch.setenv(zigcc.ENV_VAR, "x86_64")
    assert zigcc.requested({"target": "aarch64"}) == "aarch64-linux-gnu.2.17"
    assert zigcc.requested(None) == "x86_64-linux-gnu.2.17"
    monkeypatch.delenv(zigcc.ENV_VAR)
    assert zigcc.requested({}) is None


def test_suffix_platform_and_go_environment_follow_the_target():
    t = "aarch64-linux-gnu.2.17"
    assert zigcc.ext_suffix(t) == f".{sys.implementation.cache_tag}-aarch64-linux-gnu.so"
    assert zigcc.platform(t) == "linux-aarch64"
    try:
        env = zigcc.go_env(t, {"GOFLAGS": "-buildvcs=false", "CXX": "g++"})
    except RuntimeError:
        pytest.skip("ziglang is not installed")
    assert env["GOARCH"] == "arm64" and env["CGO_ENABLED"] == "1" and "CXX" not in env
    assert env["CC"].endswith("zig cc -target aarch64-linux-gnu.2.17")
    assert env["GOFLAGS"] == "-buildvcs=false -tags=godlpack_zigcc"


@pytest.mark.parametrize("target", ["x86_64", "aarch64"])
def test_this_pythons_pyconfig_holds_on_both_targets(target):
    pytest.importorskip("ziglang")
    assert zigcc.check_pyconfig(zigcc.normalize(target)) > 10


def test_a_pyconfig_that_does_not_hold_is_refused(tmp_path):
    pytest.importorskip("ziglang")
    (tmp_path / "pyconfig.h").write_text("#define SIZEOF_LONG 4\n#define SIZEOF_VOID_P 8\n")
    with pytest.raises(RuntimeError, match="SIZEOF_LONG"):
        zigcc.check_pyconfig("aarch64-linux-gnu.2.17", str(tmp_path))
