package pyext

// stubsymbol.go: the one symbol of package pyext a built extension exports
// besides PyInit_<name>: gdlpyStubs, which the build calls through ctypes
// (tools/godlpack_build.py) for the stubs of the library's modules. The
// package compiles with -fvisibility=hidden, which hides cgo's export of
// gdlpyStubsJSON (stubexport.go); this file, with no //export of its own,
// may define the visible C function that forwards to it.

/*
extern char* gdlpyStubsJSON(void);

__attribute__((visibility("default"))) char* gdlpyStubs(void) { return gdlpyStubsJSON(); }
*/
import "C"
