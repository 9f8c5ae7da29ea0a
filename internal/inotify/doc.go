// Package inotify holds what the users of Linux's inotify in this module
// share (the file backend's kept listings, rewind's watched folders):
// reading a queue of notices whole, and telling whether a file system
// reports every change to it. It has code on Linux alone.
package inotify
