module example.com/vecmath

go 1.26

require github.com/godlpack/godlpack v0.0.0

// In your own project, drop this line: `go get github.com/godlpack/godlpack`.
replace github.com/godlpack/godlpack => ../..
