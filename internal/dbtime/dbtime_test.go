package dbtime

import (
	"errors"
	"testing"
	"time"
)

func TestRoundTrip(t *testing.T) {
	for _, tm := range []time.Time{
		time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC),
		time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1969, 12, 31, 23, 59, 59, 999999999, time.FixedZone("x", 3600)),
		time.Unix(0, 1<<63-1), time.Unix(0, -1<<63),
	} {
		n, err := Encode(tm)
		if err != nil || !Decode(n).Equal(tm) {
			t.Errorf("round trip of %v: %v, %v", tm, Decode(n), err)
		}
	}
	for _, tm := range []time.Time{time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)} {
		if _, err := Encode(tm); !errors.Is(err, ErrRange) {
			t.Errorf("Encode(%v) = %v, want ErrRange", tm, err)
		}
	}
	if v, err := EncodeNullable(time.Time{}); v != nil || err != nil {
		t.Errorf("EncodeNullable(zero) = %v, %v", v, err)
	}
	if !DecodeNullable(5, false).IsZero() || DecodeNullable(5, true).IsZero() {
		t.Errorf("DecodeNullable")
	}
}
