# Figures, MTEB-format results and the pieces of `snakemake --report results/report.html`.


report: "../report/workflow.rst"


MODEL_NAMES = {m: spec.get("name", m) for m, spec in config["models"].items()}
UMAP_PAIRS = [(m, d) for m in MODELS for d in DATASETS] if "umap" in REDUCTIONS else []
UMAP_STEMS = [f"results/figures/umap/{m}/{d}" for m, d in UMAP_PAIRS]
SUMMARY_FIGURES = ["results/figures/table3_heatmap", "results/figures/table2_averages"]
MTEB_FILES = (
    expand("results/mteb/{model}/{dataset}.json", model=MODELS, dataset=DATASETS)
    if ("kmeans", "none") in CONFIGURATIONS
    else []
)
BENCHMARKS = [
    f"results/benchmarks/{step}/{m}/{d}.tsv"
    for step in ["embed", "cluster"] + (["reduce"] if REDUCTIONS else [])
    for m in MODELS
    for d in DATASETS
]
REPORT_TARGETS = (
    [f"{stem}.{ext}" for stem in UMAP_STEMS + SUMMARY_FIGURES for ext in ["png", "svg"]]
    + MTEB_FILES
    + ["results/report/config.yaml", "results/report/runtimes.csv"]
)


rule figures:
    input:
        scores="results/scores.parquet",
        reduced=[reduced_path(m, d, "umap") for m, d in UMAP_PAIRS],
        splits=[splits_path(d) for _, d in UMAP_PAIRS],
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
            "results/figures/table3_heatmap.png",
            caption="../report/heatmap.rst",
            category="Figures",
            subcategory="Summary",
            labels={"figure": "Table 3 heatmap"},
        ),
        bars=report(
            "results/figures/table2_averages.png",
            caption="../report/bars.rst",
            category="Figures",
            subcategory="Summary",
            labels={"figure": "Table 2 averages"},
        ),
        svg=[f"{stem}.svg" for stem in SUMMARY_FIGURES],
    log:
        "logs/figures.log",
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
        scores="results/scores.parquet",
    output:
        MTEB_FILES,
    log:
        "logs/mteb_results.log",
    conda:
        "../../envs/tables.yaml"
    params:
        models=config["models"],
        datasets=DATASETS,
    script:
        "../scripts/mteb_results.py"


rule report_extras:
    """The configuration (credentials redacted) and the runtimes from the benchmark files."""
    input:
        benchmarks=BENCHMARKS,
    output:
        config=report(
            "results/report/config.yaml",
            caption="../report/config.rst",
            category="Run",
            labels={"item": "configuration"},
        ),
        runtimes="results/report/runtimes.csv",
        summary=report(
            "results/report/runtimes.html",
            caption="../report/runtimes.rst",
            category="Run",
            labels={"item": "runtimes"},
        ),
    log:
        "logs/report_extras.log",
    conda:
        "../../envs/tables.yaml"
    params:
        config=config,
    script:
        "../scripts/report_extras.py"
