-- The per-PR daily rerun cap counts a PR's rerun requests; rows from before have none.
ALTER TABLE reruns ADD COLUMN pr_number INTEGER;
CREATE INDEX reruns_pr ON reruns (repo, pr_number, requested_at);

-- One row per `/flaky` comment, acted on under one delivery: another delivery of the same
-- comment finds it taken; the rate limit counts the rows.
CREATE TABLE command_comments (
    repo TEXT NOT NULL,
    comment_id INTEGER NOT NULL,
    pr_number INTEGER NOT NULL,
    login TEXT NOT NULL,
    delivery_id TEXT NOT NULL,
    limited INTEGER NOT NULL,
    finished INTEGER NOT NULL DEFAULT 0,
    received_at REAL NOT NULL,
    PRIMARY KEY (repo, comment_id)
);
CREATE INDEX command_comments_user ON command_comments (repo, pr_number, login, received_at);

-- `/flaky wrong`: who disputed the verdict on which test (match key, or '*' for the whole PR).
CREATE TABLE feedback (
    repo TEXT NOT NULL,
    pr_number INTEGER NOT NULL,
    test_key TEXT NOT NULL,
    login TEXT NOT NULL,
    given_at REAL NOT NULL,
    PRIMARY KEY (repo, pr_number, test_key, login)
);
