"""The judge prompts are versioned (E7's judge_prompt_version): a verdict or a preference is
cached under its prompt's version, and a result records the version it was judged with. This
test fails when a judge prompt's text, its answer schema or its tool name changes while its
version stays the same: change the version with the prompt (which also starts the judge cache
afresh for it), then record the new fingerprint here."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable

import pytest
from evalsvc.scoring import judges, preferences, rag, verdicts

# Each version and the fingerprint of the prompt it names (see fingerprint()). A version, once
# recorded, keeps its fingerprint for good: an old result says which prompt judged it.
RECORDED = {
    "judge-v1": "6365adf83cc1d18d08bd36e7d756f26c4e919632c263768a7e2a85ff7d1cf113",
    "pairwise-v1": "8a7225db4b727f6c9da4bffca9530a2b522313273e0269d9d12a8d966eaaf817",
    "rag-v1": "26ee7c83a73239f59d1edbf6161d9b6ba4891f327818fe97ef5275301c11248f",
}


def fingerprint(*parts: object) -> str:
    """SHA-256 over the parts as canonical JSON (sorted keys, no spaces)."""
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def verdict_prompt() -> str:
    return fingerprint(
        verdicts.SYSTEM,
        verdicts.VERDICT_SCHEMA,
        judges.TOOL_NAME,
        verdicts.user_message("{question}", "{system_prompt}", "{input}", "{output}"),
        verdicts.user_message("{question}", "", "{input}", "{output}"),
    )


def preference_prompt() -> str:
    return fingerprint(
        preferences.SYSTEM,
        preferences.SCHEMA,
        preferences.TOOL_NAME,
        preferences.user_message("{question}", "{input}", "{first}", "{second}"),
    )


def rag_prompts() -> str:
    """Both calls of a rag: metric: the listing of the claims and their check."""
    return fingerprint(
        rag.EXTRACT_SYSTEM,
        rag.CLAIMS_SCHEMA,
        rag.EXTRACT_TOOL,
        rag.extract_message("{input}", "{text}"),
        rag.VERIFY_SYSTEM,
        rag.verify_schema(2),
        rag.VERIFY_TOOL,
        rag.verify_message(["{context 1}", "{context 2}"], ["{claim 1}", "{claim 2}"]),
    )


@pytest.mark.parametrize(
    ("version", "current"),
    [
        (verdicts.PROMPT_VERSION, verdict_prompt),
        (preferences.PROMPT_VERSION, preference_prompt),
        (rag.RAG_PROMPT_VERSION, rag_prompts),
    ],
    ids=["verdict", "preference", "rag"],
)
def test_a_judge_prompt_changes_only_with_its_version(
    version: str, current: Callable[[], str]
) -> None:
    found = current()
    assert version in RECORDED, (
        f"prompt version {version!r} has no recorded fingerprint: add {version!r}: {found!r}"
    )
    assert RECORDED[version] == found, (
        f"the prompt of {version!r} changed (fingerprint {found}, recorded "
        f"{RECORDED[version]}): give it a new PROMPT_VERSION and record that version's "
        "fingerprint here, keeping the old one"
    )


def test_every_recorded_version_is_distinct() -> None:
    assert len(set(RECORDED.values())) == len(RECORDED)
