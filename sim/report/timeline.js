// timeline.html's script (sim/report/timeline.rs): draws, for the part of the run in view,
// the time axis at round times, every mark that must keep its shape, and the heartbeats and
// polls: one by one with their trace row on hover when at most MARKS_MAX are in view, as
// density bands otherwise. Drawn again on zoom, scroll and resize; nothing is fetched.
(function () {
  var D = JSON.parse(document.getElementById('data').textContent);
  var NS = 'http://www.w3.org/2000/svg', MARKS_MAX = 4000, BIN_PX = 4, GAP_BINS = 3, ZOOM_MAX = 4096;
  var scroll = document.getElementById('scroll'), inner = document.getElementById('inner');
  var overlay = document.getElementById('overlay'), z = 1;
  // Round steps for the axis: seconds to a day.
  var STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400].map(function (s) { return s * 1000; });
  // Each lane's marks: "dt,dseq,kind,…" in base 36, differences from the previous mark.
  D.lanes.forEach(function (l) {
    var t = 0, s = 0, d = l.d ? l.d.split(',') : []; l.t = []; l.s = []; l.kk = [];
    for (var i = 0; i + 2 < d.length; i += 3) { t += parseInt(d[i], 36); s += parseInt(d[i + 1], 36); l.t.push(t); l.s.push(s); l.kk.push(parseInt(d[i + 2], 36)); }
  });
  function lower(a, v) { var lo = 0, hi = a.length; while (lo < hi) { var m = (lo + hi) >> 1; if (a[m] < v) lo = m + 1; else hi = m; } return lo; }
  function el(tag, attrs, title) {
    var e = document.createElementNS(NS, tag);
    for (var a in attrs) e.setAttribute(a, attrs[a]);
    if (title) { var ti = document.createElementNS(NS, 'title'); ti.textContent = title; e.appendChild(ti); }
    return e;
  }
  // 3900000 -> "1 h 5 min"; 0 -> "0".
  function label(t) {
    var h = Math.floor(t / 3600000), m = Math.floor(t / 60000) % 60, s = Math.floor(t / 1000) % 60, ms = t % 1000, p = [];
    if (h) p.push(h + ' h'); if (m) p.push(m + ' min'); if (s) p.push(s + ' s'); if (ms) p.push(ms + ' ms');
    return p.length ? p.join(' ') : '0';
  }
  function mark(kind, x, y, title) {
    var shape;
    if (kind === 'heartbeat') shape = el('rect', { x: x - 0.75, y: y + 12, width: 1.5, height: 8, fill: '#e84393' }, title);
    else if (kind === 'poll') shape = el('circle', { cx: x, cy: y + 19, r: 1.5, fill: '#74b9ff' }, title);
    else if (kind === 'message') shape = el('path', { d: 'M' + x + ' ' + (y + 1) + ' l4 6 l-8 0 z', fill: '#2c3e50' }, title);
    else if (kind === 'crash') shape = el('path', { d: 'M' + (x - 4) + ' ' + (y + 6) + ' l8 8 m0 -8 l-8 8', stroke: '#c0392b', 'stroke-width': 2 }, title);
    else if (kind === 'conductor-message') shape = el('circle', { cx: x, cy: y + 11, r: 3.5, fill: '#fff', stroke: '#2c3e50' }, title);
    else shape = el('circle', { cx: x, cy: y + 11, r: 7, fill: 'none', stroke: '#d0021b', 'stroke-width': 2.5 }, title);
    var g = el('g', { 'class': 'mark ' + kind });
    if (kind === 'violating-write') g.setAttribute('id', 'violating-write');
    g.appendChild(shape);
    return g;
  }
  function render() {
    var W = inner.clientWidth, H = D.h;
    overlay.setAttribute('width', W);
    var px = function (t) { return (t - D.t0) / D.span * W; };
    var a = scroll.scrollLeft - 20, b = scroll.scrollLeft + scroll.clientWidth + 20;
    var ta = D.t0 + a / W * D.span, tb = D.t0 + b / W * D.span;
    var out = document.createDocumentFragment();
    var step = STEPS[STEPS.length - 1];
    for (var i = 0; i < STEPS.length; i++) if (STEPS[i] / D.span * W >= 90) { step = STEPS[i]; break; }
    for (var t = Math.ceil(Math.max(ta, D.t0) / step) * step; t <= Math.min(tb, D.t0 + D.span); t += step) {
      var x = px(t);
      out.appendChild(el('line', { x1: x, x2: x, y1: 30, y2: H - 30, stroke: '#ddd', 'class': 'tick-line' }));
      var text = el('text', { x: x, y: 24, 'text-anchor': 'middle', 'class': 'tick', 'data-t': t });
      text.textContent = label(t);
      out.appendChild(text);
    }
    var n = 0;
    D.lanes.forEach(function (l) { n += lower(l.t, tb) - lower(l.t, ta); });
    var detail = n <= MARKS_MAX;
    D.lanes.forEach(function (l) {
      var i0 = lower(l.t, ta), i1 = lower(l.t, tb);
      if (detail) {
        for (var i = i0; i < i1; i++) {
          var k = l.k[l.kk[i]];
          out.appendChild(mark(k[0], px(l.t[i]), l.y, '#' + l.s[i] + ' t=' + l.t[i] + ' ms ' + k[1]));
        }
        return;
      }
      ['poll', 'heartbeat'].forEach(function (kind) {
        var bins = {};
        for (var i = i0; i < i1; i++) if (l.k[l.kk[i]][0] === kind) { var bin = Math.floor(px(l.t[i]) / BIN_PX); bins[bin] = (bins[bin] || 0) + 1; }
        var keys = Object.keys(bins).map(Number).sort(function (p, q) { return p - q; });
        // A band runs over bins with marks, across gaps of up to GAP_BINS empty ones.
        for (var j = 0; j < keys.length;) {
          var first = keys[j], last = first, count = bins[first];
          for (j++; j < keys.length && keys[j] - last <= GAP_BINS + 1; j++) { last = keys[j]; count += bins[last]; }
          var from = D.t0 + first * BIN_PX / W * D.span, to = D.t0 + (last + 1) * BIN_PX / W * D.span;
          var y = kind === 'poll' ? l.y + 16 : l.y + 12, hgt = kind === 'poll' ? 6 : 8;
          out.appendChild(el('rect', { 'class': 'band ' + kind, x: first * BIN_PX, y: y, width: (last - first + 1) * BIN_PX, height: hgt, fill: kind === 'poll' ? '#74b9ff' : '#e84393', 'fill-opacity': kind === 'poll' ? 0.5 : 0.35 },
            count + ' ' + kind + (count === 1 ? '' : 's') + ' from t=' + Math.round(from) + ' to t=' + Math.round(to) + ' ms: zoom in to see each with its trace row'));
        }
      });
    });
    D.sparse.forEach(function (m) { if (m[0] >= ta && m[0] <= tb) out.appendChild(mark(m[2], px(m[0]), m[1], m[3])); });
    // The first violation stays in sight: out of view, an arrow at the edge points at it.
    if (D.v !== null && (D.v < ta + 20 / W * D.span || D.v > tb - 20 / W * D.span)) {
      var left = D.v < ta + 20 / W * D.span, edge = left ? scroll.scrollLeft + 4 : scroll.scrollLeft + scroll.clientWidth - 4;
      var arrow = el('text', { id: 'violation-pointer', x: edge, y: 12, 'text-anchor': left ? 'start' : 'end', fill: '#d0021b', 'font-weight': 'bold', 'class': 'mark' }, 'go to the first violation');
      arrow.textContent = (left ? '◀ ' : '') + 'first violation at ' + label(D.v) + (left ? '' : ' ▶');
      arrow.style.cursor = 'pointer';
      arrow.addEventListener('click', toViolation);
      out.appendChild(arrow);
    }
    while (overlay.firstChild) overlay.removeChild(overlay.firstChild);
    overlay.appendChild(out);
    document.body.setAttribute('data-detail', detail ? 'marks' : 'bands');
    var shown = document.getElementById('in-view');
    document.body.setAttribute('data-view-ms', Math.round(Math.max(ta + 20 / W * D.span, D.t0)) + '..' + Math.round(Math.min(tb - 20 / W * D.span, D.t0 + D.span)));
    var sec = function (t) { return label(Math.round(t / 1000) * 1000); };
    if (shown) shown.textContent = 'in view: ' + sec(Math.max(ta + 20 / W * D.span, D.t0)) + ' to ' + sec(Math.min(tb - 20 / W * D.span, D.t0 + D.span)) + ' of ' + sec(D.t0 + D.span);
    document.body.setAttribute('data-overflow-px', Math.max(0, document.documentElement.scrollWidth - document.documentElement.clientWidth));
  }
  // Zooms about the first violation when it is in view, about the view's centre otherwise.
  function zoom(f) {
    var W = inner.clientWidth, at = (scroll.scrollLeft + scroll.clientWidth / 2) / W;
    if (D.v !== null) {
      var v = (D.v - D.t0) / D.span;
      if (v * W >= scroll.scrollLeft && v * W <= scroll.scrollLeft + scroll.clientWidth) at = v;
    }
    var offset = at * W - scroll.scrollLeft;
    z = Math.max(1, Math.min(ZOOM_MAX, z * f));
    inner.style.width = (100 * z) + '%';
    scroll.scrollLeft = at * inner.clientWidth - offset;
    render();
  }
  function toViolation() {
    if (D.v === null) return;
    if (z < 8) zoom(8 / z);
    scroll.scrollLeft = (D.v - D.t0) / D.span * inner.clientWidth - scroll.clientWidth / 2;
    render();
  }
  // Opens on the active window (timeline.rs `active_window`), not on hours of idle polling
  // after it; the whole run when the action fills most of it.
  function toActive() {
    var share = (D.a1 - D.a0) / D.span;
    z = share > 0.8 ? 1 : Math.min(ZOOM_MAX, 1 / share);
    inner.style.width = (100 * z) + '%';
    scroll.scrollLeft = (D.a0 - D.t0) / D.span * inner.clientWidth;
    render();
  }
  function wholeRun() { z = 1; inner.style.width = '100%'; scroll.scrollLeft = 0; render(); }
  document.getElementById('active').onclick = toActive;
  document.getElementById('whole-run').onclick = wholeRun;
  document.getElementById('zoom-in').onclick = function () { zoom(2); };
  document.getElementById('zoom-out').onclick = function () { zoom(0.5); };
  document.getElementById('to-violation').onclick = toViolation;
  var pending = false;
  function later() { if (!pending) { pending = true; requestAnimationFrame(function () { pending = false; render(); }); } }
  scroll.addEventListener('scroll', later);
  window.addEventListener('resize', later);
  toActive();
})();
