-- Appends: a file row with appended = true holds text added to the end of
-- the file as of the parent checkpoint, not the whole file.
ALTER TABLE {{schema}}.files ADD COLUMN appended boolean NOT NULL DEFAULT false;
