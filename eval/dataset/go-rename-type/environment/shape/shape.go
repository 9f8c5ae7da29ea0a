// Package shape has the shapes drawn.
package shape

// Rect is an axis-aligned rectangle, W wide and H high.
type Rect struct {
	W, H int
}

// Area is r's area.
func (r Rect) Area() int { return r.W * r.H }

// Square is a Rect of side s.
func Square(s int) Rect { return Rect{W: s, H: s} }
