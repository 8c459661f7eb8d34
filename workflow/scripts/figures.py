"""UMAP scatter plots per (model, dataset), the Table 3 heatmap and the Table 2 averages bar chart."""

import pandas as pd

from tecb.report import figures, tables
from tecb.report import paper as published
from tecb.runlog import open_log

log = open_log(snakemake.log[0])
p, inp, out = snakemake.params, snakemake.input, snakemake.output
for (model, dataset), reduced, splits, png, svg in zip(p.pairs, inp.reduced, p.splits, out.umap_png, out.umap_svg):
    figures.umap_figure(reduced, splits, [png, svg], title=f"{p.model_names[model]} / {dataset}")
summary = tables.summarize(pd.read_parquet(inp.scores))
t3, n_models = tables.table3(summary, [tuple(c) for c in p.configurations], datasets=p.datasets)
figures.heatmap_figure(t3, [out.heatmap, out.heatmap_svg], f"Table 3: V-measure x 100, mean over {n_models} model(s)")
t2 = tables.table2(summary, p.model_names, datasets=p.datasets, **p.table2)
# the paper's averages only beside averages over the same six datasets, built comparably (their provenance)
why_not = published.paper_average_not_comparable(p.datasets, published.comparability(p.datasets, inp.dataset_splits))
paper = published.paper_table2(inp.reference[0])["Average"] if inp.reference and not why_not else None
figures.bar_figure(
    t2["Average"],
    [out.bars, out.bars_svg],
    figures.averages_title(p.datasets),
    reference=paper,
    no_reference_because=why_not if inp.reference else "",
)
log(f"{len(p.pairs)} UMAP figures, heatmap, bar chart")
