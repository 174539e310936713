"""Annotator accounts that can log in, each in a Label Studio organization of their own.

Label Studio Community 1.23.2 offers no password in its user API (accounts made through it
cannot log in) and no per-project membership: every member of an organization sees every
project of it. Its strongest separation is one organization per annotator. Both need the
server's own management shell, so account set-up runs Label Studio's Python from its venv
against the server's data folder (`LABEL_STUDIO_DATA_DIR`, set by `make labelstudio`).

The toolkit's admin belongs to every annotator organization and works in one at a time:
its active organization is switched before it touches an annotator's project.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from curation.core.catalog import Catalog
from curation.core.errors import AnnotationError, InputError, PrerequisiteError, UsageError
from curation.core.stage import RunResult
from curation.labelstudio.client import Admin, admin_of, base_url, ls_call
from curation.labelstudio.people import annotator_email, remember_people
from curation.labelstudio.server import label_studio_bin

PASSWORD_ENV = "LABEL_STUDIO_ANNOTATOR_PASSWORD"
DATA_DIR_ENV = "LABEL_STUDIO_DATA_DIR"

# What both account scripts start with: their inputs (one JSON list of people, so that one shell of
# Label Studio's, which takes seconds to start, sets up everyone an export names), and the account
# made or found (its password reset when asked).
_ACCOUNT_HEAD = r"""
import json, os
from django.db import transaction
from organizations.models import Organization, OrganizationMember
from users.models import User

people = json.loads(os.environ["CURATE_PEOPLE"])


def account(person):
    user = User.objects.filter(email=person["email"]).first()
    created = user is None
    if created:
        user = User.objects.create_user(email=person["email"], password=person["password"] or None,
                                        username=person["email"].split("@")[0], first_name=person["name"])
    elif person["reset"] and person["password"]:
        user.set_password(person["password"])
        user.save()
    return user, created
"""

# Runs inside Label Studio's Django shell; the result is one JSON line (a list, in the order given). A
# dormant owner per organization: Label Studio reads the owner's e-mail on every project request, and
# the admin can own only its own organization.
_PROVISION = _ACCOUNT_HEAD + r"""
from projects.models import Project
admin = User.objects.get(email=os.environ["CURATE_ADMIN_EMAIL"])
out = []
for person in people:
    with transaction.atomic():
        user, created = account(person)
        title = person["org_title"]
        org = Organization.objects.filter(title=title).first() or Organization.objects.create(title=title)
        if org.created_by_id is None:
            owner, _ = User.objects.get_or_create(email=f"owner-{org.id}@orgs.invalid",
                                                  defaults={"username": f"owner-{org.id}", "is_active": False})
            owner.set_unusable_password()
            owner.save()
            org.created_by = owner
            org.save(update_fields=["created_by"])
            org.add_user(owner)
        org.jwt.legacy_api_tokens_enabled = True
        org.jwt.save()
        org.add_user(admin)
        org.add_user(user)
        # one annotator organization per person; the deciding group's (the admin's own) is kept
        OrganizationMember.objects.filter(user=user, organization__title__startswith="LivingScreen · ").exclude(
            organization=org).delete()
        user.active_organization = org
        user.save(update_fields=["active_organization"])
        # projects made before annotators had organizations of their own move into this one
        Project.objects.filter(id__in=person["move_projects"]).update(organization=org)
    out.append({"user_id": user.id, "organization_id": org.id, "created": created})
print(json.dumps(out))
"""


# Members of the group that decides escalated tasks: accounts in the admin's own organization (where
# the adjudication project lives). A person who is also an annotator keeps their own organization as the
# one they work in (the access gate switches them when they open the group's project).
_PROVISION_MEMBER = _ACCOUNT_HEAD + r"""
org = Organization.objects.get(id=int(os.environ["CURATE_ORG_ID"]))
out = []
for person in people:
    with transaction.atomic():
        user, created = account(person)
        org.add_user(user)
        if user.active_organization_id is None or created:
            user.active_organization = org
            user.save(update_fields=["active_organization"])
    out.append({"user_id": user.id, "organization_id": org.id, "created": created})
