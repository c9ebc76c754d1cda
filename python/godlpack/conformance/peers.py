"""Adapters: how the checker makes, reads and imports one library's arrays."""
from __future__ import annotations

import importlib
from typing import Any

import godlpack


class Skip(Exception):
    """The check does not apply to this library (N/A)."""


class Peer:
    """Adapter for one array library."""

    name = "generic"
    dtypes: tuple[str, ...] = ("bool", "int8", "int16", "int32", "int64", "uint8", "float32", "float64")
    has_readonly = False
    # Device types (kDLCPU 1, kDLCUDA 2, ...) its from_dlpack imports; None: not
    # declared (the checks try CPU memory). The consumer probes are CPU memory,
    # so a consumer that takes device memory only gets N/A consumer rows.
    consumer_devices: tuple[int, ...] | None = None

    def __init__(self, module: Any) -> None:
        self.mod = module

    def from_dlpack(self, obj: Any) -> Any:
        return self.mod.from_dlpack(obj)

    def array(self, values: Any, dtype: str = "float64") -> Any:
        return self.mod.asarray(values, dtype=getattr(self.mod, dtype))

    def to_list(self, x: Any) -> Any:
        import numpy as np

        return np.asarray(np.from_dlpack(x)).tolist()

    def readonly(self, x: Any) -> Any:
        raise Skip("no read-only arrays")

    def reversed(self, x: Any) -> Any:
        """A view of 1-d x with the elements in reverse order (negative strides)."""
        try:
            return x[::-1]
        except Exception as e:  # noqa: BLE001 - no such views
            raise Skip(f"no negative-stride views: x[::-1] raised {type(e).__name__}: {e}") from e

    def is_readonly(self, x: Any) -> bool | None:
        return None

    def exchange_api(self) -> Any:
        """The library's DLPack C exchange table (a "dlpack_exchange_api" capsule), or None."""
        x = self.array([1.0])
        return getattr(type(x), "__dlpack_c_exchange_api__", None)

    def exchange_object(self, x: Any) -> Any:
        """What the exchange table's managed_tensor_from_py_object_no_sync takes for array x."""
        return x

    def no_export(self) -> str:
        """Why the library's arrays do not export DLPack ("" when they do): its
        producer rows are N/A with this reason."""
        return ""

    def no_import(self) -> str:
        """Why the library has no DLPack consumer ("" when it has one): its
        consumer rows are N/A with this reason."""
        return ""

    def not_applicable(self, title: str) -> str:
        """Why check `title` does not apply to this library ("" when it does)."""
        if title.startswith(("producer:", "exchange table: export")):
            return self.no_export()
        if title.startswith(("consumer:", "exchange table: import")):
            return self.no_import()
        return ""


class NumpyPeer(Peer):
    name = "numpy"
    dtypes: tuple[str, ...] = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
              "float32", "float64", "complex64", "complex128")
    has_readonly = True

    def array(self, values, dtype="float64"):
        return self.mod.asarray(values, dtype=dtype)

    def to_list(self, x):
        return x.tolist()

    def readonly(self, x):
        x = x.copy()
        x.flags.writeable = False
        return x

    def is_readonly(self, x):
        return not x.flags.writeable


class TorchPeer(Peer):
    name = "torch"
    dtypes = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
              "bfloat16", "float32", "float64", "complex64", "complex128")

    def array(self, values, dtype="float64"):
        return self.mod.tensor(values, dtype=getattr(self.mod, dtype))

    def to_list(self, x):
        return x.tolist()

    def is_readonly(self, x):
        return False  # torch tensors have no read-only state

    def reversed(self, x):
        raise Skip("PyTorch has no negative-stride views (x[::-1] is refused, x.flip(0) copies)")


class JaxPeer(Peer):
    name = "jax"
    dtypes = ("bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float16", "bfloat16", "float32",
              "complex64")

    def __init__(self, module):
        super().__init__(module)
        import jax.numpy as jnp

        self.jnp = jnp

    def from_dlpack(self, obj):
        return self.jnp.from_dlpack(obj)

    def array(self, values, dtype="float64"):
        import jax

        if dtype == "float64" and not jax.config.jax_enable_x64:
            dtype = "float32"  # JAX's default mode has no float64
        return self.jnp.asarray(values, dtype=dtype)

    def to_list(self, x):
        import numpy as np

        return np.asarray(x).tolist()

    def is_readonly(self, x):
        return True  # jax arrays are immutable

    def reversed(self, x):
        raise Skip("JAX arrays have no views (x[::-1] is a compact copy)")


