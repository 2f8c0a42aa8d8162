CREATE TABLE deliveries (
    id TEXT PRIMARY KEY,
    event TEXT NOT NULL,
    action TEXT,
    payload BLOB NOT NULL,
    state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    received_at REAL NOT NULL,
    next_attempt_at REAL NOT NULL,
    lease_until REAL,
    claim_token TEXT,
    last_error TEXT,
    finished_at REAL
);
CREATE INDEX deliveries_due ON deliveries (state, next_attempt_at);

CREATE TABLE check_attempts (
    repo TEXT NOT NULL,
    check_run_id INTEGER NOT NULL,
    pr_number INTEGER NOT NULL,
    head_sha TEXT NOT NULL,
    check_name TEXT NOT NULL,
    html_url TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    conclusion TEXT NOT NULL,
    decisions TEXT NOT NULL,
    rerun_note TEXT,
    recorded_at REAL NOT NULL,
    PRIMARY KEY (repo, check_run_id)
);
CREATE INDEX check_attempts_pr ON check_attempts (repo, pr_number);
CREATE INDEX check_attempts_check ON check_attempts (repo, head_sha, check_name);

CREATE TABLE reruns (
    repo TEXT NOT NULL,
    head_sha TEXT NOT NULL,
    check_name TEXT NOT NULL,
    job_id INTEGER NOT NULL,
    status INTEGER NOT NULL,
    requested_at REAL NOT NULL,
    PRIMARY KEY (repo, job_id)
);
CREATE INDEX reruns_check ON reruns (repo, head_sha, check_name);

CREATE TABLE sticky_comments (
    repo TEXT NOT NULL,
    pr_number INTEGER NOT NULL,
    comment_id INTEGER NOT NULL,
    body_sha TEXT NOT NULL,
    PRIMARY KEY (repo, pr_number)
);

CREATE TABLE installations (
    id INTEGER PRIMARY KEY,
    account TEXT NOT NULL,
    active INTEGER NOT NULL,
    updated_at REAL NOT NULL
);