print(json.dumps(out))
"""


@dataclass(frozen=True)
class Account:
    annotator: str
    email: str
    user_id: int
    organization_id: int
    created: bool
    password: str | None  # only when this call chose it (to print once); never stored


def read_passwords(path: Path | None) -> dict[str, str]:
    """`name password` per line ('#' comments); one clear error per bad line."""
    if path is None:
        return {}
    if not path.is_file():
        raise InputError(f"password file {path} does not exist")
    out: dict[str, str] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 2:
            raise InputError(f"{path}:{n}: write one annotator and one password separated by a space")
        if len(parts[1]) < 8:
            raise InputError(f"{path}:{n}: the password for {parts[0]} is shorter than 8 characters")
        out[parts[0]] = parts[1]
    return out


def data_dir() -> Path:
    value = os.environ.get(DATA_DIR_ENV)
    if not value:
        raise PrerequisiteError(f"set {DATA_DIR_ENV} to the Label Studio server's data folder (`make labelstudio` "
                                "prints it): annotator accounts are set up through the server's own shell")
    path = Path(value)
    if not path.is_dir():
        raise InputError(f"{DATA_DIR_ENV}={value} is not a folder")
    return path


def _django(script: str, env: dict[str, str]) -> Any:
    binary = label_studio_bin()
    python = binary.parent / "python"
    if not python.exists():
        raise PrerequisiteError(f"{python} is missing: run `make labelstudio` (it makes .venv-ls)")
    found = sorted(binary.parent.parent.glob("lib/python*/site-packages/label_studio"))
    if not found:
        raise PrerequisiteError(f"no label_studio package in {binary.parent.parent}")
    full_env = {**os.environ, **env, "LABEL_STUDIO_BASE_DATA_DIR": str(data_dir()), "PYTHONPATH": str(found[0]),
                "DJANGO_SETTINGS_MODULE": "core.settings.label_studio"}
    try:
        proc = subprocess.run([str(python), "-m", "label_studio.manage", "shell", "-c", script], env=full_env,
                              capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise AnnotationError("setting up the account: Label Studio's shell gave no answer within 180 s") from None
    lines = [line for line in proc.stdout.splitlines() if line.startswith("[")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise AnnotationError(f"setting up the account in Label Studio failed: {tail[:300]}")
    return json.loads(lines[-1])


@dataclass(frozen=True)
class Wanted:
    """An account to make or find: who, the password a new account gets (or a reset sets), whether to reset."""

    person: str
    password: str
    reset: bool = False
    move_projects: tuple[int, ...] = ()


def _person(wanted: Wanted) -> dict[str, Any]:
    return {"email": annotator_email(wanted.person), "password": wanted.password, "reset": wanted.reset,
            "name": wanted.person.split("@")[0], "org_title": f"LivingScreen · {wanted.person}",
            "move_projects": list(wanted.move_projects)}


def provision_all(wanted: list[Wanted], admin_email: str) -> list[Account]:
    """Each person's account, in an organization of their own with the admin, from one shell of Label
    Studio's. An existing account keeps its password unless `reset`."""
    for one in wanted:
        if annotator_email(one.person) == admin_email.lower():
            raise UsageError(f"{one.person} is the toolkit's own admin account: annotators need accounts of their own")
    if not wanted:
        return []
    results = _django(_PROVISION, {"CURATE_PEOPLE": json.dumps([_person(w) for w in wanted]),
                                   "CURATE_ADMIN_EMAIL": admin_email})
    return [Account(w.person, annotator_email(w.person), int(r["user_id"]), int(r["organization_id"]),
                    bool(r["created"]), w.password) for w, r in zip(wanted, results, strict=True)]


def provision(annotator: str, admin_email: str, password: str, reset: bool = False,
              move_projects: list[int] | None = None) -> Account:
    """One person's account (see `provision_all`)."""
    return provision_all([Wanted(annotator, password, reset, tuple(move_projects or []))], admin_email)[0]


def provision_members(wanted: list[Wanted], organization_id: int) -> list[Account]:
    """Accounts for members of the deciding group, in the organization `organization_id`, from one shell."""
    if not wanted:
        return []
    results = _django(_PROVISION_MEMBER, {"CURATE_PEOPLE": json.dumps([_person(w) for w in wanted]),
                                          "CURATE_ORG_ID": str(organization_id)})
    return [Account(w.person, annotator_email(w.person), int(r["user_id"]), int(r["organization_id"]),
                    bool(r["created"]), w.password) for w, r in zip(wanted, results, strict=True)]


