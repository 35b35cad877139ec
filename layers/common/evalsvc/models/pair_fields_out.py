"""The optional fields of a pair (E10's and E11's) in the answers of every read of a pair (a
seed or synthetic dataset, a result's pairs, an audit sample): one declaration for the four
answers. Each is in an answer only when the pair was written with it (absent, not null,
otherwise: a pair written without them reads as before they existed)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class MessageOut(BaseModel):
    role: Literal["system", "user", "assistant", "tool"]
    content: str


class ToolCallOut(BaseModel):
    name: str
    arguments: dict[str, Any] = Field(description="A JSON object, as it was written")


class OptionalPairFields(BaseModel):
    reference: str | None = Field(
        default=None,
        description="Only when the pair was written with a reference: the answer it should give",
    )
    contexts: list[str] | None = Field(
        default=None,
        description="Only when the pair was written with contexts: what the app retrieved to "
        "answer, in rank order",
    )
    messages: list[MessageOut] | None = Field(
        default=None,
        description="Only when the pair was written with messages: the conversation before "
        "input, oldest first",
    )
    tool_calls: list[ToolCallOut] | None = Field(
        default=None,
        description="Only when the pair was written with tool_calls: the tools the app called, "
        "in order",
    )
    expected_tool_calls: list[ToolCallOut] | None = Field(
        default=None,
        description="Only when the pair was written with expected_tool_calls: the tools the app "
        "should have called, in order",
    )
    conversation_id: str | None = Field(
        default=None,
        description="Only when the pair was written with a conversation_id: the conversation "
        "it belongs to",
    )
