"""The metrics of each step: ``Step N:`` dicts and ``WANDB_MIRROR`` lines (docs/formats.md §3).

A ``Step N:`` marker opens a pretty-printed dict collected line by line until it closes;
a mirror line carries its dict as JSON. At the end, blocks split into steps and evals.
"""

from __future__ import annotations

import ast
import json
import math
import re

from sitegen.model.parsed import MetricBlock
from sitegen.read.lines import CR_PREFIX_RE, Line, known_prefix
from sitegen.read.logstate import MAX_BLOCK_LINES, ParserCore, PendingBlock
from sitegen.read.markers import MIRROR_RE

# One ``'key': value`` item of a flat pformat dict and what follows it: a key
# and a string value are single-quoted text without backslash, quote or control
# character; a number is a plain decimal int (no leading zero, as Python requires) or
# float, maybe negative. Only spaces and newlines between tokens (pformat's own layout).
_ITEM_RE = re.compile(
    r"[ \n]*'([^'\\\x00-\x1f\x7f]*)'[ \n]*:[ \n]*"
    r"(?:'([^'\\\x00-\x1f\x7f]*)'"
    r"|(-?(?:0|[1-9][0-9]{0,30}))"
    r"|(-?[0-9]{1,40}(?:\.[0-9]{1,40}(?:[eE][+-]?[0-9]{1,4})?|[eE][+-]?[0-9]{1,4})))"
    r"[ \n]*([,}])"
)
_CLOSE_RE = re.compile(r"[ \n]*}")  # "{}" or the "}" after a trailing comma
_RUN_FIRST = (b" ", b"\t", b"{")  # how a pformat line starts


def flat_dict(text: str) -> dict | None:
    """``ast.literal_eval(text)`` for a flat dict of str keys to str/int/float, or None.

    A pformat metrics dict or an ``Exception breakdown``, read item by item with one regex:
    the same keys, order and values (a repeated key keeps its first place and last value).
    Anything else (a bare ``nan``, a nested value, a backslash, a tab) gives None:
    ``literal_eval`` says what is wrong."""
    if text[:1] != "{":
        return None
    d: dict = {}
    m = _CLOSE_RE.match(text, 1)
    if m is not None:
        pos = m.end()
    else:
        pos, match, end = 1, _ITEM_RE.match, ","
        while end == ",":
            m = match(text, pos)
            if m is None:
                m = _CLOSE_RE.match(text, pos)  # a trailing comma
                if m is None:
                    return None
                pos = m.end()
                break
            key, s, i, f, end = m.groups()
            d[key] = s if s is not None else int(i) if i is not None else float(f)
            pos = m.end()
    # Nothing after the "}" ("{}\n " is an indentation error to the compiler; the
    # parser's texts end at the "}" anyway).
    return d if pos == len(text) else None


# What pformat prints for a value that is no Python literal (docs/formats.md §3): numpy 2's
# scalars (``np.float32(0.5)``, ``np.int64(3)``, ``np.True_``), a torch scalar tensor (``tensor(0.5312,
# device='cuda:0')``), a bare ``nan`` or ``inf`` of a float no logger stringified.
_SCALAR_MODULES = frozenset({"np", "numpy", "torch"})
_BARE_FLOATS = {"nan": math.nan, "inf": math.inf}
_NUMPY_BOOLS = {"True_": True, "False_": False}  # numpy 2's np.True_, np.False_
_GRAD_FN_RE = re.compile(r",\s*grad_fn=<\w+>")
# A quoted string (kept as it is) or an angled repr on one line (replaced by _unangled).
_ANGLED_RE = re.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"|<[^<>\n]*>")


def _unangled(m: re.Match[str]) -> str:
    return m.group(0) if m.group(0)[0] != "<" else "__repr__"


def printed_dict(text: str) -> tuple[dict, list[str]]:
    """The dict ``pprint.pformat`` printed as ``text``, and the keys whose value it cannot read.

    :func:`flat_dict` for the flat shape; else read from its syntax tree as ``literal_eval``
    would, plus the scalar wrappers above (read as the number they wrap); another value
    leaves only its own key out. ``ValueError`` or ``SyntaxError``: no dict display.
    """
    d = flat_dict(text)
    if d is not None:
        return d, []
    if "grad_fn=<" in text:  # a tensor still in its graph: "<MeanBackward0>" is no Python
        text = _GRAD_FN_RE.sub("", text)
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        if "<" not in text:
            raise
        # an object's default repr ("<foo.Bar object at 0x7f…>", "<Mode.LATEST: 'latest'>")
        # is no Python: a name no value has stands in for it, outside the quoted strings
        node = ast.parse(_ANGLED_RE.sub(_unangled, text.strip()), mode="eval").body
    if not isinstance(node, ast.Dict):
        raise ValueError("not a dict")
    out: dict = {}
    odd: list[str] = []
    for k, v in zip(node.keys, node.values, strict=True):
        if not isinstance(k, ast.Constant):  # None: a "**" entry
            raise ValueError("not a literal key")
        try:
            out[k.value] = _printed_value(v)
        except ValueError:
            odd.append(str(k.value))
    return out, odd


