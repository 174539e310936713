"""The people the catalog knows, and the check that every name on a command line is one of them.

A name typed on the command line becomes a Label Studio account with work in it, so a typo
(`carl` for `carol`) would be a new person who silently takes someone's share. Every option that
names people therefore accepts only known names; a new person is named with `--add`, which makes
their account. Known = anyone the catalog records: an annotator with an authoring project, a
person with a QC project (pilot, review), a member of the deciding group, anyone added before.
"""

from __future__ import annotations

import difflib

from curation.core.catalog import Catalog, now
from curation.core.errors import UsageError
from curation.core.progress import note

GROUP = "group"  # the adjudication project's owner in qc_projects, not a person


def annotator_email(name: str) -> str:
    """The e-mail a person logs in with: their name at the annotators' domain, or the e-mail they were named
    by. Label Studio's login form lower-cases the e-mail before it looks the user up, so case never counts."""
    return (name if "@" in name else f"{name}@annotators.local").lower()


def split_names(values: list[str] | str | None) -> list[str]:
    """Names from a comma list or repeated options, trimmed, empty ones dropped, order kept."""
    if values is None:
        return []
    items = [values] if isinstance(values, str) else values
    out: list[str] = []
    for item in items:
        for name in item.split(","):
            if name.strip() and name.strip() not in out:
                out.append(name.strip())
    return out


def known_people(catalog: Catalog) -> set[str]:
    """Every person the catalog records, on any Label Studio server it has used."""
    rows = catalog.con.execute(
        "SELECT name FROM people UNION SELECT annotator FROM ls_projects "
        "UNION SELECT person FROM qc_projects WHERE person <> ?", [GROUP]).fetchall()
    return {r[0] for r in rows if r[0]}


def _suggestion(name: str, known: set[str]) -> str | None:
    by_lower = {k.lower(): k for k in known}
    close = difflib.get_close_matches(name.lower(), sorted(by_lower), n=1, cutoff=0.6)
    return by_lower[close[0]] if close else None


def same_person(name: str, known: set[str]) -> str | None:
    """The known person `name` is, by the Label Studio account both would log in as: `Alice`, `alice` and
    `alice@annotators.local` are one person (one e-mail, one account), whichever way it is typed."""
    by_email = {annotator_email(k): k for k in known}
    return by_email.get(annotator_email(name))


def check_people(catalog: Catalog, named: list[str], add: list[str], role: str) -> list[str]:
    """The people of this run (named and added) by the names the catalog knows them by, sorted. A name
    or e-mail of a known person is that person, in any case; UsageError for a name that is neither known
    nor added (with the closest known name or the list of known ones), and for `--add` of someone known."""
    known = known_people(catalog)
    people: set[str] = set()
    for name in named:
        if (person := same_person(name, known)) is not None:
            people.add(person)
            continue
        if name in add:
            continue
        hint = _suggestion(name, known)
        if hint is not None:
            why = f"did you mean {hint}?"
        elif known:
            why = f"known people: {', '.join(sorted(known))}"
        else:
            why = "nobody is known in this catalog yet"
        raise UsageError(f"unknown {role} {name!r} ({why}); a new person's account is made only when named with "
                         f"--add {name}")
    added: dict[str, str] = {}
    for name in add:
        if annotator_email(name) == annotator_email(GROUP):
            raise UsageError(f"--add {name}: the name {GROUP!r} is kept for the deciding group's project")
        if (person := same_person(name, known)) is not None:
            raise UsageError(f"--add {name}: {person} is already known ({annotator_email(person)}, the same "
                             f"account); name them as {person}, without --add")
        added.setdefault(annotator_email(name), name)  # `--add Dana,dana` is one new person
        if (hint := _suggestion(name, known)) is not None:
            note(f"warning: --add {name} makes a new person; {hint} is already known (check the spelling)")
    return sorted(people | set(added.values()))


def remember_person(catalog: Catalog, name: str, run_id: str | None) -> None:
    """Record a person whose account the toolkit made or used (once; the first run is kept)."""
    remember_people(catalog, [name], run_id)


def remember_people(catalog: Catalog, names: list[str], run_id: str | None) -> None:
    """`remember_person` for many, in one statement."""
    catalog.con.execute("INSERT INTO people (name, added_at, run_id) SELECT unnest(?::VARCHAR[]), ?, ? "
                        "ON CONFLICT DO NOTHING", [names, now(), run_id])
