// Package dbtime stores times as Unix nanoseconds, the form the sqlite and
// postgres packages keep them in: exact to the nanosecond, comparable as
// integers, and the same on every database.
package dbtime

import (
	"errors"
	"fmt"
	"time"
)

// ErrRange is returned for a time that Unix nanoseconds cannot hold (before
// 1678 or after 2262).
var ErrRange = errors.New("time outside the years 1678 to 2262")

var (
	minTime = time.Unix(0, -1<<63)
	maxTime = time.Unix(0, 1<<63-1)
)

// Encode returns t as Unix nanoseconds.
func Encode(t time.Time) (int64, error) {
	if t.Before(minTime) || t.After(maxTime) {
		return 0, fmt.Errorf("%w: %v", ErrRange, t)
	}
	return t.UnixNano(), nil
}

// EncodeNullable is Encode with the zero time stored as NULL (nil).
func EncodeNullable(t time.Time) (any, error) {
	if t.IsZero() {
		return nil, nil
	}
	return Encode(t)
}

// Decode returns the UTC time of Unix nanoseconds n.
func Decode(n int64) time.Time { return time.Unix(0, n).UTC() }

// DecodeNullable is Decode with NULL (valid false) as the zero time.
func DecodeNullable(n int64, valid bool) time.Time {
	if !valid {
		return time.Time{}
	}
	return Decode(n)
}
