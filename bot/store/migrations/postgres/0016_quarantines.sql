-- Quarantined tests: one row per quarantine of a test (by match key), kept after it ends
-- (ended_at, ended_by) so the record says who quarantined what, when, and for how long. At
-- most one row of a test is open (not ended); an open row whose expires_at has passed is
-- over and is ended when the test is quarantined again or the repository's quarantines are
-- next read. `reminded_at`: when its owner was told it ends soon (cleared by a renewal);
-- `digested_at`: when its last weekly digest was posted on the tracking issue.
CREATE TABLE quarantines (
    repo TEXT NOT NULL,
    test_key TEXT NOT NULL,
    since double precision NOT NULL,
    test_id TEXT NOT NULL,
    issue_number INTEGER,
    by_login TEXT NOT NULL,
    owner TEXT NOT NULL,
    expires_at double precision NOT NULL,
    source TEXT NOT NULL,
    reason TEXT NOT NULL,
    ended_at double precision,
    ended_by TEXT,
    reminded_at double precision,
    digested_at double precision,
    PRIMARY KEY (repo, test_key, since)
);
CREATE UNIQUE INDEX quarantines_open ON quarantines (repo, test_key) WHERE ended_at IS NULL;
