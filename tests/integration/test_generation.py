"""POST /questions, POST /improve_prompt and POST /augment, without an LLM and with a fake
OpenAI-compatible one on 127.0.0.1."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import pytest

from tests.conftest import point_service_at
from tests.fake_judge import FakeJudge, fake_llm, sequence
from tests.integration.conftest import Tenant, ok

PROMPT = (
    "You are a support assistant for {product}. Always answer in English. "
    "Never share internal URLs. Keep answers under 80 words. Our office is in Lyon."
)


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeJudge]:
    fake = FakeJudge(fake_llm)
    with fake.running():
        point_service_at(
            {
                "EVALSVC_LLM": "openai:fake-llm",
                "EVALSVC_OPENAI_BASE_URL": fake.base_url,
                "EVALSVC_JUDGE_RETRY_BASE_SECONDS": "0.01",
            },
            monkeypatch,
        )
        yield fake


def seed(tenant: Tenant, dataset_id: str = "ds") -> None:
    data = [
        {
            "id": "a",
            "input": "How do I reset my password?",
            "output": "Open Settings, then Security.",
            "labels": ["account"],
        },
        {
            "id": "b",
            "input": "Can I export my data?",
            "output": "Yes, please use Settings, Data, Export.",
            "labels": ["data"],
        },
        {"id": "c", "input": "Is there a dark mode?", "output": "Yes.", "labels": ["ui"]},
    ]
    assert (
        tenant.post(f"/data/seed/{dataset_id}", {"data": data, "system_prompt": PROMPT}).status_code
        == 200
    )


def evaluate(tenant: Tenant, definitions: list[str], dataset: str = "ds") -> str:
    assert tenant.post("/specify_questions", {"metrics": definitions}).status_code == 200
    response = tenant.post("/evaluate", {"seed_data_id": dataset})
    assert response.status_code == 200, response.text
    return str(response.json()["eval_results_id"])


# ---- /questions --------------------------------------------------------------------------------


def test_questions_without_an_llm_are_one_per_requirement_sentence(acme: Tenant) -> None:
    response = acme.post("/questions", {"system_prompt": PROMPT})

    assert response.status_code == 200, response.text
    definitions = response.json()["definitions"]
    assert definitions == [
        'Does the answer follow this instruction: "Always answer in English"?',
        'Does the answer follow this instruction: "Never share internal URLs"?',
        'Does the answer follow this instruction: "Keep answers under 80 words"?',
    ]
    stored = acme.get("/question/latest").json()
    assert stored["metrics_id"] == response.json()["metrics_id"]
    assert stored["system_prompt"] == PROMPT


def test_questions_from_bullets(acme: Tenant) -> None:
    prompt = (
        "Rules:\n- Be brief.\n- You must cite a source.\n* Avoid jargon\n1) Use British spelling"
    )
    definitions = acme.post("/questions", {"system_prompt": prompt}).json()["definitions"]
    assert [d.split('"')[1] for d in definitions] == [
        "You must cite a source",
        "Avoid jargon",
        "Use British spelling",
    ]


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        (
            {"system_prompt": "The sky is blue. Cats purr."},
            400,
            "no requirement found in the system prompt",
        ),
        ({"system_prompt": "   "}, 400, "system_prompt is empty"),
        ({"system_prompt": ""}, 400, "system_prompt"),
        ({}, 400, "system_prompt: Field required"),
        ({"system_prompt": 5}, 400, "system_prompt: Input should be a valid string"),
    ],
)
def test_bad_questions_requests(
    acme: Tenant, body: dict[str, object], status: int, message: str
) -> None:
    response = acme.post("/questions", body)
    assert response.status_code == status, response.text
    assert message in response.json()["error"]
    assert acme.get("/list_questions").json()["total_count"] == 0


def test_questions_with_the_llm(acme: Tenant, llm: FakeJudge) -> None:
    response = acme.post("/questions", {"system_prompt": PROMPT})

    assert response.json()["definitions"] == [
        "Is the answer in English?",
        "Is the answer under 80 words?",
    ]
    request = llm.requests[0]
    assert request["response_format"]["json_schema"]["name"] == "record_questions"
    assert PROMPT in request["messages"][1]["content"]


def test_questions_llm_garbage_is_502_and_stores_nothing(acme: Tenant, llm: FakeJudge) -> None:
    llm.answer = sequence((200, '{"questions": []}'))

    response = acme.post("/questions", {"system_prompt": PROMPT})

    assert response.status_code == 502
    assert "no usable questions" in response.json()["error"]
    assert acme.get("/list_questions").json()["total_count"] == 0


# ---- /improve_prompt ---------------------------------------------------------------------------


def comparison(candidates: list[dict[str, object]], **extra: object) -> dict[str, object]:
    return {"seed_data_id": "ds", "prompt_comparison_results": {"candidates": candidates, **extra}}


@pytest.fixture
def compared(acme: Tenant) -> dict[str, str]:
    """Two evaluated prompts on one metrics set, and negative human comments on the better one."""
    seed(acme)
    first = evaluate(acme, ["check:contains:please", "check:max_words:5", "check:non_empty"])
    metrics_id = acme.get("/question/latest").json()["metrics_id"]
    ok(
        acme.put(
            "/data/seed/ds",
            {
                "data": [
                    {"id": "a", "input": "Hi", "output": "Hello, please sit."},
                    {"id": "b2", "input": "Hey", "output": "Hello there, please take a seat now."},
                ],
                "system_prompt": PROMPT,
            },
        )
    )
    second = acme.post("/evaluate", {"seed_data_id": "ds", "metrics_id": metrics_id}).json()[
        "eval_results_id"
    ]
    ok(
        acme.put(
            f"/vote_eval_pair/{second}",
            {"pair_id": "b2", "metric_idx": 1, "vote": -1, "comment": "Far too long."},
        )
    )
    ok(
        acme.put(
            f"/vote_eval_pair/{first}",
            {"pair_id": "b", "metric_idx": 0, "vote": -1, "comment": "Sounds curt."},
        )
    )
    ok(
        acme.put(
            f"/vote_eval_pair/{first}",
            {"pair_id": "c", "metric_idx": 0, "vote": 1, "comment": "Fine."},
        )
    )
    return {"first": first, "second": second, "metrics_id": metrics_id}


def test_deterministic_improvement_mentions_weak_metrics_and_negative_comments(
    acme: Tenant, compared: dict[str, str]
) -> None:
    body = comparison(
        [
            {"prompt": "Prompt A for {product}.", "eval_results_id": compared["first"]},
            {"prompt": "Prompt B for {product}.", "eval_results_id": compared["second"]},
        ]
    )

    first = acme.post("/improve_prompt", body)
    again = acme.post("/improve_prompt", body)

    assert first.status_code == 200, first.text
    result = first.json()
    assert result == again.json()
    assert result["original_prompt"] == PROMPT
    assert result["metrics_id"] == compared["metrics_id"]
    improved = result["improved_prompt"]
    # the better candidate: means 4.33 against 3.67
    assert improved.startswith("Prompt B for {product}.")
    assert "Keep the answer within 5 words. (metric: check:max_words:5; mean 3.00 of 5)" in improved
    assert "a past answer failed because: output has 7 words, over the maximum 5" in improved
    assert "output has 3 words" not in improved  # a passing score is not a failure
    assert '- "Far too long."' in improved and '- "Sounds curt."' in improved
    assert "Fine." not in improved


def test_deterministic_improvement_from_score_means(acme: Tenant) -> None:
    seed(acme)
    metrics_id = acme.post(
        "/specify_questions", {"metrics": ["Is it polite?", "check:no_pii", "check:readability"]}
    ).json()["metrics_id"]

    response = acme.post(
        "/improve_prompt",
        comparison(
            [
                {"prompt": "Old.", "score_means": [2.0, 5.0, 4.5]},
                {"prompt": "Better.", "score_means": [3.0, 5.0, 4.2]},
            ],
            metrics_id=metrics_id,
        ),
    )

    improved = response.json()["improved_prompt"]
    assert improved.startswith("Better.")
    assert 'Make sure the answer to this question is clearly yes: "Is it polite?"' in improved
    assert "check:no_pii" not in improved
    assert "check:readability" not in improved  # 4.2 is not weak, and the lowest is 'Is it polite?'


@pytest.mark.parametrize(
    ("candidates", "status", "message"),
    [
        ([], 400, "prompt_comparison_results.candidates: List should have at least 1 item"),
        ([{"prompt": "P"}], 400, "a candidate needs eval_results_id or score_means"),
        (
            [{"prompt": "P", "score_means": [1.0]}],
            400,
            "candidates[0].score_means has 1 values; metrics set",
        ),
        ([{"prompt": "P", "score_means": ["x", 1, 2]}], 400, "score_means[0]"),
        (
            [{"prompt": "P", "eval_results_id": "ev_unknown"}],
            404,
            "no evaluation result with id 'ev_unknown'",
        ),
    ],
)
def test_bad_comparisons(
    acme: Tenant, candidates: list[dict[str, object]], status: int, message: str
) -> None:
    seed(acme)
    ok(
        acme.post(
            "/specify_questions",
            {"metrics": ["check:non_empty", "check:no_pii", "check:json_valid"]},
        )
    )

    response = acme.post("/improve_prompt", comparison(candidates))

    assert response.status_code == status, response.text
    assert message in response.json()["error"]


def test_improve_prompt_for_an_unknown_seed_dataset_is_404(acme: Tenant) -> None:
    ok(acme.post("/specify_questions", {"metrics": ["check:non_empty"]}))
    response = acme.post(
        "/improve_prompt",
        {
            "seed_data_id": "nope",
            "prompt_comparison_results": {"candidates": [{"prompt": "P", "score_means": [3.0]}]},
        },
    )
    assert response.status_code == 404
    assert response.json()["error"] == "no seed dataset with id 'nope'"


def test_improve_prompt_with_the_llm(
    acme: Tenant, compared: dict[str, str], llm: FakeJudge
) -> None:
    response = acme.post(
        "/improve_prompt",
        comparison([{"prompt": "Prompt B for {product}.", "eval_results_id": compared["second"]}]),
    )

    assert response.json()["improved_prompt"] == PROMPT + "\nAlways say please."
    meta = llm.requests[-1]["messages"][1]["content"]
    assert "<candidate score=" in meta and "Far too long." in meta and "check:max_words:5" in meta


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ('{"improved_prompt": ""}', "it is empty"),
        (
            '{"improved_prompt": "A prompt that forgot the product."}',
            "it drops the placeholders {product}",
        ),
        ('{"improved_prompt": "Prompt B for {product}."}', "it is a copy of a prompt it was given"),
    ],
)
def test_llm_prompt_failing_the_checks_falls_back_to_the_rules(
    acme: Tenant,
    compared: dict[str, str],
    llm: FakeJudge,
    caplog: pytest.LogCaptureFixture,
    answer: str,
    why: str,
) -> None:
    body = comparison(
        [{"prompt": "Prompt B for {product}.", "eval_results_id": compared["second"]}]
    )
    llm.answer = sequence((200, answer))
    from evalsvc.core.observability import logger

    logger.addHandler(caplog.handler)
    try:
        with caplog.at_level(logging.WARNING):
            response = acme.post("/improve_prompt", body)
    finally:
        logger.removeHandler(caplog.handler)

    improved = response.json()["improved_prompt"]
    assert improved.startswith("Prompt B for {product}.\n\nRequirements (from evaluation results):")
    failed = [
        r
        for r in caplog.records
        if r.getMessage() == "LLM prompt improvement failed; using the deterministic improvement"
    ]
    assert failed and failed[0].problem == f"unusable answer (the prompt is unusable: {why})"  # type: ignore[attr-defined]
    # Every attempt was asked: an unusable prompt is asked again, not given up at once.
    assert len(llm.requests) == 4


def test_an_llm_prompt_failing_the_checks_is_asked_again(
    acme: Tenant, compared: dict[str, str], llm: FakeJudge
) -> None:
    body = comparison(
        [{"prompt": "Prompt B for {product}.", "eval_results_id": compared["second"]}]
    )
    llm.answer = sequence(
        (200, '{"improved_prompt": "A prompt that forgot the product."}'),
        (200, '{"improved_prompt": "Prompt C for {product}: answer in English."}'),
    )

    response = acme.post("/improve_prompt", body)

    assert response.status_code == 200, response.text
    assert response.json()["improved_prompt"] == "Prompt C for {product}: answer in English."
    assert len(llm.requests) == 2


# ---- /augment ----------------------------------------------------------------------------------


def test_augment_without_an_llm_perturbs_inputs_and_keeps_outputs(acme: Tenant) -> None:
    seed(acme)
    evaluate(acme, ["check:non_empty", "check:contains:please"])

    response = acme.post("/augment", {"seed_data_id": "ds", "multiple": 4})

    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["seed_data_size"], body["synthetic_data_size"]) == (3, 12)
    assert body["target_metrics"] == ["check:contains:please"]
    assert body["system_prompt"] == PROMPT
    synthetic = acme.get("/data/synthetic/latest").json()
    assert synthetic["id"] == body["synthetic_data_id"]
    ids = [p["id"] for p in synthetic["data"]]
    assert ids[:4] == ["a.v1.casing", "a.v2.whitespace", "a.v3.typos", "a.v4.reorder"]
    seeds = {p["id"]: p for p in acme.get("/data/seed/ds").json()["data"]}
    for pair in synthetic["data"]:
        origin = seeds[pair["id"].split(".")[0]]
        assert pair["output"] == origin["output"]
        assert pair["input"] != origin["input"]
    again = acme.post("/augment", {"seed_data_id": "ds", "multiple": 4}).json()
    assert [
        p["input"] for p in acme.get(f"/data/synthetic/{again['synthetic_data_id']}").json()["data"]
    ] == [p["input"] for p in synthetic["data"]]


def test_augmented_data_can_be_evaluated(acme: Tenant) -> None:
    seed(acme)
    made = acme.post("/augment", {"multiple": 2, "pair_query": {"pair_labels": ["account"]}}).json()
    assert made["synthetic_data_size"] == 2 and made["target_metrics"] == []
    ok(acme.post("/specify_questions", {"metrics": ["check:non_empty"]}))

    response = acme.post("/evaluate", {"synthetic_data_id": made["synthetic_data_id"]})

    assert response.status_code == 200
    assert response.json()["pair_count"] == 2


def test_augment_targets(acme: Tenant) -> None:
    seed(acme)
    results_id = evaluate(acme, ["check:non_empty", "check:contains:please"])

    by_index = acme.post("/augment", {"eval_results_id": results_id, "target_metric_idx": 0}).json()
    by_text = acme.post("/augment", {"target_metric": "Is the answer friendly?"}).json()

    assert by_index["target_metrics"] == ["check:non_empty"]
    assert by_text["target_metrics"] == ["Is the answer friendly?"]


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"multiple": 0}, 400, "multiple"),
        ({"multiple": 51}, 400, "multiple"),
        ({"multiple": "2"}, 400, "multiple"),
        ({"target_metric_idx": 9}, 400, "target_metric_idx 9 is out of range"),
        ({"eval_results_id": "ev_nope"}, 404, "no evaluation result with id 'ev_nope'"),
        ({"seed_data_id": "nope"}, 404, "no seed dataset with id 'nope'"),
        (
            {"pair_query": {"pair_labels": ["nothing"]}},
            400,
            "nothing to augment in seed dataset 'ds': no pair matches pair_query",
        ),
    ],
)
def test_bad_augment_requests(
    acme: Tenant, body: dict[str, object], status: int, message: str
) -> None:
    seed(acme)
    evaluate(acme, ["check:non_empty"])

    response = acme.post("/augment", body)

    assert response.status_code == status, response.text
    assert message in response.json()["error"]
    assert acme.get("/data/synthetic/latest").status_code == 404


def test_augment_over_the_dataset_limit_is_413(
    acme: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    import evalsvc.logic.augment as augment_logic

    seed(acme)
    monkeypatch.setattr(augment_logic, "MAX_PAIRS", 10)

    response = acme.post("/augment", {"multiple": 4})

    assert response.status_code == 413
    assert "3 seed pairs x multiple 4 = 12 pairs" in response.json()["error"]


def test_augment_with_the_llm(acme: Tenant, llm: FakeJudge) -> None:
    seed(acme)

    response = acme.post(
        "/augment", {"multiple": 2, "target_metric": "Does the output say please?"}
    )

    assert response.status_code == 200, response.text
    data = acme.get(f"/data/synthetic/{response.json()['synthetic_data_id']}").json()["data"]
    assert [p["id"] for p in data] == [
        "a.v1.llm",
        "a.v2.llm",
        "b.v1.llm",
        "b.v2.llm",
        "c.v1.llm",
        "c.v2.llm",
    ]
    assert data[0]["input"] == "How do I reset my password? (variant 1)"
    prompt = llm.requests[0]["messages"][1]["content"]
    assert "<target_metric>\nDoes the output say please?\n</target_metric>" in prompt


def test_augment_llm_garbage_is_502_and_stores_nothing(acme: Tenant, llm: FakeJudge) -> None:
    seed(acme)
    llm.answer = sequence((200, json.dumps({"variants": [{"input": "only one", "output": "x"}]})))

    response = acme.post("/augment", {"multiple": 2})

    assert response.status_code == 502
    assert response.json()["error"].startswith(
        "the LLM gave 1 of 2 distinct variants of seed pair 'a' in 5 answers (4 with nothing "
        "new); nothing was stored"
    )
    assert acme.get("/data/synthetic/latest").status_code == 404
    # Asked again for the rest, the model samples: greedy, it would write the same again.
    first = {r["temperature"] for r in llm.requests if "Write 2 new" in str(r["messages"])}
    again = [r["temperature"] for r in llm.requests if "Write 1 new" in str(r["messages"])]
    assert first == {0} and len(again) >= 4 and set(again) == {0.7}
