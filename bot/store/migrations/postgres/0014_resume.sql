-- The `/flaky` budget per person across a repository's PRs counts these rows too; a limited
-- comment says which budget it was over ('pr' or 'repo').
ALTER TABLE command_comments ADD COLUMN limited_by text;
CREATE INDEX command_comments_login ON command_comments (repo, login, received_at);
CREATE INDEX command_comments_login_refused ON command_comments (repo, login, refused_at);

-- What a failed job said (its log, annotations and reports, read and extracted), by check run
-- and the settings that read it: a delivery retried after a rate limit or a fault finds it
-- here instead of downloading the log again.
CREATE TABLE job_extractions (
    repo TEXT NOT NULL,
    check_run_id bigint NOT NULL,
    read_key TEXT NOT NULL,
    extraction TEXT NOT NULL,
    stored_at double precision NOT NULL,
    PRIMARY KEY (repo, check_run_id, read_key)
);
CREATE INDEX job_extractions_stored ON job_extractions (stored_at);
