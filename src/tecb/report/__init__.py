"""Reporting: statistics, the paper's tables, figures, MTEB formats, cluster views and report pieces."""
