// Package report sums up a layout.
package report

import (
	"example.com/shapes/render"
	"example.com/shapes/shape"
)

// Covered is the area of the shapes of rs, and of their row.
func Covered(rs ...shape.Rect) (shapes, row int) {
	for _, r := range rs {
		shapes += r.Area()
	}
	return shapes, render.Row(rs).Area()
}
