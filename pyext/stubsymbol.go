package pyext

// stubsymbol.go: the symbols of package pyext a built extension exports
// besides PyInit_<name>: gdlpyStubs and gdlpyErrors, which the build calls
// through ctypes (tools/godlpack_build.py) for the stubs of the library's
// modules and their definitions' errors. The package compiles with
// -fvisibility=hidden, which hides cgo's exports (stubexport.go); this
// file, with no //export of its own, may define the visible C functions
// that forward to them.

/*
extern char* gdlpyStubsJSON(void);
extern char* gdlpyErrorsJSON(void);

__attribute__((visibility("default"))) char* gdlpyStubs(void) { return gdlpyStubsJSON(); }
__attribute__((visibility("default"))) char* gdlpyErrors(void) { return gdlpyErrorsJSON(); }
*/
import "C"
