"""GET /evaluation/{id}/report and GET /compare/report: the pages hold what the JSON routes say
(histograms against every scored pair, intervals, lowest pairs, votes, agreement, verdicts),
show progress and failure, escape every text, make no request, and stay under 5 MB at the field
limits. The evaluation page reads no scored pair but the listed ones (its histograms were
stored when the result finished); a comparison out of time is a 503 to retry, not a 413."""

from __future__ import annotations

import base64
import gzip
import json
import math
import re
from collections import Counter
from html.parser import HTMLParser
from typing import Any

import pytest
from evalsvc.core.errors import Failure, ModelFailed
from evalsvc.core.identifiers import now_ms
from evalsvc.core.settings import get_settings
from evalsvc.models.datasets import DatasetKind
from evalsvc.models.evaluations import EvaluationResult
from evalsvc.statistics.scores import score_bin
from evalsvc.storage import datasets as datasets_store
from evalsvc.storage import dynamo
from evalsvc.storage import results as results_store
from evalsvc.storage.writes import commit

from tests.conftest import point_service_at
from tests.fake_judge import FakeJudge
from tests.integration.conftest import Tenant
from tests.integration.test_usage import judge_env
from tests.pinned_versions import EXPIRED_DAY, clock_at, expire, forget_inputs, stored
from tests.work_queue import Work

SCRIPT = "<script>window.__ran=1</script>"
IMG = '<img src=x onerror="window.__ran=1">'
QUESTION = "Is the answer <b>polite</b> & kind?"
CHECKS = ["check:max_words:6", "check:contains:please"]
# Elements and attributes the pages are made of; anything else came from text.
ELEMENTS = {
    "html", "head", "meta", "title", "style", "body", "header", "main", "footer", "h1", "h2",
    "h3", "h4", "p", "strong", "span", "section", "dl", "dt", "dd", "div", "table", "caption",
    "thead", "tbody", "tr", "th", "td", "article", "ul", "li", "progress", "svg", "desc", "g",
    "line", "circle", "rect", "text", "details", "summary", "code", "pre",
}  # fmt: skip


def hostile_judge(request: dict[str, Any]) -> tuple[int, str]:
    """Scores 1 with a reason that quotes the output, markup and all."""
    user = request["messages"][-1]["content"]
    output = re.search(r"<output>\n(.*?)\n</output>", user, re.DOTALL)
    reason = f"It said {output.group(1) if output else ''!s} {SCRIPT}"
    score = 5 if output and "please" in output.group(1) else 1
    return 200, json.dumps({"reason": reason[:900], "score": score})


@pytest.fixture
def judge(monkeypatch: pytest.MonkeyPatch) -> Any:
    fake = FakeJudge(hostile_judge)
    with fake.running():
        point_service_at(judge_env(fake), monkeypatch)
        yield fake


