# Scores and datasets -> the paper's tables (Markdown, CSV, LaTeX, HTML), each also beside the paper's numbers.
# The rule names every file (table_path, common.smk); tecb.report.table_files.render_tables writes exactly those,
# by key. Rule chance: the random-partition floor of each dataset (tecb.report.chance), a row under every table.


include: "functions/tables.smk"


# tables.reference = the paper's per-model results (paper_table1.csv beside it); "" = no comparison.
REFERENCE = project_path(config["tables"]["reference"]) or None
REFERENCE_TABLE1 = (
    os.path.join(os.path.dirname(REFERENCE), "paper_table1.csv") if REFERENCE else None
)
TABLE_STEMS = ["table1", "table2", "table3"] + (
    ["table1_vs_paper", "table2_vs_paper", "table3_vs_paper"] if REFERENCE else []
)
# tables.metrics: each metric besides the V-measure adds table2_{metric} and table3_{metric}.
EXTRA_TABLE_STEMS = [
    f"table{n}_{metric}"
    for metric in config["tables"]["metrics"]
    if metric != "v_measure"
    for n in (2, 3)
] + (["table2_per_kind"] if config["tables"]["per_kind"] else [])
# tables.statistics: Table 2's intervals and significance marks, and these CSV files.
STATISTICS_STEMS = (
    ["table2_statistics", "intervals"]
    if config["tables"]["statistics"]["enabled"]
    else []
) + (["chance"] if config["tables"]["chance"]["enabled"] else [])


rule chance:
    """Scores of seeded random partitions of each split of a dataset (the chance row of the tables)."""
    input:
        splits=splits_path("{dataset}"),
    output:
        chance_path("{dataset}"),
    log:
        log_path("chance", "{dataset}.log"),
    benchmark:
        benchmark_path("chance", "{dataset}.tsv")
    wildcard_constraints:
        dataset=alternatives(DATASETS),  # not {dataset}.mteb_v2 (chance_mteb_v2's file)
    conda:
        "../../envs/tables.yaml"
    threads: 1
    params:
        n_draws=config["tables"]["chance"]["n_draws"],
        seed=SEED,
    script:
        "../scripts/chance.py"


rule chance_mteb_v2:
    """The MTEB v2 protocol (pool, bootstraps, k-means) on seeded random vectors: the v2 table's chance row."""
    input:
        splits=splits_path("{dataset}"),
    output:
        chance_mteb_v2_path("{dataset}"),
    log:
        log_path("chance", "{dataset}.mteb_v2.log"),
    benchmark:
        benchmark_path("chance", "{dataset}.mteb_v2.tsv")
    conda:
        "../../envs/cluster.yaml"
    threads: CLUSTER_RUN.threads
    params:
        n_draws=config["tables"]["chance"]["mteb_v2_draws"],
        seed=SEED,
        options=MTEB_V2_OPTIONS,
        max_documents=mteb_v2_max_documents,
    script:
        "../scripts/chance_mteb_v2.py"


TABLE_FORMATS = ["md", "csv", "tex"]  # and html, a report item
TABLE_FILES = [
    table_path(stem, ext)
    for stem in TABLE_STEMS + EXTRA_TABLE_STEMS
    for ext in TABLE_FORMATS
] + [table_path(stem, "csv") for stem in STATISTICS_STEMS]
# kind: mteb models (issue 37): the models table with mteb's metadata; tables.leaderboard: the published scores beside ours
MODELS_TABLE = (
    [table_path("models", ext) for ext in ("csv", "md", "html")]
    if models_of_kind("mteb")
    else []
)
LEADERBOARD = project_path(config["tables"]["leaderboard"]) or None
LEADERBOARD_TABLE = (
    [table_path("leaderboard", ext) for ext in ("csv", "md", "html")]
    if LEADERBOARD
    else []
)
TABLE_FILES += MODELS_TABLE + LEADERBOARD_TABLE


rule tables:
    input:
        scores=SCORES,
        texts=[texts_path(d) for d in DATASETS],
        splits=[splits_path(d) for d in DATASETS],
        reference=[REFERENCE, REFERENCE_TABLE1] if REFERENCE else [],
        chance=chance_inputs,
        labels=table2_labels,
    output:
        # one named output per table: its formats, its html (a report item) and the CSV-only statistics
        **{
            stem: [table_path(stem, ext) for ext in TABLE_FORMATS]
            for stem in TABLE_STEMS + EXTRA_TABLE_STEMS
        },
        **{f"{stem}_html": table_report(stem) for stem in TABLE_STEMS},
        **{
            f"{stem}_html": report(
                table_path(stem, "html"),
                caption=f"../report/{stem.split('_')[0]}.rst",
                category="Tables",
                subcategory="other metrics",
                labels={"table": stem},
            )
            for stem in EXTRA_TABLE_STEMS
        },
        **{stem: table_path(stem, "csv") for stem in STATISTICS_STEMS},
    log:
        log_path("tables.log"),
    conda:
        "../../envs/tables.yaml"
    resources:
        mem_mb=tables_mem_mb,
    params:
        tables=TABLE_STEMS + EXTRA_TABLE_STEMS,
        formats=TABLE_FORMATS,
        csv_tables=STATISTICS_STEMS,
        datasets=DATASETS,
        model_names=MODEL_NAMES,
        model_notes=MODEL_NOTES,
        configurations=CONFIGURATIONS,
        table2=config["tables"]["table2"],
        metrics=config["tables"]["metrics"],
        statistics=config["tables"]["statistics"],
        chance=config["tables"]["chance"]["enabled"],
        per_kind=config["tables"]["per_kind"],
        seed=SEED,
        trained_on=trained_on,
        labels_keys=table2_labels_keys(),
    script:
        "../scripts/tables.py"


if MODELS_TABLE:

    localrules:
        models_table,

    rule models_table:
        """The models table: mteb's metadata of each model and whether it was trained on each dataset's data."""
        output:
            csv=MODELS_TABLE[0],
            md=MODELS_TABLE[1],
            html=report(
                MODELS_TABLE[2],
                caption="../report/models.rst",
                category="Tables",
                subcategory="this run",
                labels={"table": "models"},
            ),
        log:
            log_path("models_table.log"),
        conda:
            "../../envs/embed.yaml"
        params:
            models=models_for_tables(),
            datasets=DATASETS,
        script:
            "../scripts/models_table.py"


if LEADERBOARD:

    localrules:
        leaderboard,

    rule leaderboard:
        """MTEB's published German clustering scores (a dated snapshot) beside the project's, with comparability."""
        input:
            published=LEADERBOARD,
            scores=SCORES,
            v2=MTEB_V2_LONG if MTEB_V2 else [],
        output:
            csv=LEADERBOARD_TABLE[0],
            md=LEADERBOARD_TABLE[1],
            html=report(
                LEADERBOARD_TABLE[2],
                caption="../report/leaderboard.rst",
                category="Tables",
                subcategory="beside MTEB's leaderboard",
                labels={"table": "leaderboard"},
            ),
        log:
            log_path("leaderboard.log"),
        conda:
            "../../envs/tables.yaml"
        params:
            identities=model_identities,
            names=MODEL_NAMES,
            tasks={d: mteb_task(d) for d in DATASETS},
        script:
            "../scripts/leaderboard.py"
