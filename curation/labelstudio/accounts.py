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
from curation.labelstudio.client import base_url, ls_call
from curation.labelstudio.people import annotator_email, remember_person
from curation.labelstudio.server import label_studio_bin

PASSWORD_ENV = "LABEL_STUDIO_ANNOTATOR_PASSWORD"
DATA_DIR_ENV = "LABEL_STUDIO_DATA_DIR"

# What both account scripts start with: their inputs, and the account made or found (its password
# reset when asked).
_ACCOUNT_HEAD = r'''
import json, os
from django.db import transaction
from organizations.models import Organization, OrganizationMember
from users.models import User

email = os.environ["CURATE_ANNOTATOR_EMAIL"]
password = os.environ.get("CURATE_ANNOTATOR_PASSWORD") or None
reset = os.environ.get("CURATE_RESET_PASSWORD") == "1"


def account():
    user = User.objects.filter(email=email).first()
    created = user is None
    if created:
        user = User.objects.create_user(email=email, password=password, username=email.split("@")[0],
                                        first_name=os.environ.get("CURATE_ANNOTATOR_NAME", ""))
    elif reset and password:
        user.set_password(password)
        user.save()
    return user, created
'''

# Runs inside Label Studio's Django shell; inputs come from the environment, the result is
# one JSON line. A dormant owner per organization: Label Studio reads the owner's e-mail on
# every project request, and the admin can own only its own organization.
_PROVISION = _ACCOUNT_HEAD + r'''
admin = User.objects.get(email=os.environ["CURATE_ADMIN_EMAIL"])
title = os.environ["CURATE_ORG_TITLE"]
with transaction.atomic():
    user, created = account()
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
    from projects.models import Project
    moving = [int(p) for p in os.environ.get("CURATE_MOVE_PROJECTS", "").split(",") if p]
    Project.objects.filter(id__in=moving).update(organization=org)
print(json.dumps({"user_id": user.id, "organization_id": org.id, "created": created}))
'''


# A member of the group that decides escalated tasks: an account in the admin's own organization
# (where the adjudication project lives). A person who is also an annotator keeps their own
# organization as the one they work in.
_PROVISION_MEMBER = _ACCOUNT_HEAD + r'''
org = Organization.objects.get(id=int(os.environ["CURATE_ORG_ID"]))
with transaction.atomic():
    user, created = account()
    org.add_user(user)
    if user.active_organization_id is None or created:
        user.active_organization = org
        user.save(update_fields=["active_organization"])
print(json.dumps({"user_id": user.id, "organization_id": org.id, "created": created}))
'''


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


def _django(script: str, env: dict[str, str]) -> dict[str, Any]:
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
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise AnnotationError(f"setting up the account in Label Studio failed: {tail[:300]}")
    return json.loads(lines[-1])


def provision(annotator: str, admin_email: str, password: str, reset: bool = False,
              move_projects: list[int] | None = None) -> Account:
    """The annotator's account, in its own organization with the admin. `password` is the new
    account's; an existing account keeps its own unless `reset`."""
    email = annotator_email(annotator)
    if email == admin_email.lower():
        raise UsageError(f"{annotator} is the toolkit's own admin account: annotators need accounts of their own")
    result = _django(_PROVISION, {"CURATE_ANNOTATOR_EMAIL": email, "CURATE_ANNOTATOR_PASSWORD": password,
                                  "CURATE_RESET_PASSWORD": "1" if reset else "0",
                                  "CURATE_MOVE_PROJECTS": ",".join(str(p) for p in move_projects or []),
                                  "CURATE_ANNOTATOR_NAME": annotator.split("@")[0], "CURATE_ADMIN_EMAIL": admin_email,
                                  "CURATE_ORG_TITLE": f"LivingScreen · {annotator}"})
    return Account(annotator, email, int(result["user_id"]), int(result["organization_id"]),
                   bool(result["created"]), password)


def provision_member(person: str, organization_id: int, password: str, reset: bool = False) -> Account:
    """An account for a member of the deciding group, in the organization `organization_id`."""
    email = annotator_email(person)
    result = _django(_PROVISION_MEMBER, {"CURATE_ANNOTATOR_EMAIL": email, "CURATE_ANNOTATOR_PASSWORD": password,
                                         "CURATE_RESET_PASSWORD": "1" if reset else "0",
                                         "CURATE_ANNOTATOR_NAME": person.split("@")[0],
                                         "CURATE_ORG_ID": str(organization_id)})
    return Account(person, email, int(result["user_id"]), int(result["organization_id"]), bool(result["created"]),
                   password)


def choose_password(annotator: str, from_file: dict[str, str]) -> tuple[str, bool]:
    """(password, generated): the file's, else the shared first password, else a new random one."""
    if annotator in from_file:
        return from_file[annotator], False
    if os.environ.get(PASSWORD_ENV):
        return os.environ[PASSWORD_ENV], False
    return secrets.token_urlsafe(12), True


def current_admin(client: Any) -> tuple[int, str, int | None]:
    me = client.users.whoami()
    return int(me.id), str(me.email), getattr(me, "active_organization", None)


@contextmanager
def in_organization(client: Any, admin_id: int, organization_id: int, home: int | None) -> Iterator[None]:
    """Every admin request inside the block works in `organization_id`; the home one is restored after."""
    ls_call("switching to the annotator's organization", client.users.update, id=admin_id,
            active_organization=organization_id)
    try:
        yield
    finally:
        if home is not None and home != organization_id:
            ls_call("switching back to the admin's organization", client.users.update, id=admin_id,
                    active_organization=home)


@dataclass
class ExportResult(RunResult):
    passwords: dict[str, str] = field(default_factory=dict)  # chosen here: shown once, never stored
    project_id: int | None = None  # the one project people open, for an export that has one


def ensure_account(catalog: Catalog, annotator: str, admin_email: str, from_file: dict[str, str],
                   result: ExportResult, run_id: str | None = None) -> Account:
    """The annotator's account and organization. A known annotator keeps their password unless the
    password file names them; a project made before organizations moves into theirs. The caller
    has checked the name (curation/labelstudio/people.py): this makes any account it is given."""
    url = base_url()
    known = catalog.rows("SELECT project_id, annotator_user_id, organization_id FROM ls_projects "
                         "WHERE base_url = ? AND annotator = ?", [url, annotator])
    elsewhere = catalog.rows("SELECT user_id AS annotator_user_id, organization_id FROM qc_projects "
                             "WHERE base_url = ? AND person = ? AND purpose <> 'adjudication' "
                             "AND organization_id IS NOT NULL", [url, annotator])
    for found in (known, elsewhere):
        if found and found[0]["organization_id"] is not None and annotator not in from_file:
            remember_person(catalog, annotator, run_id)
            return Account(annotator, annotator_email(annotator), found[0]["annotator_user_id"],
                           found[0]["organization_id"], False, None)
    password, generated = choose_password(annotator, from_file)
    legacy = [r["project_id"] for r in known if r["organization_id"] is None]
    account = provision(annotator, admin_email, password, reset=annotator in from_file, move_projects=legacy)
    if legacy:
        catalog.con.execute("UPDATE ls_projects SET organization_id = ?, annotator_user_id = ? WHERE base_url = ? "
                            "AND annotator = ?", [account.organization_id, account.user_id, url, annotator])
    if generated and account.created:
        result.passwords[annotator] = password
    result.counts["accounts_created"] += account.created
    remember_person(catalog, annotator, run_id)
    return account
