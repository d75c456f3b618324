// The dashboard's only script: copy buttons and confirmation steps. Every page works without it.
document.addEventListener("click", (e) => {
  const copy = e.target.closest("[data-copy]");
  if (copy) {
    const field = document.getElementById(copy.dataset.copy);
    navigator.clipboard.writeText(field.value).then(() => { copy.textContent = "Copied"; });
  }
});
document.addEventListener("submit", (e) => {
  const question = e.target.dataset.confirm;
  if (question && !window.confirm(question)) { e.preventDefault(); }
});
