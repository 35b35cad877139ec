// The review app (E9): one page, routed by the URL's fragment, so that every view has an address
// of its own and the server serves one document.
//
//   #/signin                      sign in with an API key
//   #/evaluations?dataset=ID      the evaluations, newest first
//   #/evaluation/ID               one evaluation: per metric mean, interval, histogram, agreement
//   #/review/ID/METRIC?queue=Q    review a metric's pairs: Q audit (default, blind) or lowest
//   #/compare?baseline=A&candidate=B

import {api, session} from "./api.js";
import {comparePage} from "./compare.js";
import {fill, h} from "./dom.js";
import {evaluationPage, evaluationsPage} from "./evaluations.js";
import {reviewPage} from "./review.js";
import {focusHeading, heading, problem} from "./ui.js";

const main = document.getElementById("main");
const nav = document.getElementById("nav");
let current = null; // the AbortController of the page on screen
let notice = ""; // why the person is on the sign-in page, said there once
let afterSignIn = "#/evaluations";

function parse(hash) {
  const [route, search = ""] = hash.replace(/^#\/?/, "").split("?", 2);
  let parts;
  try {
    parts = route.split("/").filter(Boolean).map(decodeURIComponent);
  } catch {
    parts = ["not-found"];
  }
  return {parts, params: new URLSearchParams(search)};
}

export function go(hash) {
  if (location.hash === hash) route();
  else location.hash = hash;
}

// A page's failure: a rejected key ends the session (the sign-in page says why); anything else
// is shown where the page was, with a way to try again.
function failed(context, error, retry) {
  if (context.signal.aborted) return;
  if (error?.kind === "unauthorized") {
    signOut("Your API key is no longer accepted: it may have been revoked or may have expired. Sign in again with a current key.");
    return;
  }
  const box = problem(error, retry);
  if (context.slot) fill(context.slot, box);
  else main.append(box);
}

function signOut(message) {
  session.signOut();
  notice = message;
  fill(main);
  go("#/signin");
}

function signInPage(context) {
  heading(main, "Sign in");
  const input = h("input", {
    id: "api-key",
    name: "api-key",
    type: "text",
    class: "secret",
    autocomplete: "off",
    autocapitalize: "off",
    spellcheck: "false",
    "aria-describedby": "api-key-help",
  });
  const message = h("div", {id: "sign-in-message", "aria-live": "assertive"});
  if (notice) {
    message.append(h("p", {class: "notice"}, notice));
    notice = "";
  }
  const button = h("button", {type: "submit"}, "Sign in");
  const form = h(
    "form",
    {
      class: "sign-in",
      novalidate: true,
      onsubmit: async (event) => {
        event.preventDefault();
        const key = input.value.trim();
        if (!key) {
          fill(message, h("p", {class: "problem", role: "alert"}, "Enter your API key, then press Sign in."));
          input.focus();
          return;
        }
        button.disabled = true;
        fill(message, h("p", {role: "status"}, "Checking the key…"));
        try {
          await api("/evaluations?limit=1", {key, signal: context.signal});
          session.signIn(key);
          input.value = "";
          go(afterSignIn);
          afterSignIn = "#/evaluations";
        } catch (error) {
          if (context.signal.aborted) return;
          const said =
            error?.kind === "unauthorized"
              ? "That API key was not accepted. Check that you copied all of it, or ask your administrator for a new one."
              : error.message;
          fill(message, h("p", {class: "problem", role: "alert"}, said));
          input.focus();
        } finally {
          button.disabled = false;
        }
      },
    },
    h("label", {for: "api-key"}, "API key"),
    h("p", {id: "api-key-help", class: "help"}, "The key stays in this browser tab only, until you sign out or close the tab."),
    input,
    button,
    message,
  );
  main.append(form);
}

const pages = {
  evaluations: evaluationsPage,
  evaluation: evaluationPage,
  review: reviewPage,
  compare: comparePage,
};

function route() {
  current?.abort();
  current = new AbortController();
  const {parts, params} = parse(location.hash);
  const signedIn = Boolean(session.key());
  nav.hidden = !signedIn;
  const context = {main, params, parts, signal: current.signal, go, slot: null};
  context.failed = (error, retry) => failed(context, error, retry);
  const name = parts[0] || (signedIn ? "evaluations" : "signin");
  if (name === "signin" || !signedIn) {
    if (!signedIn && name !== "signin") afterSignIn = location.hash || "#/evaluations";
    if (signedIn) {
      go("#/evaluations");
      return;
    }
    signInPage(context);
  } else if (pages[name]) {
    pages[name](context);
  } else {
    heading(main, "Page not found");
    main.append(h("p", {}, "There is no such page. ", h("a", {href: "#/evaluations"}, "Go to the evaluations.")));
  }
  focusHeading(main);
}

document.getElementById("sign-out").addEventListener("click", () => signOut("You are signed out. The key was removed from this browser."));
document.querySelector(".skip").addEventListener("click", (event) => {
  event.preventDefault();
  main.focus();
});
window.addEventListener("hashchange", route);
route();
