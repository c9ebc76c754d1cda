package godlpack

import "fmt"

// Version is a DLPack API version.
type Version struct {
	Major uint32
	Minor uint32
}

func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// DL converts to the C layout.
func (v Version) DL() DLPackVersion { return DLPackVersion{v.Major, v.Minor} }

// Less orders versions.
func (v Version) Less(o Version) bool {
	return v.Major < o.Major || (v.Major == o.Major && v.Minor < o.Minor)
}
