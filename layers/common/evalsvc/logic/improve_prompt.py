"""Prompt improvement from comparison results: the candidates' per-metric means, their
lowest-scoring pairs with the judge's reasons, and the human critiques (negative comments weigh
most). With an LLM: one OPRO/ProTeGi-style structured call whose answer is checked; without
one, or when the answer fails the checks: a deterministic improvement."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from evalsvc.core.deadlines import Deadline
from evalsvc.core.errors import InvalidInput, NotFound
from evalsvc.core.observability import logger
from evalsvc.logic import datasets as dataset_logic
from evalsvc.logic import metric_sets, spending
from evalsvc.logic import results as evaluation_logic
from evalsvc.models.api_keys import Identity
from evalsvc.models.datasets import MAX_TEXT_CHARS, DatasetKind
from evalsvc.models.evaluations import Critique, LowScore
from evalsvc.models.generation import ImprovePromptIn
from evalsvc.models.metric_sets import MetricsSet
from evalsvc.scoring import checks
from evalsvc.scoring.llm import LLM, InvalidAnswer, LLMFailed, configured_llm
from evalsvc.spending.meter import Usage, guard
from evalsvc.storage import datasets as datasets_store

WEAK_BELOW = 4.0
EXAMPLES_PER_METRIC = 3
_VOTE_NAMES = {-1: "negative", 0: "neutral", 1: "positive"}
_PLACEHOLDER = re.compile(r"\{\{?\s*[A-Za-z_][A-Za-z0-9_.]*\s*\}?\}")


@dataclass(slots=True)
class CandidateView:
    index: int
    prompt: str
    # Per metric; None for a metric that applied to no pair (E10).
    means: list[float | None]
    lowest: list[list[LowScore]] = field(default_factory=list)
    critiques: list[Critique] = field(default_factory=list)

    @property
    def score(self) -> float:
        """The mean of the metrics' means that exist (0 when none does)."""
        means = [m for m in self.means if m is not None]
        return sum(means) / len(means) if means else 0.0


@dataclass(slots=True)
class Improvement:
    improved_prompt: str
    original_prompt: str
    metrics_id: str
    by: str  # "llm" or "rules"
    usage: Usage = field(default_factory=Usage)


def placeholders(prompt: str) -> set[str]:
    return {re.sub(r"\s+", "", p) for p in _PLACEHOLDER.findall(prompt)}


def requirement_for(definition: str) -> str:
    """A definition restated as an instruction to the assistant."""
    known = {
        "rag:faithfulness": "Say only what the retrieved documents support.",
        "rag:context_recall": "Use everything the retrieved documents say that the answer needs.",
        "embed:similarity": "Answer as close in meaning to the expected answer as you can.",
    }
    if definition in known:
        return known[definition]
    if not checks.is_check(definition):
        return f'Make sure the answer to this question is clearly yes: "{definition}"'
    name, _, argument = definition[len(checks.PREFIX) :].partition(":")
    phrases = {
        "non_empty": "Always give a non-empty answer.",
        "json_valid": "Answer with valid JSON only, nothing around it.",
        "json_schema": f"Answer with JSON only, matching this JSON schema: {argument}",
        "regex": f"Make the answer match the pattern /{argument}/.",
        "contains": f'Always include "{argument}" in the answer.',
        "not_contains": f'Never include "{argument}" in the answer.',
        "max_chars": f"Keep the answer within {argument} characters.",
        "min_chars": f"Write at least {argument} characters.",
        "max_words": f"Keep the answer within {argument} words.",
        "no_refusal": "Do not refuse: answer the request helpfully.",
        "no_pii": "Never include email addresses, phone numbers or payment card numbers.",
        "input_overlap": "Stay close to the user's wording: reuse the key terms of their message.",
        "readability": "Write plainly: short sentences and common words.",
        "exact_match": "Give exactly the expected answer, nothing more.",
        "token_f1": "Use the words of the expected answer, and few others.",
        "rouge_l": "Follow the expected answer's wording, in its order.",
        "chrf": "Stay close to the expected answer's wording and spelling.",
        "tool_recall": "Make every tool call the task needs, with the arguments it needs.",
    }
    trajectories = {
        "strict": "Call exactly the tools the task needs, with the arguments it needs, in the "
        "order it needs them, and no others.",
        "unordered": "Call exactly the tools the task needs, with the arguments it needs, and "
        "no others.",
        "subset": "Call no tool the task does not need, and none more often than it needs.",
        "superset": "Make every tool call the task needs, with the arguments it needs.",
    }
    if name == "trajectory" and argument in trajectories:
        return trajectories[argument]
    return phrases.get(name, f"Satisfy the check {definition}.")


