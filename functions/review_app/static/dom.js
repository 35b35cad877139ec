// Building the page. Every text a tenant or a model wrote reaches the page through `text` nodes
// (textContent, createTextNode), never as markup: nothing here parses HTML.

const SVG = "http://www.w3.org/2000/svg";

// h("p", {class: "x", onclick: fn}, "text", child, [more children]): an element. Attributes are
// set with setAttribute (never "style", which the CSP refuses); on* keys add listeners; children
// are nodes or strings (inserted as text); null/undefined/false children are skipped.
export function h(tag, attributes, ...children) {
  return build(document.createElement(tag), attributes, children);
}

// The same for SVG elements.
export function s(tag, attributes, ...children) {
  return build(document.createElementNS(SVG, tag), attributes, children);
}

function build(element, attributes, children) {
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") {
      element.addEventListener(name.slice(2), value);
    } else if (name === "style" || name.startsWith("on")) {
      throw new Error(`h(): ${name} is not set through attributes`);
    } else {
      element.setAttribute(name, value === true ? "" : String(value));
    }
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(element, child);
    else if (child instanceof Node) element.appendChild(child);
    else element.appendChild(document.createTextNode(String(child)));
  }
}

// Replace what `element` holds by `children`.
export function fill(element, ...children) {
  element.replaceChildren();
  append(element, children);
  return element;
}

// A number for people: at most `digits` decimals, trailing zeros dropped; "–" for null.
export function num(value, digits = 2) {
  if (value === null || value === undefined || Number.isNaN(value)) return "–";
  return Number(value).toLocaleString("en-US", {maximumFractionDigits: digits, minimumFractionDigits: 0});
}

export function interval(low, high, digits = 2) {
  if (low === null || low === undefined || high === null || high === undefined) return "–";
  return `${num(low, digits)} – ${num(high, digits)}`;
}

export function when(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  return date.toISOString().replace("T", " ").slice(0, 16) + " UTC";
}

let sequence = 0;
export function uid(prefix) {
  sequence += 1;
  return `${prefix}-${sequence}`;
}
