// reef Control UI: a form with data-confirm asks before it is sent (remove a cron job, reset
// or delete a session). No inline script (the CSP forbids it).
"use strict";
document.querySelectorAll("form[data-confirm]").forEach((f) => {
  f.addEventListener("submit", (e) => { if (!window.confirm(f.dataset.confirm)) e.preventDefault(); });
});