def choose_password(annotator: str, from_file: dict[str, str]) -> tuple[str, bool]:
    """(password, generated): the file's, else the shared first password, else a new random one."""
    if annotator in from_file:
        return from_file[annotator], False
    if os.environ.get(PASSWORD_ENV):
        return os.environ[PASSWORD_ENV], False
    return secrets.token_urlsafe(12), True


def current_admin(client: Any) -> Admin:
    return admin_of(client.users.whoami())


@contextmanager
def in_organization(client: Any, admin_id: int, organization_id: int, home: int | None) -> Iterator[None]:
    """Every admin request inside the block works in `organization_id`; the home one is restored after."""
    with Organizations(client, admin_id, home) as organizations:
        organizations.work_in(organization_id)
        yield


class Organizations:
    """The admin's active organization across a loop over people: switched only when the next person's
    differs (not there and back for each), the home one restored when the block ends."""

    def __init__(self, client: Any, admin_id: int, home: int | None) -> None:
        self.client, self.admin_id, self.home, self.current = client, admin_id, home, home

    def work_in(self, organization_id: int) -> None:
        if organization_id != self.current:
            ls_call("switching to the person's organization", self.client.users.update, id=self.admin_id,
                    active_organization=organization_id)
            self.current = organization_id

    def __enter__(self) -> Organizations:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.home is not None and self.current != self.home:
            ls_call("switching back to the admin's organization", self.client.users.update, id=self.admin_id,
                    active_organization=self.home)


@dataclass
class ExportResult(RunResult):
    passwords: dict[str, str] = field(default_factory=dict)  # chosen here: shown once, never stored
    project_id: int | None = None  # the one project people open, for an export that has one


def ensure_account(catalog: Catalog, annotator: str, admin_email: str, from_file: dict[str, str],
                   result: ExportResult, run_id: str | None = None) -> Account:
    """One person's account (see `ensure_accounts`)."""
    return ensure_accounts(catalog, [annotator], admin_email, from_file, result, run_id)[annotator]


def ensure_accounts(catalog: Catalog, people: list[str], admin_email: str, from_file: dict[str, str],
                    result: ExportResult, run_id: str | None = None) -> dict[str, Account]:
    """Each person's account and organization, the ones still to make or reset made together. A known
    annotator keeps their password unless the password file names them; a project made before
    organizations moves into theirs. The caller has checked the names (curation/labelstudio/people.py):
    this makes any account it is given."""
    url = base_url()
    accounts: dict[str, Account] = {}
    wanted: list[Wanted] = []
    generated: set[str] = set()
    by_person: dict[str, list[dict[str, Any]]] = {}
    for r in catalog.rows("SELECT annotator AS person, project_id, annotator_user_id, organization_id "
                          "FROM ls_projects WHERE base_url = ? AND list_contains(?, annotator) ORDER BY project_id",
                          [url, people]):
        by_person.setdefault(r["person"], []).append(r)
    # the organization a person's QC work made, for someone with no authoring project yet
    elsewhere_of: dict[str, list[dict[str, Any]]] = {}
    for r in catalog.rows("SELECT person, user_id AS annotator_user_id, organization_id FROM qc_projects "
                          "WHERE base_url = ? AND list_contains(?, person) AND purpose <> 'adjudication' "
                          "AND organization_id IS NOT NULL", [url, people]):
        elsewhere_of.setdefault(r["person"], []).append(r)
    for person in people:
        known, elsewhere = by_person.get(person, []), elsewhere_of.get(person, [])
        found = next((f for f in (known, elsewhere) if f and f[0]["organization_id"] is not None), None)
        if found and person not in from_file:
            accounts[person] = Account(person, annotator_email(person), found[0]["annotator_user_id"],
                                       found[0]["organization_id"], False, None)
            continue
        password, made_up = choose_password(person, from_file)
        if made_up:
            generated.add(person)
        wanted.append(Wanted(person, password, person in from_file,
                             tuple(r["project_id"] for r in known if r["organization_id"] is None)))
    for want, account in zip(wanted, provision_all(wanted, admin_email), strict=True):
        accounts[want.person] = account
        if want.move_projects:
            catalog.con.execute("UPDATE ls_projects SET organization_id = ?, annotator_user_id = ? "
                                "WHERE base_url = ? AND annotator = ?",
                                [account.organization_id, account.user_id, url, want.person])
        if want.person in generated and account.created:
            result.passwords[want.person] = want.password
        result.counts["accounts_created"] += account.created
    remember_people(catalog, people, run_id)
    return {person: accounts[person] for person in people}
