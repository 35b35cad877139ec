"""API keys and the identity a key carries."""

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Identity:
    """Who is calling: every read and write is scoped to `tenant`."""

    tenant: str
    user: str
    user_email: str
    key_id: str


@dataclass(slots=True)
class ApiKeyRecord:
    key_hash: str
    key_id: str
    tenant: str
    user: str
    user_email: str
    created_ms: int
    revoked: bool = False

    def identity(self) -> Identity:
        return Identity(self.tenant, self.user, self.user_email, self.key_id)
