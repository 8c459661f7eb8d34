"""tecb: the German Text Embedding Clustering Benchmark as a library.

Modules, one job each:

- ``tecb.io``        atomic Parquet/JSON writing, the dataset and embedding file contracts
- ``tecb.data.sources``   readers for the raw sources (GermEval 2019 blurbs, One Million Posts, 10kGNAD, Reddit)
- ``tecb.data.splits``    the paper's split recipes (random fractions, subreddit draws, within-genre splits)
- ``tecb.data.datasets``  raw source -> ``texts.parquet`` + ``splits.parquet``
- ``tecb.data.demo`` small raw inputs in the real formats, for the offline demo and the tests
- ``tecb.embed.tiny_bert``    tiny local models for offline runs
- ``tecb.embed.encode``     text -> vectors (sentence-transformers, TF-IDF baseline), streamed to Parquet
- ``tecb.cluster.reduce``    PCA / UMAP per split
- ``tecb.cluster.algorithms``   MiniBatchKMeans, Agglomerative, HDBSCAN, DBSTREAM
- ``tecb.cluster.metrics``   V-measure and friends per split
- ``tecb.report.tables``    the paper's tables from the long scores table
"""

__version__ = "0.1.0"
