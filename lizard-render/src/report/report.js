// Runs once the page is parsed. Counts the series the browser laid out with a non-empty box (body
// attribute data-series-drawn), and moves a time cursor across every chart with the pointer: the charts
// share their time axis, so one instant sits at the same x in each.
(function () {
  'use strict';
  var charts = Array.prototype.slice.call(document.querySelectorAll('svg.chart'));
  var drawn = charts.filter(function (svg) {
    var box = svg.querySelector('.series').getBBox();
    return box.width > 0 || box.height > 0;
  }).length;
  document.body.setAttribute('data-series-drawn', String(drawn));

  var readout = document.getElementById('cursor');
  function show(x, text) {
    charts.forEach(function (svg) {
      var cursor = svg.querySelector('.cursor');
      cursor.setAttribute('x1', x);
      cursor.setAttribute('x2', x);
      cursor.style.visibility = text ? 'visible' : 'hidden';
    });
    readout.textContent = text;
  }
  charts.forEach(function (svg) {
    var d = svg.dataset;
    svg.addEventListener('mousemove', function (event) {
      var at = new DOMPoint(event.clientX, event.clientY).matrixTransform(svg.getScreenCTM().inverse());
      var left = Number(d.left), right = Number(d.right);
      if (at.x < left || at.x > right) { show(left, ''); return; }
      var t = Number(d.t0) + (at.x - left) / (right - left) * (Number(d.t1) - Number(d.t0));
      show(at.x, 't = ' + t.toFixed(3) + ' ' + d.unit);
    });
    svg.addEventListener('mouseleave', function () { show(Number(d.left), ''); });
  });
})();
