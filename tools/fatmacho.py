"""Universal (fat) Mach-O files: macOS universal2 extensions made here from
their arm64 and x86_64 builds, and the slices read back for the checks
(tools/cross.py, tools/crosswheel.py).

The layout is <mach-o/fat.h>'s, every field big-endian: a fat_header
(magic FAT_MAGIC 0xcafebabe, nfat_arch) then one fat_arch per slice
(cputype, cpusubtype, offset, size, align as a power of two), then each
slice, unchanged, at an offset that is a multiple of 2**align. Each slice
keeps its own code signature: a slice's signature covers the slice only, so
joining signed slices leaves them signed.

    python tools/fatmacho.py join OUT THIN...
    python tools/fatmacho.py list FAT
"""
from __future__ import annotations

import struct
import sys

FAT_MAGIC = 0xCAFEBABE
MH_MAGIC_64 = 0xFEEDFACF  # a thin 64-bit Mach-O, as its own (little-endian) bytes read
CPU_TYPES = {0x01000007: "x86_64", 0x0100000C: "arm64"}  # CPU_TYPE_X86_64, CPU_TYPE_ARM64
# 16 KiB: arm64 macOS's page, a multiple of x86_64's 4 KiB (lipo aligns arm64
# slices so); one alignment for both keeps each slice mappable as it is.
ALIGN = 14


def thin_arch(data: bytes) -> tuple[int, int]:
    """(cputype, cpusubtype) of a thin 64-bit Mach-O; ValueError otherwise."""
    if len(data) < 32 or struct.unpack_from("<I", data)[0] != MH_MAGIC_64:
        raise ValueError("not a thin 64-bit Mach-O file")
    cputype, cpusubtype = struct.unpack_from("<iI", data, 4)
    return cputype & 0xFFFFFFFF, cpusubtype


def join(thin: list[bytes]) -> bytes:
    """A fat file holding the thin Mach-O files thin, in that order."""
    archs = [thin_arch(s) for s in thin]
    names = [CPU_TYPES.get(a[0], hex(a[0])) for a in archs]
    if len(set(a[0] for a in archs)) != len(archs):
        raise ValueError(f"two slices of one architecture: {names}")
    page = 1 << ALIGN
    offset = -(-(8 + 20 * len(thin)) // page) * page  # the first slice: the header's page rounded up
    header = struct.pack(">II", FAT_MAGIC, len(thin))
    body = b""
    for (cputype, cpusubtype), s in zip(archs, thin):
        header += struct.pack(">IIIII", cputype, cpusubtype, offset, len(s), ALIGN)
        padded = s + b"\0" * (-len(s) % page)  # the next slice starts on a page too
        body += padded
        offset += len(padded)
    return header.ljust(-(-len(header) // page) * page, b"\0") + body


def slices(data: bytes) -> dict[str, bytes]:
    """{architecture name: thin Mach-O} of a fat file; ValueError when the
    file is not one or a slice lies outside it, is misaligned or is not the
    architecture its entry names."""
    if len(data) < 8 or struct.unpack_from(">I", data)[0] != FAT_MAGIC:
        raise ValueError("not a fat Mach-O file (no FAT_MAGIC)")
    (n,) = struct.unpack_from(">I", data, 4)
    if not 0 < n <= 16 or 8 + 20 * n > len(data):
        raise ValueError(f"a fat header of {n} slices does not fit the file")
    out = {}
    for i in range(n):
        cputype, cpusubtype, offset, size, align = struct.unpack_from(">IIIII", data, 8 + 20 * i)
        name = CPU_TYPES.get(cputype, hex(cputype))
        if offset % (1 << align) or offset + size > len(data) or offset < 8 + 20 * n:
            raise ValueError(f"slice {name}: offset {offset}, size {size}, align 2**{align} do not fit the file")
        thin = data[offset:offset + size]
        if thin_arch(thin) != (cputype, cpusubtype):
            raise ValueError(f"slice {name}: its own header names another architecture")
        if name in out:
            raise ValueError(f"two slices of {name}")
        out[name] = thin
    return out


def main(argv: list[str]) -> int:
    if len(argv) >= 3 and argv[0] == "join":
        thin = [open(p, "rb").read() for p in argv[2:]]
        with open(argv[1], "wb") as f:
            f.write(join(thin))
        return 0
    if len(argv) == 2 and argv[0] == "list":
        for name, s in slices(open(argv[1], "rb").read()).items():
            print(f"{name} {len(s)} bytes")
        return 0
    print("usage: fatmacho.py join OUT THIN... | list FAT", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
