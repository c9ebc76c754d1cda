package godlpack

import "fmt"

// Version is a DLPack API version.
type Version struct {
	Major uint32
	Minor uint32
}

// APIVersion is the DLPack version godlpack implements and stamps on exports.
var APIVersion = Version{1, 3}

// MaxImportMajor is the highest major version we can read; a tensor with a
// larger major has an unknown layout and may only have its deleter called.
const MaxImportMajor = 1

// ABIVersion is our own ABI number for the helper C API table (godlpack._C_API).
// DLPack 1.x itself has no ABI number: breaks bump the major version.
const ABIVersion = 1

func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// DL converts to the C layout.
func (v Version) DL() DLPackVersion { return DLPackVersion{v.Major, v.Minor} }

// Less orders versions.
func (v Version) Less(o Version) bool {
	return v.Major < o.Major || (v.Major == o.Major && v.Minor < o.Minor)
}
