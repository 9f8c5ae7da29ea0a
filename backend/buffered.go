package backend

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/deepagents-go/deepagents/backend/internal/diskkey"
)

// Buffers are where an editor keeps the text of the files it has open,
// which may differ from the disk (changes not saved yet): the Agent Client
// Protocol's fs/read_text_file and fs/write_text_file, for one. Paths are
// absolute host paths. Either function may be nil: that operation stays
// on the disk.
type Buffers struct {
	// ReadText returns the whole text of the file at path as the editor
	// has it.
	ReadText func(ctx context.Context, path string) (string, error)
	// WriteText gives the file at path the text content, as the editor
	// would: it shows the change, and saves it to disk (an editor that
	// only updates its buffer leaves the disk as it was).
	WriteText func(ctx context.Context, path, content string) error
}

// Buffered is a FilesystemBackend (or a sandbox.LocalShell) whose reads and writes
// of one file's text go through Buffers, so that an agent sees the
// editor's unsaved changes and its edits go through the editor:
//
//   - Read asks ReadText for the file's whole text and cuts the window
//     from it, with Read's rules (line endings, offsets past the end);
//   - Write, Upload and Edit give WriteText the file's new text; Edit
//     changes the text ReadText gives, or the disk's without ReadText.
//
// Every path is checked first exactly as the FilesystemBackend checks it,
// with its errors: Clean, FilesystemOptions.ReadOnly and Unreadable, each
// element resolved from the root without following a symbolic link, a
// regular file (for a read, one that exists on disk), the missing
// directories of a write made. The buffers are only ever asked about the
// absolute host path of a file below the root that the disk backend would
// have opened. Once ReadText has answered, the path must still lead to
// the file checked, or the read fails; a path that WriteText may have
// followed through a link put there meanwhile is reported as an error.
// (An editor opens a path by its name, so a program that swaps a link in
// and out between the check and the editor's open could still redirect
// it: the checks after narrow that, they cannot close it.)
//
// An answer of ReadText longer than the read limit
// (FilesystemOptions.MaxFileSizeMB) is an error matching ErrTooLarge; an
// error of the buffers is the operation's, wrapped, or the context's when
// it ended. What is not one file's text stays on the disk: files that are
// not text (not valid UTF-8, or holding a NUL byte), files over the read
// limit, empty content (nothing for an editor to show, and some clients
// refuse an empty text), and List, Glob, Grep, Download, Append and
// Execute.
//
// Build one with NewBuffered, which returns a *BufferedSandbox when the
// disk backend is a sandbox.LocalShell.
type Buffered struct {
	disk Backend // the backend given
	fs   *FilesystemBackend
	bufs Buffers
}

// BufferedSandbox is a Buffered sandbox.LocalShell: its commands run on the disk
// as the shell's do.
type BufferedSandbox struct {
	*Buffered
	sb Sandbox
}

var (
	_ Backend    = (*Buffered)(nil)
	_ Appender   = (*Buffered)(nil)
	_ NameLister = (*Buffered)(nil)
	_ TextLister = (*Buffered)(nil)
	_ Sandbox    = (*BufferedSandbox)(nil)
)

// diskSandbox is a sandbox.LocalShell: a Sandbox whose files are a
// FilesystemBackend's. Only the packages under backend can name
// diskkey.Key, so no other type implements BufferedDisk; and a type that
// embeds a LocalShell inherits the method but is not the sandbox it
// returns, which NewBuffered checks: such a wrapper's own Read, Write or
// Edit would be passed by.
type diskSandbox interface {
	Sandbox
	BufferedDisk(diskkey.Key) (*FilesystemBackend, Sandbox)
}

// NewBuffered returns disk with its files' text read and written through
// bufs: a *Buffered, or a *BufferedSandbox when disk is a
// *sandbox.LocalShell. disk must be a *FilesystemBackend or a
// *sandbox.LocalShell in virtual mode (the checks of host paths are
// theirs). With neither function of bufs set it returns disk itself.
func NewBuffered(disk Backend, bufs Buffers) (Backend, error) {
	var fs *FilesystemBackend
	var sb Sandbox
	switch d := disk.(type) {
	case *FilesystemBackend:
		fs = d
	case diskSandbox:
		if fs, sb = d.BufferedDisk(diskkey.Key{}); sb != disk {
			return nil, fmt.Errorf("buffered backend: %T is not a *FilesystemBackend or a *sandbox.LocalShell (it wraps one)", disk)
		}
	default:
		return nil, fmt.Errorf("buffered backend: %T is not a *FilesystemBackend or a *sandbox.LocalShell", disk)
	}
	if fs == nil || !fs.virtual {
		return nil, errors.New("buffered backend: the filesystem backend must be in virtual mode: its paths are not confined otherwise")
	}
	if bufs.ReadText == nil && bufs.WriteText == nil {
		return disk, nil
	}
	b := &Buffered{disk: disk, fs: fs, bufs: bufs}
	if sb != nil {
		return &BufferedSandbox{Buffered: b, sb: sb}, nil
	}
	return b, nil
}

