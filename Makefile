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

LS_VENV := .venv-ls
LS_STAMP := $(LS_VENV)/.installed

.PHONY: setup feeds test bench lint ffmpeg browser labelstudio clean

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

# Label Studio in a venv of its own: it pins openai<2 and pyarrow<25.
$(LS_STAMP):
	test -x $(LS_VENV)/bin/python || $(PYTHON) -m venv $(LS_VENV)
	$(LS_VENV)/bin/python -m pip install --quiet --disable-pip-version-check label-studio==1.23.2
	touch $(LS_STAMP)

# Debian's chromium (Playwright drives it; no browser download) and a CJK font.
browser:
	@{ command -v chromium >/dev/null 2>&1 && fc-list 2>/dev/null | grep -qi "WenQuanYi Micro Hei"; } || { \
	  echo "installing chromium and fonts-wqy-microhei with apt-get"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-wqy-microhei >/dev/null; }

# Starts Label Studio on 127.0.0.1 (LABEL_STUDIO_PORT, default 8080) with the admin and
# token from LABEL_STUDIO_USERNAME / LABEL_STUDIO_PASSWORD / LABEL_STUDIO_API_KEY.
labelstudio: setup $(LS_STAMP)
	$(PY) -m curation.annotate.server

FEEDS ?= 50
SEED ?= 7

feeds: setup
	$(CURATE) --catalog $(CATALOG) ingest fakesv raw/FakeSV/data.json
	$(CURATE) --catalog $(CATALOG) ingest kuairec raw/KuaiRec/kuairec_caption_category.csv
	$(CURATE) --catalog $(CATALOG) keywords
	$(CURATE) --catalog $(CATALOG) embed
	$(CURATE) --catalog $(CATALOG) cluster --report
	$(CURATE) --catalog $(CATALOG) feeds build --n $(FEEDS) --seed $(SEED) --report
	$(CURATE) --catalog $(CATALOG) feeds export build/feeds
	@echo
	@echo "catalog:  $(CATALOG)   (.venv/bin/curate status)"
	@echo "feeds:    build/feeds/ (one JSON per feed + feeds.jsonl)"
	@echo "reports:  build/reports/clusters.html, build/reports/feeds.html"

test: setup $(LS_STAMP) browser
	$(PY) -m ruff check curation tests bench
	$(PY) -m pytest -q

bench: setup
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev,bench]'
	$(PY) bench/ingest.py
	$(PY) bench/cluster.py
	$(PY) bench/media.py

clean:
	rm -rf build
