package consumer_test

import (
	"encoding/binary"
	"errors"
	"math"
	"math/big"
	"sync"
	"testing"
	"unsafe"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/consumer"
	"github.com/godlpack/godlpack/internal/testkit/testprod"
)

// Fuzz input layout:
//
//	[0:80)    a DLManagedTensorVersioned image; its DLTensor part [32:80) is
//	          also the legacy DLManagedTensor's. The pointer fields (manager_ctx,
//	          deleter, data, shape, strides) are ignored and replaced with safe
//	          values chosen by the control byte.
//	[80]      control byte, see the ctl* bits.
//	[81:...]  the dims: 64 shape values then 64 strides values, int64
//	          little-endian each, or int8 each with ctlSmallDims. Missing
//	          bytes read as 0.
const (
	imageSize = 80
	dimsAt    = imageSize + 1
	bufSize   = 4096 // the data buffer: one page, unreadable page after it

	ctlData       = 1 << 0 // data = the buffer (else NULL)
	ctlShape      = 1 << 1 // shape = the shape array (else NULL)
	ctlStrides    = 1 << 2 // strides = the strides array (else NULL)
	ctlSmallDims  = 1 << 3 // dims are int8, and byte_offset is the image's low byte
	ctlNilDeleter = 1 << 4 // deleter NULL (else the counting deleter)
)

// Offsets of the pointer fields inside the versioned image.
var pointerFields = [][2]int{{8, 16}, {16, 24}, {32, 40}, {56, 64}, {64, 72}}

type fuzzMemory struct {
	buf, shape, strides *testprod.Guarded
}

var (
	fuzzOnce sync.Once
	fuzzMem  fuzzMemory
	fuzzMu   sync.Mutex

	// How often the harness got to each outcome (guarded by fuzzMu).
	fuzzAccepted, fuzzCopied, fuzzRefused int
)

func fuzzBuffers() *fuzzMemory {
	fuzzOnce.Do(func() {
		fuzzMem = fuzzMemory{
			buf:     testprod.NewGuarded(bufSize),
			shape:   testprod.NewGuarded(64 * 8),
			strides: testprod.NewGuarded(64 * 8),
		}
		b := fuzzMem.buf.Bytes()
		for i := range b {
			b[i] = byte(i*7 + i>>8)
		}
	})
	return &fuzzMem
}

// fuzzCase is one decoded input.
type fuzzCase struct {
	image            [imageSize]byte
	ctl              byte
	shape, strides   [64]int64
	hasData, nilDel  bool
	hasShape, hasStr bool
}

func decodeFuzz(in []byte) fuzzCase {
	var c fuzzCase
	copy(c.image[:], in)
	for _, f := range pointerFields {
		clear(c.image[f[0]:f[1]])
	}
	if len(in) > imageSize {
		c.ctl = in[imageSize]
	}
	dims := []byte{}
	if len(in) > dimsAt {
		dims = in[dimsAt:]
	}
	small := c.ctl&ctlSmallDims != 0
	for i := 0; i < 128; i++ {
		var v int64
		if small {
			if i < len(dims) {
				v = int64(int8(dims[i]))
			}
		} else {
			var w [8]byte
			if 8*i < len(dims) {
				copy(w[:], dims[8*i:])
			}
			v = int64(binary.LittleEndian.Uint64(w[:]))
		}
		if i < 64 {
			c.shape[i] = v
		} else {
			c.strides[i-64] = v
		}
	}
	if small {
		// Keep byte_offset inside the buffer most of the time.
		clear(c.image[72:80])
		c.image[72] = in0(in, 72)
		c.image[73] = in0(in, 73) & 0x0f
	}
	c.hasData = c.ctl&ctlData != 0
	c.hasShape = c.ctl&ctlShape != 0
	c.hasStr = c.ctl&ctlStrides != 0
	c.nilDel = c.ctl&ctlNilDeleter != 0
	return c
}

func in0(in []byte, i int) byte {
	if i < len(in) {
		return in[i]
	}
	return 0
}

