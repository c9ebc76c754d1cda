"""DLPack conformance checker: ``python -m godlpack check MODULE [MODULE...]`` or
``godlpack.check("numpy", ...)``.

For each library it runs producer checks (the library's arrays exporting
capsules), consumer checks (the library's ``from_dlpack`` importing counting
probes, whose deleters count their calls) and, where the library offers a DLPack
C exchange table, checks of that table both ways. It reports one row per check:
PASS, FAIL or N/A with the reason. Each library is checked in a child process:
a crash or a hang there is a FAIL row, not the end of the checker.

- ``probe``: the counting producer (C side: the ``godlpack._probe`` extension);
- ``peers``: one adapter per library (any module with ``from_dlpack`` and
  ``asarray`` gets the generic one; add a :class:`Peer` subclass to ``PEERS``
  for more control);
- ``checks``: the checks and the runner; ``isolate``: running them in child
  processes; ``cli``: the command line.
"""
from __future__ import annotations

from .checks import CHECKS, Fail, Result, Skip, check, run_checks
from .cli import format_table, main
from .peers import PEERS, Peer
from .probe import IS_COPIED, READ_ONLY, Probe, capsule_name

__all__ = ["CHECKS", "PEERS", "Peer", "Probe", "Result", "Skip", "Fail", "check", "run_checks", "format_table",
           "main", "capsule_name", "READ_ONLY", "IS_COPIED"]
