package sqlcore

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
)

// Migration is one step of a schema: the SQL of a file named after its
// version, such as migrations/001_init.sql.
type Migration struct {
	Version int
	SQL     string
}

// Migrations reads the migrations in the folder "migrations" of fsys, in
// order of version, each text passed through fix when it is set.
func (d *Dialect) Migrations(fsys fs.FS, fix func(string) string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, "migrations")
	if err != nil {
		return nil, err
	}
	var out []Migration
	for _, e := range entries {
		n, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(n)
		if !ok || err != nil {
			return nil, fmt.Errorf("%s: bad migration name %q", d.Name, e.Name())
		}
		b, err := fs.ReadFile(fsys, "migrations/"+e.Name())
		if err != nil {
			return nil, err
		}
		sql := string(b)
		if fix != nil {
			sql = fix(sql)
		}
		out = append(out, Migration{v, sql})
	}
	slices.SortFunc(out, func(a, b Migration) int { return a.Version - b.Version })
	return out, nil
}

// Migrate brings the schema to version latest in tx, a write transaction
// that the caller commits (or ends, when Migrate fails): it creates the
// table schema_version if missing, refuses a schema newer than latest with
// the error of tooNew, and runs the migrations the schema lacks.
func (d *Dialect) Migrate(ctx context.Context, tx Querier, ms []Migration, latest int, tooNew func(version int) error) error {
	if _, err := tx.Exec(ctx, d.sql(`CREATE TABLE IF NOT EXISTS S.schema_version (version INTEGER NOT NULL)`)); err != nil {
		return d.Wrap("open", err)
	}
	var cur int
	if err := tx.QueryRow(ctx, d.sql(`SELECT coalesce(max(version), 0) FROM S.schema_version`)).Scan(&cur); err != nil {
		return d.Wrap("open", err)
	}
	if cur > latest {
		return tooNew(cur)
	}
	if cur == latest {
		return nil
	}
	for _, m := range ms {
		if m.Version <= cur {
			continue
		}
		if _, err := tx.Exec(ctx, m.SQL); err != nil {
			return fmt.Errorf("%s: migration %d: %w", d.Name, m.Version, d.Wrap("migrate", err))
		}
	}
	if _, err := tx.Exec(ctx, d.sql(`DELETE FROM S.schema_version`)); err != nil {
		return d.Wrap("open", err)
	}
	if _, err := tx.Exec(ctx, d.sql(`INSERT INTO S.schema_version (version) VALUES ($1)`), latest); err != nil {
		return d.Wrap("open", err)
	}
	return nil
}
