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
    const es = new EventSource("/live/events" + (session ? "?session=" + encodeURIComponent(session) : ""));
    es.addEventListener("open", () => { state.textContent = "following " + (session || "every session"); });
    es.addEventListener("error", () => { state.textContent = "reconnecting…"; });
    es.addEventListener("run", (e) => {
      const ev = JSON.parse(e.data);
      const parts = [new Date(ev.time).toLocaleTimeString(), ev.kind];
      if (!session) parts.push(ev.session);
      for (const k of ["name", "summary", "text", "status", "child", "goal"]) if (ev[k]) parts.push(k === "text" ? JSON.stringify(ev[k]) : ev[k]);
      if (ev.steps) parts.push(ev.steps.map((s) => s.status + ":" + s.title).join(", "));
      li(list, ev.kind.replace(".", "-"), parts.join("  "));
      while (list.children.length > 500) list.removeChild(list.firstChild);
    });
  }

  if (page === "live") live();
})();
