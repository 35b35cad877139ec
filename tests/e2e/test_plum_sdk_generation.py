"""plum-sdk's generate_metric_questions and augment, unmodified, with the fake LLM (the session
server) and without any LLM (a server of its own)."""

from __future__ import annotations

import uuid

import pytest
from plum_sdk import IOPair, PlumClient

from tests.e2e.conftest import DEV_KEY, LocalServer

PROMPT = "You are a support assistant. Always answer in English. Keep answers under 80 words."


def seed_dataset(plum: PlumClient) -> str:
    dataset_id = f"gen-{uuid.uuid4().hex[:8]}"
    examples = [
        IOPair(input="How do I reset my password?", output="Settings, then Security.", id="a")
    ]
    examples.append(IOPair(input="Can I export my data?", output="Yes, please use Export.", id="b"))
    plum.upload_data(examples, system_prompt=PROMPT, dataset_id=dataset_id)
    return dataset_id


def test_generate_questions_and_augment_with_the_llm(server: LocalServer) -> None:
    plum = PlumClient(api_key=DEV_KEY, base_url=server.base_url)
    dataset_id = seed_dataset(plum)

    questions = plum.generate_metric_questions(PROMPT)
    made = plum.augment(seed_data_id=dataset_id, multiple=3)
    synthetic = plum.get_dataset(made["synthetic_data_id"], is_synthetic=True)
    result = plum.evaluate(made["synthetic_data_id"], questions.metrics_id, is_synthetic=True)

    assert questions.definitions == ["Is the answer in English?", "Is the answer under 80 words?"]
    assert made["seed_data_size"] == 2 and made["synthetic_data_size"] == 6
    assert [p.id for p in synthetic.data][:3] == ["a.v1.llm", "a.v2.llm", "a.v3.llm"]
    assert synthetic.data[0].input == "How do I reset my password? (variant 1)"
    assert result.pair_count == 6
    assert plum.get_dataset("latest", is_synthetic=True).id == made["synthetic_data_id"]


@pytest.fixture
def plain_server(fresh_server: LocalServer) -> LocalServer:
    fresh_server.start()
    return fresh_server


def test_generate_questions_and_augment_without_an_llm(plain_server: LocalServer) -> None:
    plum = PlumClient(api_key=DEV_KEY, base_url=plain_server.base_url)
    dataset_id = seed_dataset(plum)

    questions = plum.generate_metric_questions(PROMPT)
    checks = plum.define_metric_questions(["check:non_empty", "check:contains:please"])
    plum.evaluate(dataset_id, checks.metrics_id)
    made = plum.augment(seed_data_id=dataset_id, multiple=2)
    synthetic = plum.get_dataset(made["synthetic_data_id"], is_synthetic=True)
    result = plum.evaluate(made["synthetic_data_id"], checks.metrics_id, is_synthetic=True)

    assert questions.definitions == [
        'Does the answer follow this instruction: "Always answer in English"?',
        'Does the answer follow this instruction: "Keep answers under 80 words"?',
    ]
    assert made["target_metrics"] == ["check:contains:please"]
    assert [p.id for p in synthetic.data] == [
        "a.v1.casing",
        "a.v2.whitespace",
        "b.v1.casing",
        "b.v2.whitespace",
    ]
    assert [p.output for p in synthetic.data] == ["Settings, then Security."] * 2 + [
        "Yes, please use Export."
    ] * 2
    assert result.pair_count == 4
