// The evaluations list and one evaluation's page.

import {api, path, query} from "./api.js";
import {histogram, intervalBar} from "./charts.js";
import {fill, h, interval, num, uid, when} from "./dom.js";
import {announce, empty, heading, isAbort, loading} from "./ui.js";

const PAGE = 25;
const POLL_MS = 2000;

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
