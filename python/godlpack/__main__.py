"""python -m godlpack demo | check MODULE... | new NAME"""
from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m godlpack demo | check [--json] MODULE [MODULE...] | new NAME [FOLDER]")
        return 0 if argv else 2
    cmd, rest = argv[0], argv[1:]
    if cmd == "demo":
        from .demo import run

        return run(rest)
    if cmd == "check":
        from .conformance.cli import main as check_main

        return check_main(rest)
    if cmd == "new":
        from .scaffold import main as new_main

        return new_main(rest)
    print(f"godlpack: unknown command {cmd!r}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
