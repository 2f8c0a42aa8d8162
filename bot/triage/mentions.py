"""Which owners a tracking issue @-mentions with `owners: mention` (pure).

A mention notifies people, so a stranger must not be able to aim it: one account's pull
request that fails then passes (as anyone can make happen) opens an issue, and would notify
every team CODEOWNERS names. So owners are mentioned only on evidence no single outsider
makes (`corroborated`: a failure outside any pull request, which takes a push, or failures on
pull requests of two authors or more) or when the failing pull request's author is trusted
(the handler asks GitHub), and each owner at most MENTIONS_PER_OWNER_PER_DAY times a day
across a repository's issues. An owner an issue mentioned stays mentioned on it, spending
nothing more; the others are shown without `@`, which notifies nobody.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from bot.triage.models import Occurrence
from bot.triage.owners import OwnerKind, owner_of

MENTIONS_PER_OWNER_PER_DAY = 3


def mentionable(owner: str) -> bool:
    """A user or team, as CODEOWNERS writes them: an email address notifies nobody."""
    parsed = owner_of(owner)
    return parsed is not None and parsed.kind != OwnerKind.EMAIL


def corroborated(occurrences: Sequence[Occurrence]) -> bool:
    """Failures no single outsider can make: one outside any pull request (a push to the
    repository), or on pull requests of two authors or more."""
    if any(o.pr_number is None for o in occurrences):
        return True
    return len({o.author.casefold() for o in occurrences if o.author}) >= 2


def sole_author(occurrences: Sequence[Occurrence]) -> str | None:
    """The one author of the pull requests the failures came from, if there is one."""
    authors = {o.author for o in occurrences if o.pr_number is not None and o.author}
    return next(iter(authors)) if len(authors) == 1 else None


def to_mention(
    owners: Sequence[str],
    before: Collection[str],
    spent: Mapping[str, int],
    *,
    evidence: bool,
    budget: int = MENTIONS_PER_OWNER_PER_DAY,
) -> list[str]:
    """The owners to write with `@`: each the issue mentioned before (`before`, lower case),
    and, on `evidence`, each other whose mentions in the last day (`spent`, by lower-case
    name) are under `budget`."""
    chosen = []
    for owner in owners:
        key = owner.lower()
        if not mentionable(owner):
            continue
        if key in before or (evidence and spent.get(key, 0) < budget):
            chosen.append(owner)
    return chosen
