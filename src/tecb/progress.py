"""A run's progress per rule, for the terminal: which stages of a long run are done and which are left.

Snakemake prints "N of M steps (x%) done"; :class:`RunProgress` counts per rule what the run planned, finished, runs
and failed, and :func:`progress_line` writes it as one line::

    progress: 40/106 jobs; embed 3/6 (1 running), cluster 30/90 (1 failed), tables 0/3; 4 rules done

The Snakemake side is the logger plugin ``snakemake_logger_plugin_tecb`` (``--logger tecb``, set in the
profiles): it feeds Snakemake's job events to :class:`RunProgress` and prints its line after every finished job
and once more, with every rule, at the end of the run. Nothing here imports Snakemake.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class RuleCounts:
    """One rule's jobs in a run: ``planned`` (Snakemake's job stats), ``finished``, ``running`` and ``failed``."""

    planned: int
    finished: int = 0
    running: int = 0
    failed: int = 0

    @property
    def done(self) -> bool:
        return self.finished >= self.planned and not self.running and not self.failed


def _rule_text(rule: str, counts: RuleCounts, running: str) -> str:
    extra = [f"{n} {what}" for n, what in ((counts.running, running), (counts.failed, "failed")) if n]
    return f"{rule} {counts.finished}/{counts.planned}" + (f" ({', '.join(extra)})" if extra else "")


def progress_line(rules: Mapping[str, RuleCounts], *, end: bool = False) -> str:
    """The run's progress as one line, rules in the order given (the plan's: upstream stages first).

    During the run (``end=False``) the rules whose every planned job finished are only counted ("4 rules done"), so
    the line names what is left; at the end every rule is named, finished or not, and a job still running then was
    stopped with the run (Ctrl-C): "interrupted"."""
    finished = sum(c.finished for c in rules.values())
    planned = sum(c.planned for c in rules.values())
    shown = {rule: c for rule, c in rules.items() if end or not c.done}
    parts = [f"{finished}/{planned} jobs"]
    if shown:
        running = "interrupted" if end else "running"
        parts.append(", ".join(_rule_text(rule, c, running) for rule, c in shown.items()))
    if len(shown) < len(rules):
        n_done = len(rules) - len(shown)
        parts.append(f"{n_done} rule{'s' if n_done != 1 else ''} done")
    return ("progress at the end: " if end else "progress: ") + "; ".join(parts)


class RunProgress:
    """What a run planned per rule and what became of each started job, from the run's job events."""

    def __init__(self) -> None:
        self.planned: dict[str, int] = {}
        self._rule: dict[Hashable, str] = {}
        self._state: dict[Hashable, str] = {}  # job id -> "running", "finished" or "failed"

    def plan(self, planned: Mapping[str, int]) -> None:
        """The run's jobs per rule, in the order the line lists them."""
        self.planned = dict(planned)

    def started(self, job: Hashable, rule: str) -> None:
        """A job started (again, after a failure: it is running then, no longer failed)."""
        self._rule[job] = rule
        self._state[job] = "running"

    def finished(self, job: Hashable) -> None:
        """A job finished; one never seen starting is not counted (its rule is unknown)."""
        if job in self._rule:
            self._state[job] = "finished"

    def failed(self, job: Hashable, rule: str) -> None:
        self._rule[job] = rule
        self._state[job] = "failed"

    def counts(self) -> dict[str, RuleCounts]:
        """Per rule, planned first in the plan's order; a rule the plan did not name (a DAG that grew) after them,
        its planned count never below what it started."""
        tally: dict[str, dict[str, int]] = {rule: {} for rule in self.planned}
        for job, state in self._state.items():
            rule = tally.setdefault(self._rule[job], {})
            rule[state] = rule.get(state, 0) + 1
        out = {}
        for rule, states in tally.items():
            seen = sum(states.values())
            out[rule] = RuleCounts(
                planned=max(self.planned.get(rule, 0), seen),
                finished=states.get("finished", 0),
                running=states.get("running", 0),
                failed=states.get("failed", 0),
            )
        return out

    def line(self, *, end: bool = False) -> str:
        return progress_line(self.counts(), end=end)
