"""Tensors across process boundaries: multiprocessing (spawn, forkserver,
fork) and concurrent.futures.ProcessPoolExecutor, for godlpack's Tensors and
for those of a Go extension (examples/vecmath) running its kernels in the
workers. Each scenario runs in a child Python with a hard timeout; the
vecmath ones see vecmath alone on their path (one Go runtime per process:
they must never need godlpack)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from harness import child_env

TIMEOUT = 180


def run_script(tmp_path, body: str, env: dict[str, str]) -> str:
    """Runs body as a script (so spawn/forkserver children can import it);
    returns its stdout, failing with its stderr."""
    script = tmp_path / "scenario.py"
    script.write_text(textwrap.dedent(body))
    try:
        r = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=TIMEOUT,
                           cwd=str(tmp_path))
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"scenario timed out after {TIMEOUT} s\n{e.stdout}\n{e.stderr}")
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def vecmath_env(vecmath_path: str) -> dict[str, str]:
    """vecmath on the path, godlpack not: a child that imports it fails."""
    env = dict(os.environ, PYTHONPATH=vecmath_path)
    return env


def test_fork_refusal_names_the_module_the_user_imported(tmp_path, vecmath_path):
    out = run_script(tmp_path, """
        import multiprocessing as mp, sys
        import numpy as np, vecmath

        def child(q):
            try:
                vecmath.add(np.ones(2), np.ones(2))  # a Go call: refused after fork
                q.put("no error")
            except RuntimeError as e:
                q.put(str(e))

        if __name__ == "__main__":
            ctx = mp.get_context("fork")
            q = ctx.Queue()
            p = ctx.Process(target=child, args=(q,))
            p.start()
            print(q.get(timeout=60))
            p.join(60)
            assert "godlpack" not in sys.modules
    """, vecmath_env(vecmath_path))
    assert out.startswith("vecmath cannot call into Go"), out
    assert "godlpack" not in out, out
    assert "'spawn' or 'forkserver'" in out and "set_forkserver_preload([])" in out, out


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_vecmath_tensors_as_arguments_and_results_of_a_pool(tmp_path, vecmath_path, method):
    out = run_script(tmp_path, f"""
        import multiprocessing as mp, pickle, sys
        import numpy as np, vecmath

        def kernel(t):
            # a vecmath.Tensor in, a Go kernel in the worker, a vecmath.Tensor out
            assert type(t).__name__ == "Tensor" and type(t).__module__ == "vecmath", type(t)
            assert "godlpack" not in sys.modules
            return vecmath.add(t, t)

        if __name__ == "__main__":
            mp.set_forkserver_preload([])  # the server would import this script, and vecmath (3.14+)
            xs = [vecmath.add(np.arange(4.0) + i, np.zeros(4)) for i in range(4)]
            with mp.get_context({method!r}).Pool(2) as pool:
                rs = pool.map(kernel, xs, chunksize=1)
            for i, r in enumerate(rs):
                assert type(r) is vecmath.Tensor, type(r)
                assert np.asarray(r).tolist() == [2.0 * (k + i) for k in range(4)], r.tolist()
            assert "godlpack" not in sys.modules
            print("ok")
    """, vecmath_env(vecmath_path))
    assert out.strip() == "ok"


def test_python_314s_forkserver_preload_is_refused_clearly(tmp_path, vecmath_path):
    """From Python 3.14 the forkserver imports __main__ before it forks the
    workers, so a script that imports a Go extension at the top level gives
    workers forked from a Go runtime: their Go calls are refused, naming the
    remedy (before 3.14 they import it themselves and work)."""
    out = run_script(tmp_path, """
        import multiprocessing as mp, sys
        import numpy as np, vecmath

        def kernel(i):
            try:
                return str(vecmath.norm(np.full(4, float(i))))
            except RuntimeError as e:
                return str(e)

        if __name__ == "__main__":
            with mp.get_context("forkserver").Pool(1) as pool:
                print(pool.map(kernel, [1])[0])
    """, vecmath_env(vecmath_path))
    if sys.version_info >= (3, 14):
        assert out.startswith("vecmath cannot call into Go") and "set_forkserver_preload([])" in out, out
    else:
        assert out.strip() == "2.0", out


def test_vecmath_tensors_through_a_process_pool_executor(tmp_path, vecmath_path):
    out = run_script(tmp_path, """
        import multiprocessing as mp, sys
        from concurrent.futures import ProcessPoolExecutor
        import numpy as np, vecmath

        def kernel(t, a):
            x = np.array(t, dtype=np.float32)  # a float32 copy to scale in place
            vecmath.scale(x, a)
            return vecmath.add(np.asarray(t, dtype=np.float64), x.astype(np.float64)), vecmath.norm(t)

        if __name__ == "__main__":
            t = vecmath.add(np.arange(3.0), np.zeros(3))
            with ProcessPoolExecutor(2, mp_context=mp.get_context("spawn")) as ex:
                r, n = ex.submit(kernel, t, 2.0).result(timeout=120)
            assert type(r) is vecmath.Tensor
            assert r.tolist() == [0.0, 3.0, 6.0], r.tolist()
            assert abs(n - 5 ** 0.5) < 1e-12
            assert "godlpack" not in sys.modules
            print("ok")
    """, vecmath_env(vecmath_path))
    assert out.strip() == "ok"


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_godlpack_tensors_through_pools(tmp_path, method):
    out = run_script(tmp_path, f"""
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor
        import numpy as np, godlpack

        def work(t):
            assert type(t) is godlpack.Tensor
            return godlpack.from_dlpack(np.asarray(t) * 2), t.dtype, t.readonly

        def identity(t):
            return t

        if __name__ == "__main__":
            ts = [godlpack.arange(5, dtype="int32"), godlpack.zeros((2, 3), "bfloat16"),
                  godlpack.from_dlpack(np.arange(6.0).reshape(2, 3)[:, ::2])]
            ctx = mp.get_context({method!r})
            with ctx.Pool(2) as pool:
                r = pool.apply_async(work, (ts[0],)).get(timeout=120)
            assert r[0].tolist() == [0, 2, 4, 6, 8] and r[1] == "int32" and r[2] is False
            with ProcessPoolExecutor(2, mp_context=ctx) as ex:
                back = list(ex.map(identity, ts, timeout=120))
            assert back[1].dtype == "bfloat16" and back[1].shape == (2, 3)
            assert back[2].tolist() == [[0.0, 2.0], [3.0, 5.0]]
            print("ok")
    """, child_env())
    assert out.strip() == "ok"


def test_vecmath_tensors_unpickle_with_vecmath_alone(tmp_path, vecmath_path):
    """Pickled in one process, unpickled in a fresh one: the reconstructor is
    vecmath._rebuild_tensor, so loading imports vecmath, never godlpack."""
    run_script(tmp_path, """
        import copy, pickle, sys
        import numpy as np, vecmath
        t = vecmath.add(np.arange(6.0), np.ones(6))
        bufs = []
        blobs = {"p5": pickle.dumps(t, protocol=5), "p2": pickle.dumps(t, protocol=2),
                 "oob": pickle.dumps(t, protocol=5, buffer_callback=bufs.append)}
        assert len(bufs) == 1 and b"vecmath" in blobs["p2"] and b"godlpack" not in blobs["p2"]
        blobs["buf"] = bytes(bufs[0].raw())
        c, d = copy.copy(t), copy.deepcopy(t)
        assert type(c) is vecmath.Tensor and c.tolist() == d.tolist() == t.tolist() and c.data_ptr != t.data_ptr
        with open("blobs.pickle", "wb") as f:
            pickle.dump(blobs, f)
        assert "godlpack" not in sys.modules
    """, vecmath_env(vecmath_path))
    out = run_script(tmp_path, """
        import pickle, sys
        with open("blobs.pickle", "rb") as f:
            blobs = pickle.load(f)
        ts = [pickle.loads(blobs["p5"]), pickle.loads(blobs["p2"]),
              pickle.loads(blobs["oob"], buffers=[bytearray(blobs["buf"])])]
        assert "vecmath" in sys.modules and "godlpack" not in sys.modules
        import vecmath
        for t in ts:
            assert type(t) is vecmath.Tensor and t.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], t
        print(vecmath.norm(ts[2]) ** 2)
    """, vecmath_env(vecmath_path))
    assert float(out) == 91.0