// expectation is what an independent big-integer model of the rules says.
type expectation struct {
	fails  map[error]bool // kinds of problems found; empty means valid
	lo, hi *big.Int       // byte span when valid and non-empty
	n      *big.Int
}

var (
	maxI64 = big.NewInt(math.MaxInt64)
	minI64 = big.NewInt(math.MinInt64)
	two64  = new(big.Int).Lsh(big.NewInt(1), 64)
)

// model applies the DLPack validation rules to the raw fields with
// arbitrary-precision arithmetic. dataAddr is 0 for NULL.
func model(c *fuzzCase, dl *godlpack.DLTensor, versioned bool, ver godlpack.DLPackVersion, flags uint64, dataAddr uint64) expectation {
	e := modelTensor(c, dl, versioned, ver, flags, dataAddr)
	// A tensor valid as such is still refused when the padded flag is set on
	// a vector of sub-byte lanes: a byte per lane or per vector is not said.
	if len(e.fails) == 0 && versioned && flags&godlpack.FlagIsSubbyteTypePadded != 0 && dl.DType.Bits < 8 && dl.DType.Lanes > 1 {
		e.fails[godlpack.ErrFlags] = true
	}
	return e
}

func modelTensor(c *fuzzCase, dl *godlpack.DLTensor, versioned bool, ver godlpack.DLPackVersion, flags uint64, dataAddr uint64) expectation {
	e := expectation{fails: map[error]bool{}}
	fail := func(k error) { e.fails[k] = true }
	if versioned && (ver.Major != 1) {
		fail(godlpack.ErrVersion)
		return e // nothing else may be read
	}
	if dl.NDim < 0 || dl.NDim > 64 {
		fail(godlpack.ErrNDim)
	}
	dt := godlpack.DType{Code: dl.DType.Code, Bits: dl.DType.Bits, Lanes: dl.DType.Lanes}
	// Bits of one element: a vector (lanes > 1) is carried as whole bytes;
	// only a single float4/float6 element is packed below a byte.
	elemBits := int64(dt.Bits) * int64(dt.Lanes)
	switch {
	case dt.Bits == 0:
		fail(godlpack.ErrDType)
	case dt.Lanes == 0:
		fail(godlpack.ErrLanes)
	case !(godlpack.DType{Code: dt.Code, Bits: dt.Bits, Lanes: 1}).Known():
		fail(godlpack.ErrDType)
	case dt.Lanes > 1 && elemBits%8 != 0:
		fail(godlpack.ErrLanes)
	}
	if !godlpack.DeviceType(dl.Device.DeviceType).Known() || dl.Device.DeviceID < 0 {
		fail(godlpack.ErrDevice)
	}
	if len(e.fails) > 0 {
		return e // the shape must not be read
	}
	nd := int(dl.NDim)
	if nd > 0 && !c.hasShape {
		fail(godlpack.ErrNilPointer)
		return e
	}
	allowNil := !versioned || ver.Minor < 2
	if nd > 0 && !c.hasStr && !allowNil {
		fail(godlpack.ErrStrides)
		return e
	}
	shape := c.shape[:nd]
	for _, s := range shape {
		if s < 0 {
			fail(godlpack.ErrShape)
			return e
		}
	}
	n := big.NewInt(1)
	zero := false
	for _, s := range shape {
		n.Mul(n, big.NewInt(s))
		zero = zero || s == 0
	}
	e.n = n
	if zero {
		return e // empty: nothing else matters
	}
	if n.Cmp(maxI64) > 0 {
		fail(godlpack.ErrOverflow)
		return e
	}
	// Element span.
	elo, ehi := new(big.Int), new(big.Int)
	if c.hasStr && nd > 0 {
		for i, s := range shape {
			if s == 1 {
				continue
			}
			ext := new(big.Int).Mul(big.NewInt(s-1), big.NewInt(c.strides[i]))
			if c.strides[i] == math.MinInt64 || new(big.Int).Abs(ext).Cmp(maxI64) > 0 {
				fail(godlpack.ErrOverflow)
				return e
			}
			if ext.Sign() > 0 {
				ehi.Add(ehi, ext)
			} else {
				elo.Add(elo, ext)
			}
		}
		if ehi.Cmp(maxI64) > 0 || elo.Cmp(minI64) < 0 {
			fail(godlpack.ErrOverflow)
			return e
		}
	} else {
		ehi.Sub(n, big.NewInt(1))
	}
	bits := elemBits
	padded := versioned && elemBits < 8 && flags&godlpack.FlagIsSubbyteTypePadded != 0
	if padded {
		bits = 8
	}
	for _, b := range []int64{elemBits, bits} {
		loBits := new(big.Int).Mul(new(big.Int).Neg(elo), big.NewInt(b))
		hiBits := new(big.Int).Mul(new(big.Int).Add(ehi, big.NewInt(1)), big.NewInt(b))
		if loBits.Cmp(maxI64) > 0 || hiBits.Cmp(maxI64) > 0 {
			fail(godlpack.ErrOverflow)
			return e
		}
		// floor(elo*b/8), ceil((ehi+1)*b/8)
		e.lo = new(big.Int).Div(new(big.Int).Mul(elo, big.NewInt(b)), big.NewInt(8)) // Div is Euclidean: floor for positive divisor
		e.hi = new(big.Int).Div(new(big.Int).Add(hiBits, big.NewInt(7)), big.NewInt(8))
		if dataAddr == 0 {
			fail(godlpack.ErrNilData)
			return e
		}
		first := new(big.Int).Add(new(big.Int).SetUint64(dataAddr), new(big.Int).SetUint64(dl.ByteOffset))
		if dl.ByteOffset > math.MaxInt64 || first.Cmp(two64) >= 0 {
			fail(godlpack.ErrOverflow)
			return e
		}
		if new(big.Int).Add(first, e.lo).Sign() < 0 || new(big.Int).Add(first, e.hi).Cmp(two64) >= 0 {
			fail(godlpack.ErrOverflow)
			return e
		}
	}
	return e
}

