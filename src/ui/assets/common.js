"use strict";
/// The session's CSRF token, from the page's <meta name="csrf-token">.
const CSRF = document.querySelector('meta[name="csrf-token"]').content;
const $ = (s) => document.querySelector(s);
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) { if (k === "class") e.className = v; else e.setAttribute(k, v); }
  for (const k of kids) e.append(k);
  return e;
}
function showError(text) { const p = $("#error"); p.textContent = text; p.hidden = !text; }
async function api(method, path, body) {
  const r = await fetch(path, { method, credentials: "same-origin",
    headers: Object.assign({ "accept": "application/json" }, method === "GET" ? {} : { "content-type": "application/json", "x-csrf-token": CSRF }),
    body: body === undefined ? undefined : JSON.stringify(body) });
  const v = await r.json().catch(() => ({}));
  if (r.status === 401) { location.reload(); throw new Error("signed out"); }
  if (!r.ok) throw new Error((v.error && (v.error.message + " [" + v.error.code + "]")) || ("HTTP " + r.status));
  return v;
}
/// A stored time as this browser's local date and time (`2026-12-06 14:03`).
function fmtTime(t) {
  const d = t ? new Date(t) : null;
  if (!d || isNaN(d)) return t ? String(t) : "–";
  const p = (n) => String(n).padStart(2, "0");
  return d.getFullYear() + "-" + p(d.getMonth() + 1) + "-" + p(d.getDate()) + " " + p(d.getHours()) + ":" + p(d.getMinutes());
}
/// A stored time as a person reads it: relative when near ("5 min ago", "in 3 h"), else
/// local; the exact local time on hover (a <time> element).
function when(t) {
  const d = t ? new Date(t) : null;
  if (!d || isNaN(d)) return document.createTextNode(t ? String(t) : "–");
  const s = Math.round((d.getTime() - Date.now()) / 1000);
  const a = Math.abs(s);
  const say = (n, unit) => (s < 0 ? n + " " + unit + " ago" : "in " + n + " " + unit);
  const text = a < 45 ? "just now"
    : a < 3600 ? say(Math.round(a / 60), "min")
    : a < 86400 ? say(Math.round(a / 3600), "h")
    : fmtTime(t);
  return el("time", { datetime: String(t), title: d.toLocaleString() }, text);
}
function td(...kids) { return el("td", {}, ...kids); }
/// A <select> of `options` ([value, label]) with `value` chosen.
function choice(attrs, options, value) {
  const s = el("select", attrs);
  for (const [v, label] of options) { const o = el("option", { value: v }, label); if (v === value) o.selected = true; s.append(o); }
  return s;
}
/// Keep a <select>'s options in step with `values`, keeping its choice.
function fillSelect(sel, values) {
  const have = new Set([...sel.options].map((o) => o.value));
  for (const v of values) if (v && !have.has(v)) sel.append(el("option", { value: v }, v));
}
/// A notice shown once (a new key): the text can be selected and copied.
function shownOnce(title, lines) {
  const box = $("#once");
  box.replaceChildren(el("h3", {}, title), el("p", { class: "meta" }, "Shown once: hal0 keeps only its hash. Copy it now."),
    ...lines.map((l) => el("pre", { class: "key" }, l)),
    Object.assign(el("button", { type: "button" }, "I have copied it"), { onclick: () => { box.hidden = true; box.replaceChildren(); } }));
  box.hidden = false;
  box.scrollIntoView();
}
{
  const out = document.querySelector("#logout");
  if (out) out.onclick = async () => { try { await api("POST", "/ui/logout"); } finally { location.href = "/ui/"; } };
}
/// The count of waiting cards in the menu and the page title, kept live (every 3 s).
const TITLE = document.title;
async function pendingCount() {
  const badge = $("#pending-count");
  if (!badge) return;
  try {
    const v = await api("GET", "/api/agent/approvals/count");
    badge.textContent = String(v.pending);
    badge.hidden = v.pending === 0;
    document.title = (v.pending ? "(" + v.pending + ") " : "") + TITLE;
  } catch (e) { /* the page's own refresh reports a lost daemon */ }
}
pendingCount();
setInterval(pendingCount, 3000);
