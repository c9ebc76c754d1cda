"""The test extensions under make asan / make ubsan (mk/sanitize.mk): built
with the sanitizer's flags (tests/support/gomod.py build_env), as godlpack's
own module is, so that their checks run instrumented."""
import os

import pytest
from gomod import build_env, built

SAN_VARS = ("GODLPACK_SAN_CFLAGS", "GODLPACK_SAN_LDFLAGS", "GODLPACK_SAN_GOFLAGS")


def test_the_sanitizers_flags_reach_the_build(monkeypatch):
    for var in SAN_VARS + ("CGO_CFLAGS", "CGO_LDFLAGS", "GOFLAGS"):
        monkeypatch.delenv(var, raising=False)
    plain = build_env()
    assert "CGO_CFLAGS" not in plain and "GOFLAGS" not in plain  # the build's defaults (-O2, -buildvcs=false)
    monkeypatch.setenv("GODLPACK_SAN_CFLAGS", "-O1 -fsanitize=address")
    monkeypatch.setenv("GODLPACK_SAN_LDFLAGS", "-fsanitize=address")
    monkeypatch.setenv("GODLPACK_SAN_GOFLAGS", "-asan")
    env = build_env()
    assert env["CGO_CFLAGS"] == "-O1 -fsanitize=address" and env["CGO_LDFLAGS"] == "-fsanitize=address"
    assert env["GOFLAGS"] == "-buildvcs=false -asan"
    assert build_env(GOFLAGS="-mod=mod")["GOFLAGS"] == "-mod=mod -asan"  # a doc example's own flags kept
    monkeypatch.setenv("GODLPACK_SAN_GOFLAGS", "")  # ubsan: no Go flag
    assert "GOFLAGS" not in build_env()


MARKS = {"asan": b"__asan_report_", "ubsan": b"__ubsan_handle_"}


@pytest.mark.skipif(os.environ.get("GODLPACK_SANITIZER") not in MARKS, reason="make asan / make ubsan only")
def test_a_test_extension_is_instrumented():
    """Under make asan/ubsan, a test extension calls the sanitizer's runtime."""
    with open(built("cbmod"), "rb") as f:
        assert MARKS[os.environ["GODLPACK_SANITIZER"]] in f.read()
