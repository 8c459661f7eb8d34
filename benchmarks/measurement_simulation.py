"""Issue 53.6, the large version of tests/test_simulation.py: the simulation that can fail both ways
(:mod:`tecb.report.simulation`: V-measure from k-means clusterings of latent-class data, splits by the project's
recipes) on the designs of Blurbs S2S (28 splits), TenKGnad P2P (10) and Table 6 (3 seeds x 28), at R = 1 and
R = 10 restarts, for this code's statistics (``now``) and for those of an earlier commit (``before``: the
statistics module as it was, loaded from git; they see the same simulated scores). Writes a CSV and a Markdown
table with each row's acceptance (coverage in [93 %, 98.5 %], false positives <= 6 %, power >= 0.75 x a z test's
that knows the true SD). Run it with nice; about 10-15 minutes on one core.

    nice -n 10 python benchmarks/measurement_simulation.py --before 06b2461 --out benchmarks/measurement_simulation
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import types
from pathlib import Path

import pandas as pd

from tecb.report import simulation


def old_stats(commit: str) -> types.ModuleType:
    """The statistics module of ``commit``, loaded from git under another name."""
    source = subprocess.run(
        ["git", "show", f"{commit}:src/tecb/report/stats.py"], capture_output=True, text=True, check=True
    ).stdout
    module = types.ModuleType(f"stats_{commit}")
    sys.modules[module.__name__] = module  # dataclasses look their module up
    exec(compile(source, f"stats@{commit}", "exec"), module.__dict__)
    return module


def before_test(old):
    """The earlier commit's contrast test, as its tables called it (one dataset-wide overlap factor, 2,000
    resamples; it has no restarts' variance)."""

    def test(a, b, *, strata, overlap, noise_a, noise_b):
        effect = old.Overlap(design_effect=overlap.design_effect, df_scale=overlap.df_scale)
        return old.contrast_test(a, b, strata=strata, design_effect=effect, n_resamples=2000, seed=0)

    return test


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the commit whose statistics to compare with")
    parser.add_argument("--out", required=True, help="output stem (.csv, .md)")
    parser.add_argument("--runs", type=int, default=60, help="runs per design and hypothesis (TenKGnad: x3)")
    parser.add_argument("--restarts", type=int, default=10)
    args = parser.parse_args()
    tests = {"now": simulation.test_now, "before": before_test(old_stats(args.before))}
    frames, seconds = [], {}
    for key, design in simulation.DESIGNS.items():
        start = time.perf_counter()
        runs = args.runs * (3 if key == "tenkgnad_p2p" else 1)
        frames.append(simulation.run_design(design, runs=runs, restarts=args.restarts, seed=53, tests=tests))
        seconds[design.name] = time.perf_counter() - start
        print(f"{design.name}: {seconds[design.name]:.0f} s", flush=True)
    table = pd.concat(frames, ignore_index=True)
    table["accepted"] = ["yes" if not simulation.acceptance(r) else "NO" for r in table.to_dict("records")]
    table["misses"] = ["; ".join(simulation.acceptance(r)) for r in table.to_dict("records")]
    table.index = pd.Index([f"{r.design} · {r.test} · R{r.restarts}" for r in table.itertuples()], name="row")
    out = Path(args.out)
    table.round(4).to_csv(out.with_suffix(".csv"))
    lines = [
        "# The measurement simulation (issue 53.6)",
        "",
        f"`python benchmarks/measurement_simulation.py --before {args.before} --runs {args.runs}`: "
        f"{args.runs} runs per design under the null and {args.runs} under the effect (TenKGnad: "
        f"{3 * args.runs}), {args.restarts} restarts per split; `now`: this code's statistics, `before`: those "
        f"of {args.before}, on the same simulated scores; R1: the first restart alone (today's protocol). "
        "Acceptance: coverage in [93 %, 98.5 %], false positives <= 6 %, power >= 0.75 x the z test's that knows "
        "the true SD. V-measure x 100; detectable: the median Δ a row can detect (80 % power, α 0.05).",
        "",
        "| row | coverage | false positives | effect | power | z power | detectable | clustering SD | accepted |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for name, r in table.iterrows():
        lines.append(
            f"| {name} | {r.coverage:.3f} | {r.false_positives:.3f} | {r.effect:.2f} | {r.power:.3f} | "
            f"{r.z_power:.3f} | {r.detectable:.2f} | {r.clustering_sd:.2f} | {r.accepted} |"
        )
    lines += ["", "Misses:", ""] + [f"- {name}: {r.misses}" for name, r in table.iterrows() if r.misses]
    lines += ["", "Seconds per design: " + ", ".join(f"{k} {v:.0f}" for k, v in seconds.items()), ""]
    out.with_suffix(".md").write_text("\n".join(lines), encoding="utf-8")


if __name__ == "__main__":
    main()