def _printed_value(node: ast.expr) -> object:
    """One value of :func:`printed_dict` (``ValueError``: not one it reads)."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name) and node.id in _BARE_FLOATS:
        return _BARE_FLOATS[node.id]
    if isinstance(node, ast.Attribute) and node.attr in _NUMPY_BOOLS and _is_module(node.value):
        return _NUMPY_BOOLS[node.attr]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _printed_value(node.operand)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return -v if isinstance(node.op, ast.USub) else v
    elif isinstance(node, ast.Call) and len(node.args) == 1 and _is_scalar_wrapper(node.func):
        v = _printed_value(node.args[0])  # its keywords (device=, dtype=) are no value
        while _is_array(node.func) and isinstance(v, list) and len(v) == 1:
            v = v[0]  # a one-element tensor or array: its value (torch.Size([8]) stays a list)
        return v
    elif isinstance(node, (ast.List, ast.Tuple)):
        return [_printed_value(e) for e in node.elts]
    elif isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise ValueError("not a literal key")
        out = {}
        for k, v in zip(node.keys, node.values, strict=True):
            key = _printed_value(k)  # type: ignore[arg-type]  # (no "**": checked above)
            if isinstance(key, (list, dict)):
                raise ValueError("an unhashable key")
            out[key] = _printed_value(v)
        return out
    raise ValueError("not a value pformat prints")


def _is_scalar_wrapper(func: ast.expr) -> bool:
    """``tensor``, ``array`` (numpy's repr), ``np.<type>``, ``numpy.<type>`` or ``torch.<name>``."""
    if isinstance(func, ast.Name):
        return func.id in ("tensor", "array")
    return isinstance(func, ast.Attribute) and _is_module(func.value)


def _is_array(func: ast.expr) -> bool:
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    return name in ("tensor", "array") and _is_scalar_wrapper(func)


def _is_module(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id in _SCALAR_MODULES


class MetricBlocks(ParserCore):
    """The parser's metric-dict collector (a part of :class:`~sitegen.read.logparse.LogParser`)."""

    def _take_run(self, block: bytes, pos: int, end: int) -> tuple[int, int]:
        """Take the run of an open dict's lines at ``block[pos:end]`` (line starts of a clean
        stretch) in one go, up to its ``}``: pformat lines with the Ray prefix of a process
        whose dict is open, holding no escape or ``]``, each of which would only append its
        text (``_continue_block``). Declined (0 lines, nothing changed: _feed_clean feeds
        the lines through ``feed_raw``) when a line would close early, be blank, or pass
        :data:`MAX_BLOCK_LINES`. Returns ``(lines taken, offset)``: after them, or where a new
        try sees the same run."""
        m = CR_PREFIX_RE.match(block, pos, end)
        # No prefix: the driver's own output (source ""); split_line leaves a line starting
        # with a space, a tab or "{" as it is (no header, time or prefix starts so).
        start = m.end() if m is not None else pos
        first = block[start : start + 1]
        if first not in _RUN_FIRST:
            return 0, pos
        if m is None:
            pfx, source = b"", ""
        else:
            pfx = m.group(0)
            known = known_prefix(self.prefixes, pfx)
            if known is None:
                return 0, pos
            source = known[0]
        pend = self.pending.get(source)
        if pend is None or (first == b"{") == bool(pend.text):  # a "{" opens, never continues
            return 0, pos
        run = self.runs.get(pfx)
        if run is None:
            if len(self.runs) > 4096:  # bounded whatever the log
                self.runs.clear()
            p = re.escape(pfx)
            # continuation lines not ending in "}", then maybe the one that does (the close)
            run = self.runs[pfx] = re.compile(
                b"(?:" + p + rb"[ \t][^\n]*(?<!\})\n)*(?:" + p + rb"[ \t][^\n]*\}\n)?"
            )
        # The first line, then the continuation lines up to the first ending in "}" (a "{"
        # line stops the run: it would cut the dict). No prefix holds a "}" or a line break.
        stop = block.index(b"\n", start) + 1
        if block[stop - 2] != 125:  # "}": the first line closes the dict
            found = run.match(block, stop, end)
            stop = found.end() if found is not None else stop  # (it always matches)
        closes = block[stop - 2] == 125
        # Each line starts with the prefix, which is ASCII: cut as many characters.
        cut = len(pfx)
        raw = block[pos : stop - 1].decode("utf-8")
        texts = [t[cut:].rstrip() for t in raw.split("\n")]
        n = len(texts)
        if len(pend.text) + n > MAX_BLOCK_LINES:
            return 0, stop
        joined = "\n".join(texts)
        # split_line would strip a colour code, or a dedup suffix (which ends in "]")
        if "\x1b" in joined or "]" in joined:
            return 0, stop
        # Where rstrip took something, a line may close early ("}" then whitespace) or be
        # blank (it would cut the dict): only the run's last line may end in "}".
        if len(joined) != len(raw) - n * cut:  # (characters, as the prefix is ASCII)
            joined += "\n"
            if joined.find("}\n") != (len(joined) - 2 if closes else -1) or "" in texts:
                return 0, stop
        pend.text.extend(texts)
        if closes:
            del self.pending[pend.source]
            self._close_block(pend)
        return n, stop

    def _adopt(self, ln: Line) -> bool:
        """Give a header with no Ray prefix the process of the ``{`` line right after it (a
        record glued after the driver's bar loses its prefix: docs/formats.md §2.4).
        Returns whether ``ln`` was taken."""
        orphan = self.pending[""]
        if orphan.text or ln.number != orphan.line + 1 or ln.message[:1] != "{":
            return False
        del self.pending[""]
        orphan.source = ln.source
        self.pending[ln.source] = orphan
        return self._continue_block(orphan, ln)

    def _continue_block(self, pend: PendingBlock, ln: Line) -> bool:
        text = ln.message
        stripped = text.rstrip()
        if not pend.text:
            if not stripped.startswith("{"):
                self.warn(
                    pend.line,
                    "block",
                    f"'Step {pend.step}:' is not followed by a metrics dict: block skipped",
                )
                del self.pending[ln.source]
                return False
        elif stripped[:1] not in (" ", "\t"):  # pformat indents every continuation line
            self._cut_block(pend, ln.number)
            return False
        pend.text.append(stripped)
        if stripped.endswith("}"):
            del self.pending[ln.source]
            self._close_block(pend)
        elif len(pend.text) > MAX_BLOCK_LINES:
            del self.pending[ln.source]
            self.warn(
                pend.line, "block", f"metrics dict of step {pend.step} never closes: block skipped"
            )
        return True

    def _cut_block(self, pend: PendingBlock, at: int | None) -> None:
        self.pending.pop(pend.source, None)
        where = f"at line {at}" if at else "at end of file"
        self.warn(
            pend.line, "cut", f"metrics dict of step {pend.step} is cut off {where}: block skipped"
        )

    def _close_block(self, pend: PendingBlock) -> None:
        try:
            d, odd = printed_dict("\n".join(pend.text))
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            self.warn(
                pend.line, "block", f"unreadable metrics dict of step {pend.step}: block skipped"
            )
            return
        if odd:  # the keys whose values are no value we read
            more = f" (and {len(odd) - 1} more)" if len(odd) > 1 else ""
            msg = f"metric {odd[0]!r}{more} is not a value we can read: left out"
            self.warn(pend.line, "value", msg)
        self._store(
            self.console, self.console_lines, pend.step, self._numbers(pend.line, d), pend.line
        )

    def _mirror_line(self, ln: Line, msg: str) -> None:
        m = MIRROR_RE.match(msg)
        if not m:
            self.warn(ln.number, "mirror", "unreadable WANDB_MIRROR line: ignored")
            return
        kind, step = m.group(1), int(m.group(2))
        try:
            d = json.loads(m.group(3))
            if not isinstance(d, dict):
                raise ValueError("not an object")
        except (ValueError, RecursionError):
            self.warn(
                ln.number, "mirror", f"unreadable WANDB_MIRROR metrics of step {step}: skipped"
            )
            return
        if kind == "train":
            self._marker(step)
            if ln.time is not None:
                self.block_times.setdefault(step, ln.time)
            self._store(
                self.mirror, self.mirror_lines, step, self._numbers(ln.number, d), ln.number
            )
        elif kind == "eval":
            self._training_goes_on()  # an eval's metrics: the trainer goes on as a step's say
            self._store(self.evals, self.eval_lines, step, self._numbers(ln.number, d), ln.number)
        else:
            self.warn(ln.number, "mirror", f"WANDB_MIRROR kind={kind} not known: ignored")

    def _metric_blocks(self) -> tuple[str, list[MetricBlock], tuple[MetricBlock, ...]]:
        """The metric form the log has, its train steps, and its evals (by step)."""
        if self.mirror:
            form, source, lines = "mirror", self.mirror, self.mirror_lines
        elif self.console:
            form, source, lines = "console", self.console, self.console_lines
        elif self.text_steps:
            # No metric dict anywhere (wandb-only logger): what the text lines said.
            form, source, lines = "text", self.text_steps, self.text_lines
        else:
            form, source, lines = "", {}, {}
        blocks: list[MetricBlock] = []
        eval_src: dict[int, MetricBlock] = {
            s: MetricBlock(s, self.evals[s], self.eval_lines[s]) for s in self.evals
        }
        for s in sorted(source):
            metrics = source[s]
            evals = {k: v for k, v in metrics.items() if k.startswith("eval/")}
            if evals and len(evals) + ("timing/eval" in metrics) == len(metrics):
                # An eval-only block, not a step: eval_before_train at the resumed step K
                # (docs/formats.md §3).
                eval_src.setdefault(s, MetricBlock(s, metrics, lines[s]))
                continue
            if evals:  # in-loop eval riding in the train block (synchronous trainer)
                eval_src.setdefault(s, MetricBlock(s, evals, lines[s]))
            blocks.append(MetricBlock(s, metrics, lines[s], self.block_times.get(s)))
        evals_out = tuple(eval_src[s] for s in sorted(eval_src))
        return form, blocks, evals_out
