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


class NumpyPeer(Peer):
    name = "numpy"
    dtypes = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
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


PEERS: dict[str, type[Peer]] = {"numpy": NumpyPeer, "torch": TorchPeer, "jax": JaxPeer, "cupy": CupyPeer,
                                "tvm_ffi": TvmFfiPeer, "godlpack": GodlpackPeer}


def peer_for(name: str, module: Any | None = None) -> Peer:
    """The adapter for a library (the generic one for unknown names)."""
    return PEERS.get(name, Peer)(importlib.import_module(name) if module is None else module)
