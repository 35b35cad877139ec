"""`evalsvc evaluate` and `evalsvc report` (E12): for each metric with audit labels, what people
would say of every pair (GET /evaluation/{id}/anchored), its interval, from how many audited
pairs and judge scores, and what the judge alone says; nothing for a metric without labels;
what the service does not answer said once, the result shown all the same."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from evalsvc_tools.render.anchored import anchored_line

from tests.unit import test_cli_user as cli
from tests.unit.test_cli_user import Scripted, Seen, as_json, queued, result, run

# The scripted service and the environment of test_cli_user's tests, as fixtures here too.
service = cli.service
_environment = cli._environment


def anchored(metric_idx: int, **figures: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "eval_results_id": "ev_1",
        "metric_idx": metric_idx,
        "metric": "m",
        "alpha": 0.05,
        "n_labeled": 12,
        "n_unlabeled": 488,
        "estimate": 0.625,
        "se": 0.05,
        "ci_low": 0.52,
        "ci_high": 0.7305,
        "lambda": 0.8,
        "effective_labels": 30.5,
        "classical": {"estimate": 0.6, "se": 0.1, "ci_low": 0.4, "ci_high": 0.8},
        "judge_only": {"estimate": 0.58},
    }
    body.update(figures)
    return body


def per_metric(*bodies: dict[str, Any]) -> Any:
    """GET /evaluation/ev_1/anchored answering each metric_idx with its body."""

    def answer(request: Seen) -> Any:
        idx = int(request.path.split("metric_idx=")[1].split("&")[0])
        return as_json(200, bodies[idx])

    return answer


LABELED = (
    "metric 0: people would say 62.5 % (52.0\u201373.0 %), from 12 audited pairs and 488 judge "
    "scores; the judge alone says 58.0 %"
)


def test_evaluate_prints_what_people_would_say_of_each_metric_with_audit_labels(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    service.on("POST", "/v1/evaluate", as_json(202, queued("ev_1", 0, 10)))
    service.on("GET", "/v1/evaluation/ev_1", as_json(200, result()))
    service.on(
        "GET",
        "/v1/evaluation/ev_1/anchored",
        per_metric(anchored(0), anchored(1, n_labeled=0, estimate=None)),
    )

    assert run(service, "evaluate", "--seed", "faq", "--metrics", "m_1") == 0

    asked = [s.path for s in service.seen if "/anchored" in s.path]
    assert asked == [f"/v1/evaluation/ev_1/anchored?metric_idx={k}" for k in range(2)]
    out = capsys.readouterr().out
    # After the table, one line: metric 1 has no audit label, so nothing is said of it
    assert out.rstrip("\n").splitlines()[-1] == LABELED
    assert "metric 1:" not in out


def test_evaluate_json_prints_the_body_alone_and_asks_nothing_more(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    service.on("POST", "/v1/evaluate", as_json(202, queued("ev_1", 0, 10)))
    service.on("GET", "/v1/evaluation/ev_1", as_json(200, result()))

    assert run(service, "evaluate", "--seed", "faq", "--metrics", "m_1", "--json") == 0

    assert not [s for s in service.seen if "/anchored" in s.path]
    assert "people would say" not in capsys.readouterr().out


def test_report_says_it_on_stderr_stdout_keeping_the_file_alone(
    service: Scripted,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    page = (200, {"Content-Type": "text/html; charset=utf-8"}, b"<!DOCTYPE html><p>r</p>")
    service.on("GET", "/v1/evaluation/ev_1/report", page)
    service.on("GET", "/v1/evaluation/ev_1", as_json(200, result()))
    one = anchored(1, n_labeled=1, n_unlabeled=9, estimate=None, ci_low=None, ci_high=None)
    service.on("GET", "/v1/evaluation/ev_1/anchored", per_metric(anchored(0), one))
    monkeypatch.chdir(tmp_path)

    assert run(service, "report", "ev_1") == 0

    out, err = capsys.readouterr()
    assert out == "report-ev_1.html\n"
    assert err.splitlines() == [
        LABELED,
        "metric 1: 1 audited pair: at least 2 are needed for what people would say; the judge "
        "alone says 58.0 %",
    ]


def test_a_running_result_and_a_comparison_ask_nothing_of_people(
    service: Scripted, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = (200, {"Content-Type": "text/html"}, b"<!DOCTYPE html>")
    service.on("GET", "/v1/evaluation/ev_1/report", page)
    service.on("GET", "/v1/compare/report", page)
    service.on("GET", "/v1/evaluation/ev_1", as_json(200, result(status="running")))
    monkeypatch.chdir(tmp_path)

    assert run(service, "report", "ev_1") == 0
    assert run(service, "report", "ev_1", "--compare", "ev_2") == 0

    assert not [s for s in service.seen if "/anchored" in s.path]


@pytest.mark.parametrize("status", [404, 409])
def test_what_the_service_does_not_answer_is_said_once_and_the_result_still_shown(
    service: Scripted, capsys: pytest.CaptureFixture[str], status: int
) -> None:
    service.on("POST", "/v1/evaluate", as_json(202, queued("ev_1", 0, 10)))
    service.on("GET", "/v1/evaluation/ev_1", as_json(200, result()))
    service.on(
        "GET", "/v1/evaluation/ev_1/anchored", as_json(status, {"error": "no \x1b[2J such route"})
    )

    assert run(service, "evaluate", "--seed", "faq", "--metrics", "m_1") == 0

    out, err = capsys.readouterr()
    assert "[3.50, 4.90]" in out and "people would say" not in out
    said = [line for line in err.splitlines() if "people would say" in line]
    assert len(said) == 1 and "\x1b" not in said[0]
    assert said[0].startswith(
        "evalsvc: what people would say is not shown (GET /evaluation/ev_1/anchored): "
        f"HTTP {status}: no \ufffd[2J such route"
    )


@pytest.mark.parametrize(
    ("body", "line"),
    [
        (anchored(0, n_labeled=0), None),
        ({"n_labeled": True}, None),
        ([], None),
        (
            anchored(2, n_labeled=1, n_unlabeled=1, estimate=None, judge_only={"estimate": None}),
            "metric 2: 1 audited pair: at least 2 are needed for what people would say",
        ),
        (
            anchored(0, n_labeled=5, n_unlabeled=1, estimate=None),
            "metric 0: 5 audited pairs and 1 other scored pair: at least 2 of each are needed "
            "for what people would say; the judge alone says 58.0 %",
        ),
        (
            anchored("\x1b]0;owned\x07", n_unlabeled=1),
            "metric \ufffd]0;owned\ufffd: people would say 62.5 % (52.0\u201373.0 %), from 12 "
            "audited pairs and 1 judge score; the judge alone says 58.0 %",
        ),
    ],
)
def test_each_line_says_what_it_can_terminal_safe(body: Any, line: str | None) -> None:
    assert anchored_line(body) == line
