"""The per-rule progress line of a run (tecb.progress, the logger plugin ``tecb`` that both profiles set): its
format from counts, the counting from job events, the plugin fed Snakemake's log records, and the demo run's
terminal output, whose lines must agree with the plan Snakemake printed (its job stats) and its step count."""

from __future__ import annotations

import logging
import re
from types import SimpleNamespace

import pytest
from conftest import DEMO_RUN_OUTPUT

from tecb.progress import RuleCounts, RunProgress, progress_line


def test_line_names_the_rules_left_in_plan_order_and_counts_the_done_ones():
    rules = {  # the example of tecb.progress's docstring: 4 rules done (7 jobs), 3 left
        "demo_data": RuleCounts(1, 1),
        "build_dataset": RuleCounts(3, 3),
        "model_digest": RuleCounts(2, 2),
        "tiny_bert": RuleCounts(1, 1),
        "embed": RuleCounts(6, 3, running=1),
        "cluster": RuleCounts(90, 30, failed=1),
        "tables": RuleCounts(3),
    }
    assert progress_line(rules) == (
        "progress: 40/106 jobs; embed 3/6 (1 running), cluster 30/90 (1 failed), tables 0/3; 4 rules done"
    )


def test_line_at_the_end_names_every_rule():
    rules = {"embed": RuleCounts(2, 2), "cluster": RuleCounts(4, 3, failed=1), "tables": RuleCounts(1)}
    assert (
        progress_line(rules, end=True) == "progress at the end: 5/7 jobs; embed 2/2, cluster 3/4 (1 failed), tables 0/1"
    )
    assert progress_line({"embed": RuleCounts(2, 2)}) == "progress: 2/2 jobs; 1 rule done"
    assert progress_line({"embed": RuleCounts(2, 1, running=1, failed=1)}) == (
        "progress: 1/2 jobs; embed 1/2 (1 running, 1 failed)"
    )


def test_a_rule_with_a_running_or_failed_job_is_not_done():
    assert RuleCounts(2, 2).done and not RuleCounts(2, 1).done
    assert not RuleCounts(1, 1, failed=1).done  # a retried job that failed once more than planned
    assert not RuleCounts(1, 0, running=1).done


def test_counts_follow_the_job_events():
    progress = RunProgress()
    progress.plan({"embed": 2, "cluster": 3})
    assert progress.line() == "progress: 0/5 jobs; embed 0/2, cluster 0/3"
    progress.started(1, "embed")
    progress.started(2, "embed")
    progress.finished(1)
    progress.failed(2, "embed")
    assert progress.counts()["embed"] == RuleCounts(2, finished=1, failed=1)
    progress.started(2, "embed")  # retried: running again, no longer failed
    assert progress.counts()["embed"] == RuleCounts(2, finished=1, running=1)
    progress.finished(2)
    progress.finished(99)  # never seen starting: its rule is unknown, not counted
    progress.started(3, "cluster")
    progress.started(7, "checkpoint_target")  # not in the plan (a DAG that grew): after the planned rules
    assert (
        progress.line() == "progress: 2/6 jobs; cluster 0/3 (1 running), checkpoint_target 0/1 (1 running); 1 rule done"
    )
    assert progress.line(end=True) == (  # a run stopped now (Ctrl-C): its running jobs did not finish
        "progress at the end: 2/6 jobs; embed 2/2, cluster 0/3 (1 interrupted), checkpoint_target 0/1 (1 interrupted)"
    )


# --- the plugin, fed log records as Snakemake's logger hands them over -------------------------------------------


def _record(event, **fields):
    return logging.makeLogRecord({"msg": "", "levelno": logging.INFO, "event": event, **fields})


@pytest.fixture
def plugin_lines():
    """What the plugin prints, caught on Snakemake's logger (the plugin prints through its handlers)."""
    from snakemake.logging import logger

    lines = []
    catcher = logging.Handler()
    catcher.emit = lambda record: lines.append(record.getMessage())
    logger.addHandler(catcher)
    yield lines
    logger.removeHandler(catcher)


def _handler(dryrun=False, quiet=None):
    from snakemake_logger_plugin_tecb import LogHandler

    return LogHandler(SimpleNamespace(dryrun=dryrun, quiet=quiet, stdout=False), None)


