package tool

import "errors"

// Set collects tools built one after another, and every error of building
// them, so that a middleware offering several tools reports each that
// failed, not only the first:
//
//	var s tool.Set
//	s.Add(tool.New("ls", "List a directory.", ls))
//	s.Add(tool.New("read_file", "Read a file.", read))
//	tools, err := s.Tools()
type Set struct {
	tools []Tool
	errs  []error
}

// Add adds t, or records err when building it failed.
func (s *Set) Add(t Tool, err error) {
	if err != nil {
		s.errs = append(s.errs, err)
		return
	}
	s.tools = append(s.tools, t)
}

// Tools returns the tools added, in order, and every error recorded,
// joined (nil when there was none).
func (s *Set) Tools() ([]Tool, error) {
	return s.tools, errors.Join(s.errs...)
}
