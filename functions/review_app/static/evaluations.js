// The evaluations list and one evaluation's page.

import {api, path, query} from "./api.js";
import {histogram, intervalBar} from "./charts.js";
import {fill, h, interval, num, uid, when} from "./dom.js";
import {juryBlock} from "./jury.js";
import {announce, empty, heading, isAbort, loading} from "./ui.js";

const PAGE = 25;
const POLL_MS = 2000;
// The interval half-widths (in points: 5 is ±5 %) a metric's plan of audit labels offers.
const HALF_WIDTHS = [2, 5, 10];
const CHOSEN_WIDTH = 5;

export function evaluationsPage(context) {
  const {main, params, signal} = context;
  heading(main, "Evaluations");
  const dataset = params.get("dataset") || "";
  const filter = h("input", {id: "dataset-filter", type: "text", value: dataset, autocomplete: "off", spellcheck: "false"});
  main.append(
    h(
      "form",
      {
        class: "filter",
        role: "search",
        onsubmit: (event) => {
          event.preventDefault();
          const id = filter.value.trim();
          context.go(id ? `#/evaluations${query({dataset: id})}` : "#/evaluations");
        },
      },
      h("label", {for: "dataset-filter"}, "Dataset id"),
      filter,
      h("button", {type: "submit"}, "Filter"),
      dataset ? h("a", {href: "#/evaluations"}, "Show all") : null,
    ),
  );
  const slot = h("div", {}, loading("the evaluations"));
  context.slot = slot;
  main.append(slot);
  const body = h("tbody");
  const table = h(
    "table",
    {class: "list"},
    h("caption", {class: "visually-hidden"}, "Evaluations, newest first"),
    h(
      "thead",
      {},
      h("tr", {}, ...["Evaluation", "Dataset", "Metrics", "Status", "Pairs", "Created"].map((t) => h("th", {scope: "col"}, t))),
    ),
    body,
  );
  const more = h("button", {type: "button", class: "more"}, "Load more");
  let cursor = null;
  let shown = 0;

  async function next(first) {
    more.disabled = true;
    try {
      const page = await api(`/evaluations${query({limit: PAGE, cursor, seed_data_id: dataset || null})}`, {signal});
      if (signal.aborted) return;
      for (const item of page.evaluations) body.append(row(item));
      shown += page.evaluations.length;
      cursor = page.next_cursor;
      if (first) {
        if (shown === 0) {
          fill(
            slot,
            empty(
              dataset
                ? `No evaluation of dataset ${dataset} yet.`
                : "No evaluations yet. Run one (POST /evaluate, or `evalsvc evaluate` from the command line), then reload this page.",
            ),
          );
          return;
        }
        fill(slot, table);
      }
      if (cursor) slot.append(more);
      else more.remove();
      if (!first) announce(`${page.evaluations.length} more evaluations loaded.`);
    } catch (error) {
      if (!isAbort(error)) context.failed(error, () => context.go(location.hash));
    } finally {
      more.disabled = false;
    }
  }
  more.addEventListener("click", () => next(false));
  next(true);
}

function row(item) {
  const id = item.eval_results_id;
  return h(
    "tr",
    {},
    h("td", {}, h("a", {href: `#/evaluation/${encodeURIComponent(id)}`, "aria-label": `Evaluation ${id}`}, h("code", {}, id))),
    h("td", {}, h("code", {}, item.dataset_id)),
    h("td", {}, h("code", {}, item.metrics_id)),
    h("td", {}, h("span", {class: `status ${item.status}`}, item.status)),
    h("td", {class: "number"}, num(item.pair_count, 0)),
    h("td", {}, when(item.created_at)),
  );
}

export function evaluationPage(context) {
  const {main, parts, signal} = context;
  const id = parts[1] || "";
  heading(main, `Evaluation ${id}`);
  const slot = h("div", {}, loading("the evaluation"));
  context.slot = slot;
  main.append(slot);
  let polls = 0;

  async function load() {
    try {
      const result = await api(path`/evaluation/${id}`, {signal});
      if (signal.aborted) return;
      if (result.status === "running") {
        polls += 1;
        fill(
          slot,
          h(
            "div",
            {class: "running", role: "status"},
            h("p", {}, `This evaluation is still running: ${num(result.pairs_done, 0)} of ${num(result.pairs_total ?? result.pair_count, 0)} pairs scored.`),
            h("p", {}, "This page shows its statistics by itself when it completes; reviewing opens then."),
          ),
        );
        setTimeout(() => signal.aborted || load(), Math.min(POLL_MS * polls, 10000));
        return;
      }
      if (result.status === "failed") {
        fill(
          slot,
          h(
            "div",
            {class: "problem", role: "alert"},
            h("p", {}, "This evaluation failed, so there is nothing to review:"),
            h("p", {}, result.failure || "no reason was recorded."),
            h("p", {}, "Run the evaluation again once the cause is fixed."),
          ),
        );
        return;
      }
      let agreement = null;
      let agreementError = null;
      try {
        agreement = await api(path`/evaluation/${id}/agreement`, {signal});
      } catch (error) {
        if (isAbort(error) || error?.kind === "unauthorized") throw error;
        agreementError = error;
      }
      if (signal.aborted) return;
      fill(slot, summary(result), ...metricCards(context, result, agreement, agreementError));
      if (polls) announce("The evaluation is complete.");
    } catch (error) {
      if (!isAbort(error)) context.failed(error, load);
    }
  }
  load();
}

