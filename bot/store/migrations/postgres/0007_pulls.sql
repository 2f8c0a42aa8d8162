-- What the bot last learned of each pull request, from reading it or from its
-- pull_request webhooks: a further failure of the same head is triaged without reading the
-- pull again. `updated_at` is GitHub's (epoch seconds), so an older event handled late never
-- replaces a newer state; `trusted` false when two states carried the same time but different
-- heads (which came last is unknown: the next triage reads the pull).
CREATE TABLE pulls (
    repo TEXT NOT NULL,
    pr_number integer NOT NULL,
    state TEXT NOT NULL,
    author TEXT NOT NULL,
    head_sha TEXT NOT NULL,
    base_sha TEXT NOT NULL,
    base_ref TEXT NOT NULL,
    changed_files integer NOT NULL,
    updated_at double precision NOT NULL,
    trusted boolean NOT NULL,
    PRIMARY KEY (repo, pr_number)
);
CREATE INDEX deliveries_waiting_event ON deliveries (event) WHERE state IN ('pending', 'claimed');
