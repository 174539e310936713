"""The one way the toolkit talks to Label Studio: `label-studio-sdk` 2.x, with the
URL and API key from the environment (never from config, never logged)."""

from __future__ import annotations

import os
from typing import Any

from curation.core.config import secret
from curation.core.errors import AnnotationError

DEFAULT_URL = "http://127.0.0.1:8080"


def base_url() -> str:
    return os.environ.get("LABEL_STUDIO_URL", DEFAULT_URL).rstrip("/")


def annotator_url() -> str:
    """What annotators and reviewers open: the access gate in front of Label Studio, never its own port."""
    return os.environ.get("LABEL_STUDIO_GATE_URL", "http://127.0.0.1:8081").rstrip("/")


def ls_call(what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    """A Label Studio call whose failure is one clear line (AnnotationError), not a traceback."""
    from label_studio_sdk.core.api_error import ApiError

    try:
        return fn(*args, **kwargs)
    except ApiError as exc:
        body = exc.body if isinstance(exc.body, dict) else {}
        # a validation error names the field that failed in `validation_errors`, not in `detail`
        detail = " ".join(str(part) for part in (body.get("detail"), body.get("validation_errors")) if part)
        raise AnnotationError(f"Label Studio refused {what}: HTTP {exc.status_code}"
                              + (f" ({detail[:300]})" if detail else "")) from None
    except OSError as exc:
        raise AnnotationError(f"Label Studio did not answer {what} ({type(exc).__name__})") from None
    except Exception as exc:  # httpx's transport errors are not OSErrors
        if type(exc).__module__.startswith("httpx"):
            raise AnnotationError(f"Label Studio did not answer {what} ({type(exc).__name__})") from None
        raise


def connect() -> Any:
    """A checked client: one clear error when the server is down or the token is wrong."""
    from label_studio_sdk import LabelStudio
    from label_studio_sdk.core.api_error import ApiError

    key = secret("LABEL_STUDIO_API_KEY", "the Label Studio API token")
    url = base_url()
    client = LabelStudio(base_url=url, api_key=key, timeout=60)
    try:
        client.users.whoami()
    except ApiError as exc:
        if exc.status_code in (401, 403):
            raise AnnotationError(f"Label Studio at {url} refused the API key "
                                  f"(HTTP {exc.status_code})") from None
        raise AnnotationError(f"Label Studio at {url} answered HTTP {exc.status_code}") from None
    except Exception as exc:  # httpx raises several connection error types
        raise AnnotationError(f"Label Studio at {url} is not reachable "
                              f"({type(exc).__name__})") from None
    return client
