/* The comparison page's verdicts, computed in the browser for whatever is picked
   (docs/statistics.md): each pick against the first, paired by task, from the per-task
   counts each pick's solved.js publishes. The same generator (mulberry32, seeded alike), the
   same resampling and the same order of sums as sitegen/analyse/stats.py and
   sitegen/insights/paired.py (compare), so every figure is the Python reference's to the bit:
   a browser test holds it to that. Loaded after site.js; fills #compare-verdicts. */
(function () {
  "use strict";
  var SEED = 1, RESAMPLES = 2000, MIN_TASKS = 10;

  /* mulberry32: each call the next 32-bit output (as an unsigned integer). */
  function mulberry32(seed) {
    var a = seed >>> 0;
    return function () {
      a = (a + 0x6D2B79F5) >>> 0;
      var t = Math.imul(a ^ (a >>> 15), a | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return (t ^ (t >>> 14)) >>> 0;
    };
  }

  /* The 2.5th and 97.5th percentiles: the k-th smallest and largest, k = resamples // 40. */
  function interval(values) {
    var s = Float64Array.from(values).sort(), k = Math.floor(s.length / 40);
    return [s[k], s[s.length - 1 - k]];
  }

  /* The paired bootstrap over units: the mean difference's interval, the probability of
     improvement (a tie counts half) and its interval, from the same resamples. */
  function pairedBootstrap(diffs) {
    var n = diffs.length, next = mulberry32(SEED);
    var wins = diffs.map(function (d) { return d > 0 ? 1 : d < 0 ? 0 : 0.5; });
    var means = new Float64Array(RESAMPLES), shares = new Float64Array(RESAMPLES);
    for (var b = 0; b < RESAMPLES; b++) {
      var s = 0, w = 0;
      for (var j = 0; j < n; j++) {
        var i = Math.floor(next() / 4294967296 * n);
        s += diffs[i];
        w += wins[i];
      }
      means[b] = s / n;
      shares[b] = w / n;
    }
    var total = 0;
    wins.forEach(function (x) { total += x; });
    return { diff: interval(means), improvement: total / n, improvementInterval: interval(shares) };
  }

  /* The exact two-sided sign test (ties left out before): stats.sign_test's operations, the
     coefficients summed from 1 and rescaled by 2^-600 as they grow, times 2^-n at the end
     (2^-n alone is 0 beyond 1074 tasks). */
  var SCALE = 600, BIG = Math.pow(2, SCALE), SMALL = Math.pow(2, -SCALE);
  function signTest(wins, losses) {
    var n = wins + losses;
    if (!n) return 1;
    var term = 1, tail = 0, exponent = -n;
    for (var i = 0; i <= Math.min(wins, losses); i++) {
      tail += term;
      term = term * (n - i) / (i + 1);
      if (term > BIG) { term *= SMALL; tail *= SMALL; exponent += SCALE; }
    }
    while (exponent < -SCALE) { tail *= SMALL; exponent += SCALE; }
    return Math.min(1, 2 * (tail * Math.pow(2, exponent)));
  }

  function mean(values) {
    var total = 0;
    values.forEach(function (v) { total += v; });
    return total / values.length;
  }

  /* pick against ref, each {tasks, graded, successes}, on the tasks both graded, in ref's
     order: paired.compare's figures, under its names. */
  function compare(ref, pick) {
    var theirs = new Map();
    pick.tasks.forEach(function (t, i) { theirs.set(t, [pick.graded[i], pick.successes[i]]); });
    var a = [], b = [], onlyPick = 0, onlyRef = 0;
    ref.tasks.forEach(function (t, i) {
      var rg = ref.graded[i], rs = ref.successes[i], p = theirs.get(t) || [0, 0];
      if (rg <= 0 || p[0] <= 0) return;
      a.push(rs / rg);
      b.push(p[1] / p[0]);
      if (p[1] > 0 && rs === 0) onlyPick++;
      if (rs > 0 && p[1] === 0) onlyRef++;
    });
    var out = {
      verdict: "can't tell", tasks: a.length, ref_rate: null, pick_rate: null, diff: null,
      diff_lo: null, diff_hi: null, improvement: null, improvement_lo: null, improvement_hi: null,
      only_pick: onlyPick, only_ref: onlyRef, sign_p: signTest(onlyPick, onlyRef)
    };
    if (!a.length) return out;
    var diffs = b.map(function (y, i) { return y - a[i]; });
    var boot = pairedBootstrap(diffs);
    out.ref_rate = mean(a); out.pick_rate = mean(b); out.diff = mean(diffs);
    out.diff_lo = boot.diff[0]; out.diff_hi = boot.diff[1];
    out.improvement = boot.improvement;
    out.improvement_lo = boot.improvementInterval[0]; out.improvement_hi = boot.improvementInterval[1];
    if (a.length >= MIN_TASKS && out.diff_lo > 0 && out.improvement_lo > 0.5) out.verdict = "better";
    else if (a.length >= MIN_TASKS && out.diff_hi < 0 && out.improvement_hi < 0.5) out.verdict = "worse";
    return out;
  }

  /* A pick's counts in the chosen steps: "final" (its final window) or "whole". */
  function counts(solved, steps) {
    if (steps === "whole") return { tasks: solved.tasks, graded: solved.graded, successes: solved.successes };
    return { tasks: solved.tasks, graded: solved.final.graded, successes: solved.final.successes };
  }

  /* The verdicts table: picks (the comparison page's items, in order), each one's solved.js
     data or undefined (no trials), the steps compared, and site.js's cell and link makers. */
  function renderVerdicts(picks, solved, steps, tools) {
    var body = document.querySelector("#compare-verdicts tbody"), note = document.getElementById("verdict-summary");
    if (!body || !note) return;
    body.innerHTML = "";
    var f = window.sitegen.format;
    if (picks.length < 2) { note.textContent = "Pick two or more to compare each with the first."; return; }
    if (!solved[0]) {
      note.textContent = "The first pick, " + picks[0].kind + " " + picks[0].id + ", has no trials: nothing to compare task by task.";
      return;
    }
    var ref = counts(solved[0], steps);
    var span = steps === "whole" ? "whole runs" : "final fifths of steps (" + windowText(solved[0]) + " for the first pick)";
    note.textContent = "Each pick against " + picks[0].kind + " " + picks[0].id + ", on the tasks both graded in their " + span + ".";
    picks.slice(1).forEach(function (it, i) {
      var tr = document.createElement("tr");
      tools.cell(tr, "", "l").appendChild(tools.pickLink(it));
      if (!solved[i + 1]) {
        tools.cell(tr, "no trials: not compared", "l dim").colSpan = 5;
        body.appendChild(tr);
        return;
      }
      var v = compare(ref, counts(solved[i + 1], steps));
      if (!v.tasks) {  // nothing to weigh: say why, not a "can't tell" over dashes and "0 / 0"
        tools.cell(tr, NO_SHARED_TASK, "l dim").colSpan = 5;
        body.appendChild(tr);
        return;
      }
      tr.setAttribute("data-verdict", v.verdict);
      var verdict = tools.cell(tr, v.verdict + " (" + f.count(v.tasks) + ")", "l verdict-" + v.verdict.replace(/[^a-z]+/g, "-"));
      if (v.tasks < MIN_TASKS) verdict.title = "fewer than " + MIN_TASKS + " shared tasks: no verdict";
      tools.cell(tr, f.pct(v.ref_rate) + " → " + f.pct(v.pick_rate));
      tools.cell(tr, points(v.diff) + " (" + points(v.diff_lo) + " to " + points(v.diff_hi) + ")");
      tools.cell(tr, f.num(v.improvement, 2) + " (" + f.num(v.improvement_lo, 2) + " to " + f.num(v.improvement_hi, 2) + ")");
      tools.cell(tr, v.only_pick + " / " + v.only_ref + " (p = " + f.num(v.sign_p, 3) + ")");
      body.appendChild(tr);
    });
  }

  var NO_SHARED_TASK = "no task graded in both: not compared";

  function points(v) { return window.sitegen.format.num(100 * v, 1); }

  function windowText(s) {
    return s.final && s.final.steps ? "steps " + s.final.steps[0] + "–" + s.final.steps[1] : "no steps";
  }

  window.sitegen.stats = {
    mulberry32: mulberry32, pairedBootstrap: pairedBootstrap, signTest: signTest, compare: compare,
    counts: counts, renderVerdicts: renderVerdicts, SEED: SEED, RESAMPLES: RESAMPLES, MIN_TASKS: MIN_TASKS
  };
})();
