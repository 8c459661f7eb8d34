# Scores and datasets -> the paper's tables (Markdown, CSV, LaTeX, HTML), each also beside the paper's numbers.
# The rule names every file (table_path, common.smk); tecb.report.tables.render_tables writes exactly those, by key.


include: "functions/tables.smk"


# tables.reference = the paper's per-model results (paper_table1.csv beside it); "" = no comparison.
REFERENCE = config["tables"]["reference"] or None
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
]
# tables.statistics: Table 2's intervals and significance marks, and these CSV files.
STATISTICS_STEMS = (
    ["table2_statistics", "intervals"]
    if config["tables"]["statistics"]["enabled"]
    else []
)
TABLE_FORMATS = ["md", "csv", "tex"]  # and html, a report item
TABLE_FILES = [
    table_path(stem, ext)
    for stem in TABLE_STEMS + EXTRA_TABLE_STEMS
    for ext in TABLE_FORMATS
] + [table_path(stem, "csv") for stem in STATISTICS_STEMS]


rule tables:
    input:
        scores=SCORES,
        texts=[texts_path(d) for d in DATASETS],
        splits=[splits_path(d) for d in DATASETS],
        reference=[REFERENCE, REFERENCE_TABLE1] if REFERENCE else [],
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
    params:
        tables=TABLE_STEMS + EXTRA_TABLE_STEMS,
        formats=TABLE_FORMATS,
        csv_tables=STATISTICS_STEMS,
        datasets=DATASETS,
        model_names=MODEL_NAMES,
        configurations=CONFIGURATIONS,
        table2=config["tables"]["table2"],
        metrics=config["tables"]["metrics"],
        statistics=config["tables"]["statistics"],
        seed=SEED,
    script:
        "../scripts/tables.py"
