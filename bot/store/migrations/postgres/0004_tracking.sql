-- One row per tracking issue, keyed by the test's match key or a cluster's key.
CREATE TABLE tracking_issues (
    repo text NOT NULL,
    key text NOT NULL,
    issue_number integer NOT NULL,
    title text NOT NULL,
    tests jsonb NOT NULL,
    signature text NOT NULL,
    checks jsonb NOT NULL,
    hint jsonb,
    created_at double precision NOT NULL,
    body_sha text NOT NULL,
    PRIMARY KEY (repo, key)
);
-- The per-repository hourly cap on new issues counts recent rows.
CREATE INDEX tracking_issues_created ON tracking_issues (repo, created_at);

-- Which tracking issue each failed test is linked to from the PR comment.
CREATE TABLE tracking_members (
    repo text NOT NULL,
    test_key text NOT NULL,
    key text NOT NULL,
    PRIMARY KEY (repo, test_key)
);
CREATE INDEX tracking_members_key ON tracking_members (repo, key);
