package pyext

// timeconv.go: time.Time as an aware datetime and time.Duration as a
// timedelta (ext_conv.c). A datetime's wall clock and UTC offset give the
// time.Time (a naive datetime is refused: it names no instant); a
// time.Time keeps its wall clock and offset (a fixed-offset timezone, or
// timezone.utc for UTC). Python holds microseconds: the nanoseconds below
// are dropped (truncated), in time.Time and time.Duration results alike.

// #include "ext.h"
import "C"

import (
	"fmt"
	"reflect"
	"sync"
	"time"
)

func timeParam(v *C.gdl_value, _ string, _ int) (reflect.Value, error) {
	return reflect.ValueOf(timeOf(v)), nil
}

// timeOf is C's packed wall clock and offset (ext_conv.c) as a time.Time.
func timeOf(v *C.gdl_value) time.Time {
	c := int64(v.i) // YYYYMMDDhhmmss
	sec, minute, hour := int(c%100), int(c/100%100), int(c/10000%100)
	day, month, year := int(c/1000000%100), time.Month(c/100000000%100), int(c/10000000000)
	loc := time.UTC
	if v.versioned == 0 && v.ncap != 0 {
		loc = fixedZone(int(v.ncap))
	}
	return time.Date(year, month, day, hour, minute, sec, int(v.n)*1000, loc)
}

var zones sync.Map // offset in seconds → *time.Location: one per offset for the process

func fixedZone(off int) *time.Location {
	if z, ok := zones.Load(off); ok {
		return z.(*time.Location)
	}
	z, _ := zones.LoadOrStore(off, time.FixedZone("", off))
	return z.(*time.Location)
}

func putTime(rv reflect.Value, v *C.gdl_value, _ []span) error {
	return putTimeOf(rv.Interface().(time.Time), v)
}

func putTimeOf(t time.Time, v *C.gdl_value) error {
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	_, off := t.Zone()
	if y < 1 || y > 9999 {
		return &ValueError{fmt.Sprintf("a returned time.Time (%v) is outside datetime's years 1 to 9999", t)}
	}
	if off <= -86400 || off >= 86400 {
		return &ValueError{fmt.Sprintf("a returned time.Time's UTC offset (%ds) is beyond a datetime's (under a day)", off)}
	}
	v.i = C.int64_t(((((int64(y)*100+int64(mo))*100+int64(d))*100+int64(h))*100+int64(mi))*100 + int64(s))
	v.n, v.ncap = C.int64_t(t.Nanosecond()/1000), C.int64_t(off)
	v.versioned = 0
	if t.Location() == time.UTC {
		v.versioned = 1
	}
	return nil
}

func durationParam(v *C.gdl_value, _ string, _ int) (reflect.Value, error) {
	return reflect.ValueOf(time.Duration(v.i)), nil
}

func putDuration(rv reflect.Value, v *C.gdl_value, _ []span) error {
	v.i = C.int64_t(rv.Int())
	return nil
}
