-- Repositories whose tracking issues on GitHub (those with the label and the bot's hidden
-- block) were all read into tracking_issues once: after that the store knows every one, and a
-- test meeting the threshold needs no search of GitHub before its issue is opened.
CREATE TABLE tracking_synced (
    repo TEXT NOT NULL,
    label TEXT NOT NULL,
    synced_at REAL NOT NULL,
    PRIMARY KEY (repo, label)
);

-- An issue being opened: written before the POST, deleted once its number is saved. One left
-- behind (a crash, an answer lost) means the issue may exist unrecorded: GitHub is searched.
CREATE TABLE tracking_opening (
    repo TEXT NOT NULL,
    key TEXT NOT NULL,
    since REAL NOT NULL,
    PRIMARY KEY (repo, key)
);
