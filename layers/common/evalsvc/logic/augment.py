"""Synthetic data from seed pairs (POST /augment): `multiple` variants of each selected seed
pair, aimed at a target metric. With an LLM, redrafted inputs and outputs that satisfy the
target metric; without one, deterministic perturbations of the inputs (casing, whitespace,
typos, reordering) that keep the seed outputs. Every synthetic pair's id names its seed."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from evalsvc.errors import GenerationFailed, InvalidInput, NotFound, PayloadTooLarge
from evalsvc.identifiers import check_client_id
from evalsvc.logic.datasets import new_dataset_id, resolve_dataset_id, select_pairs
from evalsvc.logic.evaluations import ensure_complete
from evalsvc.models.api_keys import Identity
from evalsvc.models.datasets import MAX_PAIRS, MAX_TEXT_CHARS, DatasetHeader, DatasetKind, Pair
from evalsvc.models.generation import AugmentIn
from evalsvc.observability import logger, metrics
from evalsvc.scoring.llm import LLM, InvalidAnswer, LLMFailed, configured_llm
from evalsvc.scoring.perturb import KINDS, perturb
from evalsvc.storage import datasets as datasets_store
from evalsvc.storage import results as results_store


@dataclass(slots=True)
class Augmentation:
    header: DatasetHeader
    seed_size: int
    target_metrics: list[str]


def target_metric(identity: Identity, body: AugmentIn, seed_id: str) -> str | None:
    """The metric the variants aim at: `target_metric`, else definition `target_metric_idx` of
    the evaluation result, else that result's lowest-scoring metric. The result is
    `eval_results_id`, else the newest evaluation of the seed dataset (None if there is none)."""
    results_id = body.eval_results_id
    if results_id is not None:
        check_client_id(results_id, "result id")
    else:
        results_id = results_store.latest_for_dataset(identity.tenant, DatasetKind.SEED, seed_id)
    if body.target_metric is not None:
        return body.target_metric
    if results_id is None:
        if body.target_metric_idx is not None:
            raise InvalidInput(
                f"target_metric_idx needs an evaluation of seed dataset {seed_id!r}: evaluate it "
                "first, or give eval_results_id or target_metric"
            )
        return None
    result = results_store.get(identity.tenant, results_id)
    if result is None:
        raise NotFound(f"no evaluation result with id {results_id!r}")
    ensure_complete(result)
    definitions = result.definitions
    if body.target_metric_idx is not None:
        if body.target_metric_idx >= len(definitions):
            raise InvalidInput(
                f"target_metric_idx {body.target_metric_idx} is out of range: result "
                f"{results_id!r} has {len(definitions)} metrics"
            )
        return definitions[body.target_metric_idx]
    means = [s.mean for s in result.summaries]
    return definitions[min(range(len(means)), key=lambda i: (means[i], i))]


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
                f"{exc.problem}; nothing was stored"
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


def augment(
    identity: Identity, body: AugmentIn, on_progress: Callable[[int], None] | None = None
) -> Augmentation:
    seed_id = resolve_dataset_id(identity, DatasetKind.SEED, body.seed_data_id or "latest")
    seed_header, seeds = select_pairs(
        identity, DatasetKind.SEED, seed_id, body.pair_query, "augment"
    )
    total = len(seeds) * body.multiple
    if total > MAX_PAIRS:
        raise PayloadTooLarge(
            f"{len(seeds)} seed pairs x multiple {body.multiple} = {total} pairs, over the "
            f"{MAX_PAIRS} pairs a dataset may hold: lower multiple or narrow pair_query"
        )
    target = target_metric(identity, body, seed_id)
    llm = configured_llm()
    if llm:
        pairs = llm_variants(llm, seeds, body.multiple, seed_header.system_prompt, target)
    else:
        pairs = [variant for seed in seeds for variant in perturbed_variants(seed, body.multiple)]
    header = datasets_store.write_dataset(
        identity.tenant,
        DatasetKind.SYNTHETIC,
        new_dataset_id(),
        pairs,
        seed_header.system_prompt,
        is_new=True,
        on_progress=on_progress,
    )
    metrics.add_metric(name="SyntheticPairs", unit="Count", value=len(pairs))
    logger.info(
        "synthetic dataset made",
        extra={
            "seed": seed_id,
            "synthetic": header.dataset_id,
            "pairs": len(pairs),
            "by": "llm" if llm else "rules",
        },
    )
    return Augmentation(header, len(seeds), [target] if target else [])
