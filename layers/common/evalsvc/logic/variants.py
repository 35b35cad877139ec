"""Variants of seed pairs for synthetic data: with an LLM, redrafted inputs and outputs aimed
at a target metric; without one, deterministic perturbations of the inputs (casing,
whitespace, typos, reordering) that keep the seed outputs. Every variant's id names its seed."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from evalsvc.errors import GenerationFailed
from evalsvc.models.datasets import MAX_TEXT_CHARS, Pair
from evalsvc.scoring.llm import LLM, InvalidAnswer, LLMFailed
from evalsvc.scoring.perturb import KINDS, perturb


def perturbed_variants(seed: Pair, multiple: int) -> list[Pair]:
    variants = []
    for k in range(1, multiple + 1):
        kind = KINDS[(k - 1) % len(KINDS)]
        variants.append(
            Pair(
                id=f"{seed.id}.v{k}.{kind}",
                input=perturb(seed.input, kind, f"{seed.id}:{k}"),
                output=seed.output,
            )
        )
    return variants


SYSTEM = (
    "You write synthetic test data for an AI assistant. Given one example exchange, write new "
    "exchanges in the same spirit: realistic user inputs that vary the wording, details and "
    "difficulty, each with the answer an excellent assistant following the system prompt would "
    "give. The answers must fully satisfy the target metric."
)
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "variants": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"input": {"type": "string"}, "output": {"type": "string"}},
                "required": ["input", "output"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["variants"],
    "additionalProperties": False,
}


def _acceptor(multiple: int) -> Callable[[Any], list[tuple[str, str]]]:
    def accept(value: Any) -> list[tuple[str, str]]:
        items = value.get("variants") if isinstance(value, dict) else None
        if not isinstance(items, list):
            raise InvalidAnswer("expected an object with a list of variants")
        found = [
            (v["input"], v["output"])
            for v in items
            if isinstance(v, dict)
            and isinstance(v.get("input"), str)
            and isinstance(v.get("output"), str)
            and v["input"].strip()
            and len(v["input"]) <= MAX_TEXT_CHARS
            and len(v["output"]) <= MAX_TEXT_CHARS
        ]
        if len(found) < multiple:
            raise InvalidAnswer(
                f"expected {multiple} variants with input and output, got {len(found)}"
            )
        return found[:multiple]

    return accept


def llm_variants(
    llm: LLM, seeds: Sequence[Pair], multiple: int, system_prompt: str, target: str | None
) -> list[Pair]:
    accept = _acceptor(multiple)

    def redraft(seed: Pair) -> list[Pair]:
        user = (
            f"<system_prompt>\n{system_prompt or '(none)'}\n</system_prompt>\n\n"
            f"<target_metric>\n{target or 'overall answer quality'}\n</target_metric>\n\n"
            f"<example_input>\n{seed.input}\n</example_input>\n\n"
            f"<example_output>\n{seed.output}\n</example_output>\n\n"
            f"Write {multiple} new exchanges. Answer with JSON only: "
            '{"variants": [{"input": "...", "output": "..."}]}'
        )
        try:
            found = llm.ask(SYSTEM, user, SCHEMA, "record_variants", accept, max_tokens=4096)
        except LLMFailed as exc:
            raise GenerationFailed(
                f"the LLM could not redraft seed pair {seed.id!r} after {exc.attempts} attempts: "
                f"{exc.problem}; nothing was stored",
                transient=exc.transient,
            ) from exc
        return [
            Pair(id=f"{seed.id}.v{k}.llm", input=i, output=o)
            for k, (i, o) in enumerate(found, start=1)
        ]

    pool = ThreadPoolExecutor(max_workers=min(llm.concurrency, len(seeds)))
    try:
        futures = [pool.submit(redraft, seed) for seed in seeds]
        return [pair for future in futures for pair in future.result()]
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
