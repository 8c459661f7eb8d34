# The network step as one target: `snakemake prefetch` (on a cluster: on the login node) runs every download,
# Reddit rehydration and hub-model prefetch the config needs; every other job then runs offline (design §7).


include: "functions/prefetch.smk"


localrules:
    prefetch,


rule prefetch:
    """Every download, published split, Reddit text and hub model of this config (the jobs that need internet)."""
    input:
        prefetch_inputs(),