class CupyPeer(Peer):
    name = "cupy"
    consumer_devices = (2,)  # cupy.from_dlpack: "CPU arrays cannot be directly imported to CuPy"

    def to_list(self, x):
        return x.get().tolist()


class TvmFfiPeer(Peer):
    """apache-tvm-ffi: its ``Tensor`` as producer (made from NumPy arrays), its
    ``from_dlpack`` as consumer. Its ``Tensor`` type carries no exchange table;
    the table it offers (tvm-ffi's own export and import through
    ``TVMFFITensorFromDLPackVersioned``) sits on ``core.DLTensorTestWrapper``."""

    name = "tvm_ffi"
    dtypes = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
              "bfloat16", "float32", "float64")

    def array(self, values, dtype="float64"):
        import numpy as np

        if dtype == "bfloat16":  # NumPy has no bfloat16: go through godlpack's own
            return self.mod.from_dlpack(GodlpackPeer(godlpack).array(values, dtype))
        return self.mod.from_dlpack(np.asarray(values, dtype=dtype))

    def to_list(self, x):
        if str(x.dtype) == "bfloat16":
            return godlpack.from_dlpack(x).tolist()
        import numpy as np

        return np.from_dlpack(x).tolist()

    def reversed(self, x):
        import numpy as np

        return self.mod.from_dlpack(np.from_dlpack(x)[::-1])  # its Tensor has no slicing; it holds any strides

    def exchange_api(self):
        wrapper = getattr(self.mod.core, "DLTensorTestWrapper", None)
        return getattr(wrapper, "__dlpack_c_exchange_api__", None)

    def exchange_object(self, x):
        return self.mod.core.DLTensorTestWrapper(x)


class GodlpackPeer(Peer):
    name = "godlpack"
    dtypes = NumpyPeer.dtypes + ("bfloat16",)
    has_readonly = True

    def from_dlpack(self, obj):
        return godlpack.from_dlpack(obj)

    def array(self, values, dtype="float64"):
        import numpy as np

        if dtype == "bfloat16":  # NumPy has none: Go makes it (the checks pass ranges), no PyTorch needed
            step = values[1] - values[0] if len(values) > 1 else 1
            if list(values) != [values[0] + i * step for i in range(len(values))]:
                raise ValueError("godlpack peer: bfloat16 values must be an arithmetic sequence")
            return godlpack.arange(values[0], values[0] + len(values) * step, step, "bfloat16")
        return godlpack.from_dlpack(np.asarray(values, dtype=dtype), copy=True)

    def to_list(self, x):
        return x.tolist()

    def reversed(self, x):
        import numpy as np

        return godlpack.from_dlpack(np.from_dlpack(x)[::-1])  # godlpack.Tensor has no slicing

    def readonly(self, x):
        import numpy as np

        a = np.from_dlpack(x).copy()
        a.flags.writeable = False
        return godlpack.from_dlpack(a)

    def is_readonly(self, x):
        return x.readonly


# --- the other peers users hold (issue 33) ---------------------------------------

INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


class PyArrowPeer(Peer):
    """PyArrow: ``pa.Array`` (1-d arrays) and ``pa.Tensor`` (any other shape)
    export; ``pa.Tensor.from_dlpack`` imports any shape (``pa.Array.from_dlpack``
    takes 1-d contiguous tensors only). Arrow memory is immutable, so every array
    counts as read-only; an imported Tensor counts as writable when its
    ``to_numpy()`` view is."""

    name = "pyarrow"
    dtypes = ("bool",) + INTS + ("float16", "float32", "float64")
    has_readonly = True

    def from_dlpack(self, obj):
        return self.mod.Tensor.from_dlpack(obj)

    def array(self, values, dtype="float64"):
        import numpy as np

        a = np.asarray(values, dtype=dtype)
        return self.mod.array(a) if a.ndim == 1 else self.mod.Tensor.from_numpy(a)

    def to_list(self, x):
        return x.to_pylist() if isinstance(x, self.mod.Array) else x.to_numpy().tolist()

    def readonly(self, x):
        return x

    def is_readonly(self, x):
        return True if isinstance(x, self.mod.Array) else not x.to_numpy().flags.writeable


