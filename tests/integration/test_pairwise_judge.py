"""The pairwise judge (E5): comparisons asked of the OpenAI-compatible fake on 127.0.0.1 and of
Bedrock Converse through botocore's Stubber, answers cached by order, failures saying which
comparison."""

from __future__ import annotations

import boto3
import pytest
from botocore.stub import Stubber
from evalsvc.core.errors import JudgeFailed
from evalsvc.scoring import preferences
from evalsvc.scoring.judges import CachedJudge, Comparison, configured_judge
from evalsvc.storage import judge_cache

from tests.conftest import point_service_at
from tests.fake_judge import FakeJudge, schema_name_of, sequence

QUESTION = "Which answer is more polite?"
PLEASE, CURT = "Please sit down.", "Sit."


def comparisons() -> list[Comparison]:
    """Two comparisons, each in both orders, and one whose outputs are alike."""
    return [
        Comparison("hi", PLEASE, CURT, "pair 'a', run A first"),
        Comparison("hi", CURT, PLEASE, "pair 'a', run B first"),
        Comparison("yo", "Go.", "Leave.", "pair 'b', run A first"),
        Comparison("yo", "Leave.", "Go.", "pair 'b', run B first"),
    ]


@pytest.fixture
def judge(fake_judge: FakeJudge) -> FakeJudge:
    return fake_judge


def cached_judge() -> CachedJudge:
    judge = configured_judge("acme", judge_cache)
    assert judge is not None
    return judge


def answers(judge: CachedJudge, asked: list[Comparison]) -> dict[int, tuple[str, str]]:
    run = judge.begin_preferences(QUESTION, asked)
    try:
        got = run.answers()
    finally:
        run.close()
    assert got.complete
    return {int(str(i)): (preferences.winner_of(c), r) for i, (c, r) in got.by_item.items()}


def test_each_order_is_asked_and_a_position_bias_shows(judge: FakeJudge) -> None:
    got = answers(cached_judge(), comparisons())

    # The output that says please wins in either position; alike outputs go to the first shown
    assert [winner for winner, _ in (got[i] for i in range(4))] == [
        "first",
        "second",
        "first",
        "first",
    ]
    assert got[0][1] == "Only the first output says please."
    assert [schema_name_of(r) for r in judge.requests] == ["record_preference"] * 4
    # The four calls run concurrently, so they may arrive in any order
    users = [r["messages"][-1]["content"] for r in judge.requests]
    shown_first = [u for u in users if f"<first_output>\n{PLEASE}\n</first_output>" in u]
    assert len(shown_first) == 1
    assert f"<second_output>\n{CURT}\n</second_output>" in shown_first[0]
    assert all(f"<question>\n{QUESTION}\n</question>" in u for u in users)


def test_asking_again_is_answered_from_the_cache_by_order(judge: FakeJudge) -> None:
    answers(cached_judge(), comparisons())
    asked = len(judge.requests)
    again = answers(cached_judge(), [*comparisons(), comparisons()[0]])

    assert len(judge.requests) == asked  # every one cached, the repeat too
    assert again[4] == again[0]
    plan = cached_judge().plan_preferences(QUESTION, comparisons())
    assert (plan.hits, len(plan.todo)) == (4, 0)
    # Another question is another key
    other = cached_judge().plan_preferences("Which is shorter?", comparisons())
    assert (other.hits, len(other.todo)) == (0, 4)


def test_an_unusable_answer_is_asked_again_and_a_lasting_one_names_the_comparison(
    judge: FakeJudge,
) -> None:
    judge.answer = sequence(
        (200, '{"reason": "x", "winner": "both"}'), (200, '{"reason": "ok", "winner": "tie"}')
    )
    assert answers(cached_judge(), comparisons()[:1]) == {0: ("tie", "ok")}

    judge.answer = lambda request: (200, '{"reason": "x", "winner": "A"}')
    with pytest.raises(
        JudgeFailed, match=r"the comparison pair 'b', run A first after \d+ attempts"
    ):
        answers(cached_judge(), comparisons()[2:3])


def test_bedrock_answers_through_the_forced_tool(
    tables: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalsvc.scoring.llm import bedrock

    client = boto3.client("bedrock-runtime", region_name="us-east-1")
    stubber = Stubber(client)
    for winner in ("second", "tie"):
        stubber.add_response(
            "converse",
            {
                "output": {
                    "message": {
                        "role": "assistant",
                        "content": [
                            {
                                "toolUse": {
                                    "toolUseId": "t1",
                                    "name": preferences.TOOL_NAME,
                                    "input": {"reason": f"said {winner}", "winner": winner},
                                }
                            }
                        ],
                    }
                },
                "stopReason": "tool_use",
                "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15},
                "metrics": {"latencyMs": 12},
            },
        )
    monkeypatch.setattr(bedrock, "_bedrock_client", lambda region, read_timeout: client)
    point_service_at(
        {"EVALSVC_LLM": "bedrock:anthropic.claude-3-haiku", "EVALSVC_JUDGE_CONCURRENCY": "1"},
        monkeypatch,
    )

    with stubber:
        got = answers(cached_judge(), comparisons()[:2])

    assert got == {0: ("second", "said second"), 1: ("tie", "said tie")}
    stubber.assert_no_pending_responses()
