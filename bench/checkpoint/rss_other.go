//go:build !unix

package main

// peakRSSKiB is not measured here.
func peakRSSKiB() int64 { return 0 }
