"""Step values read from text lines, for logs with no metric dict (docs/formats.md §3).

A wandb-only logger prints no ``Step N:`` dict: what is left is the ``step`` timer's
``Started``/``Finished`` lines, the other timers, ``reward/…`` lines, the policy's status
dict, and the progress bar, which names the step each timed span belongs to.
"""

from __future__ import annotations

from sitegen.read.lines import Line
from sitegen.read.logstate import ParserCore
from sitegen.read.markers import KNOWN_TIMERS, REWARD_PAIR_RE, TIMER_RE, TRAIN_BAR_RE
from sitegen.read.metricblocks import printed_dict


class TextSteps(ParserCore):
    """The parser's text-line recovery (a part of :class:`~sitegen.read.logparse.LogParser`)."""

    def _bar(self, text: str) -> bool:
        """The training loop's tqdm bar: planned total, and the steps done so far."""
        m = TRAIN_BAR_RE.match(text)
        if not m:
            return False
        done, total = int(m.group(1)), int(m.group(2))
        self.planned_steps = total
        self.last_done = done  # the bar is updated after the step's metrics
        self._training_goes_on()
        return True

    def _text_start(self, line: int) -> None:
        self._text_flush()
        self._training_goes_on()
        self.text_open, self.text_open_line = {}, line
        self.text_closed, self.text_closed_after = False, None

    def _text_flush(self) -> None:
        """Store the timed step once it is over (its number is known by then)."""
        vals, self.text_open = self.text_open, None
        if vals is None or not self.text_closed:
            return  # never started, or cut off before its 'step' timer finished
        after = self.text_closed_after
        if self.last_done is not None and (after is None or self.last_done > after):
            step = self.last_done  # a bar or block after the step named it
        elif after is not None:
            step = after + 1
        else:
            self.warn(self.text_open_line, "textstep", "a timed step with no known number: skipped")
            return
        self._marker(step, now=False)  # its batches: the ones finished since the last step
        self.text_steps[step] = vals
        self.text_lines[step] = self.text_open_line
        if self.text_closed_time is not None:
            self.block_times.setdefault(step, self.text_closed_time)
        if self.last_done is None or step > self.last_done:
            self.last_done = step

    def _timer(self, ln: Line, msg: str) -> None:
        m = TIMER_RE.match(msg)
        if not m:
            self.warn(ln.number, "timer", "unreadable 'Finished:' timer line: ignored")
            return
        name, secs = m.group(1), float(m.group(2))
        if name not in KNOWN_TIMERS:
            return
        if name == "step":
            if self.text_open is None or self.text_closed:
                self._text_start(ln.number)  # its 'Started' line was lost
            self.text_closed = True
            self.text_closed_after = self.last_done
            self.text_closed_time = ln.time
        if self.text_open is not None:
            self.text_open[f"timing/{name}"] = secs

    def _reward_line(self, ln: Line, msg: str) -> None:
        pairs = REWARD_PAIR_RE.findall(msg)
        if not pairs:
            self.warn(ln.number, "reward", "unreadable reward line: ignored")
            return
        assert self.text_open is not None
        for k, v in pairs:
            self.text_open[k] = float(v)

    def _status_dict(self, ln: Line, msg: str) -> None:
        """The trainer's ``logger.info(status)``: the policy's numbers at full precision, raw
        floats (a bare ``nan`` or ``inf`` too, see :func:`printed_dict`)."""
        try:  # (a value it cannot read is left out quietly)
            d, _ = printed_dict(msg.strip())
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return  # some other message in braces
        assert self.text_open is not None
        for k, v in self._numbers(ln.number, d).items():
            self.text_open[k if "/" in k else f"policy/{k}"] = v
