"""Work of two models in one request (a judge and an embeddings model): each model's counts kept
apart and priced at its own price, stored and read back so, subtracted, scaled and lost model by
model; bounds of both summed and priced each at its own; the rooms their attempts share hold
either, priced as the dearer would price them."""

from __future__ import annotations

from decimal import Decimal

from evalsvc.spending.meter import Bound, Meter, Usage, calls_bound, embeddings_bound
from evalsvc.spending.prices import BUILT_IN
from evalsvc.spending.usage import larger_room, room_holds

JUDGE = "openai:gpt-4o-mini"  # 0.15 and 0.60 a million
EMBED = "openai:text-embedding-3-small"  # 0.02 a million, input only


def test_one_model_s_usage_has_no_shares_as_before() -> None:
    total = Usage() + Usage(1, 0, 10, 5, JUDGE) + Usage(2, 1, 20, 5, JUDGE)

    assert total == Usage(3, 1, 30, 10, JUDGE)
    assert total.shares == ()
    assert Usage(model=JUDGE) + Usage(model=EMBED) == Usage(model=JUDGE)


def test_two_models_are_kept_apart_and_each_priced_at_its_own() -> None:
    total = Usage(2, 0, 1_000_000, 1_000_000, JUDGE) + Usage(3, 4, 1_000_000, 0, EMBED)

    assert (total.llm_calls, total.cache_hits, total.input_tokens, total.output_tokens) == (
        5,
        4,
        2_000_000,
        1_000_000,
    )
    assert total.model == JUDGE
    assert [share.model for share in total.shares] == [JUDGE, EMBED]
    assert total.cost() == Decimal("0.15") + Decimal("0.60") + Decimal("0.02")
    # the same sum in any order and grouping
    again = Usage(1, 0, 500_000, 0, EMBED) + Usage(2, 0, 1_000_000, 1_000_000, JUDGE)
    again += Usage(2, 4, 500_000, 0, EMBED)
    assert again.cost() == total.cost()


def test_one_unpriced_model_makes_the_cost_unknown() -> None:
    total = Usage(1, 0, 10, 5, JUDGE) + Usage(1, 0, 10, 0, "openai:nomic-embed")

    assert total.cost() is None
    assert (Usage(1, 0, 10, 5, JUDGE) + Usage(0, 3, 0, 0, "openai:nomic-embed")).cost() > 0


def test_usage_of_two_models_is_stored_and_read_back_model_by_model() -> None:
    total = Usage(2, 0, 100, 50, JUDGE) + Usage(1, 2, 40, 0, EMBED).as_lost()

    stored = total.as_dict()

    assert [share["model"] for share in stored["by_model"]] == [JUDGE, EMBED]
    assert Usage.from_dict(stored) == total
    assert Usage.from_dict({**stored, "by_model": "nonsense"}) == Usage(
        3, 2, 140, 50, JUDGE, 1, 40, 0
    )


def test_subtracted_scaled_and_lost_model_by_model() -> None:
    judge, embed = Usage(2, 0, 100, 50, JUDGE), Usage(1, 2, 40, 0, EMBED)
    total = judge + embed

    assert total.minus(embed) == judge
    assert total.minus(total) == Usage(model=JUDGE)
    assert total.times(3) == judge.times(3) + embed.times(3)
    lost = (judge + embed.as_lost()).lost()
    assert lost == Usage(1, 0, 40, 0, EMBED)
    assert total.as_lost().lost() == Usage(2, 0, 100, 50, JUDGE) + Usage(1, 0, 40, 0, EMBED)


def test_bounds_of_two_models_are_priced_each_at_its_own() -> None:
    judge = calls_bound(2, 4_000, 250, 4, 150)
    judge.model = JUDGE
    embed = embeddings_bound(130, 3, 10_000, 4)
    embed.model = EMBED

    both = Bound(model=JUDGE) + judge + embed

    assert both.calls == 5 and [p.model for p in both.shares] == [JUDGE, EMBED]
    assert both.cost_max() == judge.cost_max() + embed.cost_max()  # type: ignore[operator]
    assert both.cost_expected() == judge.cost_expected() + embed.cost_expected()  # type: ignore[operator]
    assert both.most() == judge.most() + embed.most()
    assert both.unpriced() == ""
    embed.model = "openai:nomic-embed"
    assert (judge + embed).cost_max() is None
    assert (judge + embed).unpriced() == "openai:nomic-embed"


def test_a_room_shared_by_two_models_holds_either_at_the_dearer_price() -> None:
    judge = Usage(1, 0, 2_000, 250, JUDGE)
    embed = Usage(1, 0, 40_000, 0, EMBED)

    room = larger_room(judge, embed)

    assert (room.input_tokens, room.output_tokens) == (40_000, 250)
    # 40,000 input tokens and 250 output ones cost more as the judge's than as the embeddings'
    assert room.model == JUDGE
    assert room_holds(room, judge) and room_holds(room, embed)
    assert not room_holds(judge, embed)
    # a model with no price is the dearest
    assert larger_room(judge, Usage(1, 0, 10, 0, "openai:nomic-embed")).model == (
        "openai:nomic-embed"
    )
    assert JUDGE in BUILT_IN and EMBED in BUILT_IN


def test_a_bound_of_two_models_asks_for_a_room_that_holds_an_attempt_of_either() -> None:
    judge = calls_bound(1, 1_000, 250, 4, 150)
    judge.model = JUDGE
    embed = embeddings_bound(64, 1, 60_000, 4)
    embed.model = EMBED

    room = (judge + embed).attempt_most()

    assert room_holds(room, judge.attempt_most()) and room_holds(room, embed.attempt_most())
    assert embed.attempt_most().output_tokens == 0


class _Keeper:
    def __init__(self) -> None:
        self.kept = Usage()
        self.holds: list[tuple[int, Usage]] = []

    def hold(self, rooms: int, room: Usage) -> None:
        self.holds.append((rooms, room))

    def keep(self, used: Usage, rooms: int) -> int:
        self.kept += used
        return self.holds[-1][0] if self.holds else 0


def test_a_meter_counts_each_model_s_attempts_as_its_own() -> None:
    keeper = _Keeper()
    meter = Meter(keeper=keeper, rooms_most=2)
    meter.name_model(JUDGE)

    with meter.attempt(Usage(1, 0, 500, 100, JUDGE)) as attempt:
        attempt.used(400, 20)
    with meter.attempt(Usage(1, 0, 5_000, 0, EMBED)) as attempt:
        attempt.used(3_000, 0)
    meter.record(cache_hits=7, model=EMBED)

    expected = Usage(1, 0, 400, 20, JUDGE) + Usage(1, 7, 3_000, 0, EMBED)
    assert meter.usage() == expected
    assert keeper.kept == Usage(1, 0, 400, 20, JUDGE) + Usage(1, 0, 3_000, 0, EMBED)
    assert meter.unkept() == Usage(0, 7, 0, 0, EMBED)
    # the room grew to hold the embeddings' attempt, still priced as the judge's
    _, room = keeper.holds[-1]
    assert (room.input_tokens, room.output_tokens, room.model) == (5_000, 100, JUDGE)


def test_a_meter_without_a_keeper_counts_each_model_too() -> None:
    meter = Meter()
    with meter.attempt(Usage(1, 0, 10, 0, EMBED)) as attempt:
        attempt.used(8, 0)
    with meter.attempt(Usage(1, 0, 10, 5, JUDGE)) as attempt:
        attempt.used(9, 4)

    assert meter.usage() == Usage(1, 0, 8, 0, EMBED) + Usage(1, 0, 9, 4, JUDGE)
    assert meter.usage().model == EMBED
