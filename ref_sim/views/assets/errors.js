window.addEventListener("error", function (event) {
  var box = document.getElementById("errors");
  if (!box) return;
  box.hidden = false;
  box.textContent += "Script error: " + event.message + " (line " + event.lineno + ")\n";
});
