"""Rendered pages as a crawler reads them (no JavaScript), downloads, and escaping."""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
import struct
from html.parser import HTMLParser

import pytest

from sitegen.jsonio import script_json
from sitegen.model.vocabulary import REWARD
from sitegen.present.formatting import fmt_score
from tests.conftest import BASE_URL, JOB_SECTIONS, column_in_one_unit, load, page_specs
from tests.present.helpers import decode_compare_items, rows


class Meta(HTMLParser):
    def __init__(self):
        super().__init__()
        self.meta: dict[str, str] = {}
        self.links: dict[str, str] = {}
        self.ids: set[str] = set()
        self.hrefs: list[str] = []
        self.title = ""
        self._in_title = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "meta" and ("property" in a or "name" in a):
            self.meta[a.get("property") or a["name"]] = a.get("content", "")
        if tag == "link" and "rel" in a:
            self.links[a["rel"]] = a.get("href", "")
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "a" and "href" in a:
            self.hrefs.append(a["href"])
        self._in_title = tag == "title"

    def handle_data(self, data):
        if self._in_title:
            self.title += data

    def handle_endtag(self, tag):
        self._in_title = False


def parse(path) -> Meta:
    m = Meta()
    m.feed(path.read_text())
    return m


def _job(index):
    return next(j for j in index["jobs"] if j["log"] == "exp-async/logs/async-run_561773.out")


def test_job_page_unfurls_for_a_chat_crawler(site, index):
    job = _job(index)
    m = parse(site / job["url"] / "index.html")
    assert job["id"] in m.meta["og:title"]
    desc = m.meta["og:description"]
    assert "cancelled" in desc and f"{job['reward_mean']:.4f}" in desc and "pass@8" in desc
    # why it ended comes first, as a chat preview cuts the rest
    assert desc.startswith(f"cancelled: {job['status_detail']} · steps ")
    assert m.meta["twitter:card"] == "summary_large_image"
    card = f"{BASE_URL}{job['url']}card.png?v="  # the version: a digest of what the card shows
    assert m.meta["og:image"].startswith(card) and len(m.meta["og:image"]) == len(card) + 10
    assert m.meta["twitter:image"] == m.meta["og:image"]
    assert m.links["canonical"] == f"{BASE_URL}{job['url']}"
    png = (site / job["url"] / "card.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", png[16:24]) == (1200, 630)
    assert png[25] == 3 and len(png) <= 100_000  # a palette PNG within the weight budget


def test_a_resumed_runs_preview_says_it_is_a_chain(site, index, run_pages):
    """A run of several jobs unfurls with its status, how many jobs and where each resumed,
    then its steps and reward over the whole chain; a run of one job says nothing of jobs."""
    chains = [r for r in run_pages.values() if len(r.jobs) > 1 and r.resumed_from]
    assert chains
    for run in chains:
        desc = parse(site / run.url / "index.html").meta["og:description"]
        at = ", ".join(map(str, run.resumed_from))
        froms = "step" if len(run.resumed_from) == 1 else "steps"
        chain = f"{len(run.jobs)} jobs, resumed from {froms} {at}"
        h = run.headline
        assert f"{chain}, steps {h.first_step}–{h.last_step}, reward mean " in desc, desc
        assert desc.startswith(
            f"{run.status}: " if run.job_rows[-1].status_detail else f"{run.status}, "
        )
    one = next(r for r in run_pages.values() if len(r.jobs) == 1)
    assert " jobs" not in parse(site / one.url / "index.html").meta["og:description"]


def test_relative_links_only(site, index):
    for page in [site / "index.html", site / _job(index)["url"] / "index.html"]:
        m = parse(page)
        for href in m.hrefs:
            assert not href.startswith("/"), href
            assert not href.startswith(BASE_URL), href  # absolute URLs only in meta tags


def test_pages_site_files(site, index):
    assert (site / ".nojekyll").exists()
    assert (site / "404.html").exists()
    sm = (site / "sitemap.xml").read_text()
    assert f"<loc>{BASE_URL}{_job(index)['url']}</loc>" in sm
    assert (site / "static" / "vendor" / "vega-bundle.js").stat().st_size > 500_000


