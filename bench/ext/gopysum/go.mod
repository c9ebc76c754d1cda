module example.com/gopysum

go 1.26.0

require (
	github.com/go-python/gopy v0.4.10
	github.com/godlpack/godlpack v0.0.0
)

replace github.com/godlpack/godlpack => ../../..