func keys(m map[error]bool) []error {
	var out []error
	for k := range m {
		out = append(out, k)
	}
	return out
}

var sentinels = []error{
	godlpack.ErrNilPointer, godlpack.ErrVersion, godlpack.ErrNDim, godlpack.ErrShape,
	godlpack.ErrStrides, godlpack.ErrOverflow, godlpack.ErrDType, godlpack.ErrLanes,
	godlpack.ErrDevice, godlpack.ErrNilData, godlpack.ErrFlags,
}

// checkRefusal: err must be an InvalidTensorError of a kind the model found.
func checkRefusal(t *testing.T, what string, err error, e expectation) {
	t.Helper()
	fuzzRefused++
	var inv *godlpack.InvalidTensorError
	if !errors.As(err, &inv) {
		t.Fatalf("%s: refusal %v (%T) is not an *InvalidTensorError", what, err, err)
	}
	if !errors.Is(err, inv.Kind) {
		t.Fatalf("%s: errors.Is(err, err.Kind) is false for %v", what, err)
	}
	known := false
	for _, s := range sentinels {
		known = known || inv.Kind == s
	}
	if !known {
		t.Fatalf("%s: unknown error kind %v", what, inv.Kind)
	}
	if len(e.fails) == 0 {
		t.Fatalf("%s: refused a tensor the model accepts: %v", what, err)
	}
	if !e.fails[inv.Kind] {
		t.Fatalf("%s: refused with %v, but the model found %v", what, err, keys(e.fails))
	}
}

