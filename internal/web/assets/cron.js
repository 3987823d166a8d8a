// reef Control UI, Cron form: the schedule's preview as you type. No inline script (the CSP
// forbids it).
"use strict";
(function () {
  const form = document.getElementById("cron-form");
  if (!form) return;
  const preview = document.getElementById("cron-preview");
  const problem = document.getElementById("cron-problem");
  let timer = null;
  async function update() {
    const q = new URLSearchParams();
    for (const k of ["kind", "expr", "every", "at", "tz"]) {
      const v = new FormData(form).get(k);
      if (v) q.set(k, v);
    }
    const r = await fetch("/cron/preview?" + q, { headers: { Accept: "application/json" } });
    if (!r.ok) return;
    const d = await r.json();
    preview.textContent = d.preview || "";
    problem.textContent = d.error || "";
  }
  form.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(update, 250); });
  form.addEventListener("change", update);
})();
