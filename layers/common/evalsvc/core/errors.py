"""Domain exceptions. Logic and storage raise these; the API maps them to HTTP in one place
(`evalsvc.api.errors`). Work that fails later (a queued job) keeps its Failure: the message and
the class of error a caller waiting for it gets."""

from __future__ import annotations

from dataclasses import dataclass


class DomainError(Exception):
    """Base of every error a caller can act on. `message` is shown to the caller verbatim;
    `fields`, when set, are answered beside it, for a program to read."""

    status_code = 400
    headers: dict[str, str] | None = None
    fields: dict[str, str] | None = None

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidInput(DomainError):
    status_code = 400


class Unauthorized(DomainError):
    status_code = 401


class NotFound(DomainError):
    status_code = 404


class Conflict(DomainError):
    status_code = 409


class AlreadyRunning(Conflict):
    """Refused while a run of the same thing is running: the message says which and what to
    do, and the answer names it in `field` too (`{"error": "...", "run_id": "..."}`)."""

    def __init__(self, message: str, field: str, running_id: str) -> None:
        super().__init__(message)
        self.fields = {field: running_id}


class Gone(DomainError):
    """What was asked for was kept for a time that has ended (a dataset version past its
    retention)."""

    status_code = 410


class Unrecoverable(Conflict):
    """No later attempt can do this piece of queued work (what it reads was overwritten, what
    it completes is gone): its job fails with this message."""


class Unprocessable(DomainError):
    """Well-formed, but in conflict with what the service already holds (an Idempotency-Key
    reused with another body)."""

    status_code = 422


class PayloadTooLarge(DomainError):
    status_code = 413


class UnsupportedMediaType(DomainError):
    """The body is in a Content-Type or Content-Encoding the route does not read; the message
    names those it does."""

    status_code = 415


class Throttled(DomainError):
    status_code = 429


class OverLimit(Throttled):
    """LLM work refused before any call: its bound does not fit the tenant's monthly limit.
    `transient`: it would fit once the work in flight settles (its reservations are bounds)."""

    def __init__(self, message: str, *, transient: bool = False) -> None:
        super().__init__(message)
        self.transient = transient
        if transient:
            self.headers = {"Retry-After": "30"}


class TooManyJobs(Throttled):
    """The tenant runs as many queued jobs as it may at once: nothing was stored; retry once
    one has ended."""

    def __init__(self, message: str, retry_after_seconds: int = 30) -> None:
        super().__init__(message)
        self.headers = {"Retry-After": str(retry_after_seconds)}


class SpendingUnbounded(DomainError):
    """The tenant has a monthly limit, and the model has no price to hold its work to it."""

    status_code = 503


class StorageUnavailable(DomainError):
    """DynamoDB kept refusing or failing after retries; the request changed nothing."""

    status_code = 503


class ModelFailed(DomainError):
    """The LLM gave no usable answer after retries. `transient`: it was throttled or
    unreachable, rather than answering nonsense (and asked for `retry_after` seconds, if it
    said)."""

    status_code = 502

    def __init__(
        self, message: str, *, transient: bool = False, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.transient = transient
        self.retry_after = retry_after


class JudgeFailed(ModelFailed):
    """The LLM judge could not give a valid answer after retries; nothing was stored."""


class GenerationFailed(ModelFailed):
    """The LLM could not produce a usable answer (questions, data) after retries."""


class ProviderUnavailable(DomainError):
    """The LLM provider is not configured for what was asked, or not reachable."""

    status_code = 503


class StillRunning(DomainError):
    """A queued job did not finish while the request could wait; it goes on in the background
    and the message names the id to poll."""

    status_code = 503

    def __init__(self, message: str, retry_after_seconds: int, location: str | None = None) -> None:
        super().__init__(message)
        self.headers = {"Retry-After": str(retry_after_seconds)}
        if location:
            self.headers["Location"] = location


class OutOfTime(DomainError):
    """Work stopped at its deadline (a request's 29 s, a worker's remaining time); what was
    done is kept, so doing it again goes further."""

    status_code = 503

    def __init__(self, message: str, retry_after_seconds: int = 1) -> None:
        super().__init__(message)
        self.headers = {"Retry-After": str(retry_after_seconds)}


class InternalError(DomainError):
    """Queued work failed for a reason the service could not name better (a worker's crash,
    an unexpected error): the message says what is known."""

    status_code = 500


def _named(cls: type[DomainError]) -> dict[str, type[DomainError]]:
    found = {cls.__name__: cls}
    for sub in cls.__subclasses__():
        found.update(_named(sub))
    return found


@dataclass(frozen=True, slots=True)
class Failure:
    """Why work failed, as it is kept with the work: the message, and the name of the class of
    domain error a caller waiting for the work is answered with."""

    message: str
    error: str = InternalError.__name__

    @classmethod
    def of(cls, exc: DomainError) -> Failure:
        return cls(exc.message, type(exc).__name__)

    def exception(self) -> DomainError:
        """The error to raise for this failure (an unknown class name: InternalError)."""
        error_class = _named(DomainError).get(self.error, InternalError)
        try:
            return error_class(self.message)
        except TypeError:  # an error that needs more than a message is never a failure
            return InternalError(self.message)
