-- Each owner a tracking issue @-mentioned (by the owner's name in lower case): the owner
-- stays mentioned on that issue, and the per-owner daily budget counts the recent rows.
CREATE TABLE owner_mentions (
    repo TEXT NOT NULL,
    owner TEXT NOT NULL,
    key TEXT NOT NULL,
    at REAL NOT NULL,
    PRIMARY KEY (repo, owner, key)
);
CREATE INDEX owner_mentions_at ON owner_mentions (repo, owner, at);
