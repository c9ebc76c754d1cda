// The nanobind side of bench/ext_bench.py: the same functions as
// bench/ext/gosum, with nb::ndarray (read-only float64, C-contiguous, CPU,
// any shape) in place of a Go []float64.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

namespace nb = nanobind;
using Array = nb::ndarray<const double, nb::c_contig, nb::device::cpu>;

static double sum(Array x) {
  const double* p = x.data();
  double s = 0;
  for (size_t i = 0, n = x.size(); i < n; i++) s += p[i];
  return s;
}

// bytes_out's result, 1 KiB (the size of gosum's and PyO3's).
static const char kib[1024] = {7};

struct Acc {
  long calls = 0;
  double sum(Array x) {
    calls++;
    return ::sum(x);
  }
  double fid(double a) {
    calls++;
    return a;
  }
};

NB_MODULE(nbsum, m) {
  using namespace nb::literals;
  m.def("sum", &sum, "sum(x): the sum of a float64 array.");
  m.def("sum_nogil", &sum, nb::call_guard<nb::gil_scoped_release>(), "sum(x) without the GIL.");
  m.def("noop", []() {}, "noop(): nothing.");
  m.def("fid", [](double a) { return a; }, "fid(a): a.");
  m.def("touch", [](Array) {}, "touch(x): takes a float64 array, returns None.");
  m.def("add3", [](double a, double b, double c) { return a + b + c; }, "add3(a, b, c): a + b + c.");
  m.def("add6", [](double a, double b, double c, double d, double e, double f) { return a + b + c + d + e + f; },
        "add6(a, b, c, d, e, f): their sum.");
  // Bytes both ways: bytes in (nb::bytes, no copy), 1 KiB of bytes out (one copy).
  m.def("bytes_in", [](nb::bytes b) { return b.size(); }, "bytes_in(b): len(b).");
  m.def("bytes_out", []() { return nb::bytes(kib, sizeof kib); }, "bytes_out(): 1 KiB of bytes.");
  m.def("kw", [](double a, double b) { return a + b; }, "a"_a, "b"_a = 1.0, "kw(a, b=1.0): a + b.");
  nb::class_<Acc>(m, "Acc")
      .def(nb::init<>())
      .def("sum", &Acc::sum, "sum(x): the sum of a float64 array.")
      .def("fid", &Acc::fid, "fid(a): a.");
  m.def("ndim", [](nb::ndarray<nb::ro> t) { return t.ndim(); }, "ndim(t): the number of dimensions of any array.");
  m.def("rows3", [](nb::ndarray<const double, nb::shape<-1, 3>, nb::c_contig, nb::device::cpu> x) {
    const double* p = x.data();
    double s = 0;
    for (size_t i = 0, n = x.size(); i < n; i++) s += p[i];
    return s;
  }, "rows3(x): the sum of a (n, 3) float64 array.");
}
