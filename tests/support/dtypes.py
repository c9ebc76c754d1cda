"""dtype names shared by the tests, from godlpack's one table (_tables.py)."""
from godlpack._tables import DTYPES

# DLPack codes of the kinds NumPy has natively: int, uint, float, complex, bool.
_NUMPY_CODES = (0, 1, 2, 5, 6)

NUMPY_DTYPES = [name for name, code, _ in DTYPES if code in _NUMPY_CODES]

# JAX (with x64 enabled in its tests) has every NumPy dtype plus bfloat16.
JAX_DTYPES = NUMPY_DTYPES[:12] + ["bfloat16"] + NUMPY_DTYPES[12:]