def _feed(handler):
    from snakemake_interface_logger_plugins.common import LogEvent

    handler.handle(_record(LogEvent.JOB_INFO, jobid=0, rule_name="embed"))  # before the plan: ignored
    handler.handle(_record(LogEvent.RUN_INFO, stats={"embed": 2, "tables": 1, "total": 3}))
    for jobid in (1, 2):
        handler.handle(_record(LogEvent.JOB_INFO, jobid=jobid, rule_name="embed"))
    handler.handle(_record(LogEvent.JOB_FINISHED, job_id=1))
    handler.handle(_record(LogEvent.PROGRESS, done=1, total=3))
    handler.handle(_record(LogEvent.JOB_ERROR, jobid=2, rule_name="embed"))
    handler.close()
    handler.close()  # again, as Python's logging does at exit: no second line


def test_plugin_prints_a_line_per_finished_job_and_one_at_the_end(plugin_lines):
    _feed(_handler())
    assert plugin_lines == [
        "progress: 1/3 jobs; embed 1/2 (1 running), tables 0/1",
        "progress at the end: 1/3 jobs; embed 1/2 (1 failed), tables 0/1",
    ]


@pytest.mark.parametrize("settings", [{"dryrun": True}, {"quiet": {"progress"}}, {"quiet": {"all"}}])
def test_plugin_is_silent_in_a_dry_run_and_when_progress_is_quiet(plugin_lines, settings):
    from snakemake.settings.enums import Quietness

    if "quiet" in settings:
        settings = {"quiet": {Quietness.parse_choice(q) for q in settings["quiet"]}}
    _feed(_handler(**settings))
    assert plugin_lines == []


def test_plugin_is_silent_without_a_plan(plugin_lines):
    """The inner Snakemake of a cluster or group job, or a run with nothing to do, never announces a plan."""
    from snakemake_interface_logger_plugins.common import LogEvent

    handler = _handler()
    handler.handle(_record(LogEvent.JOB_INFO, jobid=1, rule_name="embed"))
    handler.handle(_record(LogEvent.JOB_FINISHED, job_id=1))
    handler.handle(_record(LogEvent.PROGRESS, done=1, total=1))
    handler.close()
    assert plugin_lines == []


# --- the demo run's terminal output -------------------------------------------------------------------------------


def _job_stats(output: str) -> dict[str, int]:
    """Snakemake's plan as it printed it: the "Job stats:" table (rule, count; then the total)."""
    lines = output.splitlines()
    start = lines.index("Job stats:") + 3  # the header and the dashes
    stats = {}
    for line in lines[start:]:
        rule, count = line.split()
        if rule == "total":
            assert sum(stats.values()) == int(count)
            return stats
        stats[rule] = int(count)
    raise AssertionError("no total row in Snakemake's job stats")


@pytest.mark.workflow
def test_demo_run_prints_each_rules_progress_after_every_job_and_at_the_end(demo_run):
    output = DEMO_RUN_OUTPUT[demo_run]
    stats = _job_stats(output)
    total = sum(stats.values())
    assert len(stats) > 5 and total > len(stats)  # a run of many rules, some with several jobs
    lines = [line for line in output.splitlines() if line.startswith("progress")]
    during, end = lines[:-1], lines[-1]
    # one line per finished job, as Snakemake's "N of M steps (x%) done": 1, 2, ..., every job of the plan
    steps = re.findall(r"^(\d+) of (\d+) steps", output, flags=re.M)
    assert [int(re.match(r"progress: (\d+)/(\d+) jobs", line)[1]) for line in during] == list(range(1, total + 1))
    assert [(int(d), int(t)) for d, t in steps] == [(n, total) for n in range(1, total + 1)]
    assert all(f"/{total} jobs;" in line for line in during)
    assert during[-1] == f"progress: {total}/{total} jobs; {len(stats)} rules done"
    assert any(f"{rule} 0/{n}" in during[0] for rule, n in stats.items())  # what is left, named
    assert end == f"progress at the end: {total}/{total} jobs; " + ", ".join(f"{r} {n}/{n}" for r, n in stats.items())
