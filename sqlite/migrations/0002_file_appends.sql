-- Appends: a file row with appended = 1 holds text added to the end of the
-- file as of the parent checkpoint, not the whole file.
ALTER TABLE files ADD COLUMN appended INTEGER NOT NULL DEFAULT 0;
