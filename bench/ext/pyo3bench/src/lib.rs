//! The PyO3 side of bench/ext_bench.py: the functions of bench/ext/gosum (and
//! bench/ext/nbsum) with PyO3's and rust-numpy's own idioms, so that each row
//! of the bench times the same call on the three. Arrays are read-only views
//! (PyReadonlyArray, as nanobind's `const double` and pyext's ReadOnlyArgs);
//! tests/tooling/test_bench_pyo3.py keeps the function list equal to gosum's.

#[pyo3::pymodule]
mod pyo3bench {
    use numpy::{PyReadonlyArray1, PyReadonlyArray2, PyUntypedArray, PyUntypedArrayMethods};
    use pyo3::exceptions::PyValueError;
    use pyo3::prelude::*;
    use pyo3::types::PyBytes;

    /// 1 KiB, the bytes result of bytes_out (gosum's is the same size).
    static KIB: [u8; 1024] = [7u8; 1024];

    fn total(x: &PyReadonlyArray1<'_, f64>) -> f64 {
        match x.as_slice() {
            Ok(s) => s.iter().sum(),
            Err(_) => x.as_array().sum(), // strided: sum_conv's x[::2], read in place
        }
    }

    /// noop(): nothing.
    #[pyfunction]
    fn noop() {}

    /// fid(a): a.
    #[pyfunction]
    fn fid(a: f64) -> f64 {
        a
    }

    /// kw(a, b=1.0): a + b.
    #[pyfunction]
    #[pyo3(signature = (a, b=1.0))]
    fn kw(a: f64, b: f64) -> f64 {
        a + b
    }

    /// add3(a, b, c): a + b + c.
    #[pyfunction]
    fn add3(a: f64, b: f64, c: f64) -> f64 {
        a + b + c
    }

    /// add6(a, b, c, d, e, f): their sum.
    #[pyfunction]
    fn add6(a: f64, b: f64, c: f64, d: f64, e: f64, f: f64) -> f64 {
        a + b + c + d + e + f
    }

    /// sum(x): the sum of a float64 array.
    #[pyfunction]
    fn sum(x: PyReadonlyArray1<'_, f64>) -> f64 {
        total(&x)
    }

    /// sum(x) without the GIL.
    #[pyfunction]
    fn sum_nogil(py: Python<'_>, x: PyReadonlyArray1<'_, f64>) -> f64 {
        match x.as_slice() {
            Ok(s) => py.detach(|| s.iter().sum()),
            Err(_) => total(&x),
        }
    }

    /// touch(x): takes a float64 array, returns None.
    #[pyfunction]
    fn touch(_x: PyReadonlyArray1<'_, f64>) {}

    /// ndim(t): the number of dimensions of any array (any dtype).
    #[pyfunction]
    fn ndim(t: &Bound<'_, PyUntypedArray>) -> usize {
        t.ndim()
    }

    /// rows3(x): the sum of a (n, 3) C-contiguous float64 array.
    #[pyfunction]
    fn rows3(x: PyReadonlyArray2<'_, f64>) -> PyResult<f64> {
        if x.shape()[1] != 3 {
            return Err(PyValueError::new_err(format!(
                "rows3: x has shape {:?}, want (n, 3)",
                x.shape()
            )));
        }
        let s = x
            .as_slice()
            .map_err(|_| PyValueError::new_err("rows3: x is not C-contiguous"))?;
        Ok(s.iter().sum())
    }

    /// bytes_in(b): len(b), from bytes taken as a byte slice (no copy).
    #[pyfunction]
    fn bytes_in(b: &[u8]) -> usize {
        b.len()
    }

    /// bytes_out(): 1 KiB of bytes (one copy, into the bytes object).
    #[pyfunction]
    fn bytes_out<'py>(py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &KIB)
    }

    /// Acc(): methods for the per-call cost of a method call.
    #[pyclass]
    struct Acc {
        calls: u64,
    }

    #[pymethods]
    impl Acc {
        #[new]
        fn new() -> Self {
            Acc { calls: 0 }
        }

        /// sum(x): the sum of a float64 array.
        fn sum(&mut self, x: PyReadonlyArray1<'_, f64>) -> f64 {
            self.calls += 1;
            total(&x)
        }

        /// fid(a): a.
        fn fid(&mut self, a: f64) -> f64 {
            self.calls += 1;
            a
        }
    }
}
