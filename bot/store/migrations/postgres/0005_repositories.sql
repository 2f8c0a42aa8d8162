-- Whether each repository is private, as the last webhook about it said: the dashboard never
-- shows a private repository's tests without the dashboard token.
CREATE TABLE repositories (
    repo TEXT PRIMARY KEY,
    private BOOLEAN NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL
);

CREATE INDEX runs_repo ON runs (repo, completed_at);
