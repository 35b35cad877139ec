// A pair's conversation and tool calls (E11) on the review page, as text (never markup).
//
// The conversation before the input shows its last two messages open (the exchange the input
// follows: the turn before it and the reply to it, or a tool's result and the call before it)
// and the earlier ones in one closed disclosure whose summary says how many; each message with
// its role. The calls made and the expected ones are side by side, row i holding call i of each,
// the first difference marked in both columns by a label, not by colour alone.
//
// Two calls are the same call when their names are equal and their arguments are equal as JSON
// values: key order aside, 1 and 1.0 alike, true never 1. This is the service's rule
// (evalsvc.models.conversations: ToolCall.key and first_difference), tested on the same cases
// (tests/trajectory_cases.py). An integer longer than a double holds (an id of 19 digits, say)
// is compared as written: the review page reads its pairs with `exactNumbers`, which keeps such
// an integer as a BigInt where the browser gives JSON.parse the number's source text.

import {h, num} from "./dom.js";

// The last messages shown open; the earlier ones are in one closed disclosure.
const OPEN_MESSAGES = 2;
const INTEGER = /^-?(0|[1-9][0-9]*)$/;
// What a display obeys rather than shows: the control characters but tab and line breaks, the
// bidirectional controls (an override shows what follows it reversed) and lone surrogates.
const UNSHOWN =
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

// A message, a tool's name or its arguments as the page shows them: each character of UNSHOWN
// as U+FFFD, visibly, never obeyed (the report pages' rule, evalsvc.core.controls.neutralised).
export function shown(text) {
  return String(text).replace(UNSHOWN, "\ufffd");
}

// JSON.parse's reviver: an integer a double cannot hold exactly, as the BigInt it is written as.
// Every other value as JSON.parse gives it (a number written with a fraction or an exponent is
// a double for the service too).
export function exactNumbers(key, value, context) {
  if (typeof value === "number" && !Number.isSafeInteger(value)) {
    const source = context?.source;
    if (typeof source === "string" && INTEGER.test(source)) return BigInt(source);
  }
  return value;
}

// One string per JSON value, equal for equal values: keys sorted, an integral number written
// as the integer it is (1.0 is 1), a boolean never a number.
export function canonical(value) {
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "number") return Number.isInteger(value) ? BigInt(value).toString() : String(value);
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(",")}}`;
}

function sameCall(a, b) {
  return String(a?.name) === String(b?.name) && canonical(a?.arguments ?? null) === canonical(b?.arguments ?? null);
}

// The first index at which the calls made and the expected ones differ: where two calls are
// not the same call, or where one list ends before the other; null when they are the same calls
// in the same order.
export function firstDifference(made, expected) {
  const shorter = Math.min(made.length, expected.length);
  for (let index = 0; index < shorter; index += 1) {
    if (!sameCall(made[index], expected[index])) return index;
  }
  return made.length === expected.length ? null : shorter;
}

// A value as compact JSON text, to show (an exact integer as written).
export function compact(value) {
  if (typeof value === "bigint") return value.toString();
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(compact).join(",")}]`;
  return `{${Object.keys(value).map((k) => `${JSON.stringify(k)}:${compact(value[k])}`).join(",")}}`;
}

function counted(count, noun) {
  return `${num(count, 0)} ${noun}${count === 1 ? "" : "s"}`;
}

// The conversation before the input, when the pair was written with one.
export function conversationBlock(messages) {
  if (!Array.isArray(messages)) return null;
  const count = messages.length;
  const section = h(
    "section",
    {class: "text conversation", "aria-label": "Conversation"},
    h("h2", {}, `Conversation before the input (${counted(count, "message")})`),
  );
  if (!count) {
    section.append(h("p", {class: "muted"}, "No message came before the input: it opens the conversation."));
    return section;
  }
  const split = Math.max(0, count - OPEN_MESSAGES);
  if (split) {
    section.append(
      h(
        "details",
        {class: "earlier"},
        h("summary", {}, counted(split, "earlier message")),
        messages.slice(0, split).map((message, index) => messageBlock(message, index, count)),
      ),
    );
  }
  section.append(...messages.slice(split).map((message, index) => messageBlock(message, split + index, count)));
  return section;
}

function messageBlock(message, index, count) {
  const content = shown(message?.content ?? "");
  return h(
    "div",
    {class: "message"},
    h(
      "p",
      {class: "role"},
      h("strong", {}, shown(message?.role ?? "")),
      ` · message ${num(index + 1, 0)} of ${num(count, 0)} · ${num(content.length, 0)} characters`,
    ),
    h("pre", {tabindex: "0"}, content),
  );
}

// The calls made beside the expected ones, when the pair was written with either. Without
// expected calls there is nothing to compare: the calls made alone, nothing marked. With
// expected calls and none recorded, the pair made none (as the trajectory checks read it).
export function callsBlock(made, expected) {
  const recorded = Array.isArray(made);
  const compared = Array.isArray(expected);
  if (!recorded && !compared) return null;
  const calls = recorded ? made : [];
  const differs = compared ? firstDifference(calls, expected) : null;
  const rows = Math.max(calls.length, compared ? expected.length : 0);
  let said = `Tool calls: ${num(calls.length, 0)} made`;
  if (compared) said += `, ${num(expected.length, 0)} expected`;
  if (!compared) said += ". No expected calls were given: nothing to compare with.";
  else if (differs === null) said += ". The calls made are the expected ones, in order.";
  else said += `. First difference at call ${num(differs + 1, 0)}.`;
  const body = h("tbody", {});
  for (let index = 0; index < rows; index += 1) {
    const marked = index === differs;
    body.append(
      h(
        "tr",
        {class: marked ? "first-difference" : null},
        h("th", {scope: "row", class: "num"}, num(index + 1, 0)),
        callCell(calls[index], marked, ended(recorded ? calls : null, "made")),
        compared && callCell(expected[index], marked, ended(expected, "expected")),
      ),
    );
  }
  if (!rows) {
    const none = compared ? "No call was made and none was expected." : "No call was made.";
    body.append(h("tr", {}, h("td", {colspan: compared ? "3" : "2", class: "muted"}, none)));
  }
  return h(
    "section",
    {class: "text calls", "aria-label": "Tool calls"},
    h("h2", {}, "Tool calls"),
    h(
      "table",
      {class: "calls"},
      h("caption", {}, said),
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          h("th", {scope: "col", class: "num"}, "Call"),
          h("th", {scope: "col"}, "Made"),
          compared && h("th", {scope: "col"}, "Expected"),
        ),
      ),
      body,
    ),
  );
}

// Why a list has no call at a row.
function ended(list, done) {
  if (list === null) return "No call (none was recorded).";
  if (!list.length) return `No call (none was ${done}).`;
  return `No call (only ${num(list.length, 0)} ${list.length === 1 ? "was" : "were"} ${done}).`;
}

function callCell(call, marked, why) {
  return h(
    "td",
    {},
    marked && h("strong", {class: "diff-mark"}, h("span", {"aria-hidden": "true"}, "▶"), " First difference"),
    call === undefined
      ? h("span", {class: "muted"}, why)
      : [
          h("code", {class: "tool"}, shown(call?.name ?? "")),
          h("pre", {class: "arguments", tabindex: "0"}, shown(compact(call?.arguments ?? null))),
        ],
  );
}
