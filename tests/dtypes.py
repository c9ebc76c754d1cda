"""dtype names shared by the tests, as godlpack (and NumPy) spell them."""

NUMPY_DTYPES = [
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
]

# JAX (with x64 enabled in its tests) has every NumPy dtype plus bfloat16.
JAX_DTYPES = NUMPY_DTYPES[:12] + ["bfloat16"] + NUMPY_DTYPES[12:]
