-- When the bot last saw each tracking issue closed (NULL: open). Automatic closing looks at
-- the open ones of a check after each of its passing runs.
ALTER TABLE tracking_issues ADD COLUMN closed_at double precision;
CREATE INDEX tracking_issues_open ON tracking_issues (repo) WHERE closed_at IS NULL;

-- The earliest time (epoch seconds, by the database's clock) the next content-creating
-- GitHub request of each installation may start, shared by every replica. SQLite has no
-- such table: it serves one process, which paces its own writes.
CREATE TABLE write_pace (
    installation_id bigint PRIMARY KEY,
    next_at double precision NOT NULL
);