// checkAccepted verifies an accepted tensor against the model and, when its
// bytes lie inside the buffer, reads them through CopyCompact and compares
// with a direct strided walk.
func checkAccepted(t *testing.T, what string, tt *consumer.Tensor, c *fuzzCase, dl *godlpack.DLTensor, e expectation, mem *fuzzMemory) {
	t.Helper()
	fuzzAccepted++
	if len(e.fails) > 0 {
		t.Fatalf("%s: accepted a tensor the model refuses for %v", what, keys(e.fails))
	}
	nd := int(dl.NDim)
	if len(tt.Shape) != nd {
		t.Fatalf("%s: ndim %d, want %d", what, len(tt.Shape), nd)
	}
	for i := 0; i < nd; i++ {
		if tt.Shape[i] != c.shape[i] {
			t.Fatalf("%s: shape[%d] = %d, want %d", what, i, tt.Shape[i], c.shape[i])
		}
	}
	if c.hasStr && nd > 0 {
		if len(tt.Strides) != nd {
			t.Fatalf("%s: %d strides, want %d", what, len(tt.Strides), nd)
		}
		for i := 0; i < nd; i++ {
			if tt.Strides[i] != c.strides[i] {
				t.Fatalf("%s: strides[%d] = %d, want %d", what, i, tt.Strides[i], c.strides[i])
			}
		}
	} else if !c.hasStr && tt.Strides != nil { // ndim 0 with a strides pointer: empty, not nil
		t.Fatalf("%s: strides %v from NULL", what, tt.Strides)
	}
	if tt.ByteOffset != dl.ByteOffset {
		t.Fatalf("%s: byte_offset %d, want %d", what, tt.ByteOffset, dl.ByteOffset)
	}
	n, err := tt.NumElements()
	if err != nil {
		t.Fatalf("%s: NumElements of an accepted tensor: %v", what, err)
	}
	lo, hi, err := tt.ByteSpan()
	if err != nil {
		t.Fatalf("%s: ByteSpan of an accepted tensor: %v", what, err)
	}
	if n == 0 {
		if lo != 0 || hi != 0 {
			t.Fatalf("%s: empty tensor spans [%d, %d)", what, lo, hi)
		}
		b, err := tt.Copy()
		if tt.Device.IsCPUAccessible() && (err != nil || len(b) != 0) {
			t.Fatalf("%s: copy of an empty tensor: %d bytes, %v", what, len(b), err)
		}
		return
	}
	if e.lo.Cmp(big.NewInt(lo)) != 0 || e.hi.Cmp(big.NewInt(hi)) != 0 {
		t.Fatalf("%s: byte span [%d, %d), model says [%v, %v)", what, lo, hi, e.lo, e.hi)
	}
	if !c.hasData || tt.Data != mem.buf.P {
		t.Fatalf("%s: non-empty tensor accepted with data %p", what, tt.Data)
	}
	off := int64(dl.ByteOffset)
	if off+lo < 0 || off+hi > bufSize || !tt.Device.IsCPUAccessible() {
		return // valid by the rules but not backed by our buffer: do not read
	}
	size := tt.DType.ItemSize()
	if n > 1<<16 || (size == 0 && !tt.IsCompact()) {
		return
	}
	got, err := tt.Copy()
	if err != nil {
		t.Fatalf("%s: copy: %v", what, err)
	}
	src := mem.buf.Bytes()
	var want []byte
	if size == 0 {
		want = src[off : off+hi]
	} else {
		st := tt.StridesOrCompact()
		idx := make([]int64, nd)
		for k := int64(0); k < n; k++ {
			pos := int64(0)
			for i := 0; i < nd; i++ {
				pos += idx[i] * st[i]
			}
			p := off + pos*size
			want = append(want, src[p:p+size]...)
			for i := nd - 1; i >= 0; i-- {
				idx[i]++
				if idx[i] < tt.Shape[i] {
					break
				}
				idx[i] = 0
			}
		}
	}
	if string(got) != string(want) {
		t.Fatalf("%s: copy differs from a direct strided read (%d vs %d bytes)", what, len(got), len(want))
	}
	fuzzCopied++
}

