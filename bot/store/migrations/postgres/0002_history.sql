-- Every completed check run, whatever its conclusion: the denominator of failure rates.
CREATE TABLE runs (
    repo text NOT NULL,
    check_run_id bigint NOT NULL,
    check_name text NOT NULL,
    head_sha text NOT NULL,
    branch text,
    pr_number integer,
    author text,
    attempt integer NOT NULL,
    conclusion text NOT NULL,
    completed_at double precision NOT NULL,
    html_url text NOT NULL,
    PRIMARY KEY (repo, check_run_id)
);
CREATE INDEX runs_check ON runs (repo, check_name, completed_at);
CREATE INDEX runs_commit ON runs (repo, head_sha);
CREATE INDEX runs_branch ON runs (repo, check_name, branch, completed_at) WHERE pr_number IS NULL;

-- Every failed test in a recorded run, with the run's fields copied: history reads one table.
CREATE TABLE occurrences (
    repo text NOT NULL,
    check_run_id bigint NOT NULL,
    check_name text NOT NULL,
    test_key text NOT NULL,
    test_id text NOT NULL,
    signature text NOT NULL,
    generic boolean NOT NULL,
    location text,
    message text NOT NULL,
    head_sha text NOT NULL,
    branch text,
    pr_number integer,
    author text,
    attempt integer NOT NULL,
    at double precision NOT NULL,
    verdict text NOT NULL,
    html_url text NOT NULL,
    PRIMARY KEY (repo, check_run_id, test_key)
);
CREATE INDEX occurrences_test ON occurrences (repo, test_key, at);
