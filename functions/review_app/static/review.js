// Reviewing one metric of an evaluation, one pair at a time.
//
// Two queues:
// - "audit" (the default): the metric's audit sample (E2), pairs drawn uniformly at random from
//   those this person has not voted on, voted with "source": "audit". Blind: while the pair on
//   screen is unvoted, the judge's score and reason are not in the page at all (they are kept in
//   this module's memory, never in the DOM); they appear once the vote is saved.
//   "Overlap with other reviewers" (E12) takes that share of the sample from pairs other people
//   audited, so that people share pairs and their agreement with each other is measured; it
//   reloads the queue in place (the choice is kept in the address: ?overlap=0.2).
// - "lowest": the pairs the judge scored lowest that this person has not voted on, with the
//   judge's score and reason shown, voted with "source": "review".
//
// A metric judged by a jury (E13) shows, with the judge's score, each judge's own score of the
// pair (read once the score is shown, so the audit sample stays blind).
//
// Keys (not while typing in a text field): + meets, - does not meet, 0 unsure, n next, p previous.

import {api, path, query} from "./api.js";
import {callsBlock, conversationBlock, exactNumbers, shown} from "./conversation.js";
import {fill, h, num} from "./dom.js";
import {agreementBlock} from "./evaluations.js";
import {judgeScoresBlock} from "./jury.js";
import {announce, empty, heading, isAbort, loading} from "./ui.js";

const BATCH = 10;
// Contexts up to this many characters are shown open; longer ones closed.
const SHORT_CONTEXT = 300;
const VOTES = [
  {value: 1, key: "+", label: "Meets (+1)", said: "meets"},
  {value: -1, key: "-", label: "Does not meet (−1)", said: "does not meet"},
  {value: 0, key: "0", label: "Unsure (0)", said: "unsure"},
];
const OVERLAPS = [
  {value: "0", label: "0 %"},
  {value: "0.1", label: "10 %"},
  {value: "0.2", label: "20 %"},
  {value: "0.5", label: "50 %"},
];
const QUEUES = {
  audit: {label: "Audit sample", source: "audit", order: "random"},
  lowest: {label: "Lowest scores", source: "review", order: "lowest"},
};

