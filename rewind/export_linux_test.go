package rewind

// SetWatching turns the inotify watches of the Trackers whose first walk
// comes next on or off; on, every folder is watched, whatever its size,
// until the test ends.
func SetWatching(t interface{ Cleanup(func()) }, on bool) {
	watching = on
	from := watchFrom
	if on {
		watchFrom = 0
	}
	t.Cleanup(func() { watching, watchFrom = true, from })
}