def _metrics_for(identity: Identity, body: ImprovePromptIn) -> MetricsSet:
    comparison = body.prompt_comparison_results
    if comparison.metrics_id is not None:
        return metric_sets.get_metrics_set(identity, comparison.metrics_id)
    for candidate in comparison.candidates:
        if candidate.eval_results_id is not None:
            result = evaluation_logic.read_evaluation(
                identity, candidate.eval_results_id, include_all=False, require_complete=True
            ).result
            return metric_sets.get_metrics_set(identity, result.metrics_id)
    return metric_sets.get_metrics_set(identity, None)


def gather(
    identity: Identity, body: ImprovePromptIn
) -> tuple[str, MetricsSet, list[CandidateView]]:
    """The seed dataset's system prompt, the metrics set, and every candidate's evidence."""
    dataset_id = dataset_logic.resolve_dataset_id(identity, DatasetKind.SEED, body.seed_data_id)
    header = datasets_store.get_header(identity.tenant, DatasetKind.SEED, dataset_id)
    if header is None:
        raise NotFound(f"no seed dataset with id {dataset_id!r}")
    metrics_set = _metrics_for(identity, body)
    count = len(metrics_set.definitions)
    views = []
    for index, candidate in enumerate(body.prompt_comparison_results.candidates):
        where = f"prompt_comparison_results.candidates[{index}]"
        if candidate.eval_results_id is not None:
            stored = evaluation_logic.read_evaluation(
                identity,
                candidate.eval_results_id,
                include_all=False,
                require_complete=True,
                critique_sample=True,
            )
            if stored.result.metrics_id != metrics_set.metrics_id:
                raise InvalidInput(
                    f"{where} was evaluated with metrics set {stored.result.metrics_id!r}, "
                    f"not {metrics_set.metrics_id!r}: compare results of one metrics set"
                )
            views.append(
                CandidateView(
                    index,
                    candidate.prompt,
                    [s.mean if s else None for s in stored.result.summaries],
                    stored.result.lowest,
                    stored.critiques,
                )
            )
        else:
            means = candidate.score_means or []
            if len(means) != count:
                raise InvalidInput(
                    f"{where}.score_means has {len(means)} values; metrics set "
                    f"{metrics_set.metrics_id!r} has {count} metrics"
                )
            views.append(CandidateView(index, candidate.prompt, list(means)))
    return header.system_prompt, metrics_set, views


def best_candidate(views: list[CandidateView]) -> CandidateView:
    return max(views, key=lambda v: (v.score, -v.index))


def weak_metrics(means: list[float | None]) -> list[int]:
    """Metrics below WEAK_BELOW, and always the lowest one unless it is perfect; lowest first.
    A metric without a mean (it applied to no pair) is never weak."""
    known = {i: m for i, m in enumerate(means) if m is not None}
    order = sorted(known, key=lambda i: (known[i], i))
    weak = [i for i in order if known[i] < WEAK_BELOW]
    if not weak and order and known[order[0]] < 5.0:
        weak = [order[0]]
    return weak


def failure_reasons(view: CandidateView, metric: int) -> list[str]:
    """The distinct reasons for the candidate's lowest scores on a metric (those below 5)."""
    lowest = view.lowest[metric] if metric < len(view.lowest) else []
    return list(dict.fromkeys(low.reason for low in lowest if low.reason and low.score < 5))


def negative_comments(views: list[CandidateView]) -> list[str]:
    comments = [
        c.comment.strip()
        for view in views
        for c in view.critiques
        if c.vote < 0 and c.comment.strip()
    ]
    return list(dict.fromkeys(comments))


def deterministic_improvement(definitions: list[str], views: list[CandidateView]) -> str:
    """The best candidate plus explicit requirements for its weakest metrics and the reviewers'
    negative comments. The same input always gives the same output."""
    best = best_candidate(views)
    lines = []
    for i in weak_metrics(best.means):
        requirement = requirement_for(definitions[i])
        lines.append(
            f"- {requirement} (metric: {definitions[i]}; mean {best.means[i] or 0:.2f} of 5)"
        )
        for reason in failure_reasons(best, i)[:EXAMPLES_PER_METRIC]:
            lines.append(f"  - a past answer failed because: {reason}")
    comments = negative_comments(views)
    sections = [best.prompt.rstrip()]
    if lines:
        sections.append("Requirements (from evaluation results):\n" + "\n".join(lines))
    if comments:
        sections.append("Reviewer feedback to address:\n" + "\n".join(f'- "{c}"' for c in comments))
    return "\n\n".join(sections)


