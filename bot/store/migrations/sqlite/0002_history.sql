-- Every completed check run, whatever its conclusion: the denominator of failure rates.
CREATE TABLE runs (
    repo TEXT NOT NULL,
    check_run_id INTEGER NOT NULL,
    check_name TEXT NOT NULL,
    head_sha TEXT NOT NULL,
    branch TEXT,
    pr_number INTEGER,
    author TEXT,
    attempt INTEGER NOT NULL,
    conclusion TEXT NOT NULL,
    completed_at REAL NOT NULL,
    html_url TEXT NOT NULL,
    PRIMARY KEY (repo, check_run_id)
);
CREATE INDEX runs_check ON runs (repo, check_name, completed_at);
CREATE INDEX runs_commit ON runs (repo, head_sha);
CREATE INDEX runs_branch ON runs (repo, check_name, branch, completed_at) WHERE pr_number IS NULL;

-- Every failed test in a recorded run, with the run's fields copied: history reads one table.
CREATE TABLE occurrences (
    repo TEXT NOT NULL,
    check_run_id INTEGER NOT NULL,
    check_name TEXT NOT NULL,
    test_key TEXT NOT NULL,
    test_id TEXT NOT NULL,
    signature TEXT NOT NULL,
    generic INTEGER NOT NULL,
    location TEXT,
    message TEXT NOT NULL,
    head_sha TEXT NOT NULL,
    branch TEXT,
    pr_number INTEGER,
    author TEXT,
    attempt INTEGER NOT NULL,
    at REAL NOT NULL,
    verdict TEXT NOT NULL,
    html_url TEXT NOT NULL,
    PRIMARY KEY (repo, check_run_id, test_key)
);
CREATE INDEX occurrences_test ON occurrences (repo, test_key, at);
