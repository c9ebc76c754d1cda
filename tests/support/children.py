"""A Python script run in a child interpreter, for checks of shutdown, fork
and hangs: a hang is a TimeoutExpired that kills the child and everything it
started (a forked grandchild too), never a hung suite or a leftover process."""
from __future__ import annotations

import os
import signal
import subprocess
import sys


def run_child(tmp_path, code: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """Runs code as tmp_path/child.py (this interpreter, the caller's
    environment: its test extension on the path) in a session of its own."""
    script = tmp_path / "child.py"
    script.write_text(code)
    p = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)

    def kill() -> None:  # the child and what it left behind (a forked grandchild); Windows has no groups
        try:
            os.killpg(p.pid, signal.SIGKILL) if hasattr(os, "killpg") else p.kill()
        except (ProcessLookupError, PermissionError):
            pass

    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill()
        p.communicate()
        raise
    finally:
        kill()
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)