// Execute runs the command as the shell does, on the disk.
func (b *BufferedSandbox) Execute(ctx context.Context, command string, timeout time.Duration) (ExecResult, error) {
	return b.sb.Execute(ctx, command, timeout)
}

// ID returns the shell's ID.
func (b *BufferedSandbox) ID() string { return b.sb.ID() }

// TimeoutLimits implements TimeoutLimiter, as the sandbox it wraps.
func (b *BufferedSandbox) TimeoutLimits() (def, max time.Duration) { return Limits(b.sb) }

// errChanged reports a file replaced while the buffers read it.
var errChanged = errors.New("the file was replaced while the editor read it; read it again")

// textual reports whether b is text an editor holds: valid UTF-8 without
// a NUL byte (a binary file would not survive a round trip through a text
// buffer).
func textual[T string | []byte](b T) bool {
	return utf8.ValidString(string(b)) && strings.IndexByte(string(b), 0) < 0
}

// buffersErr is the error of op on p when the buffers failed with err.
func buffersErr(ctx context.Context, op, p string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("%s %s through the editor: %w", op, p, cerr)
	}
	return fmt.Errorf("%s %s through the editor: %w", op, p, err)
}

// fileText returns the text of the file at the clean virtual path p,
// checked as Read checks p: the buffers' when they read, the disk's
// otherwise. isText is false (and content empty) for a file the disk
// keeps (see Buffered).
func (b *Buffered) fileText(ctx context.Context, op, p string) (content string, isText bool, err error) {
	if err := b.fs.guard(op, p, AccessRead); err != nil {
		return "", false, err
	}
	disk, id, isText, err := b.fs.textFile(p)
	if err != nil {
		return "", false, fsErr(op, p, err)
	}
	if !isText || b.bufs.ReadText == nil {
		return string(disk), isText, nil
	}
	text, err := b.bufs.ReadText(ctx, b.fs.hostPath(p))
	if err != nil {
		return "", false, buffersErr(ctx, op, p, err)
	}
	if max := b.fs.maxSize; max >= 0 && int64(len(text)) > max {
		return "", false, fmt.Errorf("%s %s through the editor: %w: the editor's text is %d bytes, over the limit of %d", op, p, ErrTooLarge, len(text), max)
	}
	if err := b.fs.sameFile(p, id); err != nil {
		return "", false, fsErr(op, p, err)
	}
	return text, true, nil
}

// writeText gives the clean virtual path p, checked, the text content
// through the buffers.
func (b *Buffered) writeText(ctx context.Context, op, p, content string) error {
	if err := b.bufs.WriteText(ctx, b.fs.hostPath(p), content); err != nil {
		return buffersErr(ctx, op, p, err)
	}
	// The editor may have saved the change, or kept it in its buffer: the
	// observer looks at the disk.
	Report(ctx, Change{Path: b.fs.hostPath(p)})
	if b.fs.linkedNow(p) {
		return fmt.Errorf("%s %s: %w: a symbolic link took the path's place while the editor wrote it, which may have written where it points", op, p, ErrPermission)
	}
	return nil
}

// buffersWrite reports whether content is written through the buffers.
func (b *Buffered) buffersWrite(content string) bool {
	return b.bufs.WriteText != nil && content != "" && textual(content)
}

// List implements Backend, on the disk.
func (b *Buffered) List(ctx context.Context, path string) ([]FileInfo, error) {
	return b.disk.List(ctx, path)
}

// ListNames implements NameLister, on the disk.
func (b *Buffered) ListNames(ctx context.Context, path string) ([]FileInfo, error) {
	return ListNames(ctx, b.disk, path)
}

// ListText implements TextLister, on the disk.
func (b *Buffered) ListText(ctx context.Context, path string) (string, error) {
	return ListText(ctx, b.disk, path)
}

// Grep implements Backend, on the disk.
func (b *Buffered) Grep(ctx context.Context, q GrepQuery) ([]GrepMatch, error) {
	return b.disk.Grep(ctx, q)
}

