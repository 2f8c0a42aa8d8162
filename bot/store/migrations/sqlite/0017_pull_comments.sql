-- A pull's issue comments as GitHub counted them when the bot last read it or heard of it
-- (NULL: not said). A PR that had none when its failure was triaged holds no comment of the
-- bot's, so its first comment is posted without listing the PR's comments first; a
-- `sticky_comments` row with comment_id 0, written just before that post, records that the
-- bot may have posted (a crash before its id was saved), so the next triage searches again.
ALTER TABLE pulls ADD COLUMN comments INTEGER;
