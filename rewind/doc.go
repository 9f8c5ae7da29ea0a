// Package rewind keeps workspace checkpoints: what a folder held at each
// of a thread's prompts and after each step that changed it, whether the
// file tools or commands changed it, so that the folder can be put back
// as it was at an earlier prompt.
//
// A [Tracker] records points in a store.Store (the thread's database):
// file contents as content-addressed blobs, shared by every point and
// thread that has the same content, and each point as the changes since
// the one before. What a point costs follows from what changed: after
// file tools, the paths their backend reported (backend.WithChanges);
// after anything else, what inotify noticed (on Linux), or a walk that
// stats every entry and reads only a file whose stat changed. The
// folder's .gitignore files are honoured (and .git is never recorded); a
// file over MaxFileBytes, or past the thread's MaxThreadBytes, is
// recorded by its hash alone, and a restore leaves it as it is.
//
// [Tracker.Restore] puts the folder back as it was at a point. A file
// changed outside the agent since that point (between runs, or since the
// agent's last step) is kept, and reported, unless the restore is forced.
// The restore is a point too: it can itself be rewound.
package rewind
