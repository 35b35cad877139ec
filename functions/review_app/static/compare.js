// Comparing two evaluations (E1): the per-metric table, then the regressions and improvements,
// each with the baseline's and the candidate's score and reason side by side.

import {api, query} from "./api.js";
import {fill, h, interval, num, uid} from "./dom.js";
import {empty, heading, isAbort, loading} from "./ui.js";

const CHOICES = 100;
const VERDICTS = {
  improved: "Improved",
  regressed: "Regressed",
  no_significant_difference: "No significant difference",
  insufficient_data: "Too few pairs",
};

export function comparePage(context) {
  const {main, params, signal} = context;
  heading(main, "Compare two evaluations");
  const slot = h("div", {}, loading("the evaluations to choose from"));
  context.slot = slot;
  main.append(slot);
  const baselineId = params.get("baseline") || "";
  const candidateId = params.get("candidate") || "";

  (async () => {
    let choices;
    try {
      choices = (await api(`/evaluations${query({limit: CHOICES})}`, {signal})).evaluations;
    } catch (error) {
      if (!isAbort(error)) context.failed(error, () => context.go(location.hash));
      return;
    }
    if (signal.aborted) return;
    const complete = choices.filter((item) => item.status === "complete");
    for (const id of [baselineId, candidateId]) {
      if (id && !complete.some((item) => item.eval_results_id === id)) {
        complete.push({eval_results_id: id, dataset_id: "", created_at: "", pair_count: null});
      }
    }
    if (complete.length < 2) {
      fill(slot, empty("Comparing needs two complete evaluations; there are fewer. Run another evaluation of the same dataset, then come back."));
      return;
    }
    const baseline = picker("baseline", "Baseline", complete, baselineId || complete[1].eval_results_id);
    const candidate = picker("candidate", "Candidate", complete, candidateId || complete[0].eval_results_id);
    const results = h("div", {class: "comparison", "aria-live": "polite"});
    const form = h(
      "form",
      {
        class: "choose",
        onsubmit: (event) => {
          event.preventDefault();
          const hash = `#/compare${query({baseline: baseline.select.value, candidate: candidate.select.value})}`;
          context.go(hash);
        },
      },
      baseline.field,
      candidate.field,
      h("button", {type: "submit"}, "Compare"),
    );
    fill(slot, form, results);
    if (baselineId && candidateId) show(context, results, baselineId, candidateId);
  })();
}

function picker(name, label, choices, chosen) {
  const id = uid(name);
  const select = h(
    "select",
    {id, name},
    ...choices.map((item) =>
      h(
        "option",
        {value: item.eval_results_id, selected: item.eval_results_id === chosen},
        item.dataset_id ? `${item.eval_results_id} · dataset ${item.dataset_id} · ${item.created_at.slice(0, 16)}` : item.eval_results_id,
      ),
    ),
  );
  return {select, field: h("div", {class: "field"}, h("label", {for: id}, label), select)};
}

async function show(context, results, baselineId, candidateId) {
  const {signal} = context;
  if (baselineId === candidateId) {
    fill(results, h("p", {class: "problem", role: "alert"}, "Choose two different evaluations."));
    return;
  }
  fill(results, loading("the comparison"));
  let comparison;
  try {
    comparison = await api("/compare", {method: "POST", body: {baseline_id: baselineId, candidate_id: candidateId}, signal});
  } catch (error) {
    if (isAbort(error)) return;
    if (error?.kind === "unauthorized") context.failed(error);
    else fill(results, h("div", {class: "problem", role: "alert"}, h("p", {}, `These two cannot be compared: ${error.message}`)));
    return;
  }
  if (signal.aborted) return;
  const confidence = Math.round((1 - comparison.alpha) * 100);
  fill(
    results,
    h(
      "p",
      {},
      `${comparison.pairs_matched} pairs in both; ${comparison.only_in_baseline} only in the baseline, ${comparison.only_in_candidate} only in the candidate. Differences are candidate − baseline, intervals at ${confidence}%, p-values adjusted (${comparison.correction}).`,
    ),
    h(
      "table",
      {class: "list"},
      h("caption", {}, "Per metric"),
      h(
        "thead",
        {},
        h("tr", {}, ...["Metric", "Pairs", "Baseline mean", "Candidate mean", "Difference", `${confidence}% interval`, "p (adjusted)", "Verdict"].map((t) => h("th", {scope: "col"}, t))),
      ),
      h(
        "tbody",
        {},
        ...comparison.metrics.map((m) =>
          h(
            "tr",
            {},
            h("th", {scope: "row"}, m.metric),
            h("td", {class: "number"}, num(m.n, 0)),
            h("td", {class: "number"}, num(m.baseline_mean)),
            h("td", {class: "number"}, num(m.candidate_mean)),
            h("td", {class: "number"}, num(m.mean_diff)),
            h("td", {class: "number"}, interval(m.ci_low, m.ci_high)),
            h("td", {class: "number"}, num(m.p_adjusted, 4)),
            h("td", {}, h("span", {class: `verdict ${m.verdict}`}, VERDICTS[m.verdict] || m.verdict)),
          ),
        ),
      ),
    ),
    changes("Regressions", "No pair scored lower by the threshold or more.", comparison.regressions),
    changes("Improvements", "No pair scored higher by the threshold or more.", comparison.improvements),
  );
}

function changes(title, none, rows) {
  const id = uid("changes");
  const section = h("section", {class: "changes", "aria-labelledby": id}, h("h2", {id}, `${title} (${rows.length})`));
  if (!rows.length) {
    section.append(h("p", {class: "muted"}, none));
    return section;
  }
  for (const row of rows) {
    section.append(
      h(
        "article",
        {class: "change"},
        h("h3", {}, h("code", {}, row.pair_id), ` · ${row.metric} · ${num(row.diff)}`),
        h(
          "div",
          {class: "sides"},
          side("Baseline", row.baseline_score, row.baseline_reason),
          side("Candidate", row.candidate_score, row.candidate_reason),
        ),
      ),
    );
  }
  return section;
}

function side(label, score, reason) {
  return h(
    "div",
    {class: "side"},
    h("p", {class: "side-label"}, `${label}: ${num(score)} of 5`),
    reason ? h("p", {class: "reason"}, reason) : h("p", {class: "muted"}, "No reason was given."),
  );
}
