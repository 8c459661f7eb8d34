"""Print what a SLURM run would submit: a dry run that also prints one ``TECB-PLAN {json}`` line per planned job
or group job (rules, models, whether it stays local, and the resources sbatch would be asked for).

    .venv/bin/python tests/slurm/plan.py -n --workflow-profile profiles/slurm --configfile config/modern.yaml

Arguments are Snakemake's own. A group's resources are computed as Snakemake computes them for a remote executor
(the dry run itself counts as local execution, which would add the rounds up instead of taking the widest).
Used by tests/test_profiles.py and docs/slurm.md ("Submissions per model")."""

from __future__ import annotations

import json
import sys

from snakemake.executors import dryrun
from snakemake.resources import GroupResources

_print_job = dryrun.Executor.printjob


def _plan_line(self, job) -> None:
    _print_job(self, job)
    jobs = list(job.jobs) if job.is_group() else [job]
    if job.is_group():
        resources = GroupResources.basic_layered(
            toposorted_jobs=job.toposorted,
            constraints=job.global_resources,
            run_local=False,
            additive_resources=["runtime"],
            sortby=["runtime"],
        )
        local = False
    else:
        resources = dict(job.resources)
        local = job.rule.name in self.workflow._localrules or job.rule.norun
    record = {
        "group": job.groupid if job.is_group() else None,
        "rules": sorted(j.rule.name for j in jobs),
        "models": sorted({j.wildcards_dict.get("model", "") for j in jobs} - {""}),
        "local": bool(local),
        "resources": {k: v for k, v in resources.items() if isinstance(v, (int, float, str))},
    }
    print("TECB-PLAN " + json.dumps(record), flush=True)


dryrun.Executor.printjob = _plan_line

if __name__ == "__main__":
    from snakemake.cli import main

    main(sys.argv[1:])
