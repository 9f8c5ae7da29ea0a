//go:build !linux

package rewind

// watcher is Linux's inotify watches (watch_linux.go); elsewhere a point
// after a command walks the folder.
type watcher struct{ broken, refused bool }

func newWatcher() *watcher { return nil }

func (w *watcher) close()                                   {}
func (w *watcher) begin(int)                                {}
func (w *watcher) add(int, string, uint64)                  {}
func (w *watcher) end()                                     {}
func (w *watcher) changed() (paths, made []string, ok bool) { return nil, nil, false }
