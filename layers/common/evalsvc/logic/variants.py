"""Variants of seed pairs for synthetic data: with an LLM, redrafted inputs and outputs aimed
at a target metric; without one, deterministic perturbations of the inputs (casing,
whitespace, typos, reordering) that keep the seed outputs. Every variant's id names its seed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evalsvc.core.errors import GenerationFailed
from evalsvc.core.observability import LogContextPool
from evalsvc.models.datasets import MAX_PAIR_TEXT_BYTES, MAX_TEXT_CHARS, Pair
from evalsvc.scoring.llm import LLM, InvalidAnswer, LLMFailed, LLMOutOfTime
from evalsvc.scoring.perturb import KINDS, perturb
from evalsvc.spending.meter import EXPECTED_BYTES_PER_TOKEN, Bound, guard, text_bytes


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


def variants_schema(wanted: int) -> dict[str, Any]:
    """The answer's schema: at most `wanted` variants, so a server that enforces the schema by
    grammar stops a model that would go on adding them (SmolLM2-135M ran to max_tokens)."""
    return {
        "type": "object",
        "properties": {
            "variants": {
                "type": "array",
                "minItems": 1,
                "maxItems": wanted,
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


def _usable(value: Any) -> list[tuple[str, str]]:
    """The variants of an answer that can be stored: an input and an output, each a non-empty
    string within the text limit. InvalidAnswer when there is none."""
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
    if not found:
        raise InvalidAnswer("no variant with an input and an output")
    return found


def _same(variant: tuple[str, str]) -> tuple[str, str]:
    """What makes two variants the same: their texts, ignoring case and spacing."""
    return (" ".join(variant[0].split()).casefold(), " ".join(variant[1].split()).casefold())


# How many of the variants already written a follow-up request lists, and how much of each.
SHOWN_VARIANTS = 20
# The most tokens one answer of variants may take, and what one variant is expected to.
VARIANTS_MAX_TOKENS = 4096
EXPECTED_VARIANT_TOKENS = 40
# The least an answer of variants may take, however short its seed.
VARIANTS_MIN_TOKENS = 512


def variants_max_tokens(seed: Pair, wanted: int) -> int:
    """The most tokens an answer of `wanted` variants of `seed` may take: twice what variants as
    long as their seed take (a token at least every two bytes), within VARIANTS_MIN_TOKENS and
    VARIANTS_MAX_TOKENS. A small model that loops inside a string (SmolLM2-135M did) stops
    there, in seconds, not at 4,096 tokens, past the call's timeout."""
    per_variant = EXPECTED_VARIANT_TOKENS + text_bytes(seed.input, seed.output) // 2
    return max(VARIANTS_MIN_TOKENS, min(VARIANTS_MAX_TOKENS, 2 * wanted * per_variant))


SHOWN_CHARS = 200


def _request(
    seed: Pair, wanted: int, have: Sequence[tuple[str, str]], system_prompt: str, target: str
) -> str:
    text = (
        f"<system_prompt>\n{system_prompt or '(none)'}\n</system_prompt>\n\n"
        f"<target_metric>\n{target}\n</target_metric>\n\n"
        f"<example_input>\n{seed.input}\n</example_input>\n\n"
        f"<example_output>\n{seed.output}\n</example_output>\n\n"
    )
    if have:
        shown = "\n".join(f"- {i[:SHOWN_CHARS]}" for i, _ in have[-SHOWN_VARIANTS:])
        text += f"<already_written>\n{shown}\n</already_written>\n\n"
        text += "Do not repeat the inputs already written. "
    return (
        text + f"Write {wanted} new exchanges. Answer with JSON only: "
        '{"variants": [{"input": "...", "output": "..."}]}'
    )


def redraft(
    llm: LLM, seed: Pair, multiple: int, system_prompt: str, target: str | None
) -> list[Pair]:
    """`multiple` distinct variants of `seed`. A model that gives fewer than asked (common) is
    asked again for the rest, shown what it already wrote; answers with nothing new count
    against the attempts. GenerationFailed, naming what is missing, when the attempts are
    spent; LLMOutOfTime when the deadline comes first."""
    aim = target or "overall answer quality"
    have: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    calls = fruitless = 0
    while len(have) < multiple:
        if fruitless >= llm.max_attempts:
            raise GenerationFailed(
                f"the LLM gave {len(have)} of {multiple} distinct variants of seed pair "
                f"{seed.id!r} in {calls} answers ({fruitless} with nothing new); nothing was "
                "stored"
            )
        user = _request(seed, multiple - len(have), have, system_prompt, aim)
        try:
            found = llm.ask(
                SYSTEM,
                user,
                variants_schema(multiple - len(have)),
                "record_variants",
                _usable,
                max_tokens=variants_max_tokens(seed, multiple - len(have)),
                # Asked again for the rest: a greedy model would write the same variants again.
                sample=calls > 0,
            )
        except LLMOutOfTime:
            raise
        except LLMFailed as exc:
            raise GenerationFailed(
                f"the LLM could not redraft seed pair {seed.id!r} ({len(have)} of {multiple} "
                f"variants so far) after {exc.attempts} attempts: {exc.problem}; nothing was "
                "stored",
                transient=exc.transient,
                retry_after=exc.retry_after,
            ) from exc
        calls += 1
        before = len(have)
        for variant in found:
            key = _same(variant)
            if key not in seen and len(have) < multiple:
                seen.add(key)
                have.append(variant)
        fruitless += len(have) == before
    return [
        Pair(id=f"{seed.id}.v{k}.llm", input=i, output=o) for k, (i, o) in enumerate(have, start=1)
    ]