def test_job_sections_and_downloads(site, index):
    job = _job(index)
    d = site / job["url"]
    m = parse(d / "index.html")
    for sec in JOB_SECTIONS:
        assert sec in m.ids
    report = (d / "report.md").read_text()
    assert f"{job['reward_mean']:.4f}" in report and "## Timing breakdown" in report
    rows = list(csv.DictReader(io.StringIO((d / "steps.csv").read_text())))
    assert len(rows) == job["metric_blocks"]
    assert float(rows[0]["reward/avg_raw_reward"]) == job["reward_spark"][0]
    specs = page_specs(d / "index.html")
    assert specs and all(s["$schema"].endswith("v6.json") for s in specs.values())
    # one copy of each spec: embedded, its link made in the browser
    assert not (d / "charts").exists()
    for name in specs:
        assert f'data-spec="{name}"' in (d / "index.html").read_text()


def _trial_rows(path):
    return list(csv.DictReader(io.StringIO(gzip.decompress(path.read_bytes()).decode())))


def test_trials_csv_one_row_per_trial(site, index):
    run = next(r for r in index["runs"] if r["id"] == "exp-async")
    rows = _trial_rows(site / run["url"] / "trials.csv.gz")
    data = __import__("json").loads((site / run["data"]).read_text())
    assert len(rows) == data["trials"]["total"]
    assert {r["outcome"] for r in rows} <= {"success", "failure", ""}
    assert 'href="trials.csv.gz"' in (site / run["url"] / "index.html").read_text()


def test_a_run_of_one_job_links_to_the_jobs_trials(site, index):
    """The same trials are never written twice: the run links to its job's table."""
    jobs = {j["id"]: j for j in index["jobs"]}
    shared = [
        r
        for r in index["runs"]
        if len(r["jobs"]) == 1 and jobs[r["jobs"][0]]["trial_success_rate"] is not None
    ]
    assert shared
    for run in shared:
        job = jobs[run["jobs"][0]]
        assert not (site / run["url"] / "trials.csv.gz").exists()
        href = "../../" + job["url"] + "trials.csv.gz"
        assert f'href="{href}"' in (site / run["url"] / "index.html").read_text()
        rows = _trial_rows(site / run["url"] / href)
        assert len(rows) == json.loads((site / job["data"]).read_text())["trials"]["total"]
    assert list(site.rglob("trials.csv")) == []


def test_script_json_cannot_close_its_element():
    s = script_json({"a": "</script><script>alert(1)</script>", "b": "\u2028"})
    assert "</script" not in s and "<" not in s


def test_eval_metrics_shown(site, index):
    job = next(j for j in index["jobs"] if j["log"] == "exp-async/logs/async-run_561774.out")
    data = __import__("json").loads((site / job["data"]).read_text())
    assert data["eval_series"]["step"] == [
        8,
        12,
    ]  # every 4th step (synth's eval interval for 12 steps)
    spec = page_specs(site / job["url"] / "index.html")["eval"]
    assert {r["x"] for r in rows(spec)} == {8, 12}
    assert 'id="eval"' in (site / job["url"] / "index.html").read_text()


def _script_calls(path):
    """Each (name, value) a data script hands to ``sitegen.data``, one call a line."""
    out = []
    for line in path.read_text().splitlines(keepends=True):
        assert line.startswith("sitegen.data(") and line.endswith(");\n")
        name, _, value = line[len("sitegen.data(") : -3].partition(", ")
        out.append((json.loads(name), json.loads(value)))
    return out


def _script_data(path):
    """The (name, value) a data script of one call hands to ``sitegen.data``."""
    (call,) = _script_calls(path)
    return call


def test_compare_page_loads_its_data(site, index):
    """The comparison page embeds no run: the list comes from items.js, each one's curves
    from its own folder, when picked."""
    html = (site / "compare" / "index.html").read_text()
    assert '<script src="items.js"></script>' in html and "compare-items" not in html
    name, value = _script_data(site / "compare" / "items.js")
    assert name == "compare-items"
    items = decode_compare_items(value)
    assert len(items) == len(index["runs"]) + len(index["jobs"])
    job = next(i for i in items if i["kind"] == "job" and i["id"] == index["jobs"][0]["id"])
    assert "curves" not in job
    # the table's figures as printed (listing.compare_cells)
    assert job["cells"]["reward_mean"] == fmt_score(index["jobs"][0]["headline"]["reward_mean"])
    (name, curves), (fname, details) = _script_calls(site / job["url"] / "curves.js")
    assert name == f"curves:job:{job['id']}" and fname == f"findings:job:{job['id']}"
    data = json.loads((site / index["jobs"][0]["data"]).read_text())
    # each finding's detail beside its curves, in the order items.js lists the findings
    assert [f["title"] for f in job["findings"]] == [f["title"] for f in data["findings"]]
    assert details == [f["detail"] for f in data["findings"]]
    assert value["finding_columns"] == ["id", "severity", "title", "section"]
    steps = [
        s
        for s, r in zip(data["series"]["step"], data["series"][REWARD], strict=True)
        if r is not None
    ]
    assert [p[0] for p in curves["reward"]] == steps


