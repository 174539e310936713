"""The project's one error type. The CLI turns any of these into one line on stderr;
anything else that escapes a command is a bug and keeps its traceback.

Exit codes: 1 for bad input or a state the user must change (a file, a record, the
catalog, a service), 2 for a command line that cannot be right whatever the data.
"""

from __future__ import annotations


class CurationError(Exception):
    """A failure the user can act on; the message names the input and the reason."""

    exit_code = 1


class UsageError(CurationError):
    """Arguments that cannot be right: an unknown adapter, a missing option, a malformed list."""

    exit_code = 2


class ConfigError(CurationError):
    """A configuration file or value that is wrong: unknown key, wrong type, unset secret."""


class InputError(CurationError):
    """An input file or folder that is missing or cannot be read."""


class StateError(CurationError):
    """What the catalog, a folder or a server already holds refuses the command (exit 1, as bad input: the
    command line may be right, the state is what must change); the message names what and why."""


class PrerequisiteError(CurationError):
    """A stage that needs another stage's output first ("run `curate embed` first")."""


class DuplicateKeyError(Exception):
    """A run would leave a key twice in a catalog table; the message names the table, the key and the value.
    Not a `CurationError`: a stage that writes a key twice has a bug (bad input is a reject, never a second
    row), so the run fails with its traceback kept and the command line says it is a bug."""


class FeedError(CurationError):
    """A feed operation that cannot be done; the message says why."""


class MediaError(CurationError):
    """A media file that cannot be used; the message is the one-line reason."""


class AnnotationError(CurationError):
    """Label Studio is unreachable, refused us, or answered something unusable."""

