// reef Control UI: the Live page's streaming (WebChat's script is chat.js). No inline script (the CSP forbids it).
"use strict";
(function () {
  const csrf = document.querySelector('meta[name="csrf-token"]')?.content || "";
  const page = document.body.dataset.page;

  function li(list, cls, text) {
    const el = document.createElement("li");
    el.className = cls;
    el.textContent = text;
    list.appendChild(el);
    return el;
  }

  function live() {
    const list = document.getElementById("live");
    const state = document.getElementById("live-state");
    const session = list.dataset.session;
    const q = new URLSearchParams({ session: session, kind: list.dataset.kind });
    const es = new EventSource("/live/events?" + q);
    const texts = {}; // run → its text line: a run's deltas fold into one line
    es.addEventListener("open", () => { state.textContent = "following " + (session || "every session"); });
    es.addEventListener("error", () => { state.textContent = "reconnecting…"; });
    es.addEventListener("run", (e) => {
      const ev = JSON.parse(e.data);
      const open = texts[ev.run];
      if (ev.kind === "text.delta" && open && open.isConnected) {
        open.dataset.text += ev.text;
        open.textContent = open.dataset.head + "  " + JSON.stringify(open.dataset.text);
        return;
      }
      const parts = [new Date(ev.time).toLocaleTimeString(), ev.kind];
      if (!session) parts.push(ev.session);
      for (const k of ["name", "summary", "text", "status", "child", "goal"]) if (ev[k]) parts.push(k === "text" ? JSON.stringify(ev[k]) : ev[k]);
      if (ev.steps) parts.push(ev.steps.map((s) => s.status + ":" + s.title).join(", "));
      const item = li(list, ev.kind.replace(".", "-"), parts.join("  "));
      if (ev.kind === "text.delta") {
        item.dataset.text = ev.text;
        item.dataset.head = parts.slice(0, -1).join("  ");
        texts[ev.run] = item;
      }
      if (ev.kind === "run.end") delete texts[ev.run];
      while (list.children.length > 500) list.removeChild(list.firstChild);
    });
  }

  if (page === "live") live();
})();
