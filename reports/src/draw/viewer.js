// Zoom and pan for an fgvt drawing opened on its own in a browser: the wheel (or + and -)
// zooms around the pointer, dragging pans, a double click (or 0) fits the whole drawing
// again. The drawing itself already fits the window (viewBox, width and height 100%): this
// only moves the viewBox. Embedded in a page as an image, scripts do not run and the drawing
// simply fits its box.
(function () {
  var svg = document.documentElement;
  if (!svg || svg.localName !== 'svg' || !svg.viewBox || !svg.viewBox.baseVal) {
    return;
  }
  var home = svg.viewBox.baseVal;
  var fit = { x: home.x, y: home.y, w: home.width, h: home.height };
  // A strip below the drawing for the hint, so that it never covers a node.
  var strip = 22;
  if (window.innerHeight > 2 * strip) {
    fit.h = fit.h * window.innerHeight / (window.innerHeight - strip);
  }
  var box = { x: fit.x, y: fit.y, w: fit.w, h: fit.h };
  var ns = 'http://www.w3.org/2000/svg';
  var hint = document.createElementNS(ns, 'text');
  hint.setAttribute('class', 'fgvt-hint');
  hint.setAttribute('fill', '#555555');
  hint.setAttribute('font-family', 'Helvetica, Arial, sans-serif');
  hint.textContent = 'scroll or +/- to zoom, drag to pan, double-click or 0 to fit';
  svg.appendChild(hint);
  function apply() {
    svg.setAttribute('viewBox', box.x + ' ' + box.y + ' ' + box.w + ' ' + box.h);
    // The hint stays in the window's bottom-left corner, at one size on screen.
    var ctm = svg.getScreenCTM();
    var unit = ctm && ctm.a ? 1 / ctm.a : 1;
    var corner = toUser(4, window.innerHeight - 6);
    hint.setAttribute('x', corner.x);
    hint.setAttribute('y', corner.y);
    hint.setAttribute('font-size', 11 * unit);
  }
  function toUser(clientX, clientY) {
    var ctm = svg.getScreenCTM();
    var p = svg.createSVGPoint();
    p.x = clientX;
    p.y = clientY;
    return ctm ? p.matrixTransform(ctm.inverse()) : p;
  }
  function zoom(factor, at) {
    box.x = at.x - (at.x - box.x) * factor;
    box.y = at.y - (at.y - box.y) * factor;
    box.w *= factor;
    box.h *= factor;
    apply();
  }
  function reset() {
    box = { x: fit.x, y: fit.y, w: fit.w, h: fit.h };
    apply();
  }
  svg.addEventListener('wheel', function (e) {
    e.preventDefault();
    zoom(e.deltaY > 0 ? 1.2 : 1 / 1.2, toUser(e.clientX, e.clientY));
  }, { passive: false });
  var drag = null;
  svg.addEventListener('mousedown', function (e) {
    drag = { x: e.clientX, y: e.clientY, box: { x: box.x, y: box.y } };
    svg.style.cursor = 'grabbing';
  });
  window.addEventListener('mousemove', function (e) {
    if (!drag) {
      return;
    }
    var ctm = svg.getScreenCTM();
    var unit = ctm && ctm.a ? 1 / ctm.a : 1;
    box.x = drag.box.x - (e.clientX - drag.x) * unit;
    box.y = drag.box.y - (e.clientY - drag.y) * unit;
    apply();
  });
  window.addEventListener('mouseup', function () {
    drag = null;
    svg.style.cursor = '';
  });
  svg.addEventListener('dblclick', reset);
  window.addEventListener('keydown', function (e) {
    var middle = toUser(window.innerWidth / 2, window.innerHeight / 2);
    if (e.key === '+' || e.key === '=') {
      zoom(1 / 1.2, middle);
    } else if (e.key === '-') {
      zoom(1.2, middle);
    } else if (e.key === '0') {
      reset();
    }
  });
  window.addEventListener('resize', apply);
  apply();
})();
