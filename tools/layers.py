"""`make lint` step: godlpack's C calls go one way.

Derives, from the sources, which file of the CPython runtime and the
extension API (the folders of docs/architecture.md's layers block, and every
folder below their parents) refers to a symbol defined in
which other file: C functions and data with external linkage, and Go
`//export` functions (defined by their Go package). It then fails on

  - a circle of files (file A reaches B and B reaches A, through any chain);
  - a reference from a package to a package above it, or to one beside it
    that docs/architecture.md does not let it use;
  - a Go import against the same order;
  - a hand-written prototype of a gdl symbol in a .c file (declarations live
    in the defining package's header).

The packages and what each may use are read from the `layers` block of
docs/architecture.md, so the rule is stated in one place.

usage: python tools/layers.py [--graph] [--root DIR [--no-go]]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULE = "github.com/godlpack/godlpack"

C_KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "else", "do", "case", "goto", "defined"}


def read_layers() -> dict[str, list[str]]:
    """{package dir: [package dirs it may use]} from docs/architecture.md."""
    doc = os.path.join(ROOT, "docs", "architecture.md")
    text = open(doc, encoding="utf-8").read()
    m = re.search(r"```layers\n(.*?)```", text, re.S)
    if m is None:
        sys.exit(f"{doc}: no ```layers block")
    layers: dict[str, list[str]] = {}
    for line in m.group(1).splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        pkg, _, uses = line.partition(":")
        layers[pkg.strip()] = uses.split()
    for pkg, uses in layers.items():
        for u in uses:
            if u not in layers:
                sys.exit(f"{doc}: {pkg} uses {u}, which the block does not list")
    return layers


def strip_c(src: str) -> str:
    """Source without comments, string and character literals, or preprocessor lines."""
    src = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), src, flags=re.S)
    src = re.sub(r"//[^\n]*", "", src)
    src = re.sub(r'"(\\.|[^"\\\n])*"', '""', src)
    src = re.sub(r"'(\\.|[^'\\\n])*'", "''", src)
    return re.sub(r"^[ \t]*#[^\n]*(\\\n[^\n]*)*", "", src, flags=re.M)


def top_level(src: str) -> str:
    """src with the bodies of braces at file scope blanked (initialisers too)."""
    out, depth = [], 0
    for ch in src:
        if ch == "{":
            depth += 1
            out.append("{" if depth == 1 else " ")
        elif ch == "}":
            depth -= 1
            out.append("}" if depth == 0 else " ")
        else:
            out.append(ch if depth == 0 or ch == "\n" else " ")
    return "".join(out)


def c_definitions(src: str) -> set[str]:
    """Names of functions and objects a C file defines with external linkage."""
    top = top_level(strip_c(src))
    names = set()
    # Declarations at file scope end in ';', definitions in '}': split on both.
    for stmt in re.split(r"[;}]", top):
        s = " ".join(stmt.split())
        if not s or re.match(r"(static|extern|typedef)\b", s) or " static " in f" {s} ":
            continue
        fn = re.search(r"(\w+)\s*\([^()]*(\([^()]*\)[^()]*)*\)\s*\{$", s)
        if fn:
            if fn.group(1) not in C_KEYWORDS:
                names.add(fn.group(1))
            continue
        if s.endswith("{") or "(" not in s.split("=", 1)[0]:
            var = re.search(r"(\w+)\s*(\[[^\]]*\])*\s*(=.*)?\{?$", s)
            if var and re.match(r"[A-Za-z_][\w\s\*]*\s[\*\s]*\w+", s.split("=", 1)[0]):
                names.add(var.group(1))
    return names


def c_prototypes(src: str) -> set[str]:
    """gdl names a C file declares itself (prototypes or extern data)."""
    top = top_level(strip_c(src))
    names = set()
    for stmt in re.split(r"[;}]", top):
        s = " ".join(stmt.split())
        if not s or "{" in s:  # a definition (or an initialiser) up to its brace
            continue
        m = re.search(r"\b(gdl\w*)\s*\([^;]*\)$", s) or re.match(r"extern\b.*\b(gdl\w*)\s*(\[[^\]]*\])?$", s)
        if m and not s.startswith("static") and not s.startswith("typedef"):
            names.add(m.group(1))
    return names


def go_exports(src: str) -> set[str]:
    return set(re.findall(r"^//export (\w+)", src, re.M))


def scanned_roots(layers: dict[str, list[str]]) -> list[str]:
    """The block's folders and their parents (internal/cpython for
    internal/cpython/base): a new folder beside a layer is found and refused."""
    roots = set(layers)
    roots |= {os.path.dirname(d) for d in layers if os.path.dirname(d)}
    return sorted(roots)


def tracked_files(layers: dict[str, list[str]]) -> list[str]:
    roots = scanned_roots(layers)
    try:
        out = subprocess.run(["git", "ls-files", *roots], cwd=ROOT, capture_output=True, text=True, check=True)
        files = out.stdout.split()
    except (OSError, subprocess.CalledProcessError):
        files = [os.path.relpath(os.path.join(d, f), ROOT) for r in roots for d, _, fs in os.walk(os.path.join(ROOT, r))
                 for f in fs]
    return sorted(set(f for f in files if f.endswith((".c", ".go")) and not f.endswith("_test.go")
                      and os.path.exists(os.path.join(ROOT, f))))


def package_of(path: str, layers: dict[str, list[str]]) -> str:
    d = os.path.dirname(path)
    if d not in layers:
        sys.exit(f"{path}: its directory {d} is not in docs/architecture.md's layers block")
    return d


OSES = ("linux", "darwin", "windows")


def build_oses(path: str, text: str) -> frozenset[str]:
    """The OSes a C or Go file is built for: its name's _GOOS suffix, else
    its leading //go:build line (other tags count as either value), else all.
    Per-OS files may each define the same name."""
    stem = os.path.splitext(os.path.basename(path))[0]
    for goos in OSES:
        if stem.endswith("_" + goos):
            return frozenset([goos])
    m = re.match(r"\s*//go:build (.+)", text)
    if not m:
        return frozenset(OSES)
    expr = m.group(1).replace("&&", " and ").replace("||", " or ").replace("!", " not ")
    word = re.compile(r"\b(?!and\b|or\b|not\b)[A-Za-z_]\w*\b")
    others = sorted(set(word.findall(expr)) - set(OSES))
    found = set()
    for goos in OSES:
        for bits in range(1 << len(others)):  # some value of the other tags builds it
            names = {w: (w == goos) for w in OSES} | {w: bool(bits >> i & 1) for i, w in enumerate(others)}
            if eval(word.sub(lambda w: str(names[w.group(0)]), expr), {"__builtins__": {}}):  # noqa: S307
                found.add(goos)  # (only True/False/and/or/not/parentheses remain)
    return frozenset(found)


def graph(layers: dict[str, list[str]]):
    files = tracked_files(layers)
    texts = {f: open(os.path.join(ROOT, f), encoding="utf-8").read() for f in files}
    definer: dict[str, str] = {}
    problems = []
    for f, t in texts.items():
        names = c_definitions(t) if f.endswith(".c") else go_exports(t)
        for n in names:
            if n in definer and definer[n] != f and build_oses(definer[n], texts[definer[n]]) & build_oses(f, t):
                problems.append(f"{n} is defined in both {definer[n]} and {f}")
            definer[n] = f
    edges: dict[str, dict[str, set[str]]] = {f: {} for f in files}
    ident = re.compile(r"\b[A-Za-z_]\w*\b")
    for f, t in texts.items():
        if not f.endswith(".c"):
            # Go reaches only its own package's C (cgo's rule); the Go
            # imports are checked against the layers separately.
            continue
        refs = set(ident.findall(strip_c(t)))
        for n in sorted(c_prototypes(t)):
            problems.append(f"{f} declares {n} itself; include the header of the package that defines it")
        for n in refs:
            g = definer.get(n)
            if g is not None and g != f:
                edges[f].setdefault(g, set()).add(n)
    return files, edges, problems


def circles(files: list[str], edges) -> list[list[str]]:
    """Strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in files:
        if v not in index:
            visit(v)
    return out


