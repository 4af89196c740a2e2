/* The hosted pages' only script, served from the sandbox itself (the pages' CSP allows
   no inline script). Submit once: a second click while the first submit is on its way
   does nothing. A page that carries the signed 3-D Secure answer posts it back at once.
   The installment picker spells out the chosen plan under it (a narrow select cuts it). */
document.querySelectorAll("form[data-once]").forEach(function (form) {
  form.addEventListener("submit", function (event) {
    if (form.dataset.sent) { event.preventDefault(); return; }
    form.dataset.sent = "1";
    form.querySelectorAll("button[type=submit]").forEach(function (b) { b.setAttribute("aria-disabled", "true"); });
  });
});
var err = document.getElementById("form-error"); if (err) { err.focus(); }
var pares = document.getElementById("pares-return"); if (pares) { pares.submit(); }
var picker = document.getElementById("installments");
var plan = document.getElementById("installments-plan");
if (picker && plan) {
  picker.addEventListener("change", function () {
    plan.textContent = picker.options[picker.selectedIndex].dataset.plan;
  });
}
