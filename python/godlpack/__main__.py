"""python -m godlpack: the godlpack command (cli.py), as the console script `godlpack` runs it."""
from __future__ import annotations

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
