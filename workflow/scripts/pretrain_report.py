"""Table 5, best epochs, the comparison with the paper and Figure 2 from the pre-training scores."""

from tecb.report.paper import comparability
from tecb.report.pretrain_tables import ReportInputs, render
from tecb.report.stats import Statistics
from tecb.report.tables import split_overlaps
from tecb.runlog import open_log

log = open_log(snakemake.log[0])
out, p = snakemake.output, snakemake.params
baselines = {tuple(key): path for key, path in zip(p.baseline_keys, snakemake.input.baselines)}
outputs = {"scores": out.scores, "figure2": out.figure2}
for stem in ("table5", "best_epochs", "table5_vs_paper"):
    outputs[stem] = {**dict(zip(p.formats, out[stem])), "html": out[f"{stem}_html"]}
outputs["contrasts"] = dict(zip(p.formats, out.contrasts))
not_comparable = comparability(p.datasets, snakemake.input.splits)
inputs = ReportInputs(
    keys=p.seed_keys,
    scores=snakemake.input.scores,
    baselines=baselines,
    reference=snakemake.input.reference,
    contrasts=p.contrasts,
)
render(
    inputs,
    outputs,
    table_epochs=p.table_epochs,
    budgets=p.budgets,
    model_names=p.model_names,
    not_comparable=not_comparable,
    statistics=(
        Statistics.from_config(
            p.statistics, seed=p.seed, design_effects=split_overlaps(p.datasets, snakemake.input.splits)
        )
        if p.statistics["enabled"]
        else None
    ),
    log=log,
)
