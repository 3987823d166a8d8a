// reef Control UI: the WebChat and Live pages' streaming. No inline script (the CSP forbids it).
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

  function chat() {
    const list = document.getElementById("messages");
    const form = document.getElementById("chat-form");
    const input = document.getElementById("chat-input");
    const state = document.getElementById("chat-state");
    let streaming = null; // the answer being written

    function scroll() { window.scrollTo(0, document.body.scrollHeight); }
    function addItem(it) {
      const cls = it.kind + (it.error ? " failed" : "");
      const text = it.kind === "progress" ? "· " + it.text : it.kind === "reset" ? "— new session —" : it.text;
      li(list, cls, text);
    }
    async function history() {
      const r = await fetch("/chat/history", { headers: { Accept: "application/json" } });
      if (!r.ok) { state.textContent = "could not load the history (" + r.status + ")"; return; }
      const h = await r.json();
      list.textContent = "";
      streaming = null;
      h.items.forEach(addItem);
      scroll();
    }
    function follow() {
      const es = new EventSource("/chat/events");
      es.addEventListener("open", () => { state.textContent = ""; });
      es.addEventListener("error", () => { state.textContent = "reconnecting…"; });
      es.addEventListener("delta", (e) => {
        const d = JSON.parse(e.data);
        if (!streaming) streaming = li(list, "assistant streaming", "");
        list.dataset.streamed = "yes"; // the answer arrived as it was written (the browser test looks)
        streaming.textContent += d.text;
        scroll();
      });
      es.addEventListener("chat", (e) => {
        const ev = JSON.parse(e.data);
        switch (ev.kind) {
          case "started": state.textContent = "working…"; break;
          case "progress": li(list, "progress", "· " + ev.text); break;
          case "tool_error": li(list, "progress failed", "✗ " + ev.text); break;
          case "queued": li(list, "progress", "↳ " + ev.text); break;
          case "reply":
            if (streaming) { streaming.remove(); streaming = null; }
            li(list, "assistant" + (ev.failed ? " failed" : ""), ev.text);
            break;
          case "final": state.textContent = ""; if (streaming) { streaming.classList.remove("streaming"); streaming = null; } break;
        }
        scroll();
      });
    }
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const text = input.value;
      if (!text.trim()) return;
      input.value = "";
      li(list, "user", text);
      scroll();
      const r = await fetch("/chat/send", {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
        body: JSON.stringify({ text: text }),
      });
      if (!r.ok) {
        let msg = r.status + "";
        try { msg = (await r.json()).error; } catch (_) { /* not JSON */ }
        state.textContent = "not sent: " + msg;
        input.value = text;
      }
    });
    input.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); form.requestSubmit(); }
    });
    history().then(follow);
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

  if (page === "chat") chat();
  if (page === "live") live();
})();
