"""LivingScreen curation toolkit: public short-video corpora to benchmark releases."""

__version__ = "0.1.0"
