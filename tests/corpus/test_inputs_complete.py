"""Issue 42: a stage does not run on half-made inputs. After an embed stopped part way, `curate cluster`
refuses and says how many keyword sets have no vector (or, asked to, clusters the rest and says so);
once the rest are embedded, `curate feeds build` refuses the clustering that is older than the vectors,
until `curate cluster` runs again."""

from __future__ import annotations

import shutil

import duckdb

from tests.cli.test_cli import curate


def _error(out) -> str:
    assert out.returncode == 1, out.stdout + out.stderr
    (line,) = [x for x in out.stderr.splitlines() if x.startswith("error:")]
    return line


def test_cluster_and_feeds_refuse_inputs_an_embed_has_not_finished(embedded_catalog_file, tmp_path):
    db = tmp_path / "c.duckdb"
    shutil.copy(embedded_catalog_file, db)
    with duckdb.connect(str(db)) as con:  # as an embed killed part way leaves it: some texts have no vector
        con.execute("DELETE FROM embeddings WHERE text_sha256 IN (SELECT DISTINCT text_sha256 FROM keyword_sets "
                    "WHERE text_sha256 IS NOT NULL ORDER BY text_sha256 LIMIT 40)")
        total, missing, covered = con.execute("""
            SELECT count(*), count(*) FILTER (e.text_sha256 IS NULL), count(*) FILTER (e.text_sha256 IS NOT NULL)
            FROM keyword_sets k LEFT JOIN embeddings e USING (text_sha256) WHERE k.text_sha256 IS NOT NULL
            """).fetchone()
    assert missing >= 40 and covered > 0

    line = _error(curate("--catalog", str(db), "cluster"))
    assert f"{missing:,} of {total:,} keyword sets have no" in line and "run `curate embed` first" in line
    assert "--allow-missing-vectors" in line
    partial = curate("--catalog", str(db), "cluster", "--allow-missing-vectors")
    assert partial.returncode == 0, partial.stderr
    assert f"clustering the {covered:,} videos that have one" in partial.stderr
    with duckdb.connect(str(db), read_only=True) as con:
        run_id, counts = con.execute("SELECT run_id, counts FROM runs WHERE stage = 'cluster' AND status = 'ok' "
                                     "ORDER BY finished_at DESC LIMIT 1").fetchone()
        assert f'"keyword_sets_without_vector": {missing}' in counts
        assert con.execute("SELECT count(*) FROM cluster_members WHERE run_id = ?", [run_id]).fetchone()[0] == covered

    assert curate("--catalog", str(db), "embed").returncode == 0  # the rest get their vectors
    line = _error(curate("--catalog", str(db), "feeds", "build", "--n", "3"))
    assert f"the latest clustering (run {run_id}) is older than the vectors" in line
    assert f"{total:,} videos now have" in line and f"{missing:,} of them not in that clustering" in line
    # the clustering named on purpose is used as it is
    named = curate("--catalog", str(db), "feeds", "build", "--n", "3", "--cluster-run", run_id)
    assert named.returncode == 0, named.stderr
    assert curate("--catalog", str(db), "cluster").returncode == 0
    rebuilt = curate("--catalog", str(db), "feeds", "build", "--n", "3", "--seed", "1")
    assert rebuilt.returncode == 0, rebuilt.stderr
