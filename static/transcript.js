/* A sampled trial's transcript page: the turns, read from the data script beside the page.
   The data is JSON, gzip'ed and base64'ed inside a script (sitegen/present/transcripts.py), so
   it loads from file:// as over HTTP; the browser inflates it (DecompressionStream). Every
   piece of transcript text goes in as text (textContent), never as HTML: terminal output
   holds <script> tags and worse. */
(function () {
  "use strict";
  var PREVIEW = 120;  // characters of an output's one-line preview
  var root = document.getElementById("transcript");
  if (!root) return;
  var base = root.getAttribute("data-root") || "";
  var waiting = {};  // name -> callbacks waiting for its data script

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function inflate(b64) {
    var bin = atob(b64), bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text().then(JSON.parse);
  }

  /* Called by each data script: the transcript's, and the shared texts it loads. */
  function transcript(name, b64) {
    if (!window.DecompressionStream) {
      status("This browser cannot decompress the transcript (it needs DecompressionStream: Chrome 80, Firefox 113, Safari 16.4 or later).");
      return;
    }
    inflate(b64).then(function (value) {
      var cbs = waiting[name] || [];
      delete waiting[name];
      if (name === root.getAttribute("data-name")) show(value);
      cbs.forEach(function (cb) { cb(value); });
    }).catch(function () { status("The transcript's data could not be read."); });
  }

  function shared(name, done) {
    (waiting["shared:" + name] = waiting["shared:" + name] || []).push(done);
    var s = document.createElement("script");
    s.src = base + "transcripts/shared/" + name + ".js";
    s.onerror = function () { done(null); };
    document.head.appendChild(s);
  }

  function status(text) {
    var p = document.getElementById("tr-status");
    if (p) p.textContent = text;
  }

  function block(cls, text, bytes) {
    var pre = el("pre", "tr-text " + cls, text);
    pre.setAttribute("data-text", text);
    pre.tabIndex = 0;  // (a long text scrolls: the keyboard reaches it)
    if (bytes) pre.title = bytes.toLocaleString("en-US") + " bytes as written";
    return pre;
  }

  function folded(label, cls, body, open) {
    var d = el("details", cls);
    var s = el("summary", "", label);
    d.appendChild(s);
    d.appendChild(body);
    if (open) d.open = true;
    return d;
  }

  function preview(text) {
    var line = text.replace(/\s+/g, " ").trim();
    return line.length > PREVIEW ? line.slice(0, PREVIEW - 1) + "…" : line || "(empty)";
  }

  function show(r) {
    var box = root;
    box.textContent = "";
    if (r.missing) {
      box.appendChild(el("p", "note", "This trial's folder is not in the archive any more (or its trials were read from a trials_step*.tar archive): only what the trial table holds is shown above."));
      return;
    }
    if (!r.form) box.appendChild(el("p", "note", "This trial's folder holds no transcript: no agent/trajectory.json, no all_messages in result.json, no agent/episode-N folders (for a multi-step trial: in none of its steps/<step>/ folders and step_results)."));
    else box.appendChild(el("p", "dim", "Read from " + r.source + "."));
    if (r.summarized) box.appendChild(el("p", "note warn", "The agent's context was summarized " + (r.summarized === 1 ? "once" : r.summarized + " times") + ": earlier turns were replaced by a summary, and what the agent saw after is what follows it."));
    (r.notes || []).forEach(function (n) { box.appendChild(el("p", "note", n)); });
    if (r.prompt) box.appendChild(prompt(r.prompt, r.summarized));
    var n = 0;
    (r.turns || []).forEach(function (t) {
      if (!t.event) n++;
      box.appendChild(turn(t, n));
    });
    if (!(r.turns || []).length && r.form) box.appendChild(el("p", "dim", "No turns."));
    if (r.verifier) {
      var v = el("section", "tr-block", null);
      v.id = "verifier";
      var what = r.verifier.bytes ? "the end of " + r.verifier.bytes.toLocaleString("en-US") + " bytes" : "all of it";
      v.appendChild(el("h2", "", "Verifier output"));
      v.appendChild(el("p", "dim", "verifier/test-stdout.txt, " + what));
      v.appendChild(block("tr-verifier", r.verifier.text));
      box.appendChild(v);
    }
    if (r.exception) {
      var x = el("section", "tr-block tr-exception", null);
      x.id = "exception";
      x.appendChild(el("h2", "", "Exception: " + r.exception.type));
      if (r.exception.message) x.appendChild(block("tr-message", r.exception.message));
      if (r.exception.traceback) x.appendChild(folded("Traceback (its end)", "tr-tb", block("", r.exception.traceback), true));
      box.appendChild(x);
    }
    goToHash();
    find();
  }

  function prompt(p, summarized) {
    var sec = el("section", "tr-prompt", null);
    sec.id = "prompt";
    sec.appendChild(el("h2", "", "First prompt"));
    var add = function (label, cls, text, open) {
      if (text) sec.appendChild(folded(label, cls, block("", text), open));
    };
    // (after a summary the chat starts from the handoff that replaced the earlier turns)
    if (p.text) add(summarized ? "The handoff after the summary" : "The first prompt", "tr-first", p.text.text, true);
    var slot = function (label, cls, name, open) {
      if (!name) return;
      var d = folded(label, cls, el("p", "dim", "Loading…"), open);
      sec.appendChild(d);
      shared(name, function (v) {
        d.removeChild(d.lastChild);
        d.appendChild(v ? block("", v.text, v.bytes) : el("p", "dim", "Not available."));
        find();
      });
    };
    slot("Task instruction", "tr-instruction", p.instruction, true);
    slot("Prompt template (the same for every trial of this agent)", "tr-template", p.template, false);
    if (p.screen) add("The terminal's first screen", "tr-screen", p.screen.text, false);
    return sec;
  }

  function turn(t, n) {
    var sec = el("section", "tr-turn" + (t.event ? " tr-event" : ""), null);
    var head = el("h3", "", null);
    if (t.event) {
      // a multi-step trial's step opens with its name ("Step 2 of 3: fix-bug") as the heading
      head.textContent = t.event === "summary" ? "Context summarized" : t.event === "step" ? t.text : "Message (" + t.event + ")";
    } else {
      sec.id = "turn-" + n;
      var a = el("a", "", "Turn " + n);
      a.href = "#turn-" + n;
      head.appendChild(a);
      if (t.done) head.appendChild(el("span", "badge", "marks the task complete"));
      if (t.tokens && (t.tokens[0] !== null || t.tokens[1] !== null)) head.appendChild(el("small", "dim", " " + (t.tokens[0] === null ? "–" : t.tokens[0].toLocaleString("en-US")) + " tokens in · " + (t.tokens[1] === null ? "–" : t.tokens[1].toLocaleString("en-US")) + " out"));
    }
    sec.appendChild(head);
    if (t.reasoning) sec.appendChild(folded("Reasoning (" + t.reasoning.length.toLocaleString("en-US") + " characters)", "tr-reasoning", block("", t.reasoning), false));
    if (t.text && t.event !== "step") sec.appendChild(block("tr-msg", t.text));
    (t.commands || []).forEach(function (c) { sec.appendChild(block("tr-cmd", c)); });
    if (t.output !== undefined) {
      var bytes = t.output_bytes ? " · " + t.output_bytes.toLocaleString("en-US") + " bytes" : "";
      var d = folded("", "tr-output", block("", t.output), false);
      var s = d.firstChild;
      s.appendChild(el("span", "tr-preview", preview(t.output)));
      s.appendChild(el("small", "dim", bytes));
      sec.appendChild(d);
    }
    return sec;
  }

  /* -- find, expand, keys, #turn-N ---------------------------------------------------------- */
  function texts() { return root.querySelectorAll("pre.tr-text"); }

  function mark(pre, q) {
    var text = pre.getAttribute("data-text") || "";
    pre.textContent = "";
    if (!q) { pre.textContent = text; return 0; }
    var low = text.toLowerCase(), at = 0, hits = 0, i;
    while ((i = low.indexOf(q, at)) >= 0) {
      pre.appendChild(document.createTextNode(text.slice(at, i)));
      pre.appendChild(el("mark", "", text.slice(i, i + q.length)));
      at = i + q.length;
      hits++;
    }
    pre.appendChild(document.createTextNode(text.slice(at)));
    return hits;
  }

  var matched = [], current = -1;
  function find() {
    var input = document.getElementById("tr-find");
    var q = input ? input.value.trim().toLowerCase() : "";
    var turns = [], total = 0;
    Array.prototype.forEach.call(texts(), function (pre) {
      var hits = mark(pre, q);
      if (!hits) return;
      total += hits;
      for (var d = pre.parentNode; d && d !== root; d = d.parentNode) if (d.tagName === "DETAILS") d.open = true;
      var sec = pre.closest("section");
      if (sec && turns.indexOf(sec) < 0) turns.push(sec);
    });
    matched = turns;
    current = -1;
    var out = document.getElementById("tr-found");
    if (out) out.textContent = q ? (total ? total + " match" + (total === 1 ? "" : "es") + " in " + turns.length + " part" + (turns.length === 1 ? "" : "s") + " (Enter: next)" : "no match") : "";
  }

  function allOpen(open) {
    Array.prototype.forEach.call(root.querySelectorAll("details"), function (d) { d.open = open; });
  }

  function turnsList() { return Array.prototype.slice.call(root.querySelectorAll("section.tr-turn[id]")); }

  function step(by) {
    var list = turnsList();
    if (!list.length) return;
    // from the turn the address names, when it is in view (j, j, k: the turns after one
    // another, also at the page's end, where the last turns cannot scroll to its top);
    // else from where the page is scrolled to
    var at = -1, i = 0;
    for (var n = 0; n < list.length; n++) if ("#" + list[n].id === location.hash) at = n;
    var box = at >= 0 ? list[at].getBoundingClientRect() : null;
    var to;
    if (box && box.bottom > 0 && box.top < window.innerHeight) {
      to = list[Math.max(0, Math.min(list.length - 1, at + by))];
    } else {
      var y = window.scrollY + 120;
      while (i < list.length && list[i].getBoundingClientRect().top + window.scrollY <= y) i++;
      to = by > 0 ? list[Math.min(list.length - 1, i)] : list[Math.max(0, i - 2)];
    }
    history.replaceState(null, "", "#" + to.id);
    to.scrollIntoView();
  }

  function goToHash() {
    var m = /^#(turn-\d+|verifier|exception|prompt)$/.exec(location.hash);
    if (!m) return;
    var t = document.getElementById(m[1]);
    if (!t) return;
    Array.prototype.forEach.call(t.querySelectorAll("details"), function (d) { d.open = true; });
    t.scrollIntoView();
  }

  document.getElementById("tr-expand").addEventListener("click", function () { allOpen(true); });
  document.getElementById("tr-collapse").addEventListener("click", function () { allOpen(false); });
  var input = document.getElementById("tr-find");
  input.addEventListener("input", find);
  input.addEventListener("keydown", function (ev) {
    if (ev.key !== "Enter" || !matched.length) return;
    current = (current + (ev.shiftKey ? matched.length - 1 : 1)) % matched.length;
    matched[current].scrollIntoView();
  });
  document.addEventListener("keydown", function (ev) {
    var t = ev.target;
    if (ev.altKey || ev.ctrlKey || ev.metaKey || (t && /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
    if (ev.key === "j") step(1);
    else if (ev.key === "k") step(-1);
  });
  window.addEventListener("hashchange", goToHash);

  window.sitegen = window.sitegen || {};
  window.sitegen.transcript = transcript;
})();
