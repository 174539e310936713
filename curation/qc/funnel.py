"""`curate qc report`: the QC funnel beside the paper's rates, per tier and sub-category, with annotator
throughput and lead times. The cells are counted in curation/qc/funnel_cells.py (each task once, in its
current state) and drawn in curation/qc/funnel_report.py; this module is the stage and the one name
callers import them by."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from curation.core.stage import StageRun, stage
from curation.qc.funnel_cells import (
    END_STATES,
    PAPER,
    PATH,
    STAGES,
    check_line,
    compute_funnel,
    count_cells,
    funnel_lines,
    funnel_rows,
    paper_lines,
    paper_rates,
    percent,
    summarise,
    task_outcomes,
)
from curation.qc.funnel_report import funnel_svg, subcategory_bars_svg, write_funnel_report

__all__ = ["END_STATES", "PAPER", "PATH", "STAGES", "check_line", "compute_funnel", "count_cells", "funnel_lines",
           "funnel_rows", "funnel_svg", "paper_lines", "paper_rates", "percent", "qc_report", "subcategory_bars_svg",
           "summarise", "task_outcomes"]


@stage("qc-report", command="curate qc report", reads=("tasks", "task_transitions"), writes=(),
       summary="the QC funnel (each task once, in its current state) with the paper's rates, per tier and "
       "sub-category; annotator throughput", files=("out: report file",))
def qc_report(run: StageRun, path: Path) -> dict[str, Any]:
    summary = compute_funnel(run.db)
    run.params.update(path=str(path))
    run.counts.update({k: v for k, v in summary["all"].items() if isinstance(v, int) and not isinstance(v, bool)})
    write_funnel_report(path, summary)
    return summary
