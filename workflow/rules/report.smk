# Figures, MTEB-format results and the pieces of `snakemake --report results/{run}/report.html`.


report: "../report/workflow.rst"


UMAP_PAIRS = [(m, d) for m in MODELS for d in DATASETS] if "umap" in REDUCTIONS else []
UMAP_STEMS = [figure_path("umap", m, d) for m, d in UMAP_PAIRS]
SUMMARY_FIGURES = [figure_path("table3_heatmap"), figure_path("table2_averages")]
MTEB_KEYS = (
    [(m, d) for m in MODELS for d in DATASETS]
    if ("kmeans", "none") in CONFIGURATIONS
    else []
)
# (model, custom cache?) of each model_meta.json: one per cache a model has results in
MTEB_META_KEYS = list(dict.fromkeys((m, mteb_task(d) is None) for m, d in MTEB_KEYS))
MTEB_FILES = [mteb_path(m, d) for m, d in MTEB_KEYS] + [
    mteb_meta_path(m, c) for m, c in MTEB_META_KEYS
]
# One benchmark per embed job, by the rule EMBED_WRITERS (functions/embed.smk) says writes a model's files: per
# model for embed_batch, per dataset for embed and embed_merge (the embed benchmark of a sharded model), with or
# without the store (a job that reuses an entry records its own seconds; the computing job's are in the entry's
# timings, put at results/{run}/timings/embed/). With cluster.batch one per (model, dataset).
BENCHMARK_KEYS = (
    [("embed", f"{m}/batch") for m in embed_models(writer="embed_batch")]
    + [
        ("embed", f"{m}/{d}")
        for m in MODELS
        for d in DATASETS
        if EMBED_WRITERS[m]["unit"] != "model"
    ]
) + (
    [("cluster", f"{m}/{d}/batch") for m in MODELS for d in DATASETS]
    if CLUSTER_BATCH
    else [
        ("reduce", f"{m}/{d}/{r}") for m in MODELS for d in DATASETS for r in REDUCTIONS
    ]
    + [
        ("cluster", f"{m}/{d}/{r}/{a}")
        for m in MODELS
        for d in DATASETS
        for a, r in CONFIGURATIONS
    ]
)
BENCHMARKS = [benchmark_path(step, f"{job}.tsv") for step, job in BENCHMARK_KEYS]
REPORT_TARGETS = (
    [f"{stem}.{ext}" for stem in UMAP_STEMS + SUMMARY_FIGURES for ext in ["png", "svg"]]
    + MTEB_FILES
    + [report_path("config.yaml"), report_path("runtimes.csv")]
)


rule figures:
    input:
        scores=SCORES,
        reduced=[reduced_path(m, d, "umap") for m, d in UMAP_PAIRS],
        splits=[splits_path(d) for _, d in UMAP_PAIRS],
        # every dataset's provenance: are the averages comparable with the paper's?
        dataset_splits=[splits_path(d) for d in DATASETS],
        reference=[REFERENCE] if REFERENCE else [],
    output:
        umap_png=[
            report(
                f"{stem}.png",
                caption="../report/umap.rst",
                category="Figures",
                subcategory="UMAP per model and dataset",
                labels={"model": MODEL_NAMES[m], "dataset": d},
            )
            for stem, (m, d) in zip(UMAP_STEMS, UMAP_PAIRS)
        ],
        umap_svg=[f"{stem}.svg" for stem in UMAP_STEMS],
        heatmap=report(
            figure_path("table3_heatmap.png"),
            caption="../report/heatmap.rst",
            category="Figures",
            subcategory="Summary",
            labels={"figure": "Table 3 heatmap"},
        ),
        bars=report(
            figure_path("table2_averages.png"),
            caption="../report/bars.rst",
            category="Figures",
            subcategory="Summary",
            labels={"figure": "Table 2 averages"},
        ),
        heatmap_svg=figure_path("table3_heatmap.svg"),
        bars_svg=figure_path("table2_averages.svg"),
    log:
        log_path("figures.log"),
    conda:
        "../../envs/tables.yaml"
    params:
        pairs=UMAP_PAIRS,
        splits=[splits_path(d) for _, d in UMAP_PAIRS],
        model_names=MODEL_NAMES,
        datasets=DATASETS,
        configurations=CONFIGURATIONS,
        table2=config["tables"]["table2"],
    script:
        "../scripts/figures.py"


rule mteb_results:
    """MTEB-format JSON per (model, dataset), k-means on raw embeddings."""
    input:
        scores=SCORES,
        splits=[splits_path(d) for d in DATASETS],
    output:
        results=[mteb_path(m, d) for m, d in MTEB_KEYS],
        meta=[mteb_meta_path(m, c) for m, c in MTEB_META_KEYS],
    log:
        log_path("mteb_results.log"),
    conda:
        "../../envs/tables.yaml"
    params:
        # what the MTEB files record of each model they are written for (not the whole `models` section)
        models={
            m: {
                "kind": config["models"][m]["kind"],
                **{
                    k: config["models"][m][k]
                    for k in ("name", "id", "revision")
                    if config["models"][m].get(k) is not None
                },
                # kind mteb: the revision it runs (mteb's), resolved here: the job's env need not have mteb
                **(
                    {"revision": mteb_revision(m)}
                    if config["models"][m]["kind"] == "mteb"
                    else {}
                ),
            }
            for m in dict.fromkeys(m for m, _ in MTEB_KEYS)
        },
        pairs=MTEB_KEYS,
        meta_models=[m for m, _ in MTEB_META_KEYS],
        datasets=DATASETS,
        # the mteb task each dataset's results are stored under (None: custom tecb.* name), from the config
        mteb_tasks={d: mteb_task(d) for d in DATASETS},
        # the commit a hub model was fetched at (written by prefetch), recorded beside the configured revision
        revision_files={
            m: os.path.join(hub_model_dir(m), ".tecb_revision")
            for m in dict.fromkeys(m for m, _ in MTEB_KEYS)
            if m in HUB_ENTRIES
        },
    script:
        "../scripts/mteb_results.py"


rule report_extras:
    """The configuration (credentials redacted) and the runtimes from the benchmark files."""
    input:
        benchmarks=BENCHMARKS,
    output:
        config=report(
            report_path("config.yaml"),
            caption="../report/config.rst",
            category="Run",
            labels={"item": "configuration"},
        ),
        runtimes=report_path("runtimes.csv"),
        summary=report(
            report_path("runtimes.html"),
            caption="../report/runtimes.rst",
            category="Run",
            labels={"item": "runtimes"},
        ),
    log:
        log_path("report_extras.log"),
    conda:
        "../../envs/tables.yaml"
    params:
        config=config,
        benchmark_keys=BENCHMARK_KEYS,
    script:
        "../scripts/report_extras.py"
