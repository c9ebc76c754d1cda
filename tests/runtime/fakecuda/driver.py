"""Builds and reads the stand-in CUDA driver (tests/runtime/fakecuda/fakecuda.c).

``build(folder)`` compiles it with the system C compiler; godlpack loads it
when ``GODLPACK_LIBCUDA`` names the result. ``FakeCuda(path)`` opens the same
file with ctypes (the dynamic loader hands back the instance godlpack loaded)
and reads its call log, counters and state.
"""
from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "fakecuda.c")


def build(folder: str) -> str:
    """Compiles fakecuda.c into folder; returns the library's path."""
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    assert cc, "no C compiler found"
    out = os.path.join(folder, "libfakecuda.so")
    r = subprocess.run([cc, "-shared", "-fPIC", "-O1", "-g", "-Wall", "-Wextra", "-Werror", "-pthread", "-o", out,
                        SOURCE], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"building the stand-in CUDA driver failed:\n{r.stderr}"
    return out


_LINE = re.compile(r"(\w+)=(\S+)")


class Call:
    """One logged driver call: its name and its key=value fields."""

    def __init__(self, line: str) -> None:
        self.line = line
        self.name = line.split(" ", 1)[0]
        self.args = dict(_LINE.findall(line))

    def __getitem__(self, key: str) -> str:
        return self.args[key]

    def __repr__(self) -> str:
        return f"Call({self.line!r})"


class FakeCuda:
    """The stand-in driver loaded in this process."""

    def __init__(self, path: str | None = None) -> None:
        path = path or os.environ["GODLPACK_LIBCUDA"]
        lib = ctypes.CDLL(path)
        lib.fakecuda_log.restype = ctypes.c_char_p
        lib.fakecuda_count.restype = ctypes.c_long
        lib.fakecuda_count.argtypes = [ctypes.c_char_p]
        lib.fakecuda_fail.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
        lib.fakecuda_violations.restype = ctypes.c_long
        lib.fakecuda_live_allocs.restype = ctypes.c_long
        lib.fakecuda_register.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        lib.fakecuda_unregister.argtypes = [ctypes.c_void_p]
        lib.fakecuda_stream.restype = ctypes.c_ssize_t
        lib.fakecuda_stream.argtypes = [ctypes.c_int]
        for f in (lib.fakecuda_write_on, lib.fakecuda_read_on, lib.fakecuda_copy_on):
            f.argtypes = [ctypes.c_ssize_t, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
        lib.fakecuda_wait_stream.argtypes = [ctypes.c_ssize_t, ctypes.c_ssize_t]
        lib.fakecuda_pending.restype = ctypes.c_long
        self.lib = lib

    def log(self) -> str:
        return self.lib.fakecuda_log().decode()

    def calls(self, name: str | None = None) -> list[Call]:
        """The logged calls since the last reset (only those named name)."""
        out = [Call(line) for line in self.log().splitlines()]
        return [c for c in out if name is None or c.name == name]

    def names(self) -> list[str]:
        return [c.name for c in self.calls()]

    def reset(self) -> None:
        self.lib.fakecuda_reset()

    def count(self, name: str) -> int:
        return self.lib.fakecuda_count(name.encode())

    def fail(self, name: str, result: int = 999, skip: int = 0) -> None:
        """Makes the next call of name (after skip others) return result."""
        self.lib.fakecuda_fail(name.encode(), skip, result)

    def violations(self) -> int:
        return self.lib.fakecuda_violations()

    def retained(self, dev: int = 0) -> int:
        return self.lib.fakecuda_retained(dev)

    def live_allocs(self) -> int:
        return self.lib.fakecuda_live_allocs()

    def live_events(self) -> int:
        return self.lib.fakecuda_live_events()

    def depth(self) -> int:
        return self.lib.fakecuda_depth()

    def register(self, array) -> None:
        """Declares a NumPy array's buffer to be device memory."""
        self.lib.fakecuda_register(array.ctypes.data, array.nbytes)

    def unregister(self, array) -> None:
        self.lib.fakecuda_unregister(array.ctypes.data)

    def stream(self, non_blocking: bool = False) -> int:
        """A new stream's handle (as another library would make it)."""
        return self.lib.fakecuda_stream(int(non_blocking))

    def write_on(self, stream: int, dst: int, data: bytes) -> None:
        """Queues a kernel on stream that writes data at device address dst:
        it lands when the stream runs that far."""
        buf = ctypes.create_string_buffer(data, len(data))
        assert self.lib.fakecuda_write_on(stream, dst, buf, len(data)) == 0, self.log()

    def copy_on(self, stream: int, dst: int, src: int, n: int) -> None:
        """Queues a kernel on stream that copies n bytes from device address
        src to dst: it reads src when the stream runs that far."""
        assert self.lib.fakecuda_copy_on(stream, dst, src, n) == 0, self.log()

    def read_on(self, stream: int, src: int, n: int) -> bytes:
        """What a kernel on stream reads at device address src (n bytes):
        the stream runs up to it and no further."""
        buf = ctypes.create_string_buffer(n)
        assert self.lib.fakecuda_read_on(stream, buf, src, n) == 0, self.log()
        return buf.raw

    def wait_stream(self, waiter: int, waitee: int) -> None:
        """Orders waiter's later work after waitee's queued work (an event
        record on waitee and a wait on waiter, as another library does)."""
        assert self.lib.fakecuda_wait_stream(waiter, waitee) == 0, self.log()

    def pending(self) -> int:
        """Queued device work not yet done."""
        return self.lib.fakecuda_pending()

    def drain(self) -> None:
        """Runs all queued device work."""
        self.lib.fakecuda_drain()

    def balanced(self) -> None:
        """Asserts that nothing is left over: no violations, no context left
        current or retained, no live event or allocation."""
        assert self.violations() == 0, self.log()
        assert self.depth() == 0, self.log()
        assert [self.retained(d) for d in range(2)] == [0, 0], self.log()
        assert self.live_events() == 0, self.log()
        assert self.live_allocs() == 0, self.log()
