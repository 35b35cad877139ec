"""`evalsvc metrics --judges/--jury` and the jury lines (E13): the jury passes through to POST
/specify_questions, the service's 400 is shown as any other, and below an evaluation's table
(on stderr for `evalsvc report`) each metric judged by a jury gets a line, each model its calls
and cost, from the result already read (no request more), every name terminal-safe."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from evalsvc_tools.cli import main
from evalsvc_tools.render.jury import jury_line, jury_lines

from tests.unit import test_cli_user as cli
from tests.unit.test_cli_user import Scripted, as_json, created, queued, result, run, unlabeled

# The scripted service and the environment of test_cli_user's tests, as fixtures here too.
service = cli.service
_environment = cli._environment

NAMES = ["openai:juror-a", "openai:juror-b", "openai:juror-c"]
HOSTILE = "openai:\x1b]0;owned\x07b\x1b[2J"
SHOWN_HOSTILE = "openai:\ufffd]0;owned\ufffdb\ufffd[2J"


def jury(judges: list[str], means: list[float | None], alpha: float | None = 0.41) -> Any:
    return {
        "jury": {"judges": judges, "aggregate": "mean", "alpha": alpha},
        "per_judge": [{"judge": j, "mean": m} for j, m in zip(judges, means, strict=True)],
    }


def part(model: str, calls: int, cost: float | None) -> dict[str, Any]:
    return {
        "model": model,
        "llm_calls": calls,
        "cache_hits": 0,
        "input_tokens": 100 * calls,
        "output_tokens": 10 * calls,
        "cost_usd": cost,
    }


def judged(names: list[str]) -> dict[str, Any]:
    """A complete result whose metric 1 (a question) a jury of `names` judged."""
    usage = result()["usage"] | {
        "llm_calls": 30,
        "by_model": [part(n, 10, 0.0001 * (k + 1)) for k, n in enumerate(names)],
    }
    return result(score_juries=[None, jury(names, [4.2, 2.9, 3.3])], usage=usage)


# ---- metrics --judges --jury -------------------------------------------------------------------


def test_judges_pass_through_comma_separated_or_repeated_with_the_jury(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    service.on(
        "POST",
        "/v1/specify_questions",
        lambda seen: as_json(200, {"metrics_id": "m_1", **seen.json()}),
    )

    code = run(
        service,
        "metrics",
        "--question",
        "Is it polite?",
        "--judges",
        f"{NAMES[0]}, {NAMES[1]},",
        "--judges",
        NAMES[2],
        "--jury",
        "median",
    )

    assert code == 0
    assert service.seen[0].json() == {
        "metrics": ["Is it polite?"],
        "judges": NAMES,
        "jury": "median",
    }
    out, err = capsys.readouterr()
    assert out == "m_1\n"
    assert err.splitlines()[-1] == (
        "its questions are judged by a jury of 3 (median): openai:juror-a, openai:juror-b, "
        "openai:juror-c"
    )


def test_without_judges_nothing_of_a_jury_is_sent_or_said(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    service.on("POST", "/v1/specify_questions", created())

    assert run(service, "metrics", "--check", "non_empty") == 0

    assert service.seen[0].json() == {"metrics": ["check:non_empty"]}
    assert "jury" not in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["--jury", "mean"],
            "evalsvc: --jury says how a jury's scores are combined: give --judges",
        ),
        (["--judges", " , "], "evalsvc: --judges names no judge: give A,B[,...]"),
    ],
)
def test_a_jury_without_judges_is_refused_before_sending(
    service: Scripted, capsys: pytest.CaptureFixture[str], args: list[str], said: str
) -> None:
    assert run(service, "metrics", "--question", "q", *args) == 2

    assert service.seen == []
    assert capsys.readouterr().err.startswith(said)


def test_an_unknown_jury_aggregate_is_argparse_usage(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["metrics", "--question", "q", "--judges", "a,b", "--jury", "mode"])
    assert exited.value.code == 2
    assert "invalid choice: 'mode'" in capsys.readouterr().err


def test_the_services_400_is_shown_as_any_other_terminal_safe(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    said = f"judges: {HOSTILE!s} is not one of EVALSVC_JUDGES (openai:juror-a, openai:juror-b)"
    service.on("POST", "/v1/specify_questions", as_json(400, {"error": said}))

    assert run(service, "metrics", "--question", "q", "--judges", f"openai:juror-a,{HOSTILE}") == 1

    assert service.seen[0].json()["judges"] == ["openai:juror-a", HOSTILE]
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err
    assert err == (
        f"evalsvc: HTTP 400: judges: {SHOWN_HOSTILE} is not one of EVALSVC_JUDGES "
        "(openai:juror-a, openai:juror-b)\n"
    )


# ---- the jury lines ----------------------------------------------------------------------------


def test_evaluate_prints_each_jury_and_each_models_part_below_the_table_asking_nothing_more(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    names = [NAMES[0], HOSTILE, NAMES[2]]
    service.on("POST", "/v1/evaluate", as_json(202, queued("ev_1", 0, 10)))
    service.on("GET", "/v1/evaluation/ev_1", as_json(200, judged(names)))
    service.on("GET", "/v1/evaluation/ev_1/anchored", unlabeled())

    assert run(service, "evaluate", "--seed", "faq", "--metrics", "m_1") == 0

    asked = [(s.method, s.path.split("?")[0]) for s in service.seen]
    assert {path for _, path in asked} == {
        "/v1/evaluate",
        "/v1/evaluation/ev_1",
        "/v1/evaluation/ev_1/anchored",  # E12's, one a metric: nothing of E13's
    }
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert out.rstrip("\n").splitlines()[-5:] == [
        f"metric 1: jury of 3 (mean): alpha 0.41; openai:juror-a 4.20, {SHOWN_HOSTILE} 2.90, "
        "openai:juror-c 3.30",
        "by model:",
        "  openai:juror-a: 10 calls, 0 cache hits, $0.000100",
        f"  {SHOWN_HOSTILE}: 10 calls, 0 cache hits, $0.000200",
        "  openai:juror-c: 10 calls, 0 cache hits, $0.000300",
    ]
    assert "metric 0: jury" not in out


def test_a_result_without_a_jury_prints_nothing_more(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    service.on("POST", "/v1/evaluate", as_json(202, queued("ev_1", 0, 10)))
    service.on("GET", "/v1/evaluation/ev_1", as_json(200, result(score_juries=None)))
    service.on("GET", "/v1/evaluation/ev_1/anchored", unlabeled())

    assert run(service, "evaluate", "--seed", "faq", "--metrics", "m_1") == 0

    out = capsys.readouterr().out
    assert "jury" not in out and "by model" not in out


def test_report_says_the_jury_lines_on_stderr(
    service: Scripted,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    page = (200, {"Content-Type": "text/html; charset=utf-8"}, b"<!DOCTYPE html><p>r</p>")
    service.on("GET", "/v1/evaluation/ev_1/report", page)
    service.on("GET", "/v1/evaluation/ev_1", as_json(200, judged(NAMES)))
    service.on("GET", "/v1/evaluation/ev_1/anchored", unlabeled())
    monkeypatch.chdir(tmp_path)

    assert run(service, "report", "ev_1") == 0

    out, err = capsys.readouterr()
    assert out == "report-ev_1.html\n"
    assert err.splitlines()[:2] == [
        "metric 1: jury of 3 (mean): alpha 0.41; openai:juror-a 4.20, openai:juror-b 2.90, "
        "openai:juror-c 3.30",
        "by model:",
    ]


@pytest.mark.parametrize(
    ("entry", "line"),
    [
        (None, None),
        ({"jury": None, "per_judge": None}, None),
        ([], None),
        (
            jury(["a", "b"], [None, 5.0], alpha=None),
            "metric 3: jury of 2 (mean): alpha -; a -, b 5.00",
        ),
        (
            {"jury": {"judges": "\x1b[31m", "aggregate": "\x9bmedian", "alpha": "x"}},
            "metric 3: jury of \ufffd[31m (\ufffdmedian): alpha -",
        ),
    ],
)
def test_each_jury_line_says_what_it_can_terminal_safe(entry: Any, line: str | None) -> None:
    assert jury_line(3, entry) == line


def test_post_evaluates_scores_give_the_same_lines() -> None:
    entry = jury(NAMES, [4.2, 2.9, 3.3])
    answer = {"scores": [{"metric": "check:x", "jury": None}, {"metric": "q", **entry}]}

    assert (
        jury_lines(answer)
        == jury_lines({"score_juries": [None, entry]})
        == [
            "metric 1: jury of 3 (mean): alpha 0.41; openai:juror-a 4.20, openai:juror-b 2.90, "
            "openai:juror-c 3.30"
        ]
    )


def test_a_model_without_a_price_says_so() -> None:
    usage = {"by_model": [part("openai:juror-a", 1, None), "junk"]}
    assert jury_lines({"usage": usage}) == [
        "by model:",
        "  openai:juror-a: 1 call, 0 cache hits, cost unknown (no price)",
    ]
