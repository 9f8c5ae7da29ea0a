// Package render lays shapes out.
package render

import "example.com/shapes/shape"

// Row puts rs side by side: the rectangle around them.
func Row(rs []shape.Rect) shape.Rect {
	var out shape.Rect
	for _, r := range rs {
		out.W += r.W
		if r.H > out.H {
			out.H = r.H
		}
	}
	return out
}