def test_index_summary_reads_in_the_singular(tmp_path):
    """One run of one job, one step, one warning, one skipped input: each count in the
    singular (the sample's index said "1 folders skipped")."""
    import shutil
    from pathlib import Path

    from sitegen.commands.build import build
    from sitegen.options import BuildOptions

    sample = Path(__file__).resolve().parents[2] / "sample" / "archive"
    archive = tmp_path / "archive"
    shutil.copytree(sample / "flat" / "stale", archive / "flat" / "stale")
    (archive / "misc" / "empty-dir").mkdir(parents=True)
    build(BuildOptions(archive=archive, out=tmp_path / "site", workers=1))
    html = (tmp_path / "site" / "index.html").read_text()
    line = re.sub(
        r"<[^>]+>",
        "",
        html[html.index('summary-line">') : html.index("</p>", html.index('summary-line">'))],
    )
    totals = json.loads((tmp_path / "site" / "data" / "index.json").read_text())["totals"]
    assert (totals["runs"], totals["jobs"]) == (1, 1)
    assert "1 run · 1 job" in line and "1 input skipped" in line
    for what in ("steps", "trials", "warnings"):
        n, noun = totals[what], what[:-1]
        assert f"{n} {noun if n == 1 else what}" in line
    assert _miscounted(tmp_path / "site") == []


_COUNTED = re.compile(
    r"(?<![\w.,/-])(?<!of )(\d[\d,]*) "
    # the words a count's noun comes after ("5 metric blocks": the noun is "block")
    r"(?:(?:eval|distinct|discarded|timed|metric|training|per-engine stat|cluster-aggregate"
    r"|prompt|further) )?"
    r"(run|job|step|trial|task|engine|line|warning|folder|finding|metric|block|archive"
    r"|instance|group|batch|cop)(s|es|y|ies)?\b"
)


def _miscounted(site) -> list[str]:
    """Counts whose noun disagrees with the number ("1 engines", "3 step") in the pages' text."""
    bad = []
    for page in sorted(site.rglob("*.html")):
        text = re.sub(r"<[^>]+>", " ", page.read_text(encoding="utf-8"))
        for m in _COUNTED.finditer(text):
            if (int(m[1].replace(",", "")) == 1) != (m[3] in (None, "y")):
                bad.append(f"{page.relative_to(site)}: {text[m.start() - 30 : m.end()]!r}")
    return bad


def test_counts_agree_with_their_nouns(site):
    assert _miscounted(site) == []


@pytest.mark.parametrize(
    ("text", "wrong"),
    [
        ("· 1 archives read", True),
        ("· 1 archive read", False),
        ("· 1 eval trials (counted apart)", True),
        ("12 training batch · 1 instance", True),
        ("1 training batch · 3 instances", False),
        ("1 further copies suppressed", True),
        ("3 further copies suppressed", False),
        ("5 metric blocks", False),
        ("1 metric blocks", True),
        ("family of 1 metric", False),
        ("2 distinct steps · 1 discarded steps costing", True),
    ],
)
def test_the_count_check_reads_adjectives_and_irregular_plurals(tmp_path, text, wrong):
    (tmp_path / "index.html").write_text(f"<p>{text}</p>")
    assert bool(_miscounted(tmp_path)) is wrong


def test_fmt_count_puts_the_noun_in_the_number_it_needs():
    from sitegen.present.formatting import fmt_count

    assert fmt_count(1, "archive") == "1 archive"
    assert fmt_count(0, "archive") == "0 archives"
    assert fmt_count(1234, "eval trial") == "1,234 eval trials"
    assert fmt_count(1, "training batch", "training batches") == "1 training batch"
    assert fmt_count(2, "training batch", "training batches") == "2 training batches"
    assert fmt_count(None, "step") == "– steps"


