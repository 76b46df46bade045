/* precall report: the interactive curves (hand-written, no dependency; data from #pc-data).
   Zoom (wheel, buttons), pan (drag), reset (double-click), log-scale FPR, hover readout,
   a threshold control moving one marker on both curves, show/hide per curve. */
(function () {
  "use strict";
  var node = document.getElementById("pc-data");
  var app = document.getElementById("pc-app");
  if (!node || !app) { return; }
  var D = JSON.parse(node.textContent);
  var NS = "http://www.w3.org/2000/svg";
  var W = 440, H = 440, L = 56, R = 14, T = 14, B = 46;
  var PW = W - L - R, PH = H - T - B;
  var series = D.series;
  var hidden = series.map(function () { return false; });

  function el(tag, attrs, parent, ns) {
    var e = ns === false ? document.createElement(tag) : document.createElementNS(NS, tag);
    for (var k in attrs) { if (Object.prototype.hasOwnProperty.call(attrs, k)) { e.setAttribute(k, attrs[k]); } }
    if (parent) { parent.appendChild(e); }
    return e;
  }
  function rate(v) { return isFinite(v) ? v.toFixed(4) : "undefined"; }
  function count(v) { return Number.isInteger(v) ? String(v) : v.toPrecision(6); }

  // the numbers of row i of series s: the threshold table's row
  function row(s, i) {
    var tp = s.tp[i], fp = s.fp[i], fn = s.P - tp, tn = s.N - fp;
    var precision = tp + fp > 0 ? tp / (tp + fp) : 0;
    var recall = s.P > 0 ? tp / s.P : NaN, fpr = s.N > 0 ? fp / s.N : NaN;
    var f1 = precision + recall > 0 ? 2 * precision * recall / (precision + recall) : 0;
    return { threshold: s.t[i], tp: tp, fp: fp, fn: fn, tn: tn, precision: precision, recall: recall,
             fpr: fpr, f1: f1 };
  }
  function xy(chart, s, i) {
    var r = row(s, i);
    return chart.kind === "pr" ? [r.recall, r.precision] : [r.fpr, r.recall];
  }

  var minFpr = 1;
  series.forEach(function (s) {
    if (s.curve) { return; }
    for (var i = 0; i < s.fp.length; i++) { if (s.fp[i] > 0 && s.N > 0) { minFpr = Math.min(minFpr, s.fp[i] / s.N); } }
  });
  var logFloor = Math.max(Math.min(minFpr / 2, 0.1), 1e-7);

  function Chart(kind, svg) {
    this.kind = kind; this.svg = svg; this.log = false; this.reset();
  }
  Chart.prototype.reset = function () {
    this.view = this.log ? [Math.log10(logFloor), 0.02, -0.01, 1.01] : [-0.01, 1.01, -0.01, 1.01];
  };
  Chart.prototype.fx = function (x) {
    var v = this.view, u = this.log ? Math.log10(Math.max(x, logFloor)) : x;
    return L + (u - v[0]) / (v[1] - v[0]) * PW;
  };
  Chart.prototype.fy = function (y) { var v = this.view; return T + (1 - (y - v[2]) / (v[3] - v[2])) * PH; };
  Chart.prototype.inv = function (px, py) {
    var v = this.view;
    return [v[0] + (px - L) / PW * (v[1] - v[0]), v[2] + (1 - (py - T) / PH) * (v[3] - v[2])];
  };
  Chart.prototype.zoom = function (f, cx, cy) {
    var v = this.view;
    if (cx === undefined) { cx = (v[0] + v[1]) / 2; cy = (v[2] + v[3]) / 2; }
    this.view = [cx + (v[0] - cx) * f, cx + (v[1] - cx) * f, cy + (v[2] - cy) * f, cy + (v[3] - cy) * f];
    draw();
  };

  function ticks(lo, hi, log) {
    var out = [];
    if (log) {
      for (var e = Math.ceil(lo); e <= Math.floor(hi) + 1e-9; e++) { out.push([e, e === 0 ? "1" : "1e" + e]); }
      return out;
    }
    var step = Math.pow(10, Math.floor(Math.log10((hi - lo) / 5)));
    if ((hi - lo) / step > 10) { step *= 2; }
    if ((hi - lo) / step > 10) { step *= 2.5; }
    var digits = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
    for (var t = Math.ceil(lo / step) * step; t <= hi + 1e-12; t += step) { out.push([t, t.toFixed(digits)]); }
    return out;
  }

  function path(chart, s) {
    var d = [], i, p;
    if (s.curve) {  // drawn only (the macro-average): points given
      var c = s.curve[chart.kind];
      for (i = 0; i < c[0].length; i++) {
        if (chart.kind === "pr" && i > 0) { d.push("H" + chart.fx(c[0][i]).toFixed(2) + "V" + chart.fy(c[1][i]).toFixed(2)); }
        else { d.push((i ? "L" : "M") + chart.fx(c[0][i]).toFixed(2) + "," + chart.fy(c[1][i]).toFixed(2)); }
      }
      return d.join("");
    }
    if (chart.kind === "pr") {  // step AP's curve: (R_{i-1}, R_i] at P_i, from (0, 1)
      d.push("M" + chart.fx(0).toFixed(2) + "," + chart.fy(1).toFixed(2));
      for (i = 0; i < s.tp.length; i++) {
        p = xy(chart, s, i);
        d.push("V" + chart.fy(p[1]).toFixed(2) + "H" + chart.fx(p[0]).toFixed(2));
      }
    } else {
      d.push("M" + chart.fx(0).toFixed(2) + "," + chart.fy(0).toFixed(2));
      for (i = 0; i < s.tp.length; i++) {
        p = xy(chart, s, i);
        d.push("L" + chart.fx(p[0]).toFixed(2) + "," + chart.fy(p[1]).toFixed(2));
      }
    }
    return d.join("");
  }

  function bandPath(chart, b) {
    var up = [], down = [];
    for (var i = 0; i < b.x.length; i++) {
      up.push(chart.fx(b.x[i]).toFixed(2) + "," + chart.fy(b.high[i]).toFixed(2));
      down.unshift(chart.fx(b.x[i]).toFixed(2) + "," + chart.fy(b.low[i]).toFixed(2));
    }
    return up.length ? "M" + up.join("L") + "L" + down.join("L") + "Z" : "";
  }

  var charts = [];
  ["pr", "roc"].forEach(function (kind) {
    var svg = document.getElementById("pc-" + kind);
    var chart = new Chart(kind, svg);
    chart.layer = el("g", {}, svg);
    charts.push(chart);
  });

  var sel = document.getElementById("pc-series"), slider = document.getElementById("pc-slider");
  var readout = document.getElementById("pc-readout"), tip = document.getElementById("pc-tip");

  function draw() {
    charts.forEach(function (chart) {
      var g = chart.layer, v = chart.view;
      while (g.firstChild) { g.removeChild(g.firstChild); }
      el("rect", { x: L, y: T, width: PW, height: PH, fill: "white", stroke: "#999" }, g);
      var clipId = "pc-clip-" + chart.kind;
      var clip = el("clipPath", { id: clipId }, el("defs", {}, g));
      el("rect", { x: L, y: T, width: PW, height: PH }, clip);
      var xt = el("g", { "class": "pc-xticks" }, g), yt = el("g", { "class": "pc-yticks" }, g);
      ticks(v[0], v[1], chart.log).forEach(function (t) {
        var x = L + (t[0] - v[0]) / (v[1] - v[0]) * PW;
        el("line", { x1: x, x2: x, y1: T, y2: T + PH, stroke: "#eee" }, g);
        el("text", { x: x, y: T + PH + 16, "text-anchor": "middle" }, xt).textContent = t[1];
      });
      ticks(v[2], v[3], false).forEach(function (t) {
        var y = chart.fy(t[0]);
        el("line", { x1: L, x2: L + PW, y1: y, y2: y, stroke: "#eee" }, g);
        el("text", { x: L - 6, y: y + 4, "text-anchor": "end" }, yt).textContent = t[1];
      });
      el("text", { x: L + PW / 2, y: H - 8, "text-anchor": "middle", "class": "pc-label" }, g).textContent =
        chart.kind === "pr" ? "Recall" : (chart.log ? "False Positive Rate (log scale)" : "False Positive Rate");
      el("text", { x: 14, y: T + PH / 2, "text-anchor": "middle", transform: "rotate(-90 14 " + (T + PH / 2) + ")",
                   "class": "pc-label" }, g).textContent = chart.kind === "pr" ? "Precision" : "True Positive Rate";
      var data = el("g", { "clip-path": "url(#" + clipId + ")" }, g);
      if (chart.kind === "roc") {
        var n = 64, d = [];
        for (var k = 0; k <= n; k++) {
          var f = chart.log ? Math.pow(10, Math.log10(logFloor) * (1 - k / n)) : k / n;
          d.push((k ? "L" : "M") + chart.fx(f).toFixed(2) + "," + chart.fy(f).toFixed(2));
        }
        el("path", { d: d.join(""), stroke: "#999", "stroke-dasharray": "4 3", fill: "none" }, data);
      } else if (D.baseline !== null) {
        el("line", { x1: L, x2: L + PW, y1: chart.fy(D.baseline), y2: chart.fy(D.baseline), stroke: "#999",
                     "stroke-dasharray": "1 3" }, data);
      }
      series.forEach(function (s, i) {
        if (hidden[i]) { return; }
        if (s.band && s.band[chart.kind]) {
          el("path", { d: bandPath(chart, s.band[chart.kind]), fill: s.color, "fill-opacity": 0.12, stroke: "none" }, data);
        }
        el("path", { d: path(chart, s), stroke: s.color, "stroke-width": s.width || 1.8, fill: "none",
                     "stroke-dasharray": s.dash || "", "class": "pc-curve", "data-series": i }, data);
      });
      var s = series[+sel.value], m = +slider.value;
      if (!hidden[+sel.value]) {
        var p = xy(chart, s, m);
        el("circle", { id: "pc-mark-" + chart.kind, cx: chart.fx(p[0]), cy: chart.fy(p[1]), r: 6, fill: "white",
                       stroke: s.color, "stroke-width": 2.5 }, data);
      }
      chart.focus = el("circle", { r: 4, fill: "black", visibility: "hidden" }, data);
    });
  }

  function showReadout() {
    var s = series[+sel.value], r = row(s, +slider.value);
    var cells = readout.querySelectorAll("[data-k]");
    for (var i = 0; i < cells.length; i++) {
      var k = cells[i].getAttribute("data-k");
      cells[i].textContent = k === "name" ? s.name : k === "threshold" ? r.threshold
        : (k === "tp" || k === "fp" || k === "fn" || k === "tn") ? count(r[k]) : rate(r[k]);
    }
  }

  // the series the control drives
  series.forEach(function (s, i) {
    if (s.curve) { return; }
    var o = el("option", { value: i }, sel, false);
    o.textContent = s.name;
    if (s.full) { o.title = s.full; }
  });
  function setSeries() {
    var s = series[+sel.value];
    slider.max = s.tp.length - 1;
    slider.value = s.start;
    draw(); showReadout();
  }
  sel.addEventListener("change", setSeries);
  slider.addEventListener("input", function () { draw(); showReadout(); });

  // legend: show / hide each curve
  var legend = document.getElementById("pc-legend");
  series.forEach(function (s, i) {
    var b = el("button", { type: "button", "aria-pressed": "true", "data-i": i }, legend, false);
    var sw = el("span", { "class": "pc-swatch" }, b, false);
    sw.style.background = s.color;
    b.appendChild(document.createTextNode(s.label));
    if (s.full) { b.title = s.full; }
    b.addEventListener("click", function () {
      hidden[i] = !hidden[i];
      b.setAttribute("aria-pressed", hidden[i] ? "false" : "true");
      draw();
    });
  });

  // zoom, pan, reset, log FPR, hover
  function local(svg, ev) {
    var box = svg.getBoundingClientRect();
    return [(ev.clientX - box.left) / box.width * W, (ev.clientY - box.top) / box.height * H];
  }
  charts.forEach(function (chart) {
    var svg = chart.svg, drag = null;
    svg.addEventListener("wheel", function (ev) {
      ev.preventDefault();
      var p = local(svg, ev), c = chart.inv(p[0], p[1]);
      chart.zoom(ev.deltaY < 0 ? 0.8 : 1.25, c[0], c[1]);
    }, { passive: false });
    svg.addEventListener("mousedown", function (ev) { drag = [local(svg, ev), chart.view.slice()]; });
    window.addEventListener("mouseup", function () { drag = null; });
    svg.addEventListener("dblclick", function () { chart.reset(); draw(); });
    svg.addEventListener("mouseleave", function () { tip.hidden = true; chart.focus.setAttribute("visibility", "hidden"); });
    svg.addEventListener("mousemove", function (ev) {
      var p = local(svg, ev);
      if (drag) {
        var v = drag[1], dx = (p[0] - drag[0][0]) / PW * (v[1] - v[0]), dy = (p[1] - drag[0][1]) / PH * (v[3] - v[2]);
        if (Math.abs(p[0] - drag[0][0]) + Math.abs(p[1] - drag[0][1]) > 2) {
          chart.view = [v[0] - dx, v[1] - dx, v[2] + dy, v[3] + dy]; draw();
        }
        return;
      }
      var best = null, bd = 15 * 15;
      series.forEach(function (s, i) {
        if (hidden[i] || s.curve) { return; }
        for (var j = 0; j < s.tp.length; j++) {
          var q = xy(chart, s, j), ddx = chart.fx(q[0]) - p[0], ddy = chart.fy(q[1]) - p[1], d2 = ddx * ddx + ddy * ddy;
          if (d2 < bd) { bd = d2; best = [s, j, q]; }
        }
      });
      if (!best) { tip.hidden = true; chart.focus.setAttribute("visibility", "hidden"); return; }
      var r = row(best[0], best[1]);
      chart.focus.setAttribute("cx", chart.fx(best[2][0])); chart.focus.setAttribute("cy", chart.fy(best[2][1]));
      chart.focus.setAttribute("visibility", "visible");
      tip.textContent = "";
      [["", best[0].name], ["score \u2265 ", r.threshold], ["precision ", rate(r.precision)], ["recall ", rate(r.recall)],
       ["FPR ", rate(r.fpr)], ["F1 ", rate(r.f1)],
       ["", "TP " + count(r.tp) + "  FP " + count(r.fp) + "  FN " + count(r.fn) + "  TN " + count(r.tn)]
      ].forEach(function (line) { el("div", {}, tip, false).textContent = line[0] + line[1]; });
      tip.hidden = false;
      var box = app.getBoundingClientRect();
      tip.style.left = (ev.clientX - box.left + 14) + "px";
      tip.style.top = (ev.clientY - box.top + 14) + "px";
    });
  });
  var buttons = app.querySelectorAll("[data-zoom]");
  for (var b = 0; b < buttons.length; b++) {
    buttons[b].addEventListener("click", function () {
      var chart = charts[this.getAttribute("data-chart") === "pr" ? 0 : 1], z = this.getAttribute("data-zoom");
      if (z === "reset") { chart.reset(); draw(); } else { chart.zoom(z === "in" ? 0.5 : 2); }
    });
  }
  var logBox = document.getElementById("pc-logfpr");
  logBox.addEventListener("change", function () { charts[1].log = logBox.checked; charts[1].reset(); draw(); });

  // what tests and readers can ask: data to pixel
  window.precallReport = {
    toPixel: function (kind, x, y) {
      var chart = charts[kind === "pr" ? 0 : 1], box = chart.svg.getBoundingClientRect();
      return [box.left + chart.fx(x) / W * box.width, box.top + chart.fy(y) / H * box.height];
    },
    toData: function (kind, px, py) { return charts[kind === "pr" ? 0 : 1].inv(px, py); },
    view: function (kind) { return charts[kind === "pr" ? 0 : 1].view.slice(); },
    logFloor: logFloor
  };
  document.documentElement.className += " pc-js";
  app.hidden = false;
  setSeries();
})();