function summary(result) {
  return h(
    "dl",
    {class: "facts"},
    h("dt", {}, "Dataset"),
    h("dd", {}, h("a", {href: `#/evaluations?dataset=${encodeURIComponent(result.dataset_id)}`}, h("code", {}, result.dataset_id))),
    h("dt", {}, "Metrics"),
    h("dd", {}, h("code", {}, result.metrics_id)),
    h("dt", {}, "Pairs"),
    h("dd", {}, num(result.pair_count, 0)),
    h("dt", {}, "Created"),
    h("dd", {}, when(result.created_at)),
    h("dt", {}, "Compare"),
    h("dd", {}, h("a", {href: `#/compare?baseline=${encodeURIComponent(result.results_id)}`}, "Compare with another evaluation")),
  );
}

function metricCards(context, result, agreement, agreementError) {
  const definitions = result.metrics_definitions || [];
  return definitions.map((metric, index) => {
    const title = uid("metric");
    const ci = result.score_confidence_intervals?.[index] || {};
    const mean = result.score_means?.[index];
    const counts = result.score_histograms?.[index];
    const agreed = agreement?.metrics?.find((m) => m.metric_idx === index);
    const label = `Metric ${index + 1}`;
    // Pairs without what the metric needs (a reference, contexts) are left out of its figures.
    const skipped = result.score_not_applicable?.[index] || 0;
    const figures =
      mean === null || mean === undefined
        ? [h("p", {class: "muted"}, "No pair has what this metric needs: it has no figures.")]
        : [
            h("p", {class: "big"}, h("span", {class: "label"}, "Mean "), num(mean), h("span", {class: "muted"}, ` of 5 · 95% interval ${interval(ci.ci_low, ci.ci_high)}`)),
            intervalBar(mean, ci.ci_low, ci.ci_high, `${label} mean`),
          ];
    if (skipped > 0) {
      figures.push(h("p", {class: "muted"}, `${skipped} pair${skipped === 1 ? "" : "s"} not applicable (without what the metric needs), left out.`));
    }
    return h(
      "section",
      {class: "metric", "aria-labelledby": title},
      h("h2", {id: title}, h("span", {class: "index"}, `${label}: `), metric),
      h(
        "div",
        {class: "figures"},
        h("div", {}, ...figures),
        h("div", {}, counts ? histogram(counts, `${label} scores`) : h("p", {class: "muted"}, "No score histogram is kept for this result.")),
        agreementBlock(agreed, agreementError),
        juryBlock(result.score_juries?.[index], mean, agreed, label),
        peopleBlock(context, result.results_id, index, label),
      ),
      h(
        "p",
        {class: "actions"},
        h(
          "button",
          {
            type: "button",
            "aria-label": `Review ${label}: ${metric}`,
            onclick: () => context.go(`#/review/${encodeURIComponent(result.results_id)}/${index}`),
          },
          "Review",
        ),
      ),
    );
  });
}

export function agreementBlock(agreed, error) {
  const box = h("div", {class: "agreement"}, h("h3", {}, "Judge–human agreement"));
  if (error) {
    box.append(h("p", {class: "muted"}, `Agreement could not be read: ${error.message}`));
  } else if (!agreed || agreed.votes === 0) {
    box.append(h("p", {class: "muted"}, "No votes yet. Review this metric to measure how often the judge agrees with people."));
  } else {
    box.append(
      h(
        "dl",
        {class: "facts compact"},
        h("dt", {}, "Votes"),
        h("dd", {}, `${agreed.votes} (${agreed.positive} meet, ${agreed.negative} do not, ${agreed.neutral} unsure)`),
        h("dt", {}, "AUC"),
        h("dd", {}, aucText(agreed)),
        h("dt", {}, "Cohen's κ"),
        h("dd", {}, num(agreed.kappa)),
        h("dt", {}, "Balanced accuracy"),
        h("dd", {}, num(agreed.balanced_accuracy)),
        agreed.people ? [h("dt", {}, "People with each other (α)"), h("dd", {}, peopleText(agreed.people))] : null,
      ),
    );
  }
  return box;
}

// People's agreement with each other (E12): Krippendorff's alpha over the pairs two or more
// people voted on.
function peopleText(people) {
  const shared = `${people.pairs_multi} ${people.pairs_multi === 1 ? "pair" : "pairs"} shared by ${people.reviewers} ${people.reviewers === 1 ? "person" : "people"}`;
  if (people.alpha === null) return `needs two pairs voted on by two people or more, and some disagreement (${shared})`;
  return `${num(people.alpha)} (${shared})`;
}