def test_listed_ids_may_break_after_their_dots(site, index):
    """The index's and the runs list's names: a line break after a dot, never mid-number
    (the ids have no spaces); the link's text is still the id."""
    for rel in ("index.html", "runs/index.html"):
        html = (site / rel).read_text()
        links = re.findall(
            r'<a href="[^"]*(?:jobs|runs)/[^"]*index\.html">([^<]*(?:<wbr>[^<]*)*)</a>', html
        )
        ids = {r["id"] for r in index["runs"]} | {j["id"] for j in index["jobs"]}
        shown = {text.replace("<wbr>", "") for text in links}
        assert ids <= shown, rel
        assert all(text == text.replace("<wbr>", "").replace(".", ".<wbr>") for text in links)
        assert any("<wbr>" in text for text in links)


def test_run_page_words_follow_what_the_run_holds(site, index):
    """A run page speaks of discarded steps, restarts and pass@k only when the run has them:
    no "0 discarded steps costing 0.0 s", no restart legend on a single job's chart, no
    "over N steps" under a pass@k that was never logged."""
    seen = set()
    for r in index["runs"]:
        run = load(site, r["data"])
        html = (site / run["url"] / "index.html").read_text(encoding="utf-8")
        lead = re.search(r'<p class="lead">(.*?)</p>', html, re.S)[1]
        chain = len(run["jobs"]) > 1 or run["discarded_steps"] > 0
        assert ("costing" in lead) is (run["discarded_steps"] > 0), run["id"]
        assert ("no step recomputed or rolled back" in html) is (run["discarded_steps"] == 0)
        assert ("dashed lines mark restarts" in html) is chain, run["id"]
        assert ("Jobs of the chain" in html) is (len(run["jobs"]) > 1), run["id"]
        pass_logged = run["headline"]["pass_at_k_mean"] is not None
        card = re.search(
            r'pass@\w+ mean</div><div class="v">[^<]*</div><div class="s">([^<]*)', html
        )
        assert card[1] == ("not logged" if not pass_logged else f"over {run['steps']} steps")
        if run["resumed_from"]:
            assert re.search(r"resumed from steps? \d", lead), lead
        seen.add((chain, pass_logged))
    assert (True, True) in seen and (False, True) in seen  # (the fixture has both kinds)


def test_batch_chart_names_the_step_still_being_generated(site, index):
    """Batches finished after a job's last metrics are the next step's (the one being
    generated when the log ends): the chart's caption says so where that step is shown."""
    named = 0
    for j in index["jobs"]:
        job = load(site, j["data"])
        per_step = (job.get("batches") or {}).get("per_step") or {}
        html = (site / job["url"] / "index.html").read_text(encoding="utf-8")
        last = job["headline"]["last_step"]
        top = max(map(int, per_step), default=None)
        says = re.search(r"; step (\d+): batches of the step still being generated", html)
        if top is not None and last is not None and top > last:
            assert says is not None and int(says[1]) == top, job["id"]
            named += 1
        else:
            assert says is None, job["id"]
    assert named  # (the fixture has a log that ends mid-step)


def test_the_turns_card_counts_turns_in_whole_numbers(site, index):
    """A trial's turns are whole: the trials section's turns card reads "1–18", not
    "1.0000–18.0000" (min and max arrive as floats from the statistics)."""
    seen = 0
    for row in [*index["jobs"], *index["runs"]]:
        turns = (load(site, row["data"]).get("trials") or {}).get("turns") or {}
        if not turns.get("count"):
            continue
        html = (site / row["url"] / "index.html").read_text(encoding="utf-8")
        card = re.search(r'<div class="k">turns</div>.*?<div class="s">(.*?)</div>', html, re.S)
        assert card is not None, row["id"]
        low, high = int(turns["min"]), int(turns["max"])
        assert f" · {low}–{high} · n={turns['count']}" in card[1], (row["id"], card[1])
        seen += 1
    assert seen  # (the fixture has trials)


def test_a_chains_durations_are_each_in_one_unit(site, index):
    """A run's table of jobs prints its step times and the time each restart lost in one
    unit a column, named in the header ("step time (min)"), as the timing table does."""
    chains = 0
    for row in index["runs"]:
        run = load(site, row["data"])
        html = (site / row["url"] / "index.html").read_text(encoding="utf-8")
        lost = {r["job"]: r["discarded_time_s"] for r in run["restarts"]}
        jobs = run["job_rows"]
        steps = [j["headline"]["step_time_mean_s"] for j in jobs]
        column_in_one_unit(html, "chain-table", "step time", steps)
        column_in_one_unit(html, "chain-table", "time lost", [lost.get(j["id"]) for j in jobs])
        chains += any(v is not None for v in lost.values())
    assert chains  # (the fixture has a run that lost time to a restart)
