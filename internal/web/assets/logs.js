// reef Control UI, Logs page: follows the gateway's log with the page's filter. No inline
// script (the CSP forbids it).
"use strict";
(function () {
  const list = document.getElementById("logs");
  const state = document.getElementById("logs-state");
  if (!list) return;
  const last = list.lastElementChild;
  const q = new URLSearchParams({ level: list.dataset.level, q: list.dataset.q, after: last ? last.dataset.seq : "0" });
  const es = new EventSource("/logs/events?" + q);
  es.addEventListener("open", () => { state.textContent = "following the gateway's log (secrets redacted)"; });
  es.addEventListener("error", () => { state.textContent = "reconnecting…"; });
  function span(cls, text) {
    const s = document.createElement("span");
    s.className = cls;
    s.textContent = text;
    return s;
  }
  es.addEventListener("log", (e) => {
    const l = JSON.parse(e.data);
    const li = document.createElement("li");
    li.className = "lvl-" + l.level;
    li.dataset.seq = l.seq;
    const t = new Date(l.time);
    li.append(span("t", t.toLocaleDateString("sv") + " " + t.toLocaleTimeString("en-GB")), " ", span("lvl", l.level), " ",
      span("m", l.message), " ", span("f", l.fields));
    list.appendChild(li);
    while (list.children.length > 500) list.removeChild(list.firstChild);
  });
})();