func fuzzOne(t *testing.T, in []byte) {
	mem := fuzzBuffers()
	fuzzMu.Lock()
	defer fuzzMu.Unlock()
	c := decodeFuzz(in)

	shapeArr := unsafe.Slice((*int64)(mem.shape.P), 64)
	stridesArr := unsafe.Slice((*int64)(mem.strides.P), 64)
	copy(shapeArr, c.shape[:])
	copy(stridesArr, c.strides[:])

	var dataAddr uint64
	if c.hasData {
		dataAddr = uint64(uintptr(mem.buf.P))
	}
	fill := func(dl *godlpack.DLTensor) {
		dl.Data, dl.Shape, dl.Strides = nil, nil, nil
		if c.hasData {
			dl.Data = mem.buf.P
		}
		if c.hasShape {
			dl.Shape = &shapeArr[0]
		}
		if c.hasStr {
			dl.Strides = &stridesArr[0]
		}
	}
	wantCalls := int64(1)
	if c.nilDel {
		wantCalls = 0
	}

	// Versioned.
	v := testprod.NewVersioned()
	defer v.Free()
	ctx := v.M.ManagerCtx // the deleter counts through it
	copy(unsafe.Slice((*byte)(unsafe.Pointer(v.M)), imageSize), c.image[:])
	v.M.ManagerCtx = ctx
	fill(&v.M.DLTensor)
	setDeleter(v.M, c.nilDel)
	e := model(&c, &v.M.DLTensor, true, v.M.Version, v.M.Flags, dataAddr)

	if _, err := consumer.ValidateVersioned(v.M); (err == nil) != (len(e.fails) == 0) {
		t.Fatalf("ValidateVersioned: err %v, model %v", err, keys(e.fails))
	}
	if v.Calls() != 0 {
		t.Fatalf("ValidateVersioned called the deleter")
	}
	checkVerdict(t, "versioned check", consumer.CheckVersioned(v.M), e)
	tt, err := consumer.ImportVersioned(v.M)
	if err != nil {
		if tt != nil {
			t.Fatalf("ImportVersioned returned a tensor and an error")
		}
		checkRefusal(t, "versioned", err, e)
	} else {
		if v.Calls() != 0 {
			t.Fatalf("versioned: deleter called before Close")
		}
		if tt.Version != (godlpack.Version{Major: v.M.Version.Major, Minor: v.M.Version.Minor}) || tt.Flags != v.M.Flags || !tt.Versioned {
			t.Fatalf("versioned: version/flags not carried")
		}
		if tt.ReadOnly != (v.M.Flags&godlpack.FlagReadOnly != 0) {
			t.Fatalf("versioned: read-only flag not honoured")
		}
		checkAccepted(t, "versioned", tt, &c, &v.M.DLTensor, e, mem)
		if err := tt.Close(); err != nil {
			t.Fatalf("versioned: close: %v", err)
		}
		if err := tt.Close(); !errors.Is(err, consumer.ErrClosed) {
			t.Fatalf("versioned: second close: %v", err)
		}
	}
	if got := v.Calls(); got != wantCalls {
		t.Fatalf("versioned: deleter called %d times, want %d", got, wantCalls)
	}

	// Legacy, with the same DLTensor.
	l := testprod.NewLegacy()
	defer l.Free()
	copy(unsafe.Slice((*byte)(unsafe.Pointer(l.M)), 48), c.image[32:80])
	fill(&l.M.DLTensor)
	if c.nilDel {
		l.M.Deleter = nil
	}
	e = model(&c, &l.M.DLTensor, false, godlpack.DLPackVersion{}, 0, dataAddr)
	checkVerdict(t, "legacy check", consumer.CheckLegacy(l.M), e)
	tt, err = consumer.ImportLegacy(l.M)
	if err != nil {
		checkRefusal(t, "legacy", err, e)
	} else {
		if tt.Versioned || tt.ReadOnly || tt.Flags != 0 {
			t.Fatalf("legacy: versioned fields set")
		}
		checkAccepted(t, "legacy", tt, &c, &l.M.DLTensor, e, mem)
		if err := tt.Close(); err != nil {
			t.Fatalf("legacy: close: %v", err)
		}
	}
	if got := l.Calls(); got != wantCalls {
		t.Fatalf("legacy: deleter called %d times, want %d", got, wantCalls)
	}
}

