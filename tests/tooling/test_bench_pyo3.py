"""The peers of `make bench-ext` define the same functions: the PyO3 crate
(bench/ext/pyo3bench/src/lib.rs) and the nanobind module (bench/ext/nbsum)
against the Go bench extension (bench/ext/gosum/main.go), names, classes,
methods and (PyO3 against Go) parameter counts, read from the sources, so a
row cannot time one function on one side and another on the other; and the
bench's PyO3 summary and its skip without cargo or maturin. No cargo is
needed: the sources are parsed, not built.

gosum also wraps some functions twice, as variants of the same Go function
(NAME_typed through pyext's typed constructors, sum_conv with Convert, a
method's NAME_r through reflection): a variant has no peer of its own; its
row is compared with NAME's."""
from __future__ import annotations

import importlib.util
import os
import re
import shutil

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXT = os.path.join(ROOT, "bench", "ext")
VARIANT = re.compile(r"^(?P<base>\w+?)_(typed|conv|r)$")


def read(*path: str) -> str:
    with open(os.path.join(EXT, *path), encoding="utf-8") as f:
        return f.read()


def split_top(params: str) -> list[str]:
    """params split at the commas outside (), [] and <> (Rust generics hold commas)."""
    out, depth, cur = [], 0, ""
    for ch in params:
        if ch in "([<":
            depth += 1
        elif ch in ")]>" and not (ch == ">" and cur.endswith("-")):
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


# ---- Go: gosum's Def/Method calls and the Go functions they wrap ------------

GO_DEF = re.compile(r'\b(Def|Method)\("(\w+)",\s*(?:pyext\.\w+\()?\(?(\*\w+\)\.)?(\w+)')


def go_module(src: str) -> dict:
    """{"functions": {name: arity}, "classes": {class: {method: arity}}} of gosum: a
    wrapped Go function's arity from its declaration (a method's without the receiver)."""
    def arity(name: str, receiver: str | None) -> int:
        recv = r"\(\w+ \*?" + re.escape(receiver) + r"\)\s*" if receiver else ""
        m = re.search(r"^func " + recv + re.escape(name) + r"\(([^)]*)\)", src, re.M)
        assert m, f"gosum: no declaration of {receiver or ''}{name}"
        return len(split_top(m.group(1)))

    funcs, classes, current = {}, {}, None
    for line in src.splitlines():
        c = re.search(r'NewClass\[(\w+)\]\("(\w+)"', line)
        if c:
            current = (c.group(1), c.group(2))
            classes[current[1]] = {}
        for kind, name, recv, target in GO_DEF.findall(line):
            recv = recv.removeprefix("*").removesuffix(").") if recv else None
            if kind == "Def":
                funcs[name] = arity(target, None)
            else:
                assert current and recv == current[0], f"gosum: method {name} outside its class"
                classes[current[1]][name] = arity(target, recv)
    return {"functions": funcs, "classes": classes}


def without_variants(names: dict) -> dict:
    """names less the variants of another name in the same set (NAME_typed of NAME...)."""
    return {n: v for n, v in names.items() if not ((m := VARIANT.match(n)) and m["base"] in names)}


# ---- Rust: #[pyfunction]s, #[pyclass]es and their #[pymethods] ------------

RUST_FN = re.compile(r"((?:#\[[^\]]*\]\s*|///[^\n]*\n\s*)*)fn (\w+)(?:<[^>]*>)?\((.*?)\)\s*(?:->[^{]*)?\{", re.S)


def rust_arity(params: str) -> int:
    """Python-visible parameters: less the GIL token (py: Python) and self."""
    return len([p for p in split_top(params) if not re.match(r"(_?py\s*:\s*Python\b|&(mut )?self$)", p)])


def rust_module(src: str) -> dict:
    funcs = {m[2]: rust_arity(m[3]) for m in RUST_FN.finditer(src) if "#[pyfunction]" in m[1]}
    classes = {}
    for cls in re.findall(r"#\[pyclass[^\]]*\]\s*(?:pub )?struct (\w+)", src):
        body = re.search(r"#\[pymethods\]\s*impl " + cls + r"\s*\{(.*?)\n    \}\n", src, re.S)
        assert body, f"pyo3bench: no #[pymethods] impl {cls}"
        classes[cls] = {m[2]: rust_arity(m[3]) for m in RUST_FN.finditer(body.group(1)) if "#[new]" not in m[1]}
    return {"functions": funcs, "classes": classes}


# ---- C++: nanobind's m.def and nb::class_ ---------------------------------

def nanobind_module(src: str) -> dict:
    funcs = set(re.findall(r'\bm\.def\("(\w+)"', src))
    classes = {}
    for cls, chain in re.findall(r'nb::class_<\w+>\(m, "(\w+)"\)((?:\s*\.def\([^;]*)*);', src):
        classes[cls] = set(re.findall(r'\.def\("(\w+)"', chain))
    return {"functions": funcs, "classes": classes}


@pytest.fixture(scope="module")
def go():
    return go_module(read("gosum", "main.go"))


def test_parsers_read_what_the_sources_hold(go):
    """The parsers see known lines (a parser finding nothing would make the comparison vacuous)."""
    assert go["functions"]["add6_typed"] == 6 and go["functions"]["noop"] == 0
    assert go["classes"]["Acc"] == {"sum": 1, "fid": 1, "sum_r": 1}
    assert "add6_typed" not in without_variants(go["functions"]) and "add6" in without_variants(go["functions"])
    rust = rust_module(read("pyo3bench", "src", "lib.rs"))
    assert rust["functions"]["add6"] == 6 and rust["functions"]["sum_nogil"] == 1
    assert rust_module("#[pyfunction]\nfn f<'py>(py: Python<'py>, x: PyReadonlyArray1<'py, f64>, b: f64) -> f64 {")[
        "functions"] == {"f": 2}
    assert nanobind_module('m.def("a", f);\nnb::class_<C>(m, "C")\n.def(nb::init<>())\n.def("g", &C::g);') == {
        "functions": {"a"}, "classes": {"C": {"g"}}}