def variants_bound(
    llm: LLM, seeds: Sequence[Pair], multiple: int, system_prompt: str, target: str | None
) -> Bound:
    """At most what redrafting every seed can use: per seed, `multiple` answers with
    something new and `max_attempts` with nothing, each asked with the most it can show of
    what was already written (SHOWN_VARIANTS inputs of SHOWN_CHARS 4-byte characters)."""
    aim = target or "overall answer quality"
    widest = [("\U0010ffff" * SHOWN_CHARS, "")] * SHOWN_VARIANTS
    bound = Bound(model=llm.name)
    for seed in seeds:
        ask = llm.bound(
            SYSTEM,
            _request(seed, multiple, widest, system_prompt, aim),
            variants_schema(multiple),
            "record_variants",
            variants_max_tokens(seed, multiple),
            expected_output=multiple * (EXPECTED_VARIANT_TOKENS + text_bytes(seed.output) // 4),
        )
        # The first ask about a seed shows nothing already written: the room its attempts
        # hold (the later asks' larger ones grow it as they come).
        first = llm.bound(
            SYSTEM,
            _request(seed, multiple, [], system_prompt, aim),
            variants_schema(multiple),
            "record_variants",
            variants_max_tokens(seed, multiple),
            expected_output=0,
        )
        asks = multiple + llm.max_attempts
        bound += Bound(
            calls=asks,
            input_tokens_max=asks * ask.input_tokens_max,
            output_tokens_max=asks * ask.output_tokens_max,
            input_tokens_expected=ask.input_tokens_expected,
            output_tokens_expected=ask.output_tokens_expected,
            attempts_max=asks * ask.attempts_max,
            attempt_input_max=first.attempt_input_max,
            attempt_output_max=first.attempt_output_max,
            # The asks about one seed are made one after another.
            at_once=1,
        )
    return bound


def variants_bound_unread(
    llm: LLM,
    seed_count: int,
    seed_bytes: int | None,
    multiple: int,
    system_prompt: str,
    target: str | None,
) -> Bound:
    """variants_bound of `seed_count` seeds whose texts, not read, take at most `seed_bytes`
    together (None: unknown, every seed counted as large as a pair can be): what an empty
    seed's asks send, for each seed, and its texts with every attempt of every ask about it,
    which the attempts about one seed times `seed_bytes` bound."""
    if seed_bytes is None:
        seed_bytes = seed_count * MAX_PAIR_TEXT_BYTES
    one = variants_bound(llm, [Pair(id="", input="", output="")], multiple, system_prompt, target)
    return Bound(
        calls=seed_count * one.calls,
        input_tokens_max=seed_count * one.input_tokens_max + one.attempts_max * seed_bytes,
        output_tokens_max=seed_count * one.output_tokens_max,
        input_tokens_expected=seed_count * one.input_tokens_expected
        + -(-seed_bytes // EXPECTED_BYTES_PER_TOKEN),
        output_tokens_expected=seed_count * one.output_tokens_expected,
        model=one.model,
        attempts_max=seed_count * one.attempts_max,
        attempt_input_max=one.attempt_input_max + seed_bytes,
        attempt_output_max=one.attempt_output_max,
        at_once=seed_count,
    )


def llm_variants(
    llm: LLM, seeds: Sequence[Pair], multiple: int, system_prompt: str, target: str | None
) -> list[Pair]:
    """`multiple` variants of every seed, up to the LLM's concurrency seeds at a time; their
    bound is shown to the usage guard first (which may refuse them)."""
    guard(variants_bound(llm, seeds, multiple, system_prompt, target))
    pool = LogContextPool(max_workers=min(llm.concurrency, len(seeds)))
    try:
        futures = [
            pool.submit(redraft, llm, seed, multiple, system_prompt, target) for seed in seeds
        ]
        return [pair for future in futures for pair in future.result()]
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
