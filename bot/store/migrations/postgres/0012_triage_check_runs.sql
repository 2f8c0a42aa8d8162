-- The bot's own check run ("flaky-triage", `check_run: true`) on each head it triaged: one
-- per head, updated in place. `output_sha` is the hash of the last title, summary and
-- conclusion sent, so an unchanged result costs no call; `annotations` the JSON list of
-- the keys of the annotations sent, since GitHub appends every update's annotations.
CREATE TABLE triage_check_runs (
    repo TEXT NOT NULL,
    head_sha TEXT NOT NULL,
    pr_number integer NOT NULL,
    check_run_id bigint NOT NULL,
    output_sha TEXT NOT NULL,
    annotations TEXT NOT NULL,
    PRIMARY KEY (repo, head_sha)
);
