"""The deterministic paths of the generative features."""

from __future__ import annotations

import pytest
from evalsvc.logic.improve_prompt import (
    CandidateView,
    check_llm_prompt,
    deterministic_improvement,
    placeholders,
    requirement_for,
    weak_metrics,
)
from evalsvc.logic.questions import deterministic_questions, requirement_sentences
from evalsvc.models.evaluations import Critique
from evalsvc.scoring.checks import CHECKS
from evalsvc.scoring.perturb import KINDS, perturb


@pytest.mark.parametrize("kind", KINDS)
def test_perturbations_are_reproducible_and_change_the_text(kind: str) -> None:
    text = "How do I reset my password, and where is the billing page? Thanks a lot."
    first = perturb(text, kind, "seed-1")
    assert first == perturb(text, kind, "seed-1")
    assert first != text


def test_perturbing_a_single_short_word_still_changes_it() -> None:
    for kind in KINDS:
        assert perturb("hi", kind, "s") != "hi"
    assert perturb("", "typos", "s") == ""


def test_requirement_sentences_keep_only_requirements_in_order() -> None:
    prompt = "You are Ada. You must reply in French. It is nice.\n- Never use emoji\nAvoid slang."
    assert requirement_sentences(prompt) == [
        "You must reply in French.",
        "Never use emoji",
        "Avoid slang.",
    ]
    assert len(deterministic_questions(prompt)) == 3


def test_every_check_has_a_plain_requirement() -> None:
    for name in CHECKS:
        text = requirement_for(f"check:{name}:5")
        assert text and not text.startswith("Satisfy the check"), name
    assert (
        requirement_for("Is it kind?")
        == 'Make sure the answer to this question is clearly yes: "Is it kind?"'
    )


def test_weak_metrics_are_those_below_four_or_at_least_the_lowest() -> None:
    assert weak_metrics([4.5, 2.0, 3.9, 5.0]) == [1, 2]
    assert weak_metrics([4.5, 4.2, 5.0]) == [1]
    assert weak_metrics([5.0, 5.0]) == []


def test_placeholder_checks() -> None:
    assert placeholders("Hi {name}, see {{ ticket.id }} and {x}") == {
        "{name}",
        "{{ticket.id}}",
        "{x}",
    }
    assert check_llm_prompt("Hello {name}", "Hi {name}", "Hi {name}") is None
    assert check_llm_prompt("Hello", "Hi {name}", "Hi {name}") == "it drops the placeholders {name}"
    assert check_llm_prompt("  ", "Hi", "Hi") == "it is empty"
    assert (
        check_llm_prompt("Hi {name}", "Hi {name}", "Hey {name}")
        == "it is a copy of a prompt it was given"
    )


def test_deterministic_improvement_is_stable_and_mentions_what_is_weak() -> None:
    critiques = [
        Critique("c1", "p", 0, "Too vague.", -1, "u", "e", 1),
        Critique("c2", "p", 0, "Nice.", 1, "u", "e", 2),
    ]
    views = [
        CandidateView(0, "Base {x}.", [2.0, 4.5], critiques=critiques),
        CandidateView(1, "Worse.", [1.0, 1.0]),
    ]
    definitions = ["Is it specific?", "check:max_words:30"]

    first = deterministic_improvement(definitions, views)

    assert first == deterministic_improvement(definitions, views)
    assert first.startswith("Base {x}.\n\n")
    assert '"Is it specific?"' in first and "mean 2.00 of 5" in first
    assert "check:max_words:30" not in first
    assert '- "Too vague."' in first and "Nice." not in first
