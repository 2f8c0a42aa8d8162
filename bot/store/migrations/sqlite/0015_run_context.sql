-- The context of each run (issue 28). A check run's start, and the runner its failed job's
-- log names; a failed test's own duration where its report gives one.
ALTER TABLE runs ADD COLUMN started_at REAL;
ALTER TABLE runs ADD COLUMN runner_name TEXT;
ALTER TABLE runs ADD COLUMN runner_os TEXT;
ALTER TABLE runs ADD COLUMN runner_image TEXT;
ALTER TABLE occurrences ADD COLUMN test_seconds REAL;

-- The branch a repository's runs are compared with: its default branch, as webhooks say.
ALTER TABLE repositories ADD COLUMN default_branch TEXT;

-- Every GitHub Actions job as its `workflow_job` webhooks described it, passed or failed,
-- by its check run: its runner, labels and attempt, and its workflow run, whose jobs are
-- counted. `stage`: how far the job had got (queued 0, in progress 1, completed 2).
CREATE TABLE workflow_jobs (
    repo TEXT NOT NULL,
    check_run_id INTEGER NOT NULL,
    run_id INTEGER NOT NULL,
    run_attempt INTEGER NOT NULL,
    workflow_name TEXT,
    job_name TEXT NOT NULL,
    runner_name TEXT,
    runner_group_name TEXT,
    labels TEXT NOT NULL,
    started_at REAL,
    completed_at REAL,
    conclusion TEXT,
    stage INTEGER NOT NULL,
    received_at REAL NOT NULL,
    PRIMARY KEY (repo, check_run_id)
);
CREATE INDEX workflow_jobs_run ON workflow_jobs (repo, run_id, run_attempt);
CREATE INDEX workflow_jobs_received ON workflow_jobs (received_at);
