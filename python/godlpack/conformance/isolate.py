"""Running one library's checks in a child process, so that a library which
aborts, crashes or hangs (PyTorch 2.11 aborts on negative strides) gives a FAIL
row and the checker goes on: the child reports each check as it starts and ends
on a pipe; if it dies or times out during a check, that check is a FAIL naming
the signal (or the timeout), and a fresh child runs the checks after it."""
from __future__ import annotations

import importlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from typing import Any

from .checks import CHECKS, Result, load, run_checks, run_one
from .peers import PEERS, Peer

_CHILD = "import sys; from godlpack.conformance.isolate import child_main; child_main(sys.argv[1:])"


def child_main(argv: list[str]) -> None:
    """In the child: name, "module:qualname" of the Peer class, first check index, pipe fd."""
    name, ref, start, fd = argv
    out = os.fdopen(int(fd), "w")

    def send(**msg: Any) -> None:
        out.write(json.dumps(msg) + "\n")
        out.flush()

    mod, _, qual = ref.partition(":")
    cls: Any = importlib.import_module(mod)
    for part in qual.split("."):
        cls = getattr(cls, part)
    send(start=-1, title="import")
    peer = load(name, cls)
    if isinstance(peer, Result):
        send(row=asdict(peer))
        send(done=True)
        return
    send(row=None)
    for i in range(int(start), len(CHECKS)):
        title, fn = CHECKS[i]
        send(start=i, title=title)
        send(row=asdict(run_one(name, title, fn, peer)))
    send(done=True)


def _death(rc: int) -> str:
    if rc < 0:
        try:
            return f"died with {signal.Signals(-rc).name}"
        except ValueError:
            return f"died with signal {-rc}"
    return f"exited with status {rc}"


def _last_words(log: Any) -> str:
    """The line of the child's output that says most about its death."""
    log.seek(0)
    lines = [ln.strip() for ln in log.read().decode(errors="replace").splitlines() if ln.strip()]
    said = [ln for ln in lines if ln.startswith(("what():", "terminate called", "Fatal Python error"))]
    text = (said or lines or [""])[-1][:200]
    return f"; its last output: {text}" if text else ""


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # its own session: children it started go too
    except ProcessLookupError:
        pass
    proc.wait()


def _child(name: str, ref: str, start: int, timeout: float) -> tuple[list[Result], tuple[int, str] | None, bool,
                                                                       str | None, str]:
    """Runs checks start.. in one child: (rows, the (index, title) running when
    it died, whether it finished, how it died or None, its last output)."""
    r, w = os.pipe()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(d for d in sys.path if d))  # the same godlpack and peers
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen([sys.executable, "-c", _CHILD, name, ref, str(start), str(w)], env=env,
                                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, pass_fds=(w,),
                                start_new_session=True)
        os.close(w)
        rows: list[Result] = []
        running: tuple[int, str] | None = None
        done, death, buf = False, None, b""
        deadline = time.monotonic() + timeout
        with os.fdopen(r, "rb", buffering=0) as pipe:
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([pipe], [], [], left)[0]:
                    _kill(proc)
                    death = f"timed out after {timeout:g} s (killed)"
                    break
                chunk = pipe.read(65536)
                if not chunk:
                    break  # the child closed the pipe: it exited
                *lines, buf = (buf + chunk).split(b"\n")
                for line in lines:
                    msg = json.loads(line)
                    if "start" in msg:
                        running, deadline = (msg["start"], msg["title"]), time.monotonic() + timeout
                    elif "row" in msg:
                        if msg["row"] is not None:
                            rows.append(Result(**msg["row"]))
                        running = None
                    elif msg.get("done"):
                        done = True
        if death is None:
            try:
                rc = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                _kill(proc)
                death = f"timed out after {timeout:g} s at exit (killed)"
            else:
                death = _death(rc) if rc else None
        return rows, running, done, death, _last_words(log) if death else ""


def run_isolated(name: str, timeout: float) -> list[Result]:
    """All checks against one library, in child processes (see the module doc)."""
    cls = PEERS.get(name, Peer)
    if cls.__module__ == "__main__" or "<locals>" in cls.__qualname__:
        return run_checks(name)  # a child could not import this adapter: run here
    ref = f"{cls.__module__}:{cls.__qualname__}"
    out: list[Result] = []
    start = 0
    while start < len(CHECKS):
        rows, running, done, death, said = _child(name, ref, start, timeout)
        out += rows
        if death is None:
            return out
        if running is None:
            where = "after the checks" if done else "between checks"
            out.append(Result(name, "child process", "FAIL", f"the process {death} {where}{said}"))
            if done or not rows:
                return out
            start = [t for t, _ in CHECKS].index(rows[-1].check) + 1
            continue
        index, title = running
        doing = f"importing {name}" if index < 0 else "running this check"
        out.append(Result(name, title, "FAIL", f"the process {death} while {doing}{said}"))
        if index < 0:
            return out
        start = index + 1
    return out
