-- What the import walks read, kept across processes and replicas. A blob's text never
-- changes (it is named by its SHA); `unreadable` says why a blob was not text instead.
CREATE TABLE source_blobs (
    sha TEXT PRIMARY KEY,
    text TEXT,
    unreadable TEXT,
    stored_at double precision NOT NULL
);
CREATE INDEX source_blobs_stored ON source_blobs (stored_at);
-- A finished walk of one test file's imports at one commit, under one version of the walk
-- and its limits (`walk_key`): a further failure of the same test on the same head reads
-- nothing from GitHub, in any replica.
CREATE TABLE import_walks (
    repo TEXT NOT NULL,
    sha TEXT NOT NULL,
    test_file TEXT NOT NULL,
    walk_key TEXT NOT NULL,
    walk TEXT NOT NULL,
    stored_at double precision NOT NULL,
    PRIMARY KEY (repo, sha, test_file, walk_key)
);
CREATE INDEX import_walks_stored ON import_walks (stored_at);
