/* sitegen front end: charts, the index table (sort, filter, pick) and the comparison page.
   No network: everything a page needs is embedded in it or loaded by a <script> tag, so it
   works from file:// too. */
(function () {
  "use strict";
  var dark = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;

  /* Data files are scripts calling sitegen.data(name, value): browsers run <script src> from
     file:// but refuse fetch there. */
  var store = {};
  function data(name, value) { store[name] = value; }

  /* Load the scripts not loaded yet, then call done (once all have loaded or failed). */
  function loadScripts(srcs, done) {
    var pending = srcs.length;
    if (!pending) { done(); return; }
    srcs.forEach(function (src) {
      var s = document.createElement("script");
      s.src = src;
      s.onload = s.onerror = function () { if (--pending === 0) done(); };
      document.head.appendChild(s);
    });
  }

  function readJSON(id) {
    var el = document.getElementById(id);
    return el ? JSON.parse(el.textContent) : null;
  }

  function embed(el, spec) {
    var opts = { actions: false, renderer: "svg" };
    if (dark) opts.theme = "dark";
    return window.vegaEmbed(el, spec, opts).then(function (res) {
      el.setAttribute("data-rendered", "1");
      return res;
    });
  }

  /* A chart's "Vega-Lite spec" link: the spec the page embeds, as a file made on the spot
     (the site carries no second copy of any spec). */
  function specLink(name, spec) {
    var a = document.querySelector('a[data-spec="' + name + '"]');
    if (!a || !window.Blob || !window.URL || !URL.createObjectURL) return;
    if (a.href.indexOf("blob:") === 0) URL.revokeObjectURL(a.href);
    a.href = URL.createObjectURL(new Blob([JSON.stringify(spec, null, 2)], { type: "application/json" }));
  }

  function drawCharts() {
    var specs = readJSON("chart-specs") || {};
    document.querySelectorAll(".chart[data-chart]").forEach(function (el) {
      var name = el.getAttribute("data-chart"), spec = specs[name];
      if (!spec) return;
      specLink(name, spec);
      embed(el, spec).catch(function (err) { el.textContent = "Chart failed: " + err; throw err; });
    });
  }

  /* -- index table ----------------------------------------------------------------------- */
  function cellValue(tr, col) {
    var td = tr.children[col];
    if (!td) return "";
    return td.hasAttribute("data-v") ? td.getAttribute("data-v") : td.textContent.trim();
  }

  function initIndex() {
    var table = document.getElementById("runs-table");
    if (!table) return;
    var heads = table.querySelectorAll("thead th");
    heads.forEach(function (th, col) {
      if (!th.classList.contains("sortable")) return;
      th.tabIndex = 0;
      var sort = function () {
        var asc = th.getAttribute("aria-sort") !== "ascending";
        heads.forEach(function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", asc ? "ascending" : "descending");
        var text = th.getAttribute("data-type") === "text";
        var groups = Array.prototype.slice.call(table.tBodies);
        groups.forEach(function (g) {
          // Jobs sort within their run; runs sort by their own row.
          var jobs = Array.prototype.slice.call(g.querySelectorAll("tr.job-row"));
          jobs.sort(function (a, b) { return compare(cellValue(a, col), cellValue(b, col), text, asc); });
          jobs.forEach(function (r) { g.appendChild(r); });
        });
        groups.sort(function (a, b) {
          return compare(cellValue(a.rows[0], col), cellValue(b.rows[0], col), text, asc);
        });
        groups.forEach(function (g) { table.appendChild(g); });
      };
      th.addEventListener("click", sort);
      th.addEventListener("keydown", function (e) { if (e.key === "Enter") sort(); });
    });
    var filter = document.getElementById("filter");
    var status = document.getElementById("status-filter");
    var count = document.getElementById("row-count");
    var apply = function () {
      var q = filter.value.trim().toLowerCase();
      var s = status.value;
      var shown = 0;
      Array.prototype.forEach.call(table.tBodies, function (g) {
        var ok = (!q || g.getAttribute("data-search").indexOf(q) >= 0) &&
                 (!s || (" " + g.getAttribute("data-statuses") + " ").indexOf(" " + s + " ") >= 0);
        g.hidden = !ok;
        if (ok) shown++;
      });
      count.textContent = shown + " of " + table.tBodies.length + " runs shown";
    };
    filter.addEventListener("input", apply);
    status.addEventListener("change", apply);
    apply();
    var btn = document.getElementById("compare-btn");
    var picks = table.querySelectorAll("input.pick");
    var update = function () {
      var n = table.querySelectorAll("input.pick:checked").length;
      btn.disabled = n === 0;
      btn.textContent = n ? "Compare " + n + " selected" : "Compare selected";
    };
    picks.forEach(function (p) { p.addEventListener("change", update); });
    btn.addEventListener("click", function () {
      var runs = [], jobs = [];
      table.querySelectorAll("input.pick:checked").forEach(function (p) {
        (p.getAttribute("data-kind") === "run" ? runs : jobs).push(p.getAttribute("data-id"));
      });
      window.location.href = "compare/index.html?" + selectionQuery(runs, jobs);
    });
    update();
  }

  function compare(a, b, text, asc) {
    var r;
    if (text) r = a.localeCompare(b);
    else {
      var x = a === "" ? NaN : parseFloat(a), y = b === "" ? NaN : parseFloat(b);
      if (isNaN(x) && isNaN(y)) r = 0; else if (isNaN(x)) return 1; else if (isNaN(y)) return -1; else r = x - y;
    }
    return asc ? r : -r;
  }

  function selectionQuery(runs, jobs) {
    var parts = [];
    if (runs.length) parts.push("runs=" + runs.map(encodeURIComponent).join(","));
    if (jobs.length) parts.push("jobs=" + jobs.map(encodeURIComponent).join(","));
    return parts.join("&");
  }

  /* -- comparison page ------------------------------------------------------------------- */
  function fmt(v, d) {
    if (v === null || v === undefined || (typeof v === "number" && !isFinite(v))) return "–";
    return Number(v).toLocaleString("en-US", { minimumFractionDigits: d, maximumFractionDigits: d });
  }
  function pct(v) { return v === null || v === undefined ? "–" : (100 * v).toFixed(1) + "%"; }

  function comparePage() {
    var items = store["compare-items"] || [];
    var base = readJSON("overlay-spec");
    // The series colours come with the chart spec (sitegen/present/charts.py is their one source).
    var PALETTE = base.encoding.color.scale.range;
    var key = function (it) { return it.kind + ":" + it.id; };
    var byKey = {};
    items.forEach(function (it) { byKey[key(it)] = it; });
    var params = new URLSearchParams(window.location.search);
    var metricSelect = document.getElementById("metric-select");
    if (params.get("metric")) metricSelect.value = params.get("metric");
    if (!metricSelect.value) metricSelect.value = "reward";
    metricSelect.addEventListener("change", function () { render(); });
    var selected = [];
    ["runs", "jobs"].forEach(function (p) {
      (params.get(p) || "").split(",").filter(Boolean).forEach(function (id) {
        var k = (p === "runs" ? "run:" : "job:") + id;
        if (byKey[k] && selected.indexOf(k) < 0) selected.push(k);
      });
    });
    var picker = document.getElementById("picker");
    items.forEach(function (it) {
      var label = document.createElement("label");
      label.className = it.kind;
      var cb = document.createElement("input");
      cb.type = "checkbox"; cb.value = key(it); cb.className = "pick";
      cb.setAttribute("data-kind", it.kind); cb.setAttribute("data-id", it.id);
      cb.checked = selected.indexOf(key(it)) >= 0;
      cb.addEventListener("change", function () {
        if (cb.checked) selected.push(key(it)); else selected.splice(selected.indexOf(key(it)), 1);
        render();
      });
      label.appendChild(cb);
      label.appendChild(document.createTextNode(" " + it.kind + " " + it.id));
      label.setAttribute("data-search", (it.kind + " " + it.id).toLowerCase());
      picker.appendChild(label);
    });
    document.getElementById("pick-filter").addEventListener("input", function (e) {
      var q = e.target.value.trim().toLowerCase();
      picker.querySelectorAll("label").forEach(function (l) { l.hidden = q && l.getAttribute("data-search").indexOf(q) < 0; });
    });
    document.getElementById("clear-btn").addEventListener("click", function () {
      selected = [];
      picker.querySelectorAll("input").forEach(function (c) { c.checked = false; });
      render();
    });

    function render() {
      var runs = [], jobs = [];
      selected.forEach(function (k) { (byKey[k].kind === "run" ? runs : jobs).push(byKey[k].id); });
      var q = selectionQuery(runs, jobs);
      var metric = metricSelect.value;
      if (metric !== "reward") q += (q ? "&" : "") + "metric=" + encodeURIComponent(metric);
      history.replaceState(null, "", window.location.pathname + (q ? "?" + q : "") + window.location.hash);
      document.getElementById("selection-count").textContent = selected.length + " selected";
      var tbody = document.querySelector("#compare-table tbody");
      tbody.innerHTML = "";
      selected.forEach(function (k, i) {
        var it = byKey[k], h = it.headline;
        var tr = document.createElement("tr");
        var name = document.createElement("td");
        name.className = "l";
        var sw = document.createElement("span");
        sw.className = "swatch"; sw.style.background = PALETTE[i % PALETTE.length];
        var a = document.createElement("a");
        a.href = "../" + it.url + "index.html"; a.textContent = it.kind + " " + it.id;
        name.appendChild(sw); name.appendChild(a);
        tr.appendChild(name);
        var cells = [it.status, h.steps, fmt(h.reward_mean, 4), fmt(h.reward_max, 4), fmt(h.reward_last, 4),
          h.pass_at_k_mean === null ? "–" : fmt(h.pass_at_k_mean, 4) + " @" + h.pass_at_k,
          fmt(h.step_time_mean_s, 1), fmt(h.gen_wait_mean_s, 1), pct(h.gen_wait_share),
          fmt(h.avg_tokens_mean, 1), fmt(h.staleness_mean, 3), pct(it.trial_success_rate), pct(it.trial_error_rate)];
        cells.forEach(function (c, j) {
          var td = document.createElement("td");
          if (j === 0) td.className = "l";
          td.textContent = c;
          tr.appendChild(td);
        });
        tbody.appendChild(tr);
      });
      document.getElementById("empty-note").hidden = selected.length > 0;
      // each picked run's curves live beside its page: load the missing ones, then draw
      // (every load that finishes redraws with the selection as it is then)
      var want = selected.filter(function (k) { return !store["curves:" + k] && !requested[k]; });
      want.forEach(function (k) { requested[k] = true; });
      loadScripts(want.map(function (k) { return "../" + byKey[k].url + "curves.js"; }), overlay);
    }

    var requested = {};
    function overlay() {
      var metric = metricSelect.value;
      var rows = [];
      selected.forEach(function (k) {
        var it = byKey[k], curves = store["curves:" + k] || {};
        (curves[metric] || []).forEach(function (p) {
          if (p[1] !== null) rows.push({ step: p[0], value: p[1], name: it.kind + " " + it.id });
        });
      });
      var spec = JSON.parse(JSON.stringify(base));
      spec.data = { values: rows };
      spec.encoding.y.title = metric + " (smoothed)";
      // Colours follow the selection order, matching the table's swatches.
      var names = selected.map(function (k) { return byKey[k].kind + " " + byKey[k].id; });
      spec.encoding.color.scale = { domain: names, range: names.map(function (_, i) { return PALETTE[i % PALETTE.length]; }) };
      specLink("overlay", spec);
      var el = document.getElementById("overlay-chart");
      el.removeAttribute("data-rendered");
      if (rows.length) embed(el, spec); else el.innerHTML = "";
    }
    render();
  }

  window.sitegen = { data: data, drawCharts: drawCharts, comparePage: comparePage, initIndex: initIndex };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", initIndex);
  else initIndex();
})();
