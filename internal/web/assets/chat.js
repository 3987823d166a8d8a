// reef WebChat: sending (text and files), the streamed answer, runs' steps folded inside the
// answer, Stop, the model and thinking pickers, and copy buttons on code blocks. Answers
// arrive as HTML the server rendered from Markdown and made safe (internal/markdown); no
// inline script or style anywhere (the CSP forbids them).
"use strict";
(function () {
  const csrf = document.querySelector('meta[name="csrf-token"]')?.content || "";

  async function copy(text) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
    const ta = document.createElement("textarea"); // plain http off loopback: the old way
    ta.value = text;
    ta.setAttribute("readonly", "");
    ta.className = "offscreen";
    document.body.appendChild(ta);
    ta.select();
    document.execCommand("copy");
    ta.remove();
  }

  // addCopy gives every code block under root a Copy button.
  function addCopy(root) {
    root.querySelectorAll("pre").forEach((pre) => {
      if (pre.parentElement.classList.contains("code")) return;
      const box = document.createElement("div");
      box.className = "code";
      pre.replaceWith(box);
      const b = document.createElement("button");
      b.type = "button";
      b.className = "copy";
      b.textContent = "Copy";
      b.addEventListener("click", async () => {
        try { await copy(pre.textContent); b.textContent = "Copied"; } catch (_) { b.textContent = "Select and copy"; }
        setTimeout(() => { b.textContent = "Copy"; }, 1500);
      });
      box.append(b, pre);
    });
  }

  async function post(path, body, urlencoded) {
    const headers = { "X-CSRF-Token": csrf, Accept: "application/json" };
    if (urlencoded) headers["Content-Type"] = "application/x-www-form-urlencoded";
    const r = await fetch(path, { method: "POST", headers: headers, body: body });
    if (r.ok) return null;
    try { return (await r.json()).error; } catch (_) { return "HTTP " + r.status; }
  }

  function chat(root) {
    const chatID = root.dataset.chat;
    const list = document.getElementById("messages");
    const form = document.getElementById("chat-form");
    const input = document.getElementById("chat-input");
    const files = document.getElementById("chat-file");
    const fileList = document.getElementById("chat-files");
    const state = document.getElementById("chat-state");
    const empty = document.getElementById("chat-empty");
    const stop = document.getElementById("chat-stop");
    let turn = null; // the answer being built: {li, steps, body}

    function scroll() { window.scrollTo(0, document.body.scrollHeight); }
    function running(on) { stop.hidden = !on; state.textContent = on ? "working…" : ""; }
    function line(cls, text) {
      const li = document.createElement("li");
      li.className = cls;
      li.textContent = text;
      list.appendChild(li);
      empty.hidden = true;
      return li;
    }
    function ensureTurn() {
      if (turn) return turn;
      const li = line("assistant", "");
      const details = document.createElement("details");
      details.className = "steps";
      details.hidden = true;
      const summary = document.createElement("summary");
      const steps = document.createElement("ol");
      details.append(summary, steps);
      const body = document.createElement("div");
      body.className = "md";
      li.append(details, body);
      turn = { li: li, details: details, summary: summary, steps: steps, body: body };
      return turn;
    }
    function step(text, cls) {
      const t = ensureTurn();
      const li = document.createElement("li");
      li.className = "progress" + (cls ? " " + cls : "");
      li.textContent = text;
      t.steps.appendChild(li);
      t.details.hidden = false;
      const n = t.steps.children.length;
      t.summary.textContent = n + (n === 1 ? " step" : " steps");
    }
    function answer(html, text, failed) {
      const t = ensureTurn();
      t.li.classList.remove("streaming");
      if (failed) t.li.classList.add("failed");
      if (html) t.body.innerHTML = html; // rendered and made safe by the server
      else t.body.textContent = text;
      addCopy(t.body);
      turn = null;
    }
    function endTurn() { turn = null; }
    function addItem(it) {
      switch (it.kind) {
        case "user": endTurn(); line("user", it.text); break;
        case "progress": step(it.text, it.error ? "failed" : ""); break;
        case "assistant": answer(it.html, it.text, it.error); break;
        case "reset": endTurn(); line("reset", "— new session —"); break;
        default: endTurn(); line(it.kind + (it.error ? " failed" : ""), it.text);
      }
    }
    async function history() {
      const r = await fetch("/chat/history?c=" + encodeURIComponent(chatID), { headers: { Accept: "application/json" } });
      if (!r.ok) { state.textContent = "could not load the history (" + r.status + ")"; return; }
      const h = await r.json();
      list.textContent = "";
      turn = null;
      h.items.forEach(addItem);
      empty.hidden = h.items.length > 0;
      scroll();
    }
    function follow() {
      const es = new EventSource("/chat/events?c=" + encodeURIComponent(chatID));
      es.addEventListener("open", () => { if (state.textContent === "reconnecting…") state.textContent = ""; });
      es.addEventListener("error", () => { state.textContent = "reconnecting…"; });
      es.addEventListener("delta", (e) => {
        const d = JSON.parse(e.data);
        const t = ensureTurn();
        t.li.classList.add("streaming");
        list.dataset.streamed = "yes"; // the answer arrived as it was written (the browser test looks)
        t.body.textContent += d.text;
        scroll();
      });
      es.addEventListener("chat", (e) => {
        const ev = JSON.parse(e.data);
        switch (ev.kind) {
          case "started": running(true); break;
          case "progress": step(ev.text); break;
          case "tool_error": step("✗ " + ev.text, "failed"); break;
          case "queued": endTurn(); line("progress", "↳ " + ev.text); break;
          case "reply": answer(ev.html, ev.text, ev.failed); break;
          case "final":
            running(false);
            if (turn) { turn.li.classList.remove("streaming"); turn = null; }
            break;
        }
        scroll();
      });
    }
    function showFiles() {
      fileList.textContent = Array.from(files.files).map((f) => "attached: " + f.name).join(", ");
    }
    files.addEventListener("change", showFiles);
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const text = input.value;
      const names = Array.from(files.files).map((f) => f.name);
      if (!text.trim() && names.length === 0) return;
      const body = new FormData(form);
      input.value = "";
      files.value = "";
      showFiles();
      endTurn();
      line("user", text + names.map((n) => "\n[file] " + n).join(""));
      scroll();
      const err = await post("/chat/send", body, false);
      if (err) {
        state.textContent = "not sent: " + err;
        input.value = text;
      }
    });
    input.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); form.requestSubmit(); }
    });
    stop.addEventListener("click", async () => {
      endTurn();
      line("user", "/stop"); // what the button types: the conversation shows it as a command
      const err = await post("/chat/stop", new URLSearchParams({ chat: chatID }), true);
      state.textContent = err ? "could not stop: " + err : "stopping…";
    });
    for (const [id, field] of [["chat-model", "model"], ["chat-think", "level"]]) {
      const sel = document.getElementById(id);
      sel.addEventListener("change", async () => {
        endTurn();
        line("user", "/" + (field === "level" ? "think" : "model") + " " + sel.value);
        const err = await post(sel.form.action, new URLSearchParams({ chat: chatID, [field]: sel.value }), true);
        if (err) state.textContent = err;
      });
    }
    document.querySelectorAll("button.starter").forEach((b) => b.addEventListener("click", () => {
      input.value = b.textContent;
      form.requestSubmit();
    }));
    document.getElementById("chat-delete-form").addEventListener("submit", (e) => {
      if (!window.confirm("Delete this chat? Its run stops; the transcript stays in Sessions.")) e.preventDefault();
    });
    history().then(follow);
  }

  document.querySelectorAll(".md").forEach(addCopy); // answers on a page rendered by the server (a conversation)
  const root = document.getElementById("webchat");
  if (root) chat(root);
})();
