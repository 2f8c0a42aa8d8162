-- When the bot last saw each tracking issue closed (NULL: open). Automatic closing looks at
-- the open ones of a check after each of its passing runs.
ALTER TABLE tracking_issues ADD COLUMN closed_at REAL;
CREATE INDEX tracking_issues_open ON tracking_issues (repo) WHERE closed_at IS NULL;

-- No write_pace table: SQLite serves one process, which paces its own GitHub writes.