function aucText(agreed) {
  if (agreed.auc === null) return "needs a +1 and a −1 vote";
  if (agreed.auc_ci_low === null) return `${num(agreed.auc)} (an interval needs two +1 and two −1 votes)`;
  return `${num(agreed.auc)} (95% ${interval(agreed.auc_ci_low, agreed.auc_ci_high)})`;
}

// What people would say about every pair of the metric (E12): their audit votes anchoring the
// judge's scores (GET /evaluation/{id}/anchored), read after the page is drawn; with audit
// votes, a choice of half-width and the audit labels it needs (POST /plan).
function peopleBlock(context, resultsId, index, label) {
  const said = h("p", {class: "muted"}, "Reading what people would say…");
  const box = h("div", {class: "people"}, h("h3", {}, "What people would say"), said);
  (async () => {
    let anchored;
    try {
      anchored = await api(path`/evaluation/${resultsId}/anchored` + query({metric_idx: index}), {signal: context.signal});
    } catch (error) {
      if (isAbort(error)) return;
      if (error?.kind === "unauthorized") context.failed(error);
      else fill(said, `What people would say could not be read: ${error.message}`);
      return;
    }
    if (context.signal.aborted) return;
    fill(said, anchoredText(anchored));
    if (anchored.estimate !== null && anchored.estimate !== undefined) said.setAttribute("class", "anchored");
    if (anchored.n_labeled > 0) box.append(planForm(context, resultsId, index, label));
  })();
  return box;
}

function percent(share) {
  return `${num(100 * share, 1)} %`;
}

function plural(count, one, many) {
  return `${num(count, 0)} ${count === 1 ? one : many}`;
}

export function anchoredText(a) {
  const judge = a.judge_only?.estimate;
  const alone = judge === null || judge === undefined ? "" : `The judge alone says ${percent(judge)}.`;
  const audited = plural(a.n_labeled, "audited pair", "audited pairs");
  if (!a.n_labeled) {
    return "No audit votes yet. Review this metric's audit sample: people's votes on it anchor the judge's scores to what people would say of every pair.";
  }
  if (a.estimate === null || a.estimate === undefined) {
    if (a.n_labeled < 2) return `${audited} so far: at least 2 are needed to say what people would say of every pair. ${alone}`.trim();
    return `${audited} and ${plural(a.n_unlabeled, "other scored pair", "other scored pairs")}: at least 2 of each are needed. ${alone}`.trim();
  }
  const level = num(100 * (1 - a.alpha), 1);
  const scores = plural(a.n_unlabeled, "judge score", "judge scores");
  const people = `People would say ${percent(a.estimate)} meet (${num(100 * a.ci_low, 1)}–${num(100 * a.ci_high, 1)} %, ${level} % interval), from ${audited} and ${scores}`;
  return judge === null || judge === undefined ? `${people}.` : `${people}; the judge alone says ${percent(judge)}.`;
}

export function planText(plan, points) {
  const now = `there ${plan.labels_now === 1 ? "is" : "are"} ${num(plan.labels_now, 0)} now.`;
  const classical = plural(plan.classical_labels_needed, "audited pair", "audited pairs");
  if (plan.labels_needed === null || plan.labels_needed === undefined) {
    return `±${points} points cannot be reached with the judge's scores (they alone leave a wider interval); without the judge it would need ${classical}; ${now}`;
  }
  return `±${points} points would need ${plural(plan.labels_needed, "audited pair", "audited pairs")} (${num(plan.classical_labels_needed, 0)} without the judge); ${now}`;
}

function planForm(context, resultsId, index, label) {
  const chooser = uid("half-width");
  const select = h(
    "select",
    {id: chooser},
    ...HALF_WIDTHS.map((points) => h("option", {value: String(points), selected: points === CHOSEN_WIDTH}, `±${points} points`)),
  );
  const button = h("button", {type: "submit"}, "Plan audit labels", h("span", {class: "visually-hidden"}, ` for ${label}`));
  const answer = h("p", {class: "plan-answer", "aria-live": "polite"});
  return h(
    "form",
    {
      class: "plan",
      onsubmit: async (event) => {
        event.preventDefault();
        const points = Number(select.value);
        button.disabled = true;
        answer.setAttribute("class", "plan-answer muted");
        fill(answer, "Planning…");
        try {
          const plan = await api("/plan", {
            method: "POST",
            body: {result_id: resultsId, metric_idx: index, half_width: points / 100},
            signal: context.signal,
          });
          if (context.signal.aborted) return;
          answer.setAttribute("class", "plan-answer");
          fill(answer, planText(plan, points));
        } catch (error) {
          if (isAbort(error)) return;
          if (error?.kind === "unauthorized") {
            context.failed(error);
            return;
          }
          answer.setAttribute("class", "plan-answer problem");
          fill(answer, error.message);
        } finally {
          button.disabled = false;
        }
      },
    },
    h("label", {for: chooser}, "Interval half-width", h("span", {class: "visually-hidden"}, ` for ${label}`)),
    select,
    button,
    answer,
  );
}