class ArrayApiStrictPeer(Peer):
    """array-api-strict: the array API's reference namespace (NumPy underneath)."""

    name = "array_api_strict"
    dtypes = ("bool",) + INTS + ("float32", "float64", "complex64", "complex128")

    def is_readonly(self, x):
        import numpy as np

        return not np.from_dlpack(x).flags.writeable  # NumPy underneath: its flag is the array's


class MlxPeer(Peer):
    """MLX (``mlx.core``; the Linux CPU wheel is ``mlx[cpu]``): ``array.__dlpack__``
    and ``mx.from_dlpack``. Its arrays are mutable (``a[0] = 1``)."""

    name = "mlx"
    dtypes = ("bool",) + INTS + ("float16", "bfloat16", "float32", "float64", "complex64")

    def __init__(self, module):
        super().__init__(module)
        self.mx = importlib.import_module("mlx.core")

    def from_dlpack(self, obj):
        return self.mx.from_dlpack(obj)

    def array(self, values, dtype="float64"):
        return self.mx.array(values, dtype=getattr(self.mx, "bool_" if dtype == "bool" else dtype))

    def to_list(self, x):
        return x.tolist()

    def is_readonly(self, x):
        return False  # no read-only state: every MLX array takes writes


ML_DTYPES: tuple[str, ...] = ("bfloat16", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz",
             "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn")


class MlDtypesPeer(NumpyPeer):
    """ml_dtypes: NumPy arrays of its dtypes (bfloat16, float8/6/4), which godlpack
    shares. DLPack goes through NumPy's ``__dlpack__`` and ``np.from_dlpack``;
    ml_dtypes has no consumer of its own, and whether NumPy exports its dtypes is
    asked of NumPy at check time."""

    name = "ml_dtypes"
    dtypes = ML_DTYPES

    def array(self, values, dtype="float64"):
        import numpy as np

        dtype = "bfloat16" if dtype == "float64" else dtype  # the checks' default: use ml_dtypes' own
        return np.asarray(values, dtype=np.float32).astype(getattr(self.mod, dtype))

    def to_list(self, x):
        import numpy as np

        return np.asarray(x, dtype=np.float64).tolist()

    def no_export(self):
        try:
            self.array([1.0]).__dlpack__(max_version=(1, 0))
        except BufferError as e:  # allowed: array API __dlpack__ "Raises" (incompatible dtype)
            import numpy as np

            return f"NumPy {np.__version__}'s __dlpack__ refuses ml_dtypes' bfloat16 with BufferError ({e})"
        return ""

    def no_import(self):
        import numpy as np

        try:
            np.from_dlpack(godlpack.zeros(1, "bfloat16"))
            why = "NumPy imports DLPack bfloat16"
        except Exception as e:  # noqa: BLE001 - reported, not judged
            why = f"np.from_dlpack refuses DLPack bfloat16 ({type(e).__name__}: {e})"
        return f"ml_dtypes has no from_dlpack; NumPy's is checked as `numpy` ({why})"


class DaskPeer(Peer):
    """Dask: ``dask.array.Array``, lazy and chunked. Whether it speaks DLPack is
    asked of the installed Dask (2026.8 has neither ``__dlpack__`` nor
    ``from_dlpack``; its computed chunks are NumPy arrays, checked as `numpy`)."""

    name = "dask"

    def __init__(self, module):
        super().__init__(module)
        self.da = importlib.import_module("dask.array")

    def from_dlpack(self, obj):
        return self.da.from_dlpack(obj)

    def array(self, values, dtype="float64"):
        import numpy as np

        return self.da.from_array(np.asarray(values, dtype=dtype))

    def to_list(self, x):
        return x.compute().tolist()

    def no_export(self):
        return "" if hasattr(self.da.Array, "__dlpack__") else \
            "dask.array.Array has no __dlpack__ (x.compute() gives a NumPy array: check numpy)"

    def no_import(self):
        return "" if hasattr(self.da, "from_dlpack") else \
            "dask.array has no from_dlpack (da.from_array wraps an array without DLPack)"


