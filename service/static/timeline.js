// The run as a timeline: one bar per researcher (researcher_started → finished/failed, or now if it
// is still going), a dashed line where each evaluation round starts, seconds on the x axis.
"use strict";
(function () {
  var NS = "http://www.w3.org/2000/svg";
  function el(name, attrs, text) {
    var node = document.createElementNS(NS, name);
    for (var k in attrs) node.setAttribute(k, attrs[k]);
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function model(events, now) {
    var t0 = events.length ? events[0].ts : now, bars = {}, order = [], rounds = [], end = t0, round = 1;
    events.forEach(function (e) {
      var p = e.payload || {};
      end = Math.max(end, e.ts);
      if (e.type === "round_started") { round = p.round || round + 1; rounds.push({ ts: e.ts, round: round }); }
      if (e.type === "researcher_started") {
        var key = p.subtask + "#" + order.length;
        bars[key] = { subtask: p.subtask, question: p.question || p.subtask, start: e.ts, end: null, state: "running", round: round };
        order.push(key);
      }
      if (e.type === "researcher_finished" || e.type === "researcher_failed") {
        for (var i = order.length - 1; i >= 0; i--) {
          var b = bars[order[i]];
          if (b.subtask === p.subtask && b.end === null) { b.end = e.ts; b.state = e.type === "researcher_finished" ? "finished" : "failed"; break; }
        }
      }
    });
    var finished = events.some(function (e) { return e.type === "run_finished"; });
    var stop = finished ? end : Math.max(end, now);
    return { t0: t0, t1: Math.max(stop, t0 + 0.001), bars: order.map(function (k) { return bars[k]; }), rounds: rounds };
  }
  function draw(container, events, now) {
    var m = model(events, now), rowH = 22, left = 8, width = 900, top = 20;
    var height = top + Math.max(1, m.bars.length) * rowH + 24;
    var scale = (width - left - 10) / (m.t1 - m.t0);
    var svg = el("svg", { viewBox: "0 0 " + width + " " + height, role: "img", "aria-label": "run timeline" });
    m.bars.forEach(function (b, i) {
      var x = left + (b.start - m.t0) * scale, w = Math.max(2, ((b.end === null ? m.t1 : b.end) - b.start) * scale);
      var y = top + i * rowH;
      var rect = el("rect", { class: "bar " + b.state, x: x.toFixed(1), y: y, width: w.toFixed(1), height: rowH - 6, rx: 3, "data-subtask": b.subtask, "data-round": b.round });
      rect.appendChild(el("title", {}, b.question + " (" + b.state + ", round " + b.round + ")"));
      svg.appendChild(rect);
      svg.appendChild(el("text", { x: (x + 4).toFixed(1), y: y + rowH - 11 }, b.question.slice(0, 80)));
    });
    m.rounds.forEach(function (r) {
      var x = (left + (r.ts - m.t0) * scale).toFixed(1);
      svg.appendChild(el("line", { class: "round", x1: x, x2: x, y1: 4, y2: height - 20 }));
      svg.appendChild(el("text", { x: (+x + 3).toFixed(1), y: 14 }, "round " + r.round));
    });
    svg.appendChild(el("text", { x: left, y: height - 6 }, "0 s"));
    svg.appendChild(el("text", { x: width - 60, y: height - 6 }, (m.t1 - m.t0).toFixed(1) + " s"));
    container.replaceChildren(svg);
  }
  window.drawTimeline = draw;
  window.timelineModel = model;
})();
