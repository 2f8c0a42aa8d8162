-- A refused `/flaky` comment: when, and how many of the PR's comments had been refused in
-- the hour before it (its author's, and everyone's). The answer (a reply, a reaction or
-- nothing) is decided from these counts; they are kept, so a retry decides the same.
ALTER TABLE command_comments ADD COLUMN refused_at REAL;
ALTER TABLE command_comments ADD COLUMN refused_before_by_login INTEGER;
ALTER TABLE command_comments ADD COLUMN refused_before_on_pr INTEGER;
CREATE INDEX command_comments_refused ON command_comments (repo, pr_number, refused_at);
