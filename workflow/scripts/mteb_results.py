"""MTEB-format results (mteb.ResultCache layout) per (model, dataset) for k-means on raw embeddings."""

from pathlib import Path

from tecb.io import dataset_provenance
from tecb.report.mteb_results import ResultFiles, write_mteb_results
from tecb.runlog import open_log

log = open_log(snakemake.log[0])
p = snakemake.params
targets = [(model, dataset, path) for (model, dataset), path in zip(p.pairs, snakemake.output.results)]
meta_targets = list(zip(p.meta_models, snakemake.output.meta))
provenance = {d: dataset_provenance(s) for d, s in zip(p.datasets, snakemake.input.splits)}
resolved = {m: Path(f).read_text().strip() for m, f in p.revision_files.items() if Path(f).exists()}
write_mteb_results(
    ResultFiles(scores=snakemake.input.scores, results=targets, metas=meta_targets),
    p.models,
    mteb_tasks=dict(p.mteb_tasks),
    provenance=provenance,
    resolved_revisions=resolved,
    log=log,
)
