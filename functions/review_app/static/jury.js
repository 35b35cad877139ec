// E13: a metric judged by a jury of judges. On the evaluation page, per metric with a jury: who
// judged and how a pair's score is made, how far the judges agree with each other
// (Krippendorff's alpha, read in the project's words), each judge's mean beside the jury's, and
// each judge's AUC against people's votes when the agreement route gives it. On the review
// page, once the judge's score is shown: each judge's own score of the pair (judge_scores, which
// the audit sample gives with each pair).
//
// Judge names are an operator's settings, but they are shown as text like any other: every text
// goes in through h() (text nodes).

import {h, interval, num} from "./dom.js";

// The project's reading of alpha: at or above GOOD the judges agree well, at or above TENTATIVE
// tentatively, below it they disagree.
const GOOD = 0.8;
const TENTATIVE = 0.667;

export function aggregateWords(aggregate) {
  return `each pair's score is the ${aggregate === "median" ? "median" : "mean"} of the judges' scores`;
}

export function alphaReading(alpha) {
  if (alpha === null || alpha === undefined) return "not measured: it needs at least 2 scored pairs and some difference between the scores given";
  if (alpha >= GOOD) return "the judges agree well (0.8 or more): the jury's score can be read as one";
  if (alpha >= TENTATIVE) return "the judges agree only tentatively (0.667 to 0.8): read the jury's score with care, and look at the pairs where they differ";
  return "the judges disagree (below 0.667): the jury's score averages different readings of the metric; read the pairs where they differ, and make the metric's wording more precise before relying on it";
}

export function alphaText(alpha) {
  const value = alpha === null || alpha === undefined ? "" : `${num(alpha, 3)}: `;
  return `${value}${alphaReading(alpha)}.`;
}

// A judge's AUC against people's votes, when the agreement route gives it (per_judge); null
// when it does not, so nothing is shown.
function aucOf(agreed, judge) {
  const found = Array.isArray(agreed?.per_judge) ? agreed.per_judge.find((j) => j?.judge === judge) : null;
  if (!found || found.auc === null || found.auc === undefined) return null;
  const low = found.auc_ci_low;
  return low === null || low === undefined ? num(found.auc) : `${num(found.auc)} (95% ${interval(low, found.auc_ci_high)})`;
}

// The metric's jury: `jury` is score_juries[index] of GET /evaluation/{id} (null: no jury, and
// nothing is drawn); `mean` the jury's mean score; `agreed` the metric's agreement (or null).
export function juryBlock(jury, mean, agreed, label) {
  if (!jury?.jury) return null;
  const {judges, aggregate, alpha} = jury.jury;
  const perJudge = jury.per_judge || [];
  const withAuc = perJudge.some((j) => aucOf(agreed, j.judge) !== null);
  const head = ["Judge", "Mean score"].concat(withAuc ? ["AUC with people"] : []);
  return h(
    "div",
    {class: "jury"},
    h("h3", {}, "Jury"),
    h("p", {class: "jury-who"}, `Judged by a jury of ${judges.length}: ${judges.join(", ")} (${aggregate}): ${aggregateWords(aggregate)}.`),
    h("dl", {class: "facts compact"}, h("dt", {}, "Agreement between the judges (α)"), h("dd", {class: "jury-alpha"}, alphaText(alpha))),
    h(
      "table",
      {class: "list jury-judges"},
      h("caption", {}, `Each judge's mean score on ${label}, beside the jury's`),
      h("thead", {}, h("tr", {}, ...head.map((t) => h("th", {scope: "col"}, t)))),
      h(
        "tbody",
        {},
        ...perJudge.map((j) =>
          h("tr", {}, h("th", {scope: "row"}, j.judge), h("td", {class: "number"}, num(j.mean)), withAuc ? h("td", {class: "number"}, aucOf(agreed, j.judge) ?? "–") : null),
        ),
        h("tr", {class: "jury-row"}, h("th", {scope: "row"}, `The jury (${aggregate})`), h("td", {class: "number"}, num(mean)), withAuc ? h("td", {}, "") : null),
      ),
    ),
  );
}

// The judge scores of a pair on the review page: judge_scores of its audit sample entry.
export function judgeScoresBlock(scores) {
  if (!scores) return h("p", {class: "muted"}, "No judge scores are kept for this pair.");
  const entries = Object.entries(scores);
  return h(
    "div",
    {class: "judge-scores-box"},
    h("h3", {}, `Each judge's score (a jury of ${entries.length})`),
    h("dl", {class: "facts compact judge-scores"}, ...entries.map(([judge, score]) => [h("dt", {}, judge), h("dd", {}, `${num(score)} of 5`)])),
  );
}
