"""Embeddings for real: the service's embeddings client (EVALSVC_EMBEDDINGS=openai:smollm2)
against each real server of SmolLM2-135M-Instruct serving `/v1/embeddings` (llama-server with
`--embeddings --pooling mean`, llama-cpp-python's with `--embedding true` and mean pooling): the
vectors have the model's dimensions, a text is alike to itself (cos ≈ 1), the scores are on
1..5, every call is metered with the tokens the server counted, and a second run is all cache
hits. `make test-real-llm` runs it; without EVALSVC_REAL_LLM_PYTHON it is skipped."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence

import pytest
from evalsvc.scoring.embeddings import CachedEmbeddings, cosine, unit
from evalsvc.scoring.llm.embedder import configured_embedder
from evalsvc.spending.meter import Meter, metering

from tests.conftest import point_service_at
from tests.real_llm.model import (
    EMBEDDING_DIMENSIONS,
    LLAMA_SERVER,
    MODEL_ALIAS,
    PYTHON,
    SERVERS,
    chat,
    llama_server,
)

pytestmark = pytest.mark.skipif(
    not PYTHON, reason="make test-real-llm runs it, with a real model in .venv-real-llm"
)

TEXTS = [
    "Open Settings, then Security, then Reset password.",
    "To reset your password, open Settings and choose Security.",
    "Bananas are yellow and grow in warm countries.",
]


class MemoryCache:
    def __init__(self) -> None:
        self.items: dict[str, tuple[int, str]] = {}

    def get_many(self, tenant: str, keys: Sequence[str]) -> dict[str, tuple[int, str]]:
        return {key: self.items[key] for key in keys if key in self.items}

    def put_many(self, tenant: str, verdicts: Mapping[str, tuple[int, str]]) -> None:
        self.items.update(verdicts)


@pytest.fixture(scope="module", params=SERVERS)
def embedding_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, str]]:
    server = str(request.param)
    if server == "llama-server" and not LLAMA_SERVER:
        pytest.skip(
            "EVALSVC_REAL_LLAMA_SERVER names no llama-server (make test-real-llm builds it)"
        )
    log = tmp_path_factory.mktemp("embeddings") / "server.log"
    with llama_server(log, server, embeddings=True) as base:
        yield server, base


@pytest.fixture
def service(embedding_server: tuple[str, str], monkeypatch: pytest.MonkeyPatch) -> str:
    _, base = embedding_server
    point_service_at(
        {
            "EVALSVC_EMBEDDINGS": f"openai:{MODEL_ALIAS}",
            "EVALSVC_OPENAI_BASE_URL": base,
            "EVALSVC_OPENAI_API_KEY": "",
            "EVALSVC_JUDGE_CONCURRENCY": "1",
        },
        monkeypatch,
    )
    return base


def test_the_model_embeds_texts_for_real(service: str, embedding_server: tuple[str, str]) -> None:
    server, _ = embedding_server
    embedder = configured_embedder()
    assert embedder is not None

    started = time.monotonic()
    vectors = embedder.embed([TEXTS[0], TEXTS[1], TEXTS[2], TEXTS[0]])
    seconds = time.monotonic() - started

    assert [len(vector) for vector in vectors] == [EMBEDDING_DIMENSIONS] * 4
    units = [unit(vector) for vector in vectors]
    assert cosine(units[0], units[3]) == pytest.approx(1.0, abs=1e-4)  # a text and itself
    assert cosine(units[0], units[0]) == pytest.approx(1.0, abs=1e-5)
    for a in units:
        for b in units:
            assert -1.0 <= cosine(a, b) <= 1.0
    print(
        f"\n{server}: 4 texts embedded in {seconds:.2f} s; cos(paraphrase) = "
        f"{cosine(units[0], units[1]):.4f}, cos(unrelated) = {cosine(units[0], units[2]):.4f}"
    )


def test_similarities_for_real_are_metered_then_cached(service: str) -> None:
    cache = MemoryCache()
    items = [(TEXTS[0], TEXTS[0]), (TEXTS[0], TEXTS[1]), (TEXTS[1], TEXTS[2]), ("", TEXTS[2])]
    meter = Meter()
    with metering(meter):
        embedder = configured_embedder()
        assert embedder is not None
        similarities = CachedEmbeddings(embedder, "local", cache).begin(items)
        try:
            scores = similarities.result()
        finally:
            similarities.close()

    assert set(scores) == {0, 1, 2, 3}
    assert scores[0].value == 5.0
    assert all(1.0 <= score.value <= 5.0 for score in scores.values())
    assert scores[3].value == 1.0 and "zero vector" in scores[3].reason
    usage = meter.usage()
    assert usage.llm_calls == 1 and usage.cache_hits == 0
    assert 0 < usage.input_tokens < 200  # as the server counted them
    assert len(cache.items) == 3

    again = Meter()
    with metering(again):
        embedder = configured_embedder()
        assert embedder is not None
        rerun = CachedEmbeddings(embedder, "local", cache).begin(items)
        assert rerun.result() == scores
    assert again.usage().llm_calls == 0 and again.usage().cache_hits == 3


def test_the_same_server_still_chats(embedding_server: tuple[str, str]) -> None:
    _, base = embedding_server
    assert chat(base, "You are a helpful assistant.", "Say hello.", max_tokens=8)
