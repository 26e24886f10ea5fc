"""The planted runs of ``sitegen synth --plants`` whose truth is a difference and how sure it is
(docs/statistics.md). Under ``plants/flat/``, each a run of one job whose trials sit in one
``trials_step*.tar.gz`` beside its log:

* ``improves``: every task's success probability climbs by :data:`RAMP` from the first step
  to the last, so the first and the last fifth of the steps differ by a known amount.
* ``lucky``: every task keeps its probability, and each step draws half the tasks, but the
  last step draws the easiest ones: its reward jumps, and the run only *looks* better. Its
  logged pass@4 counts a prompt group as passed only when all four samples passed (a
  grading the trials do not share).
* ``pair-a`` / ``pair-b``: the same trials, task by task, but for three tasks that b solves
  at half its samples and a never solves.

Successes follow their probabilities by error diffusion (:class:`_Draws`), the lucky run's
draws of tasks come from a generator seeded here: the archive is the same on every run; the
truth carries each run's true change (from the probabilities that drew the outcomes) and the
figures the comparison of the pair must give."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from pathlib import Path

from sitegen.synth.plantlog import SAMPLES, STEP_S, T0, plant_config, plant_log, plant_spec, utc
from sitegen.synth.trialtruth import write_archive

STEPS = 6  # "Is it learning?" compares the first 3 steps with the last 3
PAIR_STEPS = 3  # the pair's final window is all of its steps
TASKS = 16
RAMP = 0.3  # improves: success probability gained from the first step to the last
PAIR_TASKS = ("pair-task-03", "pair-task-08", "pair-task-15")  # solved by pair-b alone
# a day before the other planted jobs: they stay the comparison page's most recent runs
START = T0 - timedelta(days=1)


def _result(task: str, step: int, j: int, start: datetime, reward: float) -> dict:
    name = f"{task}__s{step:02d}j{j}"
    return {
        "id": name,
        "task_name": task,
        "trial_name": name,
        "agent_result": {"n_input_tokens": 1000, "n_output_tokens": 100, "n_cache_tokens": 0},
        "verifier_result": {"rewards": {"reward": reward}},
        "exception_info": None,
        "started_at": utc(start),
        "finished_at": utc(start + timedelta(seconds=60)),
    }


def _write_run(root: Path, name: str, job_id: int, outcomes: dict, strict: bool = False) -> dict:
    """A log of one step per key of ``outcomes`` and its trials: ``outcomes[step]`` lists
    (task, [rewards]) in draw order. The logged reward is the trials' mean, pass@4 the share of groups with a
    success (``strict``: with every sample a success)."""
    rel = f"plants/flat/{name}/train_{job_id}.out"
    steps = {}
    last = max(outcomes)
    for s in range(1, last + 1):
        rewards = [r for _, rs in outcomes[s] for r in rs]
        passed = sum((all if strict else any)(r > 0 for r in rs) for _, rs in outcomes[s])
        steps[s] = {
            "reward/avg_raw_reward": sum(rewards) / len(rewards),
            "reward/avg_pass_at_4": passed / len(outcomes[s]),
            "timing/step": STEP_S,
            "timing/wait_for_generation_buffer": STEP_S / 2,
        }
    path = root / rel
    spec = plant_spec(rel, f"plants-{name}", 1, last, "complete", START)
    plant_log(path, spec, plant_config(f"plants-{name}"), steps, "complete")
    results = []
    for s in range(1, last + 1):
        begin = START + timedelta(seconds=STEP_S * (s - 1) + 5)  # inside step s's window
        for i, (task, rs) in enumerate(outcomes[s]):
            results += [
                _result(task, s, j, begin + timedelta(seconds=i), r) for j, r in enumerate(rs)
            ]
    trials = path.parent / "trace_jobs" / "trials_step1_20260301T080000.tar.gz"
    trials.parent.mkdir(parents=True, exist_ok=True)
    write_archive(trials, results)
    return {"log": rel, "run": f"plants-{name}", "trials_total": len(results)}


class _Draws:
    """Each task's successes at a step: as many of its samples as keep its running total of
    successes nearest its running expectation (error diffusion), so that any window's
    success rate is the probability that drew it, give or take one trial: the truth is
    what a page must find, not what a lucky seed allows."""

    def __init__(self) -> None:
        self.expected: dict[str, float] = {}
        self.given: dict[str, int] = {}

    def __call__(self, task: str, p: float) -> list[float]:
        self.expected[task] = self.expected.get(task, 0.0) + SAMPLES * p
        c = int(self.expected[task] + 0.5) - self.given.get(task, 0)
        self.given[task] = self.given.get(task, 0) + c
        return [1.0] * c + [0.0] * (SAMPLES - c)


def _improves(root: Path) -> dict:
    tasks = [f"improve-task-{t:02d}" for t in range(TASKS)]
    base = {t: 0.1 + 0.5 * i / (TASKS - 1) for i, t in enumerate(tasks)}

    def p(t: str, s: int) -> float:
        return base[t] + RAMP * (s - 1) / (STEPS - 1)

    draw = _Draws()
    outcomes = {s: [(t, draw(t, p(t, s))) for t in tasks] for s in range(1, STEPS + 1)}
    early, late = range(1, 4), range(STEPS - 2, STEPS + 1)
    change = sum(
        sum(p(t, s) for s in late) / 3 - sum(p(t, s) for s in early) / 3 for t in tasks
    ) / len(tasks)
    job = _write_run(root, "improves", 700501, outcomes)
    return {**job, "findings": [], "learning": {"verdict": "improved", "true_change": change}}


def _lucky(root: Path, rng: random.Random) -> dict:
    tasks = [f"lucky-task-{t:02d}" for t in range(TASKS)]
    p = {t: 0.1 + 0.8 * i / (TASKS - 1) for i, t in enumerate(tasks)}
    easiest = sorted(tasks, key=lambda t: -p[t])[: TASKS // 2]
    draw, outcomes = _Draws(), {}
    for s in range(1, STEPS + 1):
        drawn = easiest if s == STEPS else sorted(rng.sample(tasks, TASKS // 2))
        outcomes[s] = [(t, draw(t, p[t])) for t in drawn]
    job = _write_run(root, "lucky", 700502, outcomes, strict=True)
    return {
        **job,
        "findings": ["pass_at_k_mismatch"],
        "learning": {"verdict": "no change", "true_change": 0.0},
        "lucky_step": STEPS,
    }


def _pair(root: Path) -> list[dict]:
    tasks = [f"pair-task-{t:02d}" for t in range(TASKS)]

    def outcomes(solves: bool) -> dict:  # the same on every step
        counts = [(2 if solves else 0) if t in PAIR_TASKS else i % 5 for i, t in enumerate(tasks)]
        rows = [(t, [1.0] * c + [0.0] * (SAMPLES - c)) for t, c in zip(tasks, counts, strict=True)]
        return {s: rows for s in range(1, PAIR_STEPS + 1)}

    a = _write_run(root, "pair-a", 700503, outcomes(False))
    b = _write_run(root, "pair-b", 700504, outcomes(True))
    compare = {"shared_tasks": TASKS, "only_b": len(PAIR_TASKS), "only_a": 0, "sign_p": 0.25}
    return [
        {**a, "findings": []},
        {
            **b,
            "findings": [],
            "compare_with": a["run"],
            "compare": {**compare, "verdict": "can't tell"},
        },
    ]


def write_stat_plants(root: Path) -> list[dict]:
    """Write the runs above under ``root/plants`` and return their truth, one entry per job."""
    rng = random.Random(20211)
    return [_improves(root), _lucky(root, rng), *_pair(root)]
