-- The per-PR daily rerun cap counts a PR's rerun requests; rows from before have none.
ALTER TABLE reruns ADD COLUMN pr_number integer;
CREATE INDEX reruns_pr ON reruns (repo, pr_number, requested_at);

-- One row per `/flaky` comment, acted on under one delivery: another delivery of the same
-- comment finds it taken; the rate limit counts the rows.
CREATE TABLE command_comments (
    repo text NOT NULL,
    comment_id bigint NOT NULL,
    pr_number integer NOT NULL,
    login text NOT NULL,
    delivery_id text NOT NULL,
    limited boolean NOT NULL,
    finished boolean NOT NULL DEFAULT false,
    received_at double precision NOT NULL,
    PRIMARY KEY (repo, comment_id)
);
CREATE INDEX command_comments_user ON command_comments (repo, pr_number, login, received_at);

-- `/flaky wrong`: who disputed the verdict on which test (match key, or '*' for the whole PR).
CREATE TABLE feedback (
    repo text NOT NULL,
    pr_number integer NOT NULL,
    test_key text NOT NULL,
    login text NOT NULL,
    given_at double precision NOT NULL,
    PRIMARY KEY (repo, pr_number, test_key, login)
);
