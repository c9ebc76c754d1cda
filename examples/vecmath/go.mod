module example.com/vecmath

go 1.26

require (
	github.com/godlpack/godlpack v0.0.0
	github.com/stretchr/testify v1.12.1
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect

// In your own project, drop this line: `go get github.com/godlpack/godlpack`.
replace github.com/godlpack/godlpack => ../..