class Page(HTMLParser):
    """The elements, attributes and text of a page."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: Counter[str] = Counter()
        self.attributes: set[str] = set()
        self.text: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] += 1
        self.attributes.update(name for name, _ in attrs)

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    @property
    def words(self) -> str:
        return "".join(self.text)


def assert_safe(html: str) -> Page:
    page = Page(html)
    assert set(page.tags) <= ELEMENTS, set(page.tags) - ELEMENTS
    assert not [a for a in page.attributes if a.startswith("on") or a in ("src", "href")]
    assert "<script" not in html.lower() and "<img" not in html.lower()
    assert 'http-equiv="Content-Security-Policy"' in html
    return page


def seed(
    tenant: Tenant, dataset_id: str, outputs: list[str], inputs: list[str] | None = None
) -> None:
    data = [
        {
            "id": f"p{k:02d}",
            "input": (inputs or [f"question {k} {IMG}"] * len(outputs))[k],
            "output": out,
        }
        for k, out in enumerate(outputs)
    ]
    response = tenant.post(f"/data/seed/{dataset_id}", {"data": data, "system_prompt": SCRIPT})
    assert response.status_code == 200, response.text


def metrics(tenant: Tenant, definitions: list[str]) -> str:
    response = tenant.post("/specify_questions", {"metrics": definitions})
    assert response.status_code == 200, response.text
    return str(response.json()["metrics_id"])


def evaluate(tenant: Tenant, dataset_id: str, metrics_id: str) -> dict[str, Any]:
    response = tenant.post("/evaluate", {"seed_data_id": dataset_id, "metrics_id": metrics_id})
    assert response.status_code == 200, response.text
    return dict(response.json())


def report(tenant: Tenant, results_id: str, **headers: str) -> Any:
    return tenant.http.get(
        f"/v1/evaluation/{results_id}/report", headers={**tenant.headers, **headers}
    )


OUTPUTS = [
    f"please read {SCRIPT}",
    f"{IMG} no",
    "please, this is fine",
    "a long answer of many many words without it",
    "please " * 3,
    "</style></svg><svg onload=alert(1)>",
    "ok",
]


def test_complete_result_page_holds_what_the_json_says(acme: Tenant, judge: FakeJudge) -> None:
    seed(acme, "hostile", OUTPUTS)
    metrics_id = metrics(acme, [QUESTION, *CHECKS])
    result = evaluate(acme, "hostile", metrics_id)
    results_id = result["eval_results_id"]
    # A vote with a hostile comment, so votes, comments and agreement are drawn.
    lowest = [p["pair_id"] for p in result["scores"][0]["lowest_scoring_pairs"][:2]]
    for pair_id, vote, comment in zip(lowest, (1, -1), (f"agree {SCRIPT}", IMG), strict=True):
        voted = acme.put(
            f"/vote_eval_pair/{results_id}",
            {"pair_id": pair_id, "metric_idx": 0, "vote": vote, "comment": comment},
        )
        assert voted.status_code == 200, voted.text

    response = report(acme, results_id)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    assert "default-src 'none'" in response.headers["content-security-policy"]
    assert response.headers["x-content-type-options"] == "nosniff"
    html = response.text
    page = assert_safe(html)
    words = page.words

    # Every hostile text is on the page as text.
    for text in (SCRIPT, IMG, QUESTION, OUTPUTS[5], f"agree {SCRIPT}"):
        assert text in words
    # A forest plot and one histogram per metric, each with a title.
    assert html.count('class="forest"') == 1
    assert html.count('class="histogram"') == 3
    assert page.tags["svg"] == 4
    # The histograms count every scored pair, by score bin.
    histograms_in(words, acme, results_id)
    # Means and intervals as GET /evaluation gives them.
    body = acme.get(f"/evaluation/{results_id}").json()
    for mean, ci in zip(body["score_means"], body["score_confidence_intervals"], strict=True):
        assert f"{mean:.2f} [{ci['ci_low']:.2f}, {ci['ci_high']:.2f}]" in words
    # The lowest pairs with their reasons and texts; the votes with agreement.
    for metric in body["min_scoring_pairs"]:
        for low in metric:
            assert low["pair_id"] in words
            assert low["reason"] in words
    agreement = acme.get(f"/evaluation/{results_id}/agreement").json()["metrics"][0]
    assert f"AUC{agreement['auc']:.3f}" in words.replace(" ", "")
    assert f"{agreement['votes']} votes ({agreement['positive']} +1" in words
    assert "1 +1, 1 \u22121, 0 0; 2 with a comment" in words
    # What was run: the judge's model and calls.
    assert "fake-judge" in words and f"{body['usage']['llm_calls']} calls" in words


def test_a_large_page_is_sent_compressed_when_the_client_accepts_it(acme: Tenant) -> None:
    seed(acme, "d", [f"please {'word ' * 2000}" for _ in range(3)])
    checks = [f"check:max_words:{k}" for k in range(1, 7)]
    result = evaluate(acme, "d", metrics(acme, checks))
    plain = report(acme, result["eval_results_id"], **{"Accept-Encoding": "identity"})
    packed = acme.http.get(
        f"/v1/evaluation/{result['eval_results_id']}/report",
        headers={**acme.headers, "Accept-Encoding": "gzip"},
    )
    assert "content-encoding" not in plain.headers
    assert packed.headers["content-encoding"] == "gzip"
    assert packed.text == plain.text
    assert len(plain.content) > 64 * 1024


def start_running(results_id: str, pair_count: int, dataset_id: str = "d") -> None:
    """A result stored as a queued evaluation starts it (no job: no pair scored yet)."""
    result = EvaluationResult(
        tenant="acme",
        results_id=results_id,
        created_ms=now_ms(),
        dataset_id=dataset_id,
        dataset_kind=DatasetKind.SEED,
        metrics_id="m",
        definitions=[QUESTION],
        system_prompt=SCRIPT,
        pair_count=pair_count,
        summaries=[],
    )
    assert commit(results_store.running(result))


def test_a_running_result_shows_its_progress(acme: Tenant) -> None:
    start_running("r-running", 40)
    response = report(acme, "r-running")
    assert response.status_code == 200, response.text
    page = assert_safe(response.text)
    assert "Still running" in page.words
    assert "0 of 40 pairs scored (0 %)" in page.words
    assert page.tags["progress"] == 1
    assert page.tags["svg"] == 0


def test_a_failed_result_shows_its_failure(acme: Tenant) -> None:
    start_running("r-failed", 3)
    why = f"the judge failed on pair p1: {SCRIPT}"
    assert commit(results_store.failing("acme", "r-failed", Failure.of(ModelFailed(why))))
    response = report(acme, "r-failed")
    assert response.status_code == 200, response.text
    page = assert_safe(response.text)
    assert "This evaluation failed" in page.words
    assert why in page.words


@pytest.mark.parametrize(
    ("path", "status", "says"),
    [
        ("/evaluation/nope/report", 404, "no evaluation result with id 'nope'"),
        ("/evaluation/a%20b/report", 400, "result id"),
        ("/compare/report?baseline_id=a", 400, "candidate_id"),
        ("/compare/report?baseline_id=a&candidate_id=b&alpha=nan", 400, "alpha"),
        ("/compare/report?baseline_id=a&candidate_id=b&alpha=0.7", 400, "alpha"),
        ("/compare/report?baseline_id=a&candidate_id=b&correction=bonf", 400, "correction"),
        ("/compare/report?baseline_id=a&candidate_id=b&limit=0", 400, "limit"),
        ("/compare/report?baseline_id=a&candidate_id=b&limit=x", 400, "limit"),
        ("/compare/report?baseline_id=a&candidate_id=b&cluster_by=topic", 400, "cluster_by"),
        ("/compare/report?baseline_id=a&candidate_id=b&cluster_by=", 400, "cluster_by"),
        ("/compare/report?baseline_id=a&candidate_id=b", 404, "no evaluation result"),
    ],
)
def test_bad_requests_say_what_to_fix(acme: Tenant, path: str, status: int, says: str) -> None:
    response = acme.get(path)
    assert response.status_code == status, response.text
    assert says in response.json()["error"]


def test_comparison_page_holds_the_verdicts_and_the_moved_pairs(acme: Tenant) -> None:
    polite = [f"please answer {k} {SCRIPT}" for k in range(12)]
    rude = [f"answer {k} {IMG}" if k < 10 else f"please answer {k}" for k in range(12)]
    seed(acme, "base", polite)
    seed(acme, "cand", rude)
    metrics_id = metrics(acme, CHECKS)
    baseline = evaluate(acme, "base", metrics_id)["eval_results_id"]
    candidate = evaluate(acme, "cand", metrics_id)["eval_results_id"]
    compared = acme.post("/compare", {"baseline_id": baseline, "candidate_id": candidate}).json()

    response = acme.get(f"/compare/report?baseline_id={baseline}&candidate_id={candidate}")
    assert response.status_code == 200, response.text
    page = assert_safe(response.text)
    words = page.words
    assert response.text.count('class="forest"') == 1
    assert response.text.count('class="wtl"') == 1
    verdicts = {m["metric"]: m["verdict"] for m in compared["metrics"]}
    assert verdicts["check:contains:please"] == "regressed"
    assert "regressed" in words
    for m in compared["metrics"]:
        assert f"{m['wins']} / {m['ties']} / {m['losses']}" in words
        assert f"{m['mean_diff']:+.2f}" in words
    assert len(compared["regressions"]) == 10
    assert "Regressions, side by side (10)" in words
    for change in compared["regressions"]:
        assert change["pair_id"] in words
    # Both outputs of a moved pair, as text.
    assert polite[0] in words and rude[0] in words


def table_rows(html: str, section: str) -> list[list[str]]:
    """The text of each body row's cells of the first table in the section headed `section`
    (its id), the row header first."""
    start = html.index(f'id="{section}"')
    table = html[start : html.index("</table>", start)]
    rows = re.findall(r"<tr><th scope=\"row\">(.*?)</tr>", table, re.DOTALL)
    return [
        Page(row.replace("</th>", "</th>\x00").replace("</td>", "\x00")).words.split("\x00")[:-1]
        for row in rows
    ]


def test_comparison_page_says_what_it_could_see_and_its_clustered_interval(acme: Tenant) -> None:
    from scipy import stats as scipy_stats

    # Given a candidate that drops "please" from every even pair (and keeps every length)
    before = [f"please answer {k}" for k in range(16)]
    after = [f"answer {k} now" if k % 2 == 0 else f"please answer {k}" for k in range(16)]
    seed(acme, "base", before, inputs=[f"topic {k % 5} {SCRIPT}" for k in range(16)])
    seed(acme, "cand", after)
    metrics_id = metrics(acme, CHECKS)
    baseline = evaluate(acme, "base", metrics_id)["eval_results_id"]
    candidate = evaluate(acme, "cand", metrics_id)["eval_results_id"]
    ids = {"baseline_id": baseline, "candidate_id": candidate, "cluster_by": "input"}
    compared = acme.post("/compare", ids).json()

    response = acme.get(
        f"/compare/report?baseline_id={baseline}&candidate_id={candidate}&cluster_by=input"
    )
    plain = acme.get(f"/compare/report?baseline_id={baseline}&candidate_id={candidate}")

    assert response.status_code == 200, response.text
    words = assert_safe(response.text).words
    assert "What this comparison could see" in words
    assert "Clustered by" in words and "the input of the baseline's pair" in words
    power = table_rows(response.text, "power-h")
    differences = table_rows(response.text, "diff-h")
    z = scipy_stats.norm.ppf(1 - 0.05 / 2) + scipy_stats.norm.ppf(0.8)
    for m, row, diff in zip(compared["metrics"], power, differences, strict=True):
        # #, metric, pairs, difference observed, smallest difference seen, pairs needed
        assert row[2:5] == ["16", f"{m['mean_diff']:+.2f}", f"{m['mde']:.2f}"]
        assert m["mde"] == pytest.approx(z * m["std_diff"] / 4, abs=1e-9)
        if m["mean_diff"] == 0:
            assert row[5] == "—"
        else:
            needed = max(2, math.ceil((z * m["std_diff"] / abs(m["mean_diff"])) ** 2))
            assert row[5] == f"{needed:,}"
        low, high = m["ci_low_clustered"], m["ci_high_clustered"]
        assert diff[7] == f"[{low:+.2f}, {high:+.2f}] ({m['clusters']} clusters)"
    assert [m["mean_diff"] == 0 for m in compared["metrics"]] == [True, False]
    assert compared["metrics"][1]["clusters"] == 5
    # The forest plot draws each clustered interval as a band behind the paired one
    assert response.text.count('class="ci-wide ') == len(compared["metrics"])
    moved = compared["metrics"][1]
    band = f"clustered [{moved['ci_low_clustered']:+.2f}, {moved['ci_high_clustered']:+.2f}]"
    assert band in response.text
    # Without cluster_by: no clustered column or band, the power table all the same
    assert plain.status_code == 200, plain.text
    assert 'class="ci-wide' not in plain.text
    assert "Clustered" not in assert_safe(plain.text).words
    assert table_rows(plain.text, "power-h") == power


def _page_of(function: str, event: dict[str, Any]) -> tuple[int, str, dict[str, str]]:
    from tests.lambda_support import LambdaContext, handler_of

    response = handler_of(function)(event, LambdaContext())
    raw = response["body"]
    body = base64.b64decode(raw) if response.get("isBase64Encoded") else raw.encode()
    headers = {k.lower(): v for k, v in (response.get("headers") or {}).items()}
    if headers.get("content-encoding") == "gzip":
        body = gzip.decompress(body)
    return response["statusCode"], body.decode(), headers


def test_both_reports_through_their_handlers(event_key: str) -> None:
    from tests.lambda_support import invoke, load_event, with_body, with_path

    invoke("write_seed_dataset", load_event("write_seed_dataset"))
    checks = with_body(load_event("specify_questions"), {"metrics": ["check:non_empty"]})
    assert invoke("specify_questions", checks)[0] == 200
    status, evaluated = invoke("evaluate", load_event("evaluate"))
    assert status == 200, evaluated
    results_id = evaluated["eval_results_id"]

    event = with_path(load_event("get_evaluation_report"), id=results_id)
    status, html, headers = _page_of("get_evaluation_report", event)
    assert status == 200, html
    assert headers["content-type"] == "text/html; charset=utf-8"
    assert f"Result <strong>{results_id}</strong>" in html
    assert_safe(html)

    event = load_event("get_comparison_report")
    event["queryStringParameters"] = {"baseline_id": results_id, "candidate_id": results_id}
    event["multiValueQueryStringParameters"] = {
        k: [v] for k, v in event["queryStringParameters"].items()
    }
    status, html, headers = _page_of("get_comparison_report", event)
    assert status == 200, html
    assert "Comparison report" in html and "no significant difference" in html
    assert_safe(html)

    status, missing, _ = _page_of("get_comparison_report", load_event("get_comparison_report"))
    assert status == 404 and "no evaluation result" in json.loads(missing)["error"]


def no_scored_pair_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading every scored pair of a result fails the test."""

    def refused(tenant: str, results_id: str) -> Any:
        raise AssertionError(f"the scored pairs of {results_id} were read")

    monkeypatch.setattr(results_store, "score_pages", refused)


