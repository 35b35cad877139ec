"""The body of POST /monitors (E8): a good one with every field, the defaults, and every bad
field refused, naming what is wrong (the route answers these 400)."""

from __future__ import annotations

import json
import unicodedata
from typing import Any

import pytest
from evalsvc.core.controls import BIDI_CONTROLS
from evalsvc.models.monitors import DEFAULT_PAIRS, MonitorIn
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

GOOD: dict[str, Any] = {
    "name": "nightly helpdesk",
    "seed_data_id": "prod-traffic",
    "metrics_id": "m_polite",
    "schedule": "0 3 * * *",
    "pair_query": {"latest_n_pairs": 500, "pair_labels": ["billing"]},
    "baseline": "previous",
    "alpha": 0.01,
    "regression_threshold": 2.0,
    "max_cost_usd": 1.5,
    "webhook_url": "https://hooks.example.com/evalsvc",
    "webhook_secret": "0123456789abcdef",
}


def test_a_full_body_is_taken_as_given() -> None:
    monitor = MonitorIn.model_validate(GOOD)
    assert monitor.model_dump(exclude_none=True) == {
        **GOOD,
        "pair_query": {"latest_n_pairs": 500, "pair_labels": ["billing"]},
    }


def test_the_defaults_are_the_newest_200_pairs_against_the_previous_run() -> None:
    minimal = {k: GOOD[k] for k in ("name", "seed_data_id", "metrics_id", "schedule")}
    monitor = MonitorIn.model_validate(minimal)
    assert monitor.pair_query.latest_n_pairs == DEFAULT_PAIRS == 200
    assert (monitor.baseline, monitor.alpha, monitor.regression_threshold) == (
        "previous",
        0.05,
        1.0,
    )
    assert monitor.max_cost_usd is None and monitor.webhook_url is None


# Every bad field, its value, and what the refusal says (the route answers each with a 400).
BAD_FIELDS: list[tuple[str, Any, str]] = [
    ("name", "", "at least 1 character"),
    ("name", "x" * 201, "at most 200"),
    ("name", 5, "valid string"),
    # Control characters are named by code point and place, never echoed
    ("name", "nul\x00", "character 4 is U+0000 (a control character)"),
    ("name", "faq \x1b[2J", "character 5 is U+001B (a control character)"),
    ("name", "csi \x9b2J", "character 5 is U+009B (a control character)"),
    ("name", "two\nlines", "character 4 is U+000A (a control character)"),
    ("name", "tab\there", "character 4 is U+0009 (a control character)"),
    ("name", "abc\u202ecba", "character 4 is U+202E (a bidirectional control)"),
    ("name", "\u2066isolated", "character 1 is U+2066 (a bidirectional control)"),
    ("name", "mark\u200f", "character 5 is U+200F (a bidirectional control)"),
    ("name", "arabic\u061c", "character 7 is U+061C (a bidirectional control)"),
    ("name", "half \ud800", "valid string"),  # a lone surrogate: refused as any field's
    ("seed_data_id", "a b", "pattern"),
    ("seed_data_id", None, "valid string"),
    ("metrics_id", "../m", "pattern"),
    ("schedule", "rate(4 minutes)", "at least 5 minutes"),
    ("schedule", "*/2 * * * *", "at least 5 minutes"),
    ("schedule", "0 0 31 2 *", "no day that exists"),
    ("schedule", "every day", "5 fields"),
    ("schedule", "x" * 201, "at most 200"),
    ("pair_query", {"latest_n_pairs": 0}, "greater than or equal to 1"),
    ("pair_query", {"latest_n_pairs": False}, "valid integer"),
    ("pair_query", [], "valid dictionary"),
    ("baseline", "", "pattern"),
    ("baseline", "ev_#1", "pattern"),
    ("alpha", 0.5, "less than 0.5"),
    ("alpha", 0, "greater than or equal to"),
    ("alpha", "0.05", "valid number"),
    ("regression_threshold", 0, "greater than 0"),
    ("regression_threshold", float("inf"), "finite number"),
    ("max_cost_usd", 0, "greater than 0"),
    ("max_cost_usd", True, "valid number"),
    ("webhook_url", "", "at least 1 character"),
    ("webhook_url", "https://" + "a" * 2000, "at most 2000"),
    ("webhook_secret", "short", "at least 16"),
    ("webhook_secret", "s" * 257, "at most 256"),
    ("unknown", 1, "Extra inputs are not permitted"),
]


@pytest.mark.parametrize(("field", "value", "says"), BAD_FIELDS)
def test_every_bad_field_is_refused_naming_it(field: str, value: Any, says: str) -> None:
    with pytest.raises(ValidationError) as caught:
        MonitorIn.model_validate({**GOOD, field: value})
    assert says in str(caught.value)
    assert field in str(caught.value)


@settings(max_examples=300)
@given(st.text(st.characters(codec=None, exclude_categories=("Cs",)), min_size=1, max_size=200))
def test_any_name_is_kept_as_given_or_refused_naming_its_first_control(name: str) -> None:
    unshown = [
        k for k, ch in enumerate(name) if unicodedata.category(ch) == "Cc" or ch in BIDI_CONTROLS
    ]
    try:
        kept = MonitorIn.model_validate({**GOOD, "name": name})
    except ValidationError as caught:
        [error] = caught.errors()
        place = unshown[0]
        assert error["loc"] == ("name",)
        assert error["msg"].startswith(
            f"Value error, character {place + 1} is U+{ord(name[place]):04X} ("
        )
        assert not {ch for ch in error["msg"] if unicodedata.category(ch) in ("Cc", "Cs")}
        assert not set(error["msg"]) & set(BIDI_CONTROLS)
    else:
        assert unshown == [] and kept.name == name


def test_a_stored_name_reads_back_whatever_it_holds() -> None:
    # Given a monitor stored before names refused control characters
    stored = json.dumps({**GOOD, "name": "old \x1b[2J\u202e name"})

    # When it is read back, it is as stored
    assert MonitorIn.from_stored(stored).name == "old \x1b[2J\u202e name"
    # …while the same body sent now is refused
    with pytest.raises(ValidationError):
        MonitorIn.model_validate_json(stored)


@pytest.mark.parametrize("missing", ["name", "seed_data_id", "metrics_id", "schedule"])
def test_a_required_field_missing_is_refused(missing: str) -> None:
    body = {k: v for k, v in GOOD.items() if k != missing}
    with pytest.raises(ValidationError) as caught:
        MonitorIn.model_validate(body)
    assert missing in str(caught.value) and "Field required" in str(caught.value)


@pytest.mark.parametrize("alone", ["webhook_url", "webhook_secret"])
def test_a_webhook_url_and_its_secret_go_together(alone: str) -> None:
    body = {k: v for k, v in GOOD.items() if k not in ("webhook_url", "webhook_secret")}
    with pytest.raises(ValidationError) as caught:
        MonitorIn.model_validate({**body, alone: GOOD[alone]})
    assert "go together" in str(caught.value)
