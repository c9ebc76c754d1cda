"""tools/godlpack_build.py keys every cgo package's build by the content of
godlpack's C headers when its sources are a local tree: the go command keys a
package by the files in its own folder only, so an edit of a header another
package includes (internal/cpython/base/ftlock.h, included from exchange/)
would otherwise leave that package's old build in use."""
import os
import sys

from gomod import ROOT

sys.path.insert(0, os.path.join(ROOT, "tools"))
import godlpack_build  # noqa: E402


def test_the_key_follows_every_header_of_a_local_tree(tmp_path):
    (tmp_path / "go.mod").write_text("module github.com/godlpack/godlpack\n\ngo 1.26\n")
    deep = tmp_path / "internal" / "cpython" / "base"
    deep.mkdir(parents=True)
    (deep / "ftlock.h").write_text("#define X 1\n")
    (tmp_path / "a.go").write_text("package godlpack\n")
    go, env = godlpack_build._go()
    k1 = godlpack_build._headers_key(go, env, str(tmp_path))
    assert k1.startswith("-DGDL_HEADERS_KEY=0x") and len(k1) == len("-DGDL_HEADERS_KEY=0x") + 16
    assert godlpack_build._headers_key(go, env, str(tmp_path)) == k1  # stable
    (deep / "ftlock.h").write_text("#define X 2\n")
    k2 = godlpack_build._headers_key(go, env, str(tmp_path))
    assert k2 != k1
    (deep / "new.h").write_text("")
    assert godlpack_build._headers_key(go, env, str(tmp_path)) not in (k1, k2)


def test_a_project_without_a_local_godlpack_gets_no_key(tmp_path):
    """No godlpack module to hash (a module-cache godlpack is skipped the same way: it never changes)."""
    go, env = godlpack_build._go()
    (tmp_path / "go.mod").write_text("module example.com/p\n\ngo 1.26\n")
    assert godlpack_build._headers_key(go, env, str(tmp_path)) == ""


def test_the_headers_of_this_tree_are_in_the_key():
    go, env = godlpack_build._go()
    key = godlpack_build._headers_key(go, env, ROOT)
    assert key.startswith("-DGDL_HEADERS_KEY=0x"), key
