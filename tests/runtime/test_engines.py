"""Distributed engines with Tensors of a Go extension (examples/vecmath):
Dask on a LocalCluster of two worker processes on 127.0.0.1, and Ray with two
CPUs on one local node. Ray replaces a loopback node address with the host's
own (services.resolve_ip_for_localhost), so its scenario runs in a network
namespace of its own whose only interface is loopback (`unshare --net`, where
the user may make one: root, as CI is): its node address is then 127.0.0.1.
Each scenario runs in a child Python of its own (vecmath
alone on its path: one Go runtime per process) in a new session, killed with
its workers when it outlives its hard limit; inside, every wait has a
timeout and the cluster is shut down in a finally."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import pytest

LIMIT = 240  # seconds for a whole scenario, cluster start-up included


def loopback_only() -> list[str]:
    """A command prefix that runs its command in a new network namespace with
    only loopback up, or [] where none can be made (not root)."""
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return []
    probe = subprocess.run(["unshare", "--net", "true"], capture_output=True, timeout=30)
    return ["unshare", "--net", "sh", "-c", 'ip link set lo up && exec "$@"', "sh"] if probe.returncode == 0 else []


def run_scenario(tmp_path, vecmath_path: str, body: str, prefix: list[str] | None = None) -> str:
    script = tmp_path / "scenario.py"
    script.write_text(textwrap.dedent(body))
    env = dict(os.environ, PYTHONPATH=vecmath_path, RAY_USAGE_STATS_ENABLED="0", RAY_DISABLE_IMPORT_WARNING="1")
    env.pop("RAY_ADDRESS", None)
    p = subprocess.Popen([*(prefix or []), sys.executable, str(script)], env=env, cwd=str(tmp_path),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    start = time.monotonic()
    try:
        out, err = p.communicate(timeout=LIMIT)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        pytest.fail(f"scenario outlived its {LIMIT} s limit (killed)\n{out}\n{err[-4000:]}")
    print(f"scenario took {time.monotonic() - start:.1f} s")
    assert p.returncode == 0, out + err[-6000:]
    return out


def test_dask_runs_a_go_kernel_over_chunks_and_moves_tensors_between_workers(tmp_path, vecmath_path):
    pytest.importorskip("distributed", reason="dask[distributed] is not installed (the `dev` extra has it)")
    out = run_scenario(tmp_path, vecmath_path, """
        import sys
        import numpy as np, dask, dask.array as da
        from distributed import Client, LocalCluster, wait
        import vecmath

        T = 60  # seconds, for every wait

        def go_double(block):
            t = vecmath.add(block, block)  # a Go kernel: a vecmath.Tensor of Go memory
            assert type(t) is vecmath.Tensor
            return t

        def norm_here(t):
            assert type(t) is vecmath.Tensor, type(t)
            return vecmath.norm(t)

        if __name__ == "__main__":
            cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                   dashboard_address=None, worker_dashboard_address=None)
            try:
                client = Client(cluster, timeout=T)
                client.wait_for_workers(2, timeout=T)
                x = da.arange(4000, chunks=500, dtype=np.float64)
                y = x.map_blocks(go_double, dtype=np.float64, meta=np.empty((0,), np.float64))
                y = client.persist(y)
                blocks = client.futures_of(y)
                wait(blocks, timeout=T)
                assert len(blocks) == 8
                where = client.who_has(blocks)
                workers = sorted(client.scheduler_info()["workers"])
                # every block goes to the worker that does not hold it
                moved = []
                for b in blocks:
                    (holder,) = where[b.key]
                    other = next(w for w in workers if w != holder)
                    moved.append(client.submit(norm_here, b, workers=[other], allow_other_workers=False, pure=False))
                norms = [m.result(timeout=T) for m in moved]
                want = [float(np.linalg.norm(2 * np.arange(i * 500, (i + 1) * 500, dtype=np.float64)))
                        for i in range(8)]
                assert np.allclose(norms, want), (norms, want)
                # a reduction over the Tensor blocks, and the blocks gathered to the client
                total = client.compute(y.sum()).result(timeout=T)
                assert total == 2 * sum(range(4000)), total
                wait(blocks, timeout=T)
                got = client.gather(blocks)
                assert all(type(t) is vecmath.Tensor for t in got)
                assert np.concatenate([np.asarray(t) for t in got]).tolist() == (2 * np.arange(4000.0)).tolist()
                # Broadcast (stride-0) blocks: refused by a strict kernel (norm), converted by
                # one whose author allows it (centroid: pyext.Convert).
                pts = da.broadcast_to(da.from_array(np.array([1.0, 2.0, 3.0])), (400, 3), chunks=(100, 3))
                c = pts.map_blocks(lambda b: np.asarray(vecmath.centroid(b))[None, :], dtype=np.float64,
                                   chunks=(1, 3))
                got_c = client.compute(c).result(timeout=T)
                assert got_c.shape == (4, 3) and np.allclose(got_c, [1.0, 2.0, 3.0]), got_c
                strict = pts.map_blocks(lambda b: np.full((1, 1), vecmath.norm(b)), dtype=np.float64, chunks=(1, 1))
                try:
                    client.compute(strict).result(timeout=T)
                except BufferError as e:
                    assert "norm() argument 'x'" in str(e), e
                else:
                    raise AssertionError("a stride-0 block reached a kernel without conversion")
                assert "godlpack" not in sys.modules
                client.close(timeout=T)
                print("ok", len(moved))
            finally:
                cluster.close(timeout=T)
    """)
    assert out.split() == ["ok", "8"], out


def test_ray_task_returns_a_tensor_and_put_get_round_trips_one(tmp_path, vecmath_path):
    pytest.importorskip("ray", reason="ray is not installed (the `dev` extra has it where Ray has wheels)")
    prefix = loopback_only()
    out = run_scenario(tmp_path, vecmath_path, """
        LOOPBACK = {loopback}
        import sys
        import numpy as np, ray
        import vecmath

        T = 60

        @ray.remote
        def make(n):
            import numpy as np, vecmath
            return vecmath.add(np.arange(n, dtype=np.float64), np.ones(n))

        @ray.remote
        def norm(t):
            import vecmath
            assert type(t) is vecmath.Tensor, type(t)
            return vecmath.norm(t)

        if __name__ == "__main__":
            ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False,
                     object_store_memory=100 * 1024 * 1024)
            try:
                nodes = ray.nodes()
                assert len(nodes) == 1, nodes
                if LOOPBACK:  # the namespace has loopback only
                    assert nodes[0]["NodeManagerAddress"] == "127.0.0.1", nodes
                t = ray.get(make.remote(5), timeout=T)  # a Tensor made by Go in a worker
                assert type(t) is vecmath.Tensor and t.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0], t
                ref = ray.put(t)
                u = ray.get(ref, timeout=T)
                assert type(u) is vecmath.Tensor and u.tolist() == t.tolist() and u.data_ptr != t.data_ptr
                assert ray.get(norm.remote(ref), timeout=T) == float(np.linalg.norm(np.arange(1.0, 6.0)))
                big = ray.get(make.remote(1 << 20), timeout=T)
                assert big.shape == (1 << 20,) and np.asarray(big)[-1] == float(1 << 20)
                assert "godlpack" not in sys.modules
                print("ok")
            finally:
                ray.shutdown()
    """.replace("{loopback}", str(bool(prefix))), prefix)
    assert out.split() == ["ok"], out
