-- One row per tracking issue, keyed by the test's match key or a cluster's key.
CREATE TABLE tracking_issues (
    repo TEXT NOT NULL,
    key TEXT NOT NULL,
    issue_number INTEGER NOT NULL,
    title TEXT NOT NULL,
    tests TEXT NOT NULL,
    signature TEXT NOT NULL,
    checks TEXT NOT NULL,
    hint TEXT,
    created_at REAL NOT NULL,
    body_sha TEXT NOT NULL,
    PRIMARY KEY (repo, key)
);
-- The per-repository hourly cap on new issues counts recent rows.
CREATE INDEX tracking_issues_created ON tracking_issues (repo, created_at);

-- Which tracking issue each failed test is linked to from the PR comment.
CREATE TABLE tracking_members (
    repo TEXT NOT NULL,
    test_key TEXT NOT NULL,
    key TEXT NOT NULL,
    PRIMARY KEY (repo, test_key)
);
CREATE INDEX tracking_members_key ON tracking_members (repo, key);
