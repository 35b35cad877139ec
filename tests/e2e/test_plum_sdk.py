"""plum-sdk, unmodified, against the local server."""

from __future__ import annotations

import uuid

import pytest
import requests
from plum_sdk import IOPair, PlumClient

from tests.e2e.conftest import DEV_KEY, LocalServer


@pytest.fixture
def plum(server: LocalServer) -> PlumClient:
    return PlumClient(api_key=DEV_KEY, base_url=server.base_url)


def test_upload_data_then_get_dataset(plum: PlumClient) -> None:
    examples = [
        IOPair(input="2+2?", output="4", id="math-1"),
        IOPair(input="Capital of France?", output="Paris"),
    ]

    uploaded = plum.upload_data(examples, system_prompt="Answer tersely.")
    dataset = plum.get_dataset(uploaded.id)

    assert dataset.id == uploaded.id
    assert dataset.system_prompt == "Answer tersely."
    assert [(p.input, p.output) for p in dataset.data] == [
        ("2+2?", "4"),
        ("Capital of France?", "Paris"),
    ]
    assert dataset.data[0].id == "math-1"
    assert dataset.data[1].id
    assert dataset.data[0].metadata is not None and dataset.data[0].metadata.created_at
    assert dataset.created_at


def test_upload_data_with_dataset_id_overwrites(plum: PlumClient) -> None:
    dataset_id = f"sdk-{uuid.uuid4().hex[:8]}"
    plum.upload_data([IOPair(input="old", output="old")], system_prompt="v1", dataset_id=dataset_id)

    response = plum.upload_data(
        [IOPair(input="new", output="new")], system_prompt="v2", dataset_id=dataset_id
    )

    assert response.id == dataset_id
    dataset = plum.get_dataset(dataset_id)
    assert [p.input for p in dataset.data] == ["new"]
    assert dataset.system_prompt == "v2"


def test_upload_pair_and_get_pair(plum: PlumClient) -> None:
    uploaded = plum.upload_data([], system_prompt="Pairs one by one.")

    added = plum.upload_pair(uploaded.id, "Hello?", "Hi!", pair_id="greet-1", labels=["greeting"])
    generated = plum.upload_pair(uploaded.id, "Bye?", "Bye!")

    assert (added.dataset_id, added.pair_id) == (uploaded.id, "greet-1")
    pair = plum.get_pair(uploaded.id, "greet-1")
    assert (pair.input, pair.output) == ("Hello?", "Hi!")
    assert pair.metadata is not None and pair.metadata.labels == ["greeting"]
    assert plum.get_pair(uploaded.id, generated.pair_id).output == "Bye!"


def test_upload_pair_with_prompt_groups_pairs_by_system_prompt(plum: PlumClient) -> None:
    template = f"You are tester {uuid.uuid4().hex}. Answer {{question}}."

    first = plum.upload_pair_with_prompt("q1", "a1", template, labels=["x"])
    second = plum.upload_pair_with_prompt("q2", "a2", template, pair_id="second")

    assert first.dataset_id == second.dataset_id
    assert second.pair_id == "second"
    dataset = plum.get_dataset(first.dataset_id)
    assert dataset.system_prompt == template
    assert [p.input for p in dataset.data] == ["q1", "q2"]


def test_get_latest_seed_dataset(plum: PlumClient) -> None:
    uploaded = plum.upload_data([IOPair(input="newest", output="yes")], system_prompt="latest test")
    assert plum.get_dataset("latest").id == uploaded.id


def test_sdk_errors_surface_as_http_errors(plum: PlumClient, server: LocalServer) -> None:
    with pytest.raises(requests.HTTPError) as missing:
        plum.get_dataset("no-such-dataset")
    assert missing.value.response.status_code == 404
    assert missing.value.response.json() == {"error": "no seed dataset with id 'no-such-dataset'"}

    intruder = PlumClient(api_key="evk_wrong", base_url=server.base_url)
    with pytest.raises(requests.HTTPError) as unauthorized:
        intruder.get_dataset("latest")
    assert unauthorized.value.response.status_code == 401


def test_get_synthetic_dataset_imported_by_the_cli(
    plum: PlumClient, server: LocalServer, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    rows = tmp_path / "synthetic.jsonl"
    rows.write_text(
        "".join(f'{{"input": "variant {i}", "output": "answer {i}"}}\n' for i in range(1500))
    )

    result = server.cli(
        "synthetic", "import", str(rows), "--tenant", "local", "--system-prompt", "Be kind."
    )

    assert result.returncode == 0, result.stderr
    dataset_id = result.stdout.strip().splitlines()[-1]
    assert "written 1500/1500 pairs (100%)" in result.stderr
    dataset = plum.get_dataset(dataset_id, is_synthetic=True)
    assert dataset.id == dataset_id
    assert dataset.system_prompt == "Be kind."
    assert len(dataset.data) == 1500
    assert (dataset.data[0].input, dataset.data[-1].output) == ("variant 0", "answer 1499")
    assert plum.get_dataset("latest", is_synthetic=True).id == dataset_id


def test_define_list_and_get_metric_questions(plum: PlumClient) -> None:
    defined = plum.define_metric_questions(["Is the answer correct?", "check:max_words:50"])

    listed = plum.list_metrics()
    fetched = plum.get_metric(defined.metrics_id)
    latest = plum.get_metric("latest")

    assert defined.metrics_id in listed.metrics
    assert listed.total_count == len(listed.metrics)
    assert [d.description for d in fetched.definitions] == [
        "Is the answer correct?",
        "check:max_words:50",
    ]
    assert fetched.metric_count == 2
    assert fetched.created_at
    assert latest.metrics_id == defined.metrics_id
