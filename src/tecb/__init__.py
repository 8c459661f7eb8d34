"""tecb: the German Text Embedding Clustering Benchmark as a library, one subpackage per workflow stage.

Imports flow down this list only (tests/test_layout.py checks it):

- core: ``tecb.io`` (file contracts, checksums, atomic writes), ``tecb.config`` (config layering, YAML),
  ``tecb.runlog`` (job logs)
- ``tecb.data``     raw sources, split recipes, dataset builds, the demo's raw files, downloads, Reddit
- ``tecb.embed``    model settings, texts -> vectors streamed to Parquet, hub prefetch, the tiny test BERT
- ``tecb.cluster``  per-split PCA/UMAP, the algorithms (exact Ward included), V-measure and friends
- ``tecb.adapt``    training embeddings that cluster better (WWM, TSDAE, ...)
- ``tecb.report``   statistics, the paper's tables, figures, MTEB formats, cluster views
- ``tecb.configcheck``  config validation and ``python -m tecb.configcheck`` (may import every stage)
"""

__version__ = "0.1.0"