def test_pyo3_defines_gosums_functions_with_the_same_parameters(go):
    rust = rust_module(read("pyo3bench", "src", "lib.rs"))
    assert rust["functions"] == without_variants(go["functions"])
    assert rust["classes"] == {c: without_variants(m) for c, m in go["classes"].items()}


def test_nanobind_defines_gosums_functions(go):
    nb = nanobind_module(read("nbsum", "nbsum.cpp"))
    assert nb["functions"] == set(without_variants(go["functions"]))
    assert nb["classes"] == {c: set(without_variants(m)) for c, m in go["classes"].items()}


def test_a_function_missing_on_one_side_is_seen(go):
    """Drift is caught: a Go function added without its PyO3 peer, and a PyO3 parameter dropped."""
    src = read("pyo3bench", "src", "lib.rs")
    rust = rust_module(src)
    grown = dict(go["functions"], crc32=1)
    assert rust["functions"] != without_variants(grown)
    fewer = rust_module(src.replace("fn add6(a: f64, b: f64, c: f64, d: f64, e: f64, f: f64)",
                                    "fn add6(a: f64, b: f64, c: f64, d: f64, e: f64)"))
    assert fewer["functions"] != without_variants(go["functions"])


# ---- bench/ext_bench.py's PyO3 column ---------------------------------------

@pytest.fixture(scope="module")
def ext_bench():
    spec = importlib.util.spec_from_file_location("ext_bench", os.path.join(ROOT, "bench", "ext_bench.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def row(lib, fn, size, median):
    return {"lib": lib, "fn": fn, "size": size, "median": median}


def test_summary_holds_pyext_above_the_floor_against_pyo3(ext_bench):
    rows = [row("godlpack", "raw_go_noop", 0, 60.0),
            row("godlpack", "noop_typed", 0, 80.0), row("pyo3", "noop", 0, 40.0), row("nanobind", "noop", 0, 20.0),
            row("godlpack", "fid_typed", 0, 90.0), row("pyo3", "fid", 0, 10.0),
            row("godlpack", "sum_typed", 1000000, 9e5), row("pyo3", "sum", 1000000, 1e5)]
    text = ext_bench.summary_pyo3(rows)
    lines = {ln.split("  ")[0]: ln.split() for ln in text.splitlines()}
    noop = lines["noop(), Proc0"]
    assert noop[-4:] == ["0.50", "1.0", "1.00", "yes"], text  # (80 - 60) / 40, (80 - 60) / 20
    assert lines["fid(1.0), Func1"][-4:] == ["3.00", "1.0", "-", "NO"], text  # no nanobind row: "-"
    assert lines["sum(x []float64), Func1"][-1] == "loop", text  # 1M elements: Go's loop against Rust's
    assert "1 of 2 PyO3 targets hold" in text
    assert "no PyO3 rows" in ext_bench.summary_pyo3([r for r in rows if r["lib"] != "pyo3"])


@pytest.fixture
def crate(ext_bench, tmp_path, monkeypatch):
    """The bench's crate sources copied to tmp_path/crate and its output folder tmp_path/out (empty)."""
    src = os.path.join(EXT, "pyo3bench")
    dst = tmp_path / "crate"
    shutil.copytree(src, dst, ignore=lambda d, names: ["target"] if d == src else [])
    (tmp_path / "out").mkdir()
    monkeypatch.setattr(ext_bench, "PYO3", str(dst))
    monkeypatch.setattr(ext_bench, "OUT", str(tmp_path / "out"))
    return tmp_path


def test_pyo3_build_is_skipped_with_a_sentence_without_cargo_or_maturin(ext_bench, crate, monkeypatch):
    """The column is skipped, not filled from an older build: a module older than its sources goes."""
    stale = crate / "out" / ("pyo3bench" + ext_bench.SUFFIX)
    stale.write_bytes(b"")
    os.utime(stale, (1, 1))
    which = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None if name == "cargo" else which(name, *a, **k))
    with pytest.raises(ext_bench.Unavailable, match="PyO3 column skipped: cargo is not on PATH"):
        ext_bench.build_pyo3bench()
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: "/bin/cargo" if name == "cargo" else which(name))
    find = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "maturin" else find(name, *a))
    with pytest.raises(ext_bench.Unavailable, match="maturin is not installed"):
        ext_bench.build_pyo3bench()
    assert not list((crate / "out").iterdir())


def test_pyo3_build_is_skipped_when_the_module_is_newer_than_its_sources(ext_bench, crate, monkeypatch):
    """Built once, reused: a module newer than every source is not rebuilt (no cargo is run)."""
    so = crate / "out" / ("pyo3bench" + ext_bench.SUFFIX)
    so.write_bytes(b"")
    newest = max(os.path.getmtime(f) for f in ext_bench._pyo3_sources())
    os.utime(so, (newest + 10, newest + 10))
    monkeypatch.setattr(ext_bench, "_run", lambda *a, **k: pytest.fail("rebuilt an up-to-date module"))
    ext_bench.build_pyo3bench()
    os.utime(so, (newest - 10, newest - 10))  # older than a source: cargo runs (here: the stub fails)
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: "/bin/cargo")
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: object())
    with pytest.raises(pytest.fail.Exception, match="rebuilt"):
        ext_bench.build_pyo3bench()