SYSTEM = (
    "You improve the system prompt of an AI assistant. You are shown prompts that were tried, "
    "worst to best, with their mean score per metric (1-5, 5 best), why the weakest answers "
    "failed, and what human reviewers said. Write one improved system prompt that keeps what "
    "the best prompt does well and fixes the failures. Keep every {placeholder} exactly as it "
    "is. Return only the prompt itself."
)
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"improved_prompt": {"type": "string"}},
    "required": ["improved_prompt"],
    "additionalProperties": False,
}


def meta_prompt(original: str, definitions: list[str], views: list[CandidateView]) -> str:
    parts = [f"<original_prompt>\n{original or '(none)'}\n</original_prompt>", "<metrics>"]
    parts += [f"{i}. {d}" for i, d in enumerate(definitions)]
    parts.append("</metrics>")
    for view in sorted(views, key=lambda v: (v.score, -v.index)):
        means = ", ".join("n/a" if m is None else f"{m:.2f}" for m in view.means)
        parts.append(
            f'<candidate score="{view.score:.2f}" means="{means}">\n{view.prompt}\n</candidate>'
        )
    best = best_candidate(views)
    for i in weak_metrics(best.means):
        reasons = failure_reasons(best, i)
        if reasons:
            listed = "\n".join(f"- {r}" for r in reasons)
            parts.append(f'<failures metric="{i}">\n{listed}\n</failures>')
    comments = [
        f"- ({_VOTE_NAMES[c.vote]}) {c.comment.strip()}"
        for view in views
        for c in sorted(view.critiques, key=lambda c: c.vote)
        if c.comment.strip()
    ]
    if comments:
        parts.append(
            "<human_feedback>\n" + "\n".join(dict.fromkeys(comments)) + "\n</human_feedback>"
        )
    parts.append('Answer with JSON only: {"improved_prompt": "<the new system prompt>"}')
    return "\n\n".join(parts)


def _accept(value: Any) -> str:
    if not isinstance(value, dict) or not isinstance(value.get("improved_prompt"), str):
        raise InvalidAnswer("expected an object with improved_prompt")
    if len(value["improved_prompt"]) > MAX_TEXT_CHARS:
        raise InvalidAnswer(f"improved_prompt is longer than {MAX_TEXT_CHARS:,} characters")
    return str(value["improved_prompt"])


def check_llm_prompt(candidate: str, original: str, best: str) -> str | None:
    """Why an LLM's prompt is unusable, or None when it passes."""
    if not candidate.strip():
        return "it is empty"
    required = placeholders(original) | placeholders(best)
    missing = sorted(required - placeholders(candidate))
    if missing:
        return f"it drops the placeholders {', '.join(missing)}"
    if candidate.strip() in (original.strip(), best.strip()):
        return "it is a copy of a prompt it was given"
    return None


def llm_improvement(
    llm: LLM, original: str, definitions: list[str], views: list[CandidateView]
) -> str | None:
    user = meta_prompt(original, definitions, views)
    expected = IMPROVEMENT_MAX_TOKENS // 2
    guard(
        llm.bound(
            SYSTEM, user, SCHEMA, "record_prompt", IMPROVEMENT_MAX_TOKENS, expected_output=expected
        )
    )
    best = best_candidate(views).prompt

    def usable(value: Any) -> str:
        # A prompt that fails the checks is an unusable answer: asked again, within the attempts.
        answer = _accept(value)
        problem = check_llm_prompt(answer, original, best)
        if problem:
            raise InvalidAnswer(f"the prompt is unusable: {problem}")
        return answer

    try:
        answer = llm.ask(
            SYSTEM, user, SCHEMA, "record_prompt", usable, max_tokens=IMPROVEMENT_MAX_TOKENS
        )
    except LLMFailed as exc:
        logger.warning(
            "LLM prompt improvement failed; using the deterministic improvement",
            extra={"problem": exc.problem},
        )
        return None
    return answer.strip()


# The most tokens an improved prompt may take.
IMPROVEMENT_MAX_TOKENS = 4096
# Time kept back from the request's deadline for the deterministic improvement and the answer.
ANSWER_SECONDS = 2.0


def improve_prompt(identity: Identity, body: ImprovePromptIn, deadline: Deadline) -> Improvement:
    """The improved prompt: the LLM's, if it gives an acceptable one before `deadline`; else
    the deterministic improvement."""
    original, metrics_set, views = gather(identity, body)
    with spending.session(identity.tenant, "POST /improve_prompt", deadline.left()) as spend:
        llm = configured_llm(deadline.earlier(ANSWER_SECONDS))
        improved = llm_improvement(llm, original, metrics_set.definitions, views) if llm else None
    by = "llm"
    if improved is None:
        improved = deterministic_improvement(metrics_set.definitions, views)
        by = "rules"
    logger.info("prompt improved", extra={"by": by, "candidates": len(views)})
    return Improvement(improved, original, metrics_set.metrics_id, by, spend.usage())
