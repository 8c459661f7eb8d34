# tecb: the German Text Embedding Clustering Benchmark (KONVENS 2023), end to end.
#   snakemake --cores all --resources gpu=1                              the paper's full benchmark
#   snakemake --configfile config/demo.yaml --cores all --resources gpu=1  the offline demo


from snakemake.utils import min_version, validate

min_version("9.0")


# The paper's benchmark unless another config is given: --configfile would otherwise be *merged*
# into config/config.yaml (adding the demo's models to the paper's twelve).
if not config:

    configfile: "config/config.yaml"


validate(config, "workflow/schemas/config.schema.yaml")


include: "workflow/rules/common.smk"
include: "workflow/rules/datasets.smk"
include: "workflow/rules/reddit.smk"
include: "workflow/rules/embed.smk"
include: "workflow/rules/cluster.smk"
include: "workflow/rules/tables.smk"
include: "workflow/rules/pretrain.smk"
include: "workflow/rules/report.smk"


rule all:
    default_target: True
    input:
        all_outputs(),
