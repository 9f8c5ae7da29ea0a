package rewind

// SetWatching turns the inotify watches of the Trackers whose first walk
// comes next on or off.
func SetWatching(on bool) { watching = on }