class _TfArray:
    """A TensorFlow tensor with the protocol TF itself lacks: tf.Tensor has no
    __dlpack__, only tf.experimental.dlpack.to_dlpack(t), which takes no
    max_version, dl_device, copy or stream and makes legacy capsules. The
    arguments it has no equivalent of are refused, never ignored."""

    def __init__(self, t: Any, dlpack: Any) -> None:
        self.t, self.dlpack = t, dlpack

    def __dlpack__(self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None,
                   copy: Any = None) -> Any:
        if stream is not None or dl_device is not None or copy is not None:
            raise TypeError("tf.experimental.dlpack.to_dlpack takes no stream, dl_device or copy")
        return self.dlpack.to_dlpack(self.t)  # a 'dltensor' whatever max_version asks

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0) if "CPU" in self.t.device.upper() or not self.t.device else (2, 0)


TF_NO_KEYWORDS = "tf.Tensor has no __dlpack__: tf.experimental.dlpack.to_dlpack takes no dl_device, copy or max_version"


class TensorFlowPeer(Peer):
    """TensorFlow: ``tf.experimental.dlpack.to_dlpack``/``from_dlpack`` pass
    legacy capsules only (``from_dlpack`` refuses 'dltensor_versioned'), so its
    consumer is driven as a legacy consumer (``obj.__dlpack__()``)."""

    name = "tensorflow"
    dtypes = ("bool",) + INTS + ("float16", "bfloat16", "float32", "float64", "complex64", "complex128")
    has_readonly = True  # tf tensors are immutable

    def __init__(self, module):
        super().__init__(module)
        self.dl = importlib.import_module("tensorflow.experimental.dlpack")

    def from_dlpack(self, obj):
        return self.dl.from_dlpack(obj.__dlpack__())

    def array(self, values, dtype="float64"):
        return _TfArray(self.mod.constant(values, dtype=getattr(self.mod, dtype)), self.dl)

    def to_list(self, x):
        import numpy as np

        t = x.t if isinstance(x, _TfArray) else x
        a = t.numpy()
        return (a.astype(np.float64) if t.dtype.name == "bfloat16" else a).tolist()  # ml_dtypes' scalars

    def readonly(self, x):
        return x

    def is_readonly(self, x):
        return True

    def reversed(self, x):
        return _TfArray(x.t[::-1], self.dl)

    def not_applicable(self, title):
        if title.startswith(("producer: impossible dl_device", "producer: copy=")):
            return TF_NO_KEYWORDS
        return super().not_applicable(title)


class PaddlePeer(Peer):
    """PaddlePaddle: ``paddle.Tensor.__dlpack__`` and ``paddle.from_dlpack``
    (``paddle.utils.dlpack`` has the capsule functions)."""

    name = "paddle"
    # paddle.to_tensor makes no uint32/uint64, and makes bfloat16 for "uint16" (Paddle's old name for it)
    dtypes = ("bool", "int8", "int16", "int32", "int64", "uint8", "float16", "bfloat16", "float32", "float64",
              "complex64", "complex128")

    def array(self, values, dtype="float64"):
        return self.mod.to_tensor(values, dtype=dtype)

    def to_list(self, x):
        return (x.astype("float32") if str(x.dtype).endswith("bfloat16") else x).tolist()  # bfloat16: raw bits

    def is_readonly(self, x):
        return False  # no read-only state: every Paddle tensor takes writes


PEERS: dict[str, type[Peer]] = {"numpy": NumpyPeer, "torch": TorchPeer, "jax": JaxPeer, "cupy": CupyPeer,
                                "tvm_ffi": TvmFfiPeer, "godlpack": GodlpackPeer, "pyarrow": PyArrowPeer,
                                "array_api_strict": ArrayApiStrictPeer, "mlx": MlxPeer, "mlx.core": MlxPeer,
                                "ml_dtypes": MlDtypesPeer, "dask": DaskPeer, "dask.array": DaskPeer,
                                "tensorflow": TensorFlowPeer, "paddle": PaddlePeer}


def peer_for(name: str, module: Any | None = None) -> Peer:
    """The adapter for a library (the generic one for unknown names)."""
    return PEERS.get(name, Peer)(importlib.import_module(name) if module is None else module)
