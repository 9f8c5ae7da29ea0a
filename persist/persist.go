// Package persist opens the checkpoint saver and the cross-thread store of
// one database from a single DSN, the value of the CLI's --db flag:
//
//	""                                  SQLite at DefaultPath()
//	/path/to/file.db, ./rel.db, ~/x.db  SQLite (the directory is created)
//	sqlite:/path/to/file.db             SQLite, explicitly
//	postgres://user@host:5432/db?...    PostgreSQL (also postgresql://)
//	memory:                             in-memory, gone when the process ends
//
// PostgreSQL's schema defaults to "deepagents"; a "schema" parameter in the
// URL chooses another (postgres://host/db?schema=agents) and is not passed
// on to the server.
package persist

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/postgres"
	"github.com/deepagents-go/deepagents/sqlite"
	"github.com/deepagents-go/deepagents/store"
)

// Kind names a database implementation.
type Kind string

// The kinds of database a DSN can name.
const (
	KindSQLite   Kind = "sqlite"
	KindPostgres Kind = "postgres"
	KindMemory   Kind = "memory"
)

// ErrDSN reports a DSN that names no supported database.
var ErrDSN = errors.New("persist: unsupported database DSN")

// Options passes implementation options through; nil fields mean defaults.
type Options struct {
	SQLite   *sqlite.Options   // for a SQLite DSN
	Postgres *postgres.Options // for a PostgreSQL DSN; a schema URL parameter overrides Schema
}

// DB is an open database: a Saver and a Store sharing its connections.
type DB struct {
	Kind  Kind             // which implementation
	Saver checkpoint.Saver // the thread checkpoints
	Store store.Store      // the cross-thread store
	// Location is the SQLite file path, the PostgreSQL URL without its
	// password, or "memory:".
	Location string
	close    func() error
	size     func(context.Context) (int64, error)
	vacuum   func(context.Context) error
}

// Close closes the database (releasing leases still held, see the
// implementations' Close).
func (d *DB) Close() error { return d.close() }

// Size returns the bytes the database takes: the SQLite file with its log,
// or the PostgreSQL schema's tables. An in-memory database reports zero.
func (d *DB) Size(ctx context.Context) (int64, error) {
	if d.size == nil {
		return 0, nil
	}
	return d.size(ctx)
}

// Vacuum reclaims the space of deleted threads (see sqlite.DB.Vacuum and
// postgres.DB.Vacuum). It does nothing for an in-memory database.
func (d *DB) Vacuum(ctx context.Context) error {
	if d.vacuum == nil {
		return nil
	}
	return d.vacuum(ctx)
}

// Parse tells which database dsn names and returns what to open it with:
// a file path for SQLite, the URL for PostgreSQL. An empty dsn is an error;
// Open handles it with DefaultPath. Key=value PostgreSQL connection
// strings are not recognised: use a URL.
func Parse(dsn string) (Kind, string, error) {
	d := strings.TrimSpace(dsn)
	lower := strings.ToLower(d)
	switch {
	case d == "":
		return "", "", fmt.Errorf("%w: empty", ErrDSN)
	case lower == "memory:" || lower == ":memory:" || lower == "memory://":
		return KindMemory, "", nil
	case strings.HasPrefix(lower, "postgres://") || strings.HasPrefix(lower, "postgresql://"):
		return KindPostgres, d, nil
	case strings.HasPrefix(lower, "sqlite://"):
		d = d[len("sqlite://"):]
	case strings.HasPrefix(lower, "sqlite:"):
		d = d[len("sqlite:"):]
	case strings.HasPrefix(lower, "file://"):
		d = d[len("file://"):]
	case strings.HasPrefix(lower, "file:"):
		d = d[len("file:"):]
	case strings.Contains(d, "://"):
		scheme, _, _ := strings.Cut(d, "://")
		return "", "", fmt.Errorf("%w: scheme %q (want a file path, postgres:// or memory:)", ErrDSN, scheme)
	}
	if d == "" || strings.ContainsRune(d, 0) {
		return "", "", fmt.Errorf("%w: %q", ErrDSN, dsn)
	}
	if d == "~" || strings.HasPrefix(d, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", "", fmt.Errorf("persist: %q: %w", dsn, err)
		}
		d = filepath.Join(home, d[1:])
	}
	return KindSQLite, d, nil
}

// DefaultPath is the SQLite file used when no DSN is given:
// $XDG_DATA_HOME/deepagents/deepagents.db, else the platform's data
// directory (~/.local/share on Linux and BSD, ~/Library/Application Support
// on macOS, %LocalAppData% on Windows).
func DefaultPath() (string, error) {
	if x := os.Getenv("XDG_DATA_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "deepagents", "deepagents.db"), nil
	}
	var dir string
	switch runtime.GOOS {
	case "windows":
		d, err := os.UserCacheDir() // %LocalAppData%
		if err != nil {
			return "", fmt.Errorf("persist: default path: %w", err)
		}
		dir = d
	case "darwin", "ios":
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("persist: default path: %w", err)
		}
		dir = filepath.Join(home, "Library", "Application Support")
	default:
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("persist: default path: %w", err)
		}
		dir = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(dir, "deepagents", "deepagents.db"), nil
}

// Open opens the database dsn names (see the package documentation); an
// empty dsn means DefaultPath(). opts may be nil.
func Open(ctx context.Context, dsn string, opts *Options) (*DB, error) {
	if opts == nil {
		opts = &Options{}
	}
	if strings.TrimSpace(dsn) == "" {
		p, err := DefaultPath()
		if err != nil {
			return nil, err
		}
		dsn = p
	}
	kind, target, err := Parse(dsn)
	if err != nil {
		return nil, err
	}
	switch kind {
	case KindMemory:
		return &DB{Kind: kind, Saver: checkpoint.NewMemorySaver(), Store: store.NewMemoryStore(), Location: "memory:", close: func() error { return nil }}, nil
	case KindPostgres:
		u, err := url.Parse(target)
		if err != nil {
			return nil, fmt.Errorf("persist: %w", err)
		}
		var po postgres.Options
		if opts.Postgres != nil {
			po = *opts.Postgres
		}
		q := u.Query()
		if s := q.Get("schema"); s != "" {
			po.Schema = s
			q.Del("schema")
			u.RawQuery = q.Encode()
		}
		db, err := postgres.Open(ctx, u.String(), &po)
		if err != nil {
			return nil, err
		}
		return &DB{Kind: kind, Saver: db.Saver(), Store: db.Store(), Location: u.Redacted(), close: db.Close, size: db.Size, vacuum: db.Vacuum}, nil
	default:
		if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
			return nil, fmt.Errorf("persist: %w", err)
		}
		db, err := sqlite.Open(ctx, target, opts.SQLite)
		if err != nil {
			return nil, err
		}
		return &DB{Kind: kind, Saver: db.Saver(), Store: db.Store(), Location: db.Path(), close: db.Close, size: db.Size, vacuum: db.Vacuum}, nil
	}
}