// Glob implements Backend, on the disk.
func (b *Buffered) Glob(ctx context.Context, pattern, path string) ([]FileInfo, error) {
	return b.disk.Glob(ctx, pattern, path)
}

// Download implements Backend, on the disk.
func (b *Buffered) Download(ctx context.Context, paths []string) []FileResult {
	return b.disk.Download(ctx, paths)
}

// Append implements Appender, on the disk.
func (b *Buffered) Append(ctx context.Context, path, text string) error {
	return Append(ctx, b.disk, path, text)
}

// Read implements Backend: a text file's lines come from the buffers.
func (b *Buffered) Read(ctx context.Context, path string, offset, limit int) (ReadResult, error) {
	if b.bufs.ReadText == nil {
		return b.disk.Read(ctx, path, offset, limit)
	}
	p, err := b.fs.clean(path)
	if err != nil {
		return ReadResult{}, err
	}
	text, isText, err := b.fileText(ctx, "read", p)
	if err != nil {
		return ReadResult{}, err
	}
	if !isText {
		return b.disk.Read(ctx, p, offset, limit)
	}
	return stringLines(text, offset, limit)
}

// Write implements Backend: it creates the file through the buffers, once
// the disk says nothing is there.
func (b *Buffered) Write(ctx context.Context, path, content string) error {
	if !b.buffersWrite(content) {
		return b.disk.Write(ctx, path, content)
	}
	p, err := b.fs.clean(path)
	if err != nil {
		return err
	}
	if p == "/" {
		return opErr("write", p, fmt.Errorf("%w (a directory)", ErrExists))
	}
	if err := b.fs.guard("write", p, AccessWrite); err != nil {
		return err
	}
	defer b.fs.lock(p)()
	if err := b.fs.placeFor(ctx, "write", p, false); err != nil {
		return err
	}
	return b.writeText(ctx, "write", p, content)
}

// Upload implements Backend: a text file goes through the buffers, any
// other to the disk.
func (b *Buffered) Upload(ctx context.Context, files []File) []FileResult {
	out := make([]FileResult, len(files))
	for i, file := range files {
		out[i].Path = file.Path
		if err := ctx.Err(); err != nil {
			out[i].Err = err
			continue
		}
		if !b.buffersWrite(string(file.Content)) {
			out[i].Err = b.disk.Upload(ctx, []File{file})[0].Err
			continue
		}
		out[i].Err = b.upload(ctx, file)
	}
	return out
}

// upload writes one file through the buffers, as FilesystemBackend's
// upload would write it.
func (b *Buffered) upload(ctx context.Context, file File) error {
	p, err := b.fs.clean(file.Path)
	if err != nil {
		return err
	}
	if p == "/" {
		return opErr("upload", p, ErrIsDir)
	}
	if err := b.fs.guard("upload", p, AccessWrite); err != nil {
		return err
	}
	defer b.fs.lock(p)()
	if err := b.fs.placeFor(ctx, "upload", p, true); err != nil {
		return err
	}
	return b.writeText(ctx, "upload", p, string(file.Content))
}

// Edit implements Backend: the edit changes the buffers' text (the disk's
// without ReadText) and writes the result through them.
func (b *Buffered) Edit(ctx context.Context, path, oldString, newString string, replaceAll bool) (int, error) {
	if b.bufs.WriteText == nil {
		return b.disk.Edit(ctx, path, oldString, newString, replaceAll)
	}
	p, err := b.fs.clean(path)
	if err != nil {
		return 0, err
	}
	if err := b.fs.guard("edit", p, AccessAll); err != nil {
		return 0, err
	}
	unlock := b.fs.lock(p)
	text, isText, err := b.fileText(ctx, "edit", p)
	if err != nil || !isText {
		unlock()
		if err != nil {
			return 0, err
		}
		// Not text, or over the limit: the disk's edit, which locks p
		// itself.
		return b.disk.Edit(ctx, path, oldString, newString, replaceAll)
	}
	defer unlock()
	content, n, err := ReplaceIn(text, oldString, newString, replaceAll)
	if err != nil {
		return 0, opErr("edit", p, err)
	}
	if !b.buffersWrite(content) {
		// Emptied (or made binary): the disk takes it, as Upload would.
		if err := b.fs.put(ctx, "edit", p, stringBytes(content)); err != nil {
			return 0, err
		}
		return n, nil
	}
	if err := b.writeText(ctx, "edit", p, content); err != nil {
		return 0, err
	}
	return n, nil
}
