// What every page shares: its heading (focused on arrival, so a screen reader starts there),
// the polite announcer, and the loading, empty and error states.

import {fill, h} from "./dom.js";

// Start a page: the document title and a focusable h1; returns the h1.
export function heading(main, title) {
  document.title = `${title} · Evaluation service`;
  const h1 = h("h1", {tabindex: "-1"}, title);
  fill(main, h1);
  return h1;
}

export function focusHeading(main) {
  main.querySelector("h1")?.focus({preventScroll: false});
}

// Say something to assistive technology without moving focus.
export function announce(message) {
  const region = document.getElementById("announce");
  if (!region) return;
  region.textContent = "";
  // A fresh text node a tick later is read even when the text repeats.
  setTimeout(() => {
    region.textContent = message;
  }, 30);
}

export function loading(what) {
  return h("p", {class: "loading", role: "status"}, `Loading ${what}…`);
}

export function empty(message, ...more) {
  return h("div", {class: "empty"}, h("p", {}, message), ...more);
}

// An error the person can act on: the message and, when given, a "Try again" button.
export function problem(error, retry) {
  const box = h("div", {class: "problem", role: "alert"}, h("p", {}, error.message || String(error)));
  if (retry) {
    box.append(h("button", {type: "button", onclick: retry}, "Try again"));
  }
  return box;
}

export function isAbort(error) {
  return error?.name === "AbortError";
}