export function reviewPage(context) {
  const {main, parts, params, signal} = context;
  const id = parts[1] || "";
  const metricIdx = Number.parseInt(parts[2] || "0", 10);
  const queueName = params.get("queue") === "lowest" ? "lowest" : "audit";
  const queue = QUEUES[queueName];
  const blind = queueName === "audit";
  let overlap = blind && OVERLAPS.some((o) => o.value === params.get("overlap")) ? params.get("overlap") : "0";
  heading(main, "Review");
  const state = {
    // {pair_id, input, output, reference?, contexts?, messages?, tool_calls?,
    //  expected_tool_calls?, score, reason, vote, comment}
    items: [],
    index: 0,
    unvoted: null, // pairs not voted on by this person, when the queue was last read
    votedNow: 0, // votes cast on this page that were the pair's first
    exhausted: false,
    busy: false,
  };

  const switcher = h(
    "div",
    {class: "queues", role: "group", "aria-label": "Queue"},
    ...Object.entries(QUEUES).map(([name, q]) =>
      h(
        "button",
        {
          type: "button",
          "aria-pressed": String(name === queueName),
          onclick: () => context.go(`#/review/${encodeURIComponent(id)}/${metricIdx}${name === "audit" ? "" : query({queue: name})}`),
        },
        q.label,
      ),
    ),
  );
  const about = h(
    "p",
    {class: "help"},
    blind
      ? "Audit sample: pairs drawn at random from those you have not voted on. The judge's score stays hidden until you vote, so your vote is your own."
      : "Lowest scores: the pairs the judge scored lowest that you have not voted on, with its score and reason. These votes do not count in the audit agreement.",
  );
  const overlapControl = blind ? overlapField() : null;
  const back = h("p", {}, h("a", {href: `#/evaluation/${encodeURIComponent(id)}`}, "Back to the evaluation"));
  const progress = h("p", {class: "progress", id: "review-progress", "aria-live": "polite"});
  const slot = h("div", {class: "pair"}, loading("pairs to review"));
  const agreementSlot = h("div", {class: "agreement-slot"});
  context.slot = slot;
  main.append(back, switcher, about, overlapControl, progress, h("div", {class: "review-grid"}, slot, agreementSlot));

  let metricName = "";
  // E13: the metric's jury (score_juries of GET /evaluation/{id}; null: one judge).
  let jury = null;

  async function readJury() {
    try {
      const result = await api(path`/evaluation/${id}`, {signal});
      jury = result.score_juries?.[metricIdx] ?? null;
    } catch (error) {
      // Without it the pairs are reviewed as ever, without each judge's score.
      if (isAbort(error) || error?.kind === "unauthorized") throw error;
    }
  }

  async function loadMore() {
    const sample = await api(
      `${path`/evaluation/${id}/audit_sample`}${query({metric_idx: metricIdx, n: BATCH, order: queue.order, overlap: overlap === "0" ? null : overlap})}`,
      // Exact numbers: an integer a double cannot hold in a tool call's arguments is compared
      // and shown as written.
      {signal, reviver: exactNumbers},
    );
    metricName = sample.metric;
    const seen = new Set(state.items.map((item) => item.pair_id));
    const fresh = sample.pairs.filter((pair) => !seen.has(pair.pair_id));
    state.unvoted = sample.unvoted;
    state.votedNow = 0;
    for (const pair of fresh) state.items.push({...pair, vote: null, comment: ""});
    state.exhausted = fresh.length === 0;
    return fresh.length;
  }

  // The share of the audit sample drawn from pairs other people audited. A change reloads the
  // queue where it is, keeping the focus on the control (arrow keys change it at once).
  function overlapField() {
    const select = h(
      "select",
      {id: "overlap", "aria-describedby": "overlap-help"},
      ...OVERLAPS.map((o) => h("option", {value: o.value, selected: o.value === overlap}, o.label)),
    );
    select.addEventListener("change", () => reloadWith(select.value));
    return h(
      "div",
      {class: "field overlap"},
      h("label", {for: "overlap"}, "Overlap with other reviewers"),
      select,
      h("p", {class: "help", id: "overlap-help"}, "This share of your sample comes from pairs other reviewers audited, so that your agreement with each other can be measured."),
    );
  }

  async function reloadWith(value) {
    overlap = value;
    const hash = `#/review/${encodeURIComponent(id)}/${metricIdx}${query({overlap: value === "0" ? null : value})}`;
    history.replaceState(null, "", hash);
    state.items = [];
    state.index = 0;
    state.busy = true;
    progress.textContent = "Loading pairs…";
    try {
      await loadMore();
    } catch (error) {
      state.busy = false;
      if (!isAbort(error)) context.failed(error, () => reloadWith(value));
      return;
    }
    state.busy = false;
    if (signal.aborted) return;
    render();
    announce(`The sample now takes ${OVERLAPS.find((o) => o.value === value).label} from pairs other reviewers audited.`);
  }

  async function refreshAgreement() {
    try {
      const agreement = await api(`${path`/evaluation/${id}/agreement`}${query({source: blind ? "audit" : null})}`, {signal});
      if (signal.aborted) return;
      const agreed = agreement.metrics.find((m) => m.metric_idx === metricIdx);
      fill(
        agreementSlot,
        h("section", {"aria-label": "Agreement"}, agreementBlock(agreed, null), h("p", {class: "muted"}, blind ? "Audit votes only." : "All votes.")),
      );
    } catch (error) {
      if (isAbort(error)) return;
      if (error?.kind === "unauthorized") context.failed(error);
      else fill(agreementSlot, agreementBlock(null, error));
    }
  }

  function showProgress() {
    const left = state.unvoted === null ? null : Math.max(0, state.unvoted - state.votedNow);
    const voted = state.items.filter((item) => item.vote !== null).length;
    const position = state.items.length ? `Pair ${state.index + 1} of ${state.items.length}` : "No pair";
    progress.textContent = `${position} · ${voted} voted on this page${left === null ? "" : ` · ${left} left to vote on`}`;
  }

  function render() {
    const item = state.items[state.index];
    showProgress();
    if (!item) {
      const skipped = state.items.filter((pair) => pair.vote === null).length;
      let said = "There is nothing to review here: you have voted on every pair of this metric.";
      if (skipped) said = `This is the end of the queue. ${skipped} of its pairs have no vote from you yet: press p to go back to them.`;
      else if (state.items.length) said = "You have voted on every pair in this queue. Thank you.";
      fill(slot, empty(said, h("p", {}, h("a", {href: `#/evaluation/${encodeURIComponent(id)}`}, "Back to the evaluation"))));
      return;
    }
    heading_text(main, metricName);
    const voteButtons = VOTES.map((v) =>
      h(
        "button",
        {
          type: "button",
          class: `vote vote-${v.value}`,
          "aria-keyshortcuts": v.key === "+" ? "Shift+Equal" : v.key === "-" ? "Minus" : "0",
          "aria-pressed": String(item.vote === v.value),
          disabled: state.busy,
          onclick: () => vote(v.value),
        },
        v.label,
      ),
    );
    const comment = h("textarea", {id: "comment", rows: "2", maxlength: "4000"});
    comment.value = item.comment;
    comment.addEventListener("input", () => {
      item.comment = comment.value;
    });
    comment.addEventListener("keydown", (event) => {
      if (event.key === "Escape") comment.blur();
    });
    const judge = h("section", {class: "judge", "aria-label": "Judge"}, h("h2", {}, "Judge"));
    if (blind && item.vote === null) {
      judge.append(h("p", {class: "muted"}, "Hidden until you vote."));
    } else {
      judge.append(
        h("p", {class: "big"}, `Score ${num(item.score)} of 5`, jury ? ` (the ${jury.jury.aggregate} of ${jury.jury.judges.length} judges)` : ""),
        item.reason ? h("p", {class: "reason"}, item.reason) : h("p", {class: "muted"}, "No reason was given."),
      );
      if (jury) judge.append(judgeScoresBlock(item.judge_scores));
    }
    fill(
      slot,
      conversationBlock(item.messages),
      h("section", {class: "text", "aria-label": "Input"}, h("h2", {}, "Input"), textBlock(item.input)),
      h("section", {class: "text", "aria-label": "Output"}, h("h2", {}, "Output"), textBlock(item.output)),
      callsBlock(item.tool_calls, item.expected_tool_calls),
      referenceBlock(item.reference),
      contextsBlock(item.contexts),
      h("div", {class: "votes", role: "group", "aria-label": "Your vote"}, ...voteButtons),
      h("p", {class: "help keys"}, "Keys: + meets, - does not meet, 0 unsure, n next pair, p previous pair."),
      h("div", {class: "comment"}, h("label", {for: "comment"}, "Comment"), comment),
      judge,
      h(
        "p",
        {class: "move"},
        h("button", {type: "button", "aria-keyshortcuts": "p", disabled: state.index === 0, onclick: () => move(-1)}, "Previous pair"),
        h("button", {type: "button", "aria-keyshortcuts": "n", onclick: () => move(1)}, "Next pair"),
      ),
    );
  }

  function textBlock(text) {
    if (text === null || text === undefined) {
      return h("p", {class: "muted"}, "This pair is no longer in the dataset.");
    }
    return h("pre", {tabindex: "0"}, shown(text));
  }

  // The answer the pair should give, when it was written with one (E10).
  function referenceBlock(reference) {
    if (typeof reference !== "string") return null;
    return h("section", {class: "text", "aria-label": "Reference"}, h("h2", {}, "Reference"), textBlock(reference));
  }

  // What the app retrieved to answer, in rank order, when the pair was written with it (E10):
  // one disclosure per context, a long one closed until it is opened (Enter or Space on its
  // summary), so that twenty long contexts do not push the vote off the screen.
  function contextsBlock(contexts) {
    if (!Array.isArray(contexts)) return null;
    const count = contexts.length;
    const said = count === 1 ? "1 context" : `${num(count, 0)} contexts`;
    const section = h("section", {class: "text contexts", "aria-label": "Contexts"}, h("h2", {}, `Contexts (${said}, in rank order)`));
    if (!count) {
      section.append(h("p", {class: "muted"}, "The app retrieved nothing for this pair."));
      return section;
    }
    contexts.forEach((context, index) => {
      const text = String(context);
      section.append(
        h(
          "details",
          {class: "context", open: text.length <= SHORT_CONTEXT},
          h("summary", {}, `Context ${index + 1} of ${count} · ${num(text.length, 0)} characters`),
          h("pre", {tabindex: "0"}, shown(text)),
        ),
      );
    });
    return section;
  }

  async function vote(value) {
    const item = state.items[state.index];
    if (!item || state.busy) return;
    state.busy = true;
    const first = item.vote === null;
    const said = VOTES.find((v) => v.value === value).said;
    progress.textContent = "Saving your vote…";
    for (const button of slot.querySelectorAll("button.vote")) button.disabled = true;
    const body = {pair_id: item.pair_id, metric_idx: metricIdx, vote: value, source: queue.source};
    if (item.comment.trim()) body.comment = item.comment.trim();
    try {
      await api(path`/vote_eval_pair/${id}`, {method: "PUT", body, signal});
      if (signal.aborted) return;
      item.vote = value;
      if (first) state.votedNow += 1;
      state.busy = false;
      render();
      announce(`Vote saved: ${said}. The judge scored ${num(item.score)} of 5.`);
      slot.querySelector(`button.vote-${value}`)?.focus();
      refreshAgreement();
    } catch (error) {
      state.busy = false;
      if (isAbort(error)) return;
      if (error?.kind === "unauthorized") {
        context.failed(error);
        return;
      }
      render();
      slot.prepend(h("div", {class: "problem", role: "alert"}, h("p", {}, `Your vote was not saved: ${error.message}`)));
    }
  }

  async function move(step) {
    if (state.busy) return;
    const target = state.index + step;
    if (target < 0) return;
    if (target >= state.items.length && !state.exhausted) {
      state.busy = true;
      progress.textContent = "Loading more pairs…";
      try {
        await loadMore();
      } catch (error) {
        state.busy = false;
        if (!isAbort(error)) context.failed(error, () => move(step));
        return;
      }
      state.busy = false;
      if (signal.aborted) return;
    }
    state.index = Math.min(target, state.items.length);
    render();
    const item = state.items[state.index];
    if (item) announce(`Pair ${state.index + 1}${item.vote === null ? ", not voted yet" : ""}.`);
  }

  function onKey(event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (target instanceof HTMLElement && target.closest("input, textarea, select, [contenteditable]")) return;
    const choice = VOTES.find((v) => v.key === event.key);
    if (choice) {
      event.preventDefault();
      vote(choice.value);
    } else if (event.key === "n") {
      event.preventDefault();
      move(1);
    } else if (event.key === "p") {
      event.preventDefault();
      move(-1);
    }
  }
  document.addEventListener("keydown", onKey, {signal});

  (async () => {
    try {
      await Promise.all([loadMore(), readJury()]);
      if (signal.aborted) return;
      render();
      refreshAgreement();
    } catch (error) {
      if (isAbort(error)) return;
      if (error?.status === 409) {
        fill(
          slot,
          h(
            "div",
            {class: "problem", role: "alert"},
            h("p", {}, error.message),
            h("p", {}, "Reviewing opens once the evaluation is complete. ", h("a", {href: `#/evaluation/${encodeURIComponent(id)}`}, "See its progress.")),
          ),
        );
        return;
      }
      context.failed(error, () => context.go(location.hash));
    }
  })();
}

function heading_text(main, metric) {
  const h1 = main.querySelector("h1");
  const text = `Review: ${metric}`;
  if (h1 && h1.textContent !== text) {
    h1.textContent = text;
    document.title = `${text.slice(0, 80)} · Evaluation service`;
  }
}
