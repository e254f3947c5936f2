// A script failure shows at the top of the page (id "script-error"), so that it is never silent.
window.onerror = function (message, source, line) {
  var note = document.createElement('p');
  note.id = 'script-error';
  note.textContent = 'script error: ' + message + ' (line ' + line + ')';
  (document.body || document.documentElement).prepend(note);
};
