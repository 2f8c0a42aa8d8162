-- Times are epoch seconds (double precision), as the Store protocol speaks them.
-- GitHub ids (check runs, jobs, comments, installations) outgrow 32 bits: bigint.
CREATE TABLE deliveries (
    id text PRIMARY KEY,
    event text NOT NULL,
    action text,
    payload bytea NOT NULL,
    state text NOT NULL,
    attempts integer NOT NULL DEFAULT 0,
    received_at double precision NOT NULL,
    next_attempt_at double precision NOT NULL,
    lease_until double precision,
    claim_token text,
    last_error text,
    finished_at double precision
);
CREATE INDEX deliveries_due ON deliveries (state, next_attempt_at);
CREATE INDEX deliveries_finished ON deliveries (finished_at) WHERE state IN ('done', 'dead');

CREATE TABLE check_attempts (
    repo text NOT NULL,
    check_run_id bigint NOT NULL,
    pr_number integer NOT NULL,
    head_sha text NOT NULL,
    check_name text NOT NULL,
    html_url text NOT NULL,
    attempt integer NOT NULL,
    conclusion text NOT NULL,
    decisions jsonb NOT NULL,
    rerun_note text,
    recorded_at double precision NOT NULL,
    PRIMARY KEY (repo, check_run_id)
);
CREATE INDEX check_attempts_pr ON check_attempts (repo, pr_number);
CREATE INDEX check_attempts_check ON check_attempts (repo, head_sha, check_name);

-- seq orders reruns requested in the same instant by the order they were taken.
CREATE TABLE reruns (
    seq bigint GENERATED ALWAYS AS IDENTITY,
    repo text NOT NULL,
    head_sha text NOT NULL,
    check_name text NOT NULL,
    job_id bigint NOT NULL,
    status integer NOT NULL,
    requested_at double precision NOT NULL,
    PRIMARY KEY (repo, job_id)
);
CREATE INDEX reruns_check ON reruns (repo, head_sha, check_name);

CREATE TABLE sticky_comments (
    repo text NOT NULL,
    pr_number integer NOT NULL,
    comment_id bigint NOT NULL,
    body_sha text NOT NULL,
    PRIMARY KEY (repo, pr_number)
);

CREATE TABLE installations (
    id bigint PRIMARY KEY,
    account text NOT NULL,
    active boolean NOT NULL,
    updated_at double precision NOT NULL
);