// checkVerdict requires the allocation-free check (the C core's validator,
// which the CPython layer calls directly) to agree with the model.
func checkVerdict(t *testing.T, what string, err error, e expectation) {
	t.Helper()
	if err == nil {
		if len(e.fails) != 0 {
			t.Fatalf("%s: check accepted a tensor the model refuses for %v", what, keys(e.fails))
		}
		return
	}
	checkRefusal(t, what, err, e)
}

// setDeleter restores the counting deleter after the image copy.
func setDeleter(m *godlpack.DLManagedTensorVersioned, nilDeleter bool) {
	m.Deleter = nil
	if !nilDeleter {
		m.Deleter = testprod.DeleterVersioned()
	}
}

// seed builds an input from fields.
func seed(major, minor uint32, flags uint64, devType, devID int32, ndim int32, code, bits uint8, lanes uint16,
	offset uint64, ctl byte, dims []int64) []byte {
	b := make([]byte, imageSize+1)
	le := binary.LittleEndian
	le.PutUint32(b[0:], major)
	le.PutUint32(b[4:], minor)
	le.PutUint64(b[24:], flags)
	le.PutUint32(b[40:], uint32(devType))
	le.PutUint32(b[44:], uint32(devID))
	le.PutUint32(b[48:], uint32(ndim))
	b[52], b[53] = code, bits
	le.PutUint16(b[54:], lanes)
	le.PutUint64(b[72:], offset)
	b[imageSize] = ctl
	if ctl&ctlSmallDims != 0 {
		for _, d := range dims {
			b = append(b, byte(int8(d)))
		}
		return b
	}
	for _, d := range dims {
		b = le.AppendUint64(b, uint64(d))
	}
	return b
}

