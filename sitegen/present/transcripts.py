"""Sampled trial transcripts as site files: which trials (a page section), and their data.

A job (or run) with trials gets a ``transcripts/`` folder: a page per sampled trial
(``<slug>/index.html``) and beside it its data, ``<slug>/transcript.js``: the normalized
record (:mod:`sitegen.read.transcripts`) as JSON, gzip'ed and base64'ed inside a script, so
it loads from ``file://`` and takes its compressed size on disk (docs/design.md,
"Transcripts"). The prompt template and each task's instruction are stored once per site
(``transcripts/shared/<sha>.js``); each folder's ``index.json`` lists those it uses, so a
folder carried over from the last build keeps them without being read.

Each data file's stamp (the trial's files' sizes and times, the code, the redaction rules)
is kept by the build cache, not in the file (a site's bytes are its content's alone): a file
of the same stamp, still as written, is carried over.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from sitegen.errors import BuildWarning
from sitegen.insights.sampling import (
    EVIDENCE,
    FORGOTTEN_AFTER,
    FORGOTTEN_LAST,
    TranscriptEntry,
    TranscriptsSection,
    pick_trials,
)
from sitegen.jsonio import script_json
from sitegen.present.formatting import fmt_score
from sitegen.redact import Redactor, SecretTally

if TYPE_CHECKING:
    from sitegen.insights.sections import Insights
    from sitegen.model.parsed import Discovery, TrialSet
    from sitegen.read.transcript_text import Shaped
    from sitegen.read.transcripts import Transcript
    from sitegen.write.site import SiteWriter

RECORD_VERSION = 1
FOLDER = "transcripts/"  # below a job's (or run's) folder
SHARED_DIR = "transcripts/shared/"  # below the site's root
# In a transcripts folder: the shared texts its transcripts use, and the kinds of secret
# hidden in them (never a value), so a folder kept from the last build still reports them.
FOLDER_INDEX = "index.json"
SCRIPT_CALL = "sitegen.transcript"
DATA_FILE = "transcript.js"  # a transcript's data, beside its page
# The data scripts this module writes, exactly: what the publish gate decodes to scan.
SCRIPT_RE = re.compile(r'sitegen\.transcript\(("(?:[^"\\]|\\.)*"), "([A-Za-z0-9+/=]*)"\);\n?')
# Kinds hidden that are not credentials (nothing to rotate): not reported as secrets.
PRIVACY_KINDS = frozenset({"home-path", "private-address"})
_SLUG_SAFE_RE = re.compile(r"[^A-Za-z0-9._-]")


def trial_slug(name: str) -> str:
    """A trial's transcript folder name: its name where that is a safe path segment, else a
    safe version of it with a hash of the name (two names stay two)."""
    slug = _SLUG_SAFE_RE.sub("-", name)[:80].strip(".") or "trial"
    if slug != name:
        slug = f"{slug}-{hashlib.sha1(name.encode('utf-8', 'replace')).hexdigest()[:8]}"
    return slug


def encode(name: str, value: object) -> str:
    """``value`` as a data script: its JSON gzip'ed (fixed bytes: no timestamp) and base64'ed."""
    # level 6, not 9: nearly the same bytes in far less time (docs/benchmarks.md)
    packed = gzip.compress(orjson.dumps(value), compresslevel=6, mtime=0)
    b64 = base64.b64encode(packed).decode("ascii")
    return f'{SCRIPT_CALL}({script_json(name)}, "{b64}");\n'


def decode(script: str | bytes) -> tuple[str, Any] | None:
    """What :func:`encode` wrote (name, value); None for any other text."""
    text = script.decode("utf-8", "replace") if isinstance(script, bytes) else script
    m = SCRIPT_RE.fullmatch(text)
    if m is None:
        return None
    try:
        name = orjson.loads(m.group(1))
        return name, orjson.loads(gzip.decompress(base64.b64decode(m.group(2), validate=True)))
    except (ValueError, OSError, EOFError):
        return None


def transcript_summary(e: TranscriptEntry) -> str:
    """One sentence on a transcript (its page's description, what a chat preview shows)."""
    step = f"step {e.step}" if e.step is not None else "no step"
    reward = "no reward" if e.reward is None else f"reward {fmt_score(e.reward)}"
    exc = f", {e.exception}" if e.exception else ""
    turns = f", {e.turns} turns" if e.turns is not None else ""
    return f"Task {e.task}, {step}: {reward}{exc}{turns}. Picked as: {'; '.join(e.reasons)}."


# -- links from the pages that name trials (templates, charts, the comparison page) ------------


def shown_section(page: Any) -> TranscriptsSection | None:
    """A page's transcripts, when the site holds them (not left out by the site budget)."""
    sec = getattr(page, "transcripts", None)
    return None if sec is None or getattr(page, "left_out", None) else sec


def task_links(page: Any, prefix: str) -> dict[str, str]:
    """By task, the href of its first sampled transcript, ``prefix`` leading to the site root."""
    sec = shown_section(page)
    return {} if sec is None else _hrefs(sec.for_task(), prefix)


def exception_links(page: Any, prefix: str) -> dict[str, str]:
    """By exception type, the href of a sampled transcript of a trial that raised it."""
    sec = shown_section(page)
    return {} if sec is None else _hrefs(sec.for_exception(), prefix)


def _hrefs(entries: Mapping[str, TranscriptEntry], prefix: str) -> dict[str, str]:
    return {k: f"{prefix}{e.url}index.html" for k, e in entries.items()}


def heatmap_links(page: Any) -> dict[str, list[tuple[int | None, str]]]:
    """By task, its sampled transcripts as (step, href from the page): the heatmap links each
    cell to one of its step's, else to the task's first."""
    sec = shown_section(page)
    if sec is None:
        return {}
    up = "../" * page.url.count("/")
    out: dict[str, list[tuple[int | None, str]]] = {}
    for e in sec.entries:
        out.setdefault(e.task, []).append((e.step, f"{up}{e.url}index.html"))
    return out


# The fields a transcript's entry copies from its trial as they are.
_AS_TRIAL = ("task", "reward", "exception", "turns", "input_tokens", "output_tokens", "duration_s",
             "env_setup_s", "agent_setup_s", "agent_exec_s", "verifier_s")  # fmt: skip


def finding_links(page: Any, prefix: str) -> dict[str, str]:
    """By finding id, the href of a sampled transcript that shows what it found: a trial at
    one of the finding's steps picked for it (an infrastructure failure of the burst, an
    exception as errors rose, the slow step's slowest rollout), or the forgotten task's
    first failure after its last success. A finding no sampled trial shows gets no link."""
    sec = shown_section(page)
    out: dict[str, str] = {}
    if sec is None:
        return out
    for f in getattr(page, "findings", ()):
        wanted: list[tuple[str | None, str]] = []
        if f.id in EVIDENCE:
            wanted = [(None, EVIDENCE[f.id][0].format(step=s)) for s in f.steps]
        elif f.id == "task_forgotten" and f.tasks:
            # first the pick that shows the forgetting
            wanted = [(f.tasks[0], why) for why in (FORGOTTEN_AFTER, FORGOTTEN_LAST)]
        e = next(
            (
                e
                for task, why in wanted
                for e in sec.entries
                if why in e.reasons and (task is None or e.task == task)
            ),
            None,
        )
        if e is not None:
            out[f.id] = f"{prefix}{e.url}index.html"
    return out


@dataclass
class Made:
    """One transcripts folder's data: files made now, files kept from the last build, the
    shared texts its transcripts use (by name: their script when made now), and per data
    file the secrets hidden in it (where, kinds; None for a file kept, whose record says),
    reported for ``where``: the trials folder."""

    folder: str
    where: str
    files: list[tuple[str, str]] = field(default_factory=list)
    carry: list[str] = field(default_factory=list)
    shared: dict[str, str | None] = field(default_factory=dict)
    hidden: list[tuple[str, tuple[str, list[str]] | None]] = field(default_factory=list)
    stamps: dict[str, str] = field(default_factory=dict)  # by data file: what it is made from


class TranscriptMaker:
    """Picks each page's trials and makes their transcripts' data (one per build).

    ``previous``: the files the last build wrote into ``out``, with their size and mtime;
    ``stamps``: what it made each data file from (none when ``secrets`` changed since);
    ``signature``: what every transcript is made with besides its trial's files (code and
    redaction rules); ``left_out``: the pages whose bulk data the site budget leaves out.
    """

    def __init__(
        self,
        archive: Path,
        disc: Discovery,
        wanted: int,
        redactor: Redactor,
        previous: Mapping[str, Any],
        stamps: Mapping[str, str],
        out: Path,
        signature: str,
        secrets: Mapping[str, str],
        left_out: set[str],
    ) -> None:
        self.archive = archive
        self.out = out
        self.left_out = left_out
        self.shared_of: dict[str, set[str]] = {}  # by transcripts folder (finish)
        self.disc = disc
        self.wanted = wanted
        self.redactor = redactor
        self.previous = previous
        self.stamps = stamps
        self.secrets = dict(secrets)
        self.signature = hashlib.sha1(
            repr((RECORD_VERSION, signature, redactor.extra_patterns)).encode("utf-8", "replace")
        ).hexdigest()

    # -- which trials (in the analysis: a forked child) ------------------------------------------
    def section(
        self, trials: TrialSet | None, ins: Insights, page_url: str
    ) -> TranscriptsSection | None:
        """The page's section: its picks (no trial's files are looked at)."""
        if self.wanted <= 0 or trials is None or not trials.results or ins.tasks is None:
            return None
        from sitegen.insights.tasks import task_slug  # (imported by a build analysing trials)

        assert ins.attribution is not None
        picks = pick_trials(trials.results, ins.attribution, ins.tasks, self.wanted, ins.findings)
        steps = ins.attribution.steps
        slugs = {r.name: r.slug for r in ins.tasks.tasks}
        folder = page_url + FOLDER
        entries = []
        used: set[str] = set()
        for p in picks:
            t = trials.results[p.index]
            slug = base = trial_slug(t.name)
            n = 2
            while slug in used:  # two trials of one name (a copied folder): two pages
                slug, n = f"{base}-{n}", n + 1
            used.add(slug)
            entries.append(
                TranscriptEntry(
                    trial=t.name,
                    slug=slug,
                    url=f"{folder}{slug}/",
                    task_slug=slugs.get(t.task or "(no task name)", task_slug(t.task)),
                    step=steps[p.index] if p.index < len(steps) else None,
                    started_at=t.started_at.isoformat(sep=" ", timespec="seconds")
                    if t.started_at
                    else None,
                    exception_kind=t.kind if t.exception else None,
                    reasons=p.reasons,
                    **{f: getattr(t, f) for f in _AS_TRIAL},
                )
            )
        return TranscriptsSection(
            wanted=self.wanted, trials=len(trials.results), dir=folder, entries=tuple(entries)
        )

    def trial_folder(self, group: str, name: str) -> Path | None:
        """The trial's folder on disk: the one of the group's trials folders that holds it."""
        for d in self.disc.trials_dirs.get(group, ()):
            path = self.archive / self.disc.real(d) / name
            if os.path.isfile(path / "result.json"):
                return path
        return None

    # -- their data ----------------------------------------------------------------------------
    def make(self, section: TranscriptsSection, group: str) -> Made | None:
        """The data of each pick of ``section`` whose file the last build did not write; None
        when the site budget leaves them out."""
        from sitegen.read.transcripts import read_transcript  # (a build that makes none: no import)

        if section.dir[: -len(FOLDER)] in self.left_out:
            return None
        dirs = self.disc.trials_dirs.get(group, ())
        made = Made(section.dir, dirs[0] if len(dirs) == 1 else group)
        for e in section.entries:
            rel = e.url + DATA_FILE
            folder = self.trial_folder(group, e.trial)
            stamp = hashlib.sha1(repr((self.signature, _stamp(folder))).encode()).hexdigest()[:16]
            made.stamps[rel] = stamp
            if self._intact(rel, stamp):
                made.carry.append(rel)
                made.hidden.append((rel, None))
                continue
            if folder is None:
                record: dict = {"v": RECORD_VERSION, "trial": e.trial, "form": "", "missing": True}
            else:
                t = read_transcript(folder, self.archive, self.redactor, self.secrets)
                record = self.record(e.trial, t, made.shared)
                made.hidden.append((rel, (_where(record), list(t.hidden))))
            made.files.append((rel, encode(e.slug, record)))
        return made

    def _intact(self, rel: str, stamp: str) -> bool:
        """Whether the last build wrote ``rel`` from the same sources (its ``stamp``) and it is
        still as written."""
        record = self.previous.get(rel)
        if record is None or self.stamps.get(rel) != stamp:
            return False
        try:
            st = os.stat(self.out / rel, follow_symlinks=False)
        except OSError:
            return False
        return (st.st_size, st.st_mtime_ns) == tuple(record)

    def publish(self, made: Iterable[Made], writer: SiteWriter) -> list[BuildWarning]:
        """Hand each folder's data files to ``writer``: those made now, those kept."""
        lost = []
        for m in made:
            for rel, script in m.files:
                writer.write(rel, script)
            lost += [rel for rel in m.carry if not writer.carry_over([rel])]
        if not lost:
            return []
        why = "changed while the build ran: they show on the next build"
        return [BuildWarning(lost[0], None, f"{len(lost)} transcript data files {why}")]

    def record(self, trial: str, t: Transcript, shared: dict[str, str | None]) -> dict:
        """The published record of a transcript; its shared texts go into ``shared``."""

        def share(s: Shaped | None) -> str | None:
            if s is None or not s.text:
                return None
            name = hashlib.sha1(s.text.encode("utf-8")).hexdigest()[:16]
            if shared.get(name) is None:
                shared[name] = encode(f"shared:{name}", {"text": s.text, "bytes": s.bytes})
            return name

        out: dict[str, Any] = {"v": RECORD_VERSION, "trial": trial, "form": t.form}
        if t.source:
            out["source"] = t.source
        if t.summarized:
            out["summarized"] = t.summarized
        p = t.prompt
        if p is not None:
            prompt = {
                "template": share(p.template),
                "instruction": share(p.instruction),
                "screen": _text(p.screen),
                "text": _text(p.text),
            }
            out["prompt"] = {k: v for k, v in prompt.items() if v}
        out["turns"] = [_turn(turn) for turn in t.turns]
        if t.verifier is not None:
            out["verifier"] = _text(t.verifier)
        if t.exception is not None:
            kind, message, tb = t.exception
            out["exception"] = {"type": kind, "message": message.text, "traceback": tb.text}
        if t.notes:
            out["notes"] = list(t.notes)
        if t.hidden:  # what was hidden (kinds, never values), reported again by a later build
            # (one string: a list of two kinds would read as a name and its value, a pair)
            out["hidden"] = ",".join(t.hidden)
        return out

    # -- every folder's index, and the shared texts ------------------------------------------
    def finish(self, made: Iterable[Made], writer: SiteWriter) -> list[BuildWarning]:
        """Write each folder's index and the shared texts the site's transcripts folders use
        (a kept folder's read from its index), once the kept folders are known; the warnings
        for the secrets hidden in them."""
        live: dict[str, str | None] = {}
        folders: dict[str, tuple[str, dict[str, list]]] = {}
        for m in made:
            names = set(m.shared)
            hidden: dict[str, list] = {}
            for rel, seen in m.hidden:
                if seen is None:  # a transcript kept as it was: its shared texts, its secrets
                    refs, seen = _refs(writer.out / rel)
                    names |= refs
                where, kinds = seen
                for kind in kinds:
                    if kind not in PRIVACY_KINDS:
                        hidden.setdefault(kind, [0, where])[0] += 1
            for name in names:
                if live.get(name) is None:
                    live[name] = m.shared.get(name)
            # (kinds as values, not keys: a key named like a secret reads as one)
            listed = [[k, n, first] for k, (n, first) in sorted(hidden.items())]
            index = {"where": m.where, "shared": sorted(names), "hidden": listed}
            writer.write(m.folder + FOLDER_INDEX, orjson.dumps(index, option=orjson.OPT_SORT_KEYS))
            folders[m.folder] = (m.where, hidden)
            self.shared_of[m.folder] = names
        for rel in sorted(writer.kept):
            folder = rel[: -len(FOLDER_INDEX)]
            if rel.endswith(f"/{FOLDER}{FOLDER_INDEX}") and folder not in folders:
                where, shared, kept = _index(writer.out / rel)
                for name in shared:
                    live.setdefault(name, None)
                folders[folder] = (where, kept)
                self.shared_of[folder] = set(shared)
        missing = []
        for name, script in sorted(live.items()):
            rel = f"{SHARED_DIR}{name}.js"
            if script is not None:
                writer.write(rel, script)
            elif not writer.carry_over([rel]):
                missing.append(name)
        warnings = []
        for where, hidden in sorted(folders.values(), key=lambda f: f[0]):
            tally = SecretTally()
            for kind, (n, first) in sorted(hidden.items()):
                tally.kinds[kind] = (first, n)
            found = tally.warning(where)
            if found is not None:
                warnings.append(found)
        if missing:
            why = "are gone or changed: their transcripts show without them (build with --clean)"
            message = f"{len(missing)} shared transcript texts of the last build {why}"
            warnings.append(BuildWarning(SHARED_DIR, None, message))
        return warnings


def _stamp(folder: Path | None) -> tuple:
    """What a trial's transcript is read from, by size and time (no file is read: Harbor
    writes a trial's files once, as it ends)."""
    if folder is None:
        return ()
    out: list[tuple] = []
    for rel in ("result.json", "agent", "agent/trajectory.json", "verifier/test-stdout.txt"):
        try:
            st = os.stat(folder / rel)
            out.append((rel, st.st_size, st.st_mtime_ns))
        except OSError:
            out.append((rel,))
    return tuple(out)


def _text(s: Shaped | None) -> dict | None:
    if s is None or not s.text:
        return None
    return {"text": s.text, "bytes": s.bytes} if len(s.text) < s.bytes else {"text": s.text}


def _turn(turn: Any) -> dict:
    out: dict[str, Any] = {}
    if turn.event:
        out["event"] = turn.event
    if turn.text.text:
        out["text"] = turn.text.text
    if turn.reasoning.text:
        out["reasoning"] = turn.reasoning.text
    if turn.commands:
        out["commands"] = [c.text for c in turn.commands]
    if turn.output.text:
        out["output"] = turn.output.text
        out["output_bytes"] = turn.output.bytes
    if turn.done:
        out["done"] = True
    if turn.tokens != (None, None):
        out["tokens"] = list(turn.tokens)
    if turn.at:
        out["at"] = turn.at
    return out


def _where(record: dict) -> str:
    """Where in its trial's folder a transcript was read from (what a warning names)."""
    source = record.get("source")
    # the first file named ("steps/a/agent/trajectory.json; steps/b/…", "result.json, step …")
    first = re.split(r"[ ,;]", source)[0] if isinstance(source, str) and source else ""
    first = first or "result.json"
    return f"{record.get('trial')}/{first}"


def _refs(path: Path) -> tuple[set[str], tuple[str, list[str]]]:
    """The shared texts a data file of the site uses, where it was read from and the kinds of
    secret hidden in it (read back from the site)."""
    try:
        got = decode(path.read_bytes())
    except OSError:
        got = None
    record = got[1] if got and isinstance(got[1], dict) else {}
    prompt = record.get("prompt")
    hidden = record.get("hidden")
    refs = (
        {v for k in ("template", "instruction") if isinstance(v := prompt.get(k), str)}
        if isinstance(prompt, dict)
        else set()
    )
    kinds = [k for k in hidden.split(",") if k] if isinstance(hidden, str) else []
    return refs, (_where(record), kinds)


_NAME_RE = re.compile(r"[0-9a-f]{16}")


def _index(path: Path) -> tuple[str, list[str], dict[str, list]]:
    """A transcripts folder's index as the last build wrote it: where its trials are, the
    shared texts it uses, the secrets hidden (checked: the output folder may be writable by
    anyone who can write the archive)."""
    try:
        raw = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        raw = None
    raw = raw if isinstance(raw, dict) else {}
    where, shared, hidden = raw.get("where"), raw.get("shared"), raw.get("hidden")
    names = (
        [n for n in shared if isinstance(n, str) and _NAME_RE.fullmatch(n)]
        if isinstance(shared, list)
        else []
    )
    kinds = {
        v[0]: [v[1], v[2]]
        for v in (hidden if isinstance(hidden, list) else [])
        if isinstance(v, list)
        and len(v) == 3
        and isinstance(v[0], str)
        and type(v[1]) is int
        and isinstance(v[2], str)
    }
    return (where if isinstance(where, str) else path.parent.as_posix()), names, kinds
