-- The context of each run (issue 28). A check run's start, and the runner its failed job's
-- log names; a failed test's own duration where its report gives one.
ALTER TABLE runs ADD COLUMN started_at double precision;
ALTER TABLE runs ADD COLUMN runner_name text;
ALTER TABLE runs ADD COLUMN runner_os text;
ALTER TABLE runs ADD COLUMN runner_image text;
ALTER TABLE occurrences ADD COLUMN test_seconds double precision;

-- The branch a repository's runs are compared with: its default branch, as webhooks say.
ALTER TABLE repositories ADD COLUMN default_branch text;

-- Every GitHub Actions job as its `workflow_job` webhooks described it, passed or failed,
-- by its check run: its runner, labels and attempt, and its workflow run, whose jobs are
-- counted. `stage`: how far the job had got (queued 0, in progress 1, completed 2).
CREATE TABLE workflow_jobs (
    repo text NOT NULL,
    check_run_id bigint NOT NULL,
    run_id bigint NOT NULL,
    run_attempt integer NOT NULL,
    workflow_name text,
    job_name text NOT NULL,
    runner_name text,
    runner_group_name text,
    labels jsonb NOT NULL,
    started_at double precision,
    completed_at double precision,
    conclusion text,
    stage integer NOT NULL,
    received_at double precision NOT NULL,
    PRIMARY KEY (repo, check_run_id)
);
CREATE INDEX workflow_jobs_run ON workflow_jobs (repo, run_id, run_attempt);
CREATE INDEX workflow_jobs_received ON workflow_jobs (received_at);