func fuzzSeeds() [][]byte {
	var out [][]byte
	add := func(b []byte) { out = append(out, b) }
	all := ctlData | ctlShape | ctlStrides
	pad := func(shape []int64, strides ...int64) []int64 {
		out := make([]int64, 64, 128)
		copy(out, shape)
		return append(out, strides...)
	}
	add(seed(1, 3, 0, 1, 0, 2, 2, 32, 1, 0, byte(all), pad([]int64{2, 3}, 3, 1)))
	add(seed(1, 3, 0, 1, 0, 2, 2, 32, 1, 0, byte(all|ctlSmallDims), pad([]int64{3, 4}, -4, 1)))
	add(seed(1, 3, 0, 1, 0, 2, 0, 16, 1, 64, byte(all|ctlSmallDims), pad([]int64{4, 5}, 1, 4)))
	add(seed(1, 1, 1, 3, 0, 1, 1, 8, 1, 100, byte(ctlData|ctlShape|ctlSmallDims), pad([]int64{10})))
	add(seed(1, 3, 4, 1, 0, 1, 17, 4, 1, 8, byte(all|ctlSmallDims), pad([]int64{7}, -1)))
	add(seed(1, 3, 0, 1, 0, 1, 17, 4, 1, 8, byte(all|ctlSmallDims), pad([]int64{6}, -1)))
	add(seed(1, 2, 0, 2, 1, 3, 5, 128, 1, 0, byte(all), pad([]int64{2, 0, 2}, 1, 1, 1)))
	add(seed(1, 3, 0, 1, 0, 0, 6, 8, 1, 4095, byte(ctlData), nil))
	add(seed(1, 3, 0, 1, 0, 2, 2, 64, 1, 0, byte(all), pad([]int64{1 << 32, 1 << 32}, 1, 1)))
	add(seed(1, 3, 0, 1, 0, 1, 2, 64, 1, 0, byte(all), pad([]int64{3}, math.MinInt64)))
	add(seed(1, 3, 0, 1, 0, 1, 2, 64, 1, 0, byte(ctlShape|ctlStrides), pad([]int64{0}, 1)))
	add(seed(2, 0, 0, 1, 0, 1, 2, 32, 1, 0, byte(all), pad([]int64{1}, 1)))
	add(seed(0, 0, 0, 1, 0, 1, 2, 32, 1, 0, byte(all), pad([]int64{1}, 1)))
	add(seed(1, 3, 0, 1, 0, 65, 2, 32, 1, 0, byte(all), nil))
	add(seed(1, 3, 0, 1, 0, -1, 2, 32, 1, 0, byte(all|ctlNilDeleter), nil))
	add(seed(1, 3, 0, 1, -1, 1, 2, 32, 2, 0, byte(all), pad([]int64{1}, 1)))
	// Vectors: PyTorch's float4_e2m1fn_x2 strided, float32x4 reversed,
	// float6x4 (3 bytes) transposed, 65535 lanes of complex128; refused: 3
	// fp4 lanes (12 bits), 0 lanes, padded fp4x2, a span overflowing in bytes.
	add(seed(1, 3, 0, 1, 0, 2, 17, 4, 2, 3, byte(all|ctlSmallDims), pad([]int64{3, 4}, 8, 2)))
	add(seed(1, 3, 0, 1, 0, 1, 2, 32, 4, 160, byte(all|ctlSmallDims), pad([]int64{5}, -2)))
	add(seed(1, 2, 0, 1, 0, 2, 15, 6, 4, 1, byte(all|ctlSmallDims), pad([]int64{4, 3}, 1, 4)))
	add(seed(1, 3, 0, 1, 0, 0, 5, 128, 65535, 0, byte(ctlData), nil))
	add(seed(1, 3, 0, 1, 0, 1, 5, 128, 65535, 0, byte(all|ctlSmallDims), pad([]int64{0}, 1)))
	add(seed(1, 3, 0, 1, 0, 1, 17, 4, 3, 0, byte(all|ctlSmallDims), pad([]int64{4}, 1)))
	add(seed(1, 3, 0, 1, 0, 1, 2, 32, 0, 0, byte(all|ctlSmallDims), pad([]int64{4}, 1)))
	add(seed(1, 3, godlpack.FlagIsSubbyteTypePadded, 1, 0, 1, 17, 4, 2, 0, byte(all|ctlSmallDims), pad([]int64{4}, 1)))
	add(seed(1, 3, 0, 1, 0, 1, 2, 32, 4, 0, byte(all), pad([]int64{1 << 59}, 1)))
	// Padded float4 whose packed span fits in int64 but padded one does not.
	add(seed(1, 3, godlpack.FlagIsSubbyteTypePadded, 1, 0, 1, 17, 4, 1, 0, byte(all), pad([]int64{1<<60 + 1}, 1)))
	add([]byte{})
	return out
}

func FuzzValidate(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	f.Fuzz(fuzzOne)
}

// TestFuzzSeedsReachEveryOutcome keeps the harness honest: its seeds must get
// refused, accepted, and read back through CopyCompact.
func TestFuzzSeedsReachEveryOutcome(t *testing.T) {
	fuzzMu.Lock()
	a0, c0, r0 := fuzzAccepted, fuzzCopied, fuzzRefused
	fuzzMu.Unlock()
	for _, s := range fuzzSeeds() {
		fuzzOne(t, s)
	}
	fuzzMu.Lock()
	defer fuzzMu.Unlock()
	if fuzzAccepted-a0 < 8 || fuzzCopied-c0 < 6 || fuzzRefused-r0 < 10 {
		t.Fatalf("seeds reach: %d accepted, %d copied, %d refused", fuzzAccepted-a0, fuzzCopied-c0, fuzzRefused-r0)
	}
	t.Logf("seeds reach: %d accepted, %d copied, %d refused", fuzzAccepted-a0, fuzzCopied-c0, fuzzRefused-r0)
}
