"""``python -m godlpack check [--json] MODULE [MODULE...]``."""
from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from dataclasses import asdict
from typing import Iterable

from .checks import TIMEOUT, Result, check
from .peers import PEERS


def format_table(results: Iterable[Result]) -> str:
    rows = [("module", "check", "status", "reason")] + [(r.module, r.check, r.status, r.reason) for r in results]
    w = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = []
    for i, r in enumerate(rows):
        lines.append(f"{r[0]:<{w[0]}}  {r[1]:<{w[1]}}  {r[2]:<{w[2]}}  {r[3]}")
        if i == 0:
            lines.append("-" * (sum(w) + 6 + 20))
    return "\n".join(lines)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m godlpack check",
        description="Check DLPack conformance of array libraries: producer, consumer and C exchange table "
        "checks, one row each (PASS, FAIL or N/A with the reason), each library in a child process (a crash "
        "or a hang is a FAIL row). Exits 1 if any check fails.",
        epilog=f"Libraries with their own adapter: {', '.join(PEERS)}; any other module with from_dlpack "
        "and asarray is checked through the generic one.")
    p.add_argument("modules", nargs="+", metavar="MODULE", help="importable module name, e.g. numpy")
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    p.add_argument("--timeout", type=float, default=TIMEOUT, metavar="SECONDS",
                   help=f"seconds a check may take before it is a FAIL (default {TIMEOUT:g})")
    return p


def _findable(name: str) -> bool:
    """Whether the module exists (a submodule's parent is imported to know)."""
    try:
        return bool(name) and importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)  # --help exits 0, bad usage 2
    missing = [m for m in args.modules if not _findable(m)]
    if missing:
        print(f"godlpack check: no module named {', '.join(map(repr, missing))} (not installed, or a typo?)",
              file=sys.stderr)
        return 2
    if not args.timeout > 0:
        print("godlpack check: --timeout must be a positive number of seconds", file=sys.stderr)
        return 2
    results = check(*args.modules, timeout=args.timeout)
    if args.json:
        print(json.dumps([asdict(r) for r in results], indent=2))
    else:
        print(format_table(results))
        counts = {s: sum(r.status == s for r in results) for s in ("PASS", "FAIL", "N/A")}
        print(f"\nchecks: PASS {counts['PASS']}, FAIL {counts['FAIL']}, N/A {counts['N/A']}")
    return 1 if any(r.status == "FAIL" for r in results) else 0