def histograms_in(words: str, acme: Tenant, results_id: str) -> None:
    """The page's histograms count every scored pair GET /evaluation lists, by score bin."""
    scored = acme.get(f"/evaluation/{results_id}?includeAllScores=true").json()
    for m, entries in enumerate(scored["all_scored_pairs"]):
        bins = Counter(score_bin(e["score"]) for e in entries)
        words_of_bins = ", ".join(f"score {b}: {bins.get(b, 0)}" for b in range(1, 6))
        assert f"{len(entries)} scored pairs by score: {words_of_bins}" in words, m


def test_the_histograms_are_those_stored_when_the_result_finished(
    acme: Tenant, work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given one result scored inside its request and one through the work queue in chunks
    point_service_at({"EVALSVC_CHUNK_CHECKS": "20"}, monkeypatch)
    outputs = [f"{'please ' * (k % 3)}answer {k} {'word ' * (k % 9)}" for k in range(30)]
    seed(acme, "d", outputs)
    metrics_id = metrics(acme, CHECKS)
    inline = evaluate(acme, "d", metrics_id)["eval_results_id"]
    queued = acme.http.post(
        "/v1/evaluate",
        json={"seed_data_id": "d", "metrics_id": metrics_id},
        headers={**acme.headers, "Prefer": "respond-async"},
    )
    assert queued.status_code == 202, queued.text
    work.drain()
    queued_id = queued.json()["eval_results_id"]
    pages = {}

    # When their pages are drawn with no read of their scored pairs allowed
    with monkeypatch.context() as patched:
        no_scored_pair_is_read(patched)
        for results_id in (inline, queued_id):
            response = report(acme, results_id)
            assert response.status_code == 200, response.text
            pages[results_id] = Page(response.text).words

    # Then both draw every metric's histogram, counting every scored pair, the same
    stored = results_store.get("acme", queued_id)
    assert stored is not None and stored.histograms is not None
    assert stored.histograms == results_store.get("acme", inline).histograms  # type: ignore[union-attr]
    for results_id, words in pages.items():
        histograms_in(words, acme, results_id)
        assert "not drawn" not in words


def without_histograms(results_id: str) -> None:
    """The result's header as a result stored before histograms were kept has it."""
    dynamo.call(
        "update_item",
        TableName=get_settings().results_table,
        Key={"pk": {"S": results_store.result_pk("acme", results_id)}, "sk": {"S": "result"}},
        UpdateExpression="REMOVE histograms",
    )
    stored = results_store.get("acme", results_id)
    assert stored is not None and stored.histograms is None


def test_a_small_result_stored_before_histograms_has_its_scores_counted(acme: Tenant) -> None:
    seed(acme, "d", OUTPUTS)
    results_id = evaluate(acme, "d", metrics(acme, CHECKS))["eval_results_id"]
    without_histograms(results_id)

    response = report(acme, results_id)

    assert response.status_code == 200, response.text
    words = assert_safe(response.text).words
    histograms_in(words, acme, results_id)
    assert "not drawn" not in words


def test_a_large_result_stored_before_histograms_says_so_and_reads_no_score(
    acme: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalsvc.logic import reports

    seed(acme, "d", OUTPUTS)
    results_id = evaluate(acme, "d", metrics(acme, CHECKS))["eval_results_id"]
    without_histograms(results_id)
    monkeypatch.setattr(reports, "LEGACY_HISTOGRAM_PAIRS", len(OUTPUTS) - 1)
    no_scored_pair_is_read(monkeypatch)

    response = report(acme, results_id)

    assert response.status_code == 200, response.text
    words = assert_safe(response.text).words
    assert "stored before they were kept with results" in words
    assert f"counting its {len(OUTPUTS)} scored pairs" in words
    assert 'class="histogram"' not in response.text
    assert 'class="forest"' in response.text  # the stored statistics are drawn


def test_out_of_time_the_page_is_drawn_without_the_histograms_and_says_why(
    acme: Tenant,
) -> None:
    from evalsvc.core.deadlines import Deadline
    from evalsvc.logic import reports
    from evalsvc.models.api_keys import Identity
    from evalsvc.reports.evaluation_page import render_evaluation
    from markupsafe import escape

    seed(acme, "d", OUTPUTS)
    results_id = evaluate(acme, "d", metrics(acme, CHECKS))["eval_results_id"]
    without_histograms(results_id)  # only a result stored without them reads its scores
    identity = Identity("acme", "ann", "ann@acme.test", "k")

    report = reports.evaluation_report(identity, results_id, Deadline.after(0))

    assert all(m.histogram is None for m in report.metrics)
    assert report.histogram_note.startswith("The score distributions are not drawn")
    assert all(m.lowest for m in report.metrics)  # what is bounded is still read
    html = render_evaluation(report).decode()
    assert str(escape(report.histogram_note)) in html and 'class="histogram"' not in html
    assert 'class="forest"' in html


# ---- the texts a result scored, from the version it pinned (E7) -------------------------------

# Five pairs, so that every pair is listed under both checks: 3 words and "please" in V1, 9 words
# and no "please" in V2 (10 regressions from V1 to V2).
V1 = [f"V1 please {k}" for k in range(5)]
V2 = [f"V2 rude {k} with many more words than six" for k in range(5)]
LISTED = 2 * len(V1)


def compare_page(acme: Tenant, baseline: str, candidate: str) -> str:
    response = acme.get(f"/compare/report?baseline_id={baseline}&candidate_id={candidate}")
    assert response.status_code == 200, response.text
    return assert_safe(response.text).words


def scored_v1_then_overwritten(acme: Tenant, skew_ms: int | None = None) -> tuple[str, str]:
    """A result of V1 of dataset "faq", then "faq" overwritten with V2 (`skew_ms` before the
    result was made, by the overwriting Lambda's clock) and a result of V2."""
    seed(acme, "faq", V1)
    metrics_id = metrics(acme, CHECKS)
    before = evaluate(acme, "faq", metrics_id)["eval_results_id"]
    if skew_ms is None:
        seed(acme, "faq", V2)
    else:
        with clock_at(stored("acme", before).created_ms - skew_ms):
            seed(acme, "faq", V2)
    return before, evaluate(acme, "faq", metrics_id)["eval_results_id"]


def test_a_result_shows_the_texts_it_scored_after_its_dataset_is_overwritten(
    acme: Tenant,
) -> None:
    before, after = scored_v1_then_overwritten(acme)

    old_page = Page(report(acme, before).text).words
    new_page = Page(report(acme, after).text).words
    compared = compare_page(acme, before, after)

    assert [old_page.count(f"V1 please {k}") for k in range(5)] == [2] * 5
    assert "V2 rude" not in old_page and "written again" not in old_page
    assert "V2 rude" in new_page and "V1 please" not in new_page
    assert "Regressions, side by side (10)" in compared
    assert compared.count("V1 please") == LISTED  # each baseline side, as it was scored
    assert compared.count("V2 rude") == LISTED  # each candidate side


def test_a_clock_behind_the_evaluations_cannot_pass_an_overwrite_off_as_what_was_scored(
    acme: Tenant,
) -> None:
    # Given a result of V1, then V2 written on a Lambda whose clock runs a second behind the
    # evaluation's: V2's pairs carry a time before the result's
    before, after = scored_v1_then_overwritten(acme, skew_ms=1_000)
    header = datasets_store.get_header("acme", DatasetKind.SEED, "faq")
    assert header is not None and header.updated_ms < stored("acme", before).created_ms
    pairs = datasets_store.get_pairs(header, ["p00", "p04"], 1 << 20)
    assert all(p.created_ms < stored("acme", before).created_ms for p in pairs.values())

    # When the result's page and a comparison with a result of V2 are drawn
    old_page = Page(report(acme, before).text).words
    compared = compare_page(acme, before, after)

    # Then they show V1's texts, which the result scored, not V2's
    assert old_page.count("V1 please") == LISTED and "V2 rude" not in old_page
    assert compared.count("V1 please") == LISTED and compared.count("V2 rude") == LISTED
    # (which times alone would have shown: the same result, as stored before it pinned V1)
    forget_inputs("acme", before)
    by_time = Page(report(acme, before).text).words
    assert by_time.count("V2 rude") == LISTED and "V1 please" not in by_time


def test_a_result_shows_the_texts_it_scored_after_an_overwrite_and_appends(acme: Tenant) -> None:
    # Given a result of V1, then "faq" overwritten with three pairs of V2 and the other two
    # pairs added again, all on a clock behind the evaluation's
    seed(acme, "faq", V1)
    before = evaluate(acme, "faq", metrics(acme, CHECKS))["eval_results_id"]
    with clock_at(stored("acme", before).created_ms - 1_000):
        seed(acme, "faq", V2[:3])
        for k in (3, 4):
            added = {"id": f"p{k:02d}", "input": f"question {k}", "output": f"ADDED {k}"}
            assert acme.post("/data/seed/faq/pair", added).status_code == 200

    words = Page(report(acme, before).text).words

    # Then every listed pair shows what was scored
    assert [words.count(f"V1 please {k}") for k in range(5)] == [2] * 5
    assert "V2 rude" not in words and "ADDED" not in words
    assert "no longer in the dataset" not in words and "written again" not in words


@pytest.mark.parametrize("purged", [False, True], ids=["record-expired", "purged"])
def test_a_result_whose_version_expired_says_so_naming_the_day(acme: Tenant, purged: bool) -> None:
    before, after = scored_v1_then_overwritten(acme)
    expire("acme", before, purged=purged)

    response = report(acme, before)
    compared = compare_page(acme, before, after)

    assert response.status_code == 200, response.text
    words = assert_safe(response.text).words
    said = f"expired on {EXPIRED_DAY}: its pairs are no longer kept"
    assert words.count(said) == LISTED
    assert "V1 please" not in words and "V2 rude" not in words
    assert compared.count(said) == LISTED  # each baseline side
    assert compared.count("V2 rude") == LISTED  # each candidate side, still kept


def test_a_result_stored_before_it_pinned_its_version_goes_by_times(acme: Tenant) -> None:
    seed(acme, "faq", V1)
    metrics_id = metrics(acme, CHECKS)
    before = evaluate(acme, "faq", metrics_id)["eval_results_id"]
    forget_inputs("acme", before)
    unchanged = Page(report(acme, before).text).words
    seed(acme, "faq", V2)
    after = evaluate(acme, "faq", metrics_id)["eval_results_id"]

    old_page = Page(report(acme, before).text).words
    compared = compare_page(acme, before, after)

    assert unchanged.count("V1 please") == LISTED  # written before it: shown
    assert "V1 please" not in old_page and "V2 rude" not in old_page
    assert old_page.count("written again after this evaluation") == LISTED
    assert "What produced this result" in old_page and "Not recorded" in old_page
    assert compared.count("written again after this evaluation") == LISTED
    assert compared.count("V2 rude") == LISTED


def test_past_what_one_report_reads_the_votes_are_not_counted_on_the_page(
    acme: Tenant, judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalsvc.logic import reports

    seed(acme, "d", OUTPUTS)
    result = evaluate(acme, "d", metrics(acme, [QUESTION]))
    results_id = result["eval_results_id"]
    for low in result["scores"][0]["lowest_scoring_pairs"][:3]:
        body = {"pair_id": low["pair_id"], "metric_idx": 0, "vote": 1, "comment": "ok"}
        assert acme.put(f"/vote_eval_pair/{results_id}", body).status_code == 200
    monkeypatch.setattr(reports, "CRITIQUE_READ_ITEMS", 2)

    words = Page(report(acme, results_id).text).words

    assert "more votes and comments than one report reads" in words
    assert "the newest 2 of the first 2 read are listed" in words
    assert f"GET /evaluation/{results_id}/agreement counts them" in words
    assert "AUC" not in words


def test_a_comparison_out_of_time_for_the_texts_is_drawn_without_them(
    acme: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalsvc.logic import reports

    seed(acme, "base", [f"please {k}" for k in range(4)])
    seed(acme, "cand", [f"no {k} {SCRIPT}" for k in range(4)])
    metrics_id = metrics(acme, CHECKS)
    baseline = evaluate(acme, "base", metrics_id)["eval_results_id"]
    candidate = evaluate(acme, "cand", metrics_id)["eval_results_id"]
    monkeypatch.setattr(reports, "TEXT_READ_SECONDS", 10_000.0)  # never time enough

    response = acme.get(f"/compare/report?baseline_id={baseline}&candidate_id={candidate}")

    assert response.status_code == 200, response.text
    words = Page(response.text).words
    assert "Regressions, side by side (4)" in words
    assert words.count("ran out of time to read them") == 8  # both sides of each
    assert SCRIPT not in words  # the candidate's outputs were not read


def test_a_comparison_page_out_of_time_is_503_to_retry_not_413(
    acme: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalsvc.logic import comparisons

    seed(acme, "base", [f"please {k}" for k in range(4)])
    seed(acme, "cand", [f"no {k}" for k in range(4)])
    metrics_id = metrics(acme, CHECKS)
    baseline = evaluate(acme, "base", metrics_id)["eval_results_id"]
    candidate = evaluate(acme, "cand", metrics_id)["eval_results_id"]

    def busy(*args: Any) -> None:
        raise comparisons.TimeUp  # the machine too busy to read them in time

    monkeypatch.setattr(comparisons, "merge", busy)

    response = acme.get(f"/compare/report?baseline_id={baseline}&candidate_id={candidate}")

    assert response.status_code == 503, response.text
    assert response.headers["retry-after"] == str(comparisons.RETRY_AFTER_SECONDS)
    said = response.json()["error"]
    assert "ran out of this request's time" in said and "ask again" in said


def test_a_comparison_page_of_results_too_large_for_any_request_is_413_before_reading(
    acme: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalsvc.logic import comparisons
    from evalsvc.models.evaluations import MAX_REASON_CHARS, ScoredPair

    from tests.stored_results import store_result

    scored = [ScoredPair(f"p{k}", k, [5.0], ["r" * MAX_REASON_CHARS]) for k in range(20)]
    for results_id in ("ev_a", "ev_b"):
        store_result("acme", results_id, ["check:non_empty"], scored)
    stored = results_store.get("acme", "ev_a")
    assert stored is not None
    at_least = comparisons.stored_bytes_at_least(stored)
    assert at_least  # 20 reasons of 1,000 bytes, at least
    monkeypatch.setattr(comparisons, "FASTEST_READ_BYTES_PER_SECOND", at_least / 100)
    no_scored_pair_is_read(monkeypatch)

    response = acme.get("/compare/report?baseline_id=ev_a&candidate_id=ev_b")

    assert response.status_code == 413, response.text
    assert "retry-after" not in response.headers
    assert "cannot be compared, however often it is asked" in response.json()["error"]


# ---- what produced a result (E7) -----------------------------------------------------------


def test_the_evaluation_page_says_what_produced_the_result(acme: Tenant, judge: FakeJudge) -> None:
    seed(acme, "faq", V1)
    results_id = evaluate(acme, "faq", metrics(acme, [QUESTION, *CHECKS]))["eval_results_id"]
    inputs = acme.get(f"/evaluation/{results_id}").json()["inputs"]

    response = report(acme, results_id)

    assert response.status_code == 200, response.text
    words = assert_safe(response.text).words
    section = words[words.index("What produced this result") : words.index("Scores")]
    assert f"seed dataset faq, version {inputs['dataset_version']}" in section
    for name in (
        "pairs_digest",
        "metrics_id",
        "definitions_sha256",
        "judge_model",
        "judge_prompt_version",
        "service_version",
        "prices_date",
    ):
        assert inputs[name] and str(inputs[name]) in section, name
    assert f"{inputs['judge_samples']} per judged pair and metric" in section
    assert response.text.count('class="digest"') == 3  # version, pairs and definitions digests
    assert "Not recorded" not in words


def test_the_comparison_page_says_whether_both_results_scored_the_same_pairs(
    acme: Tenant,
) -> None:
    seed(acme, "faq", V1)
    metrics_id = metrics(acme, CHECKS)
    first = evaluate(acme, "faq", metrics_id)["eval_results_id"]
    again = evaluate(acme, "faq", metrics_id)["eval_results_id"]
    seed(acme, "faq", V2)
    other = evaluate(acme, "faq", metrics_id)["eval_results_id"]
    digests = {
        rid: acme.get(f"/evaluation/{rid}").json()["inputs"]["pairs_digest"]
        for rid in (first, again, other)
    }

    same = compare_page(acme, first, again)
    different = compare_page(acme, first, other)
    forget_inputs("acme", again)
    unknown = compare_page(acme, again, other)

    assert digests[first] == digests[again] != digests[other]
    assert "Both results scored the same pairs" in same
    assert same.count(digests[first]) == 2  # side by side
    assert "The two results did not score the same pairs" in different
    assert digests[first] in different and digests[other] in different
    assert "Whether the two results scored the same pairs is not known" in unknown
    assert "not recorded" in unknown and digests[other] in unknown
    for words in (same, different):
        assert "same pairs is not known" not in words and "not recorded" not in words