def go_import_problems(layers: dict[str, list[str]]) -> list[str]:
    try:
        out = subprocess.run(["go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}",
                              *("./" + d for d in layers)],
                             cwd=ROOT, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        return [f"go list failed: {e}"]
    problems = []
    prefix = MODULE + "/"
    for line in out.splitlines():
        pkg, *imports = line.split()
        d = pkg[len(prefix):] if pkg.startswith(prefix) else pkg
        if d not in layers:
            continue
        for imp in imports:
            if not imp.startswith(prefix):
                continue
            u = imp[len(prefix):]
            if u in layers and u not in layers[d]:
                problems.append(f"Go: {d} imports {u}, which docs/architecture.md does not let it use")
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graph", action="store_true", help="print the file graph as JSON")
    ap.add_argument("--root", help="the tree to check (default: this one)")
    ap.add_argument("--no-go", action="store_true", help="skip the Go import check (a tree without go.mod)")
    args = ap.parse_args()
    global ROOT
    ROOT = os.path.abspath(args.root or ROOT)
    layers = read_layers()
    files, edges, problems = graph(layers)
    if args.graph:
        print(json.dumps({f: {g: sorted(s) for g, s in e.items()} for f, e in edges.items()}, indent=1))
    for comp in circles(files, edges):
        problems.append("call circle: " + " -> ".join(comp))
    for f, e in edges.items():
        pf = package_of(f, layers)
        for g, syms in e.items():
            pg = package_of(g, layers)
            if pg != pf and pg not in layers[pf]:
                problems.append(f"{f} -> {g} ({', '.join(sorted(syms))}): {pf} may not use {pg}")
    if not args.no_go:
        problems += go_import_problems(layers)
    for p in problems:
        print("layers:", p)
    n = sum(len(e) for e in edges.values())
    print(f"layers: {len(files)} files, {n} file-to-file references, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
