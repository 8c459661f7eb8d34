"""The per-rule progress line of a run (tecb.progress): its format from counts, the counting from job events."""

from __future__ import annotations

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
