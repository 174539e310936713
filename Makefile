# The two commands that work on a fresh machine: `make feeds` and `make test`.
# Every target brings .venv up to date first (torch's CPU build before the rest).

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
CURATE := $(VENV)/bin/curate
STAMP := $(VENV)/.installed
CATALOG ?= build/catalog.duckdb
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: setup feeds test bench lint ffmpeg clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check torch==2.13.0
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

ffmpeg:
	@command -v ffmpeg >/dev/null 2>&1 || { \
	  echo "installing ffmpeg with apt-get"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ffmpeg >/dev/null; }

setup: $(STAMP) ffmpeg

feeds: setup
	$(CURATE) --catalog $(CATALOG) ingest fakesv raw/FakeSV/data.json
	$(CURATE) --catalog $(CATALOG) ingest kuairec raw/KuaiRec/kuairec_caption_category.csv
	@echo "catalog: $(CATALOG)  (curate --catalog $(CATALOG) status)"

test: setup
	$(PY) -m ruff check curation tests bench
	$(PY) -m pytest -q

bench: setup
	$(PY) bench/ingest.py

clean:
	rm -rf build
