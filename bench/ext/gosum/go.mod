module example.com/gosum

go 1.26

require github.com/godlpack/godlpack v0.0.0

replace github.com/godlpack/godlpack => ../../..
